"""Executors: how a hook of each kind is run. All return one :class:`HookResult`."""

from __future__ import annotations

from ..core.executor import Executor, ExecutorFor
from ..core.hook import Hook


class _RunExecutors:
    """The executors of one run, each made when the first hook of its kind runs (so a prompt
    hook's imports happen only then); what they must stop is this run's alone."""

    def __init__(self) -> None:
        self._made: dict[str, Executor] = {}

    def __call__(self, hook: Hook) -> Executor:
        executor = self._made.get(hook.kind)
        if executor is None:
            executor = self._made[hook.kind] = _make(hook.kind)
        return executor


def _make(kind: str) -> Executor:
    if kind == "prompt":
        from .prompt import PromptExecutor

        return PromptExecutor()
    from .command import CommandExecutor

    return CommandExecutor()


def for_run() -> ExecutorFor:
    """A fresh set of executors for one run."""
    return _RunExecutors()


__all__ = ["Executor", "ExecutorFor", "for_run"]
