"""Executors: how a hook of each kind is run. All return one :class:`HookResult`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.executor import Executor, ExecutorFor
from ..core.hook import Hook

if TYPE_CHECKING:
    from ..model.chain import ModelChain


class _RunExecutors:
    """The executors of one run, each made when the first hook of its kind runs (so a prompt
    or http hook's imports happen only then); what they must stop is this run's alone."""

    def __init__(self, models: ModelChain | None, deadline: float | None) -> None:
        self._made: dict[str, Executor] = {}
        self._models = models
        self._deadline = deadline

    def __call__(self, hook: Hook) -> Executor:
        executor = self._made.get(hook.kind)
        if executor is None:
            executor = self._made[hook.kind] = self._make(hook.kind)
        return executor

    def _make(self, kind: str) -> Executor:
        if kind == "prompt":
            # each kind's module on its first hook: a command-only run loads no model code
            from .prompt import PromptExecutor

            return PromptExecutor(self._models, self._deadline)
        if kind == "http":
            from .http import HttpExecutor  # as prompt's

            return HttpExecutor(self._models)
        if kind == "agent":
            from .agent import AgentExecutor  # as prompt's

            return AgentExecutor(self._models, self._deadline)
        from .command import CommandExecutor  # as prompt's

        return CommandExecutor()


def for_run(models: ModelChain | None = None, deadline: float | None = None) -> ExecutorFor:
    """A fresh set of executors for one run that answers by ``deadline``; its prompt hooks
    reach their model through ``models`` (default: ``ModelChain()``)."""
    return _RunExecutors(models, deadline)


__all__ = ["Executor", "ExecutorFor", "for_run"]
