"""One run of ``prompthooks run``: what the thin client read and parsed, the one type every
path of a run takes (the resident process's run, the run in the process a host started).

Standard library only: the thin client builds one before it imports the rest of prompthooks,
and :mod:`prompthooks.dispatcher.protocol` sends it over the socket. Here too the instant its
budget counts from (:func:`process_start`), which the client reads first of all.
"""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False  # not typing's: the thin client imports this module
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence


class Job:
    """A run: the caller (``version``, ``cwd``, ``umask``, ``env``), its clock, ``run``'s
    options as named fields, and the event.

    ``started``: the ``time.monotonic()`` instant the budget counts from (the host started the
    process then); ``limit``: the latest instant to answer by, whatever the host's budget
    (None: the host's budget decides). ``host``, ``event``, ``config``, ``budget``,
    ``managed_dir``, ``record``, ``replay``: ``run``'s options. ``data``: the event's bytes;
    ``unreadable``: why it could not be read, if it could not; ``partial``: stdin is still
    open, the rest is read by the run.

    Only for a run done in the process a host started, after the resident process did not
    answer: ``guarded_if_unknown``: if the config cannot be loaded in the time left either,
    the event counts as one a fail-closed hook could apply to (blocked); ``terminated``: the
    host sent SIGTERM or SIGINT before the run began (set by the client's handler): the run
    stops at once, as it would for one that came while it went on."""

    __slots__ = ("budget", "config", "cwd", "data", "env", "event", "guarded_if_unknown",
                 "host", "limit", "managed_dir", "partial", "record", "replay", "started",
                 "terminated", "umask", "unreadable", "version")

    def __init__(self, data: bytes, started: float, *, host: str | None = None,
                 event: str | None = None, config: Sequence[str] = (),
                 budget: float | None = None, managed_dir: str | None = None,
                 record: str | None = None, replay: str | None = None,
                 limit: float | None = None, version: str = "", cwd: bytes = b"",
                 umask: int = 0o022, env: Mapping[bytes, bytes] | None = None,
                 unreadable: str | None = None, partial: bool = False) -> None:
        self.data = data
        self.started = started
        self.host = host
        self.event = event
        self.config = tuple(config)
        self.budget = budget
        self.managed_dir = managed_dir
        self.record = record
        self.replay = replay
        self.limit = limit
        self.version = version
        self.cwd = cwd
        self.umask = umask
        self.env = dict(env or {})
        self.unreadable = unreadable
        self.partial = partial
        self.guarded_if_unknown = False
        self.terminated = False


def process_start() -> float:
    """When this process started, as a ``time.monotonic()`` instant: the host's clock for its
    timeout starts at the spawn, before the interpreter and our modules load (seconds on a
    busy machine). Now, where /proc cannot tell."""
    now = time.monotonic()
    try:
        with open("/proc/self/stat", "rb") as stat:
            ticks = int(stat.read().rsplit(b")", 1)[1].split()[19])  # field 22, starttime
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return now
    return now - min(max(age, 0.0), 60.0)  # a sane age only: a clock can be off
