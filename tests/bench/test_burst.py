"""A small run of bench/burst.py: 20 cold Cline events at once, no worker running, the warm path
on. One worker is started for all of them, no client imports litellm, and every process gets
the model's verdict. The budget is generous and nothing is timed: a busy machine is slow, not
wrong."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from ..helpers import REPO

if str(REPO / "bench") not in sys.path:
    sys.path.insert(0, str(REPO / "bench"))

# See tests/bench/test_load_smoke.py for why the ignore.
from burst import BurstReport, run_burst  # type: ignore[import-not-found, unused-ignore]

PROCESSES = 20


def test_twenty_cold_cline_events_at_once_share_one_new_worker() -> None:
    # A short folder: the worker's socket path must fit a Unix socket's 107 bytes, which
    # pytest's tmp_path (with the test's name in it) does not leave room for.
    root = Path(tempfile.mkdtemp(prefix="phb-"))
    try:
        report: BurstReport = run_burst(PROCESSES, root / "b", budget=300)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    assert report.problems == []
    assert report.answered == PROCESSES  # each with the model's verdict, nothing on stderr
    assert len(report.latencies) == PROCESSES
    assert len(report.watch.workers) == 1  # started by one client; the others waited for it
    assert report.watch.litellm_clients == set()
    assert report.model_requests == PROCESSES
    assert report.watch.aborted is None
