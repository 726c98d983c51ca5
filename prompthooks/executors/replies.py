"""Reading a command hook's reply: the exit code and stdout framed by the rules of the host the
hook was written for (its dialect's ``frame_reply``, in ``hosts/<name>/wire.py``), then one
reader for the reply fields of all three dialects.

The field reader is hand-written rather than a pydantic model so that an event with only
command hooks never pays pydantic's import (see docs/performance.md).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..core.events import STOP_EVENTS, Event
from ..core.hook import Hook
from ..core.result import RANK, HookResult, Permission
from ..errors import excerpt
from ..hosts import get as dialect
from ..hosts.framing import ReplyError as ReplyError
from ..hosts.framing import describe_exit as describe_exit
from ..hosts.framing import last_json_object as last_json_object

_DECISIONS: dict[str, Permission | None] = {
    "approve": "allow", "allow": "allow", "block": "deny", "deny": "deny", "ask": "ask",
    "defer": None,
}


def _field(obj: Mapping[str, Any], key: str, kind: type | tuple[type, ...]) -> Any:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise ReplyError(f"reply field {key!r} should be {names}, got {excerpt(json.dumps(value))}")
    return value


def _permission(value: Any, key: str) -> Permission | None:
    if value is None:
        return None
    if not isinstance(value, str) or value not in _DECISIONS:
        raise ReplyError(f"reply field {key!r} has an unknown value: {excerpt(json.dumps(value))}")
    return _DECISIONS[value]


def interpret(obj: Mapping[str, Any], hook: Hook, event: Event) -> dict[str, Any]:
    """The HookResult fields a JSON reply of any dialect asks for."""
    specific = _field(obj, "hookSpecificOutput", dict) or {}
    verdicts: list[tuple[Permission | None, str | None]] = []
    contexts: list[str] = []
    updated = _field(specific, "updatedInput", dict)

    # Claude Code
    verdicts.append((_permission(specific.get("permissionDecision"), "permissionDecision"),
                     _field(specific, "permissionDecisionReason", str)))
    request = _field(specific, "decision", dict)
    if request is not None:
        verdicts.append((_permission(request.get("behavior"), "decision.behavior"),
                         _field(request, "message", str)))
        updated = _field(request, "updatedInput", dict) or updated
    verdicts.append((_permission(obj.get("decision"), "decision"), _field(obj, "reason", str)))
    contexts.append(_field(specific, "additionalContext", str) or "")
    halt = False
    keep_going = _field(obj, "continue", bool)
    if keep_going is False:
        if dialect(hook.dialect).wire.CONTINUE_FALSE_BLOCKS:
            verdicts.append(("deny", None))
        else:
            halt = True
    # Cursor
    # Cursor documents snake_case; many real scripts print camelCase, so both are read.
    agent_message = _field(obj, "agent_message", str) or _field(obj, "agentMessage", str)
    verdicts.append((_permission(obj.get("permission"), "permission"), agent_message))
    followup = _field(obj, "followup_message", str)
    if followup:
        if event.name in STOP_EVENTS:
            verdicts.append(("deny", followup))
        else:
            contexts.append(followup)
    contexts.append(_field(obj, "additional_context", str) or "")
    updated = _field(obj, "updated_input", dict) or updated
    env = _field(obj, "env", dict) or {}
    # Cline
    error_message = _field(obj, "errorMessage", str)
    if _field(obj, "cancel", bool):
        verdicts.append(("deny", error_message))
    contexts.append(_field(obj, "contextModification", str) or "")
    # Cline's SDK engine: ``context`` (its name for contextModification), ``overrideInput``.
    contexts.append(_field(obj, "context", str) or "")
    updated = _field(obj, "overrideInput", dict) or updated

    permission = max((p for p, _ in verdicts), key=RANK.__getitem__, default=None)
    if permission == "allow" and hook.dialect != event.host and not hook.allow_approves:
        # Another host's allow is that script's default answer, not an approval here.
        permission = None
    reasons = [r for p, r in verdicts if r and p == permission]
    return {
        "permission": permission,
        "reason": reasons[0] if reasons else error_message or agent_message,
        "user_message": (_field(obj, "user_message", str) or _field(obj, "userMessage", str)
                         or error_message),
        "system_message": _field(obj, "systemMessage", str),
        "contexts": tuple(c for c in contexts if c),
        "updated_input": updated,
        "halt": halt,
        "stop_reason": _field(obj, "stopReason", str),
        "env": {str(k): str(v) for k, v in env.items()},
        "suppress_output": _field(obj, "suppressOutput", bool) is True,
        # Cursor's, else Claude Code's (updatedMCPToolOutput is its older, MCP-only name).
        "updated_tool_output": next((v for v in (obj.get("updated_mcp_tool_output"),
                                                 specific.get("updatedToolOutput"),
                                                 specific.get("updatedMCPToolOutput"))
                                     if v is not None), None),
    }


def read_reply(hook: Hook, event: Event, code: int, stdout: bytes,
               stderr: bytes) -> dict[str, Any]:
    """HookResult fields for a finished command; raises ReplyError for an unreadable reply."""
    kind, value = dialect(hook.dialect).wire.frame_reply(hook, event, code, stdout, stderr)
    return interpret(value, hook, event) if kind == "json" else dict(value)


def result_from_reply(hook: Hook, event: Event, code: int, stdout: bytes, stderr: bytes,
                      duration: float) -> HookResult:
    try:
        fields = read_reply(hook, event, code, stdout, stderr)
    except ReplyError as exc:
        return HookResult(hook=hook, status="error", error=str(exc), duration=duration)
    return HookResult(hook=hook, duration=duration, **fields)
