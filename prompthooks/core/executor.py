"""The executor interface: how the engine runs a hook without knowing its kind.

The engine is handed its executors (one per hook kind, made for one run) rather than importing
them, so it stays pure and a test can hand it its own. Each executor owns what stopping its
hooks takes: how long after a hook's deadline it is stopped, and how to stop it outright.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from .events import Event
from .hook import Hook
from .result import HookResult


class Executor(Protocol):
    """Runs the hooks of one kind for one run; never raises for a hook's own faults."""

    @property
    def stop_grace(self) -> float:
        """Seconds from a hook's deadline until this executor has stopped it (a process group
        killed, a model call given up): the engine stops hooks that long before the run's."""
        ...

    def run(self, hook: Hook, event: Event, deadline: float) -> HookResult: ...

    def stop(self) -> None:
        """Stop at once whatever this executor is still running: the run must answer now."""
        ...


# The executor for a hook (by its kind); the engine calls it once per hook it runs.
ExecutorFor = Callable[[Hook], Executor]
