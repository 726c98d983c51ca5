"""Every resident process a test here started is gone at its end: a run done in process starts
one after its reply (a test whose fake socket sends the run back does so too), and it would
otherwise wait out its idle time."""

from ..model.test_worker import _no_worker_left  # noqa: F401  (an autouse fixture)
