"""The one merge: many hook results in, one decision out. Pure and host-agnostic.

Rules (docs/config.md, "Merge rules"):
- permission: deny > ask > allow > no opinion; any block blocks;
- a failed or timed-out hook counts as a deny if it is fail-closed, and as no opinion
  otherwise; it never discards what the other hooks said;
- reasons of the winning permission, user and system messages are joined with newlines and
  contexts are all kept, in order: higher-priority source first, then config order;
- ``updated_input``: the first in that order wins (deterministic, whoever finishes first);
  when a managed hook judged the event, only a managed hook may rewrite it (a project or user
  hook could otherwise swap in an input the managed policy never saw);
- ``halt`` (stop the agent) if any hook asks for it; ``env`` is merged, higher source winning,
  and only a managed hook may set the variables that steer later runs (proxies, model
  providers, ``PROMPTHOOKS_*``, ``HOME``, ``PATH``...; see protected_env.py): a non-managed
  hook's such keys are dropped with one line naming the hook and the keys.
"""

# Annotations are evaluated here (no `from __future__ import annotations`): typing.NamedTuple
# compiles every string annotation of its fields when the class is made, on every run.

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from .hook import Hook
from .protected_env import protected
from .result import RANK, HookResult, Permission


class Decision(NamedTuple):
    """The merged answer for one event, before it is rendered for a host."""

    permission: Permission | None = None
    reason: str | None = None
    user_message: str | None = None
    system_message: str | None = None
    contexts: tuple[str, ...] = ()
    updated_input: Mapping[str, Any] | None = None
    rewritten_by: Hook | None = None  # the hook whose updated_input this is
    halt: bool = False
    stop_reason: str | None = None
    env: Mapping[str, str] | None = None
    suppress_output: bool = False
    updated_tool_output: Any = None
    errors: tuple[str, ...] = ()
    results: tuple[HookResult, ...] = ()

    @property
    def blocked(self) -> bool:
        return self.permission == "deny"


def failure_line(result: HookResult) -> str:
    """One line naming a failed hook, where it was configured, and what went wrong."""
    if result.hook.config_event == "*":  # a config source that failed to load
        return f"config {result.error}"
    if result.hook.config_event.startswith("*"):  # one left out (untrusted): says it all
        return result.error or result.status
    return f"hook '{result.hook.name}' ({result.hook.label}): {result.error or result.status}"


def apply_failure_policy(result: HookResult) -> HookResult:
    """A failed hook says nothing, unless it is fail-closed: then it denies."""
    if not result.failed:
        return result
    if result.hook.fail_closed:
        # A reason of set-up is said in one line with its fix, not as the provider's error.
        reason = (f"{result.hook.name} cannot judge: {result.unjudged}" if result.unjudged
                  else f"Blocked by prompthooks: a fail-closed {failure_line(result)}")
        return HookResult(hook=result.hook, status=result.status, permission="deny",
                          reason=reason, user_message=reason, error=result.error,
                          unjudged=result.unjudged, duration=result.duration)
    return HookResult(hook=result.hook, status=result.status, error=result.error,
                      unjudged=result.unjudged, duration=result.duration)


def _join(parts: Iterable[str | None]) -> str | None:
    kept = [p for p in parts if p]
    return "\n".join(kept) if kept else None


def order(results: Iterable[HookResult]) -> list[HookResult]:
    """Higher-priority source first, then config order."""
    return sorted(results, key=lambda r: (r.hook.source.priority, r.hook.index))


def _env(effective: list[HookResult], notices: list[str]) -> dict[str, str]:
    """The merged ``env``, higher source winning, without the keys a non-managed hook may
    not set (each such hook gets one notice)."""
    env: dict[str, str] = {}
    for r in reversed(effective):
        if r.hook.managed:
            env.update(r.env)
            continue
        dropped = sorted(k for k in r.env if protected(k))
        env.update((k, v) for k, v in r.env.items() if not protected(k))
        if dropped:
            notices.append(f"hook '{r.hook.name}' ({r.hook.label}): env keys ignored: "
                           f"{', '.join(dropped)}: only a managed hook may set them")
    return env


def merge(results: Iterable[HookResult]) -> Decision:
    """Merge hook results into one :class:`Decision` (see the module docstring)."""
    ordered = order(results)
    effective = [apply_failure_policy(r) for r in ordered]
    permission = max((r.permission for r in effective), key=RANK.__getitem__, default=None)
    notices: list[str] = []
    env = _env(effective, notices)
    updated = None
    rewritten_by = None
    if permission != "deny":
        guarded = any(r.hook.managed for r in effective)
        rewrites = [r for r in effective if r.updated_input is not None]
        allowed = [r for r in rewrites if r.hook.managed or not guarded]
        updated = allowed[0].updated_input if allowed else None
        rewritten_by = allowed[0].hook if allowed else None
        notices += [f"hook '{r.hook.name}' ({r.hook.label}): its updated input is ignored: a "
                    "managed policy judged this event and only it may rewrite the input"
                    for r in rewrites if guarded and not r.hook.managed]
    return Decision(
        permission=permission,
        reason=_join(r.reason for r in effective if r.permission == permission),
        user_message=_join(r.user_message for r in effective
                           if r.permission in (permission, None)),
        system_message=_join(r.system_message for r in effective),
        contexts=tuple(c for r in effective for c in r.contexts if c),
        updated_input=updated,
        rewritten_by=rewritten_by,
        halt=any(r.halt for r in effective),
        stop_reason=_join(r.stop_reason for r in effective),
        env=env,
        suppress_output=any(r.suppress_output for r in effective),
        updated_tool_output=next((r.updated_tool_output for r in effective
                                  if r.updated_tool_output is not None), None),
        errors=tuple(failure_line(r) for r in ordered if r.failed) + tuple(notices),
        results=tuple(ordered),
    )
