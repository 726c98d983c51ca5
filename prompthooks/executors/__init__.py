"""Executors: how a hook of each kind is run. All return one :class:`HookResult`."""

from __future__ import annotations

from typing import Protocol

from ..events import Event
from ..hook import Hook
from ..result import HookResult


class Executor(Protocol):
    def __call__(self, hook: Hook, event: Event, deadline: float) -> HookResult: ...


def executor_for(hook: Hook) -> Executor:
    """The executor of a hook's kind, imported only when a hook of that kind runs."""
    if hook.kind == "prompt":
        from .prompt import run as run_prompt

        return run_prompt
    from .command import run

    return run
