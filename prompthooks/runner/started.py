"""When a process started, on the clock the run's budget is counted by.

Standard library only: the thin client sends its own start to the resident process, which
counts the run's budget from it.
"""

from __future__ import annotations

import os
import time


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
