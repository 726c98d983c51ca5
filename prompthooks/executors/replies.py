"""Reading a command hook's reply: exit code and stdout framing by the hook's dialect, then
one reader for the reply fields of all three dialects.

Framing (the rules of the host the hook was written for):
- Claude Code: exit 2 blocks with stderr as the reason; exit 0 with stdout starting with ``{`` is
  a JSON reply; other stdout is plain text (context for UserPromptSubmit and SessionStart);
  any other exit code is a hook error.
- Cursor: exit 2 blocks; exit 0 with stdout is a JSON reply (empty stdout: no opinion).
- Cline: exit 0; the LAST JSON object in stdout is the reply, log lines may precede it; no JSON
  at all means ``{"cancel": false}``; any non-zero exit code is a hook error.

The field reader is hand-written rather than a pydantic model so that an event with only
command hooks never pays pydantic's import (see the README, "Performance").
"""

from __future__ import annotations

import json
import signal
from collections.abc import Mapping
from typing import Any

from ..core.events import STOP_EVENTS, Event
from ..core.hook import Hook
from ..core.result import RANK, HookResult, Permission
from ..errors import excerpt

_DECISIONS: dict[str, Permission | None] = {
    "approve": "allow", "allow": "allow", "block": "deny", "deny": "deny", "ask": "ask",
    "defer": None,
}
_MAX_CANDIDATES = 10_000  # '{' positions tried when looking for Cline's last JSON object


class ReplyError(ValueError):
    """The reply cannot be read; the message says what was wrong and shows a sample."""


def describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"was killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    if code == 127:
        return "exited with status 127 (command not found)"
    if code == 126:
        return "exited with status 126 (not executable)"
    return f"exited with status {code}"


def _decode(stdout: bytes) -> str:
    try:
        return stdout.decode("utf-8")
    except UnicodeDecodeError:
        raise ReplyError(f"stdout is not UTF-8 text: {excerpt(stdout, 60)!r}") from None


def _load_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReplyError(f"reply is not valid JSON ({exc.msg}): {excerpt(text)!r}") from None
    if not isinstance(value, dict):
        raise ReplyError(f"reply is JSON but not an object: {excerpt(text)!r}")
    return value


def last_json_object(text: str) -> dict[str, Any] | None:
    """The last JSON object that ends the text (Cline's rule), or None if there is no JSON.

    Raises ReplyError when the text ends like JSON but no object can be read from it.
    """
    stripped = text.rstrip()
    if "{" not in stripped:
        return None
    if not stripped.endswith("}"):
        raise ReplyError(f"stdout does not end with a JSON object: {excerpt(stripped[-200:])!r}")
    decoder = json.JSONDecoder()
    pos = len(stripped)
    for _ in range(_MAX_CANDIDATES):
        pos = stripped.rfind("{", 0, pos)
        if pos < 0:
            break
        try:
            value, end = decoder.raw_decode(stripped, pos)
        except ValueError:
            continue
        if end == len(stripped) and isinstance(value, dict):
            return value
    raise ReplyError(f"no valid JSON object at the end of stdout: {excerpt(stripped[-200:])!r}")


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
        if hook.dialect == "cursor":  # Cursor's beforeSubmitPrompt: continue false blocks
            verdicts.append(("deny", None))
        else:
            halt = True
    # Cursor
    agent_message = _field(obj, "agent_message", str)
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

    permission = max((p for p, _ in verdicts), key=RANK.__getitem__, default=None)
    reasons = [r for p, r in verdicts if r and p == permission]
    return {
        "permission": permission,
        "reason": reasons[0] if reasons else error_message or agent_message,
        "user_message": _field(obj, "user_message", str) or error_message,
        "system_message": _field(obj, "systemMessage", str),
        "contexts": tuple(c for c in contexts if c),
        "updated_input": updated,
        "halt": halt,
        "stop_reason": _field(obj, "stopReason", str),
        "env": {str(k): str(v) for k, v in env.items()},
        "suppress_output": _field(obj, "suppressOutput", bool) is True,
        "updated_tool_output": obj.get("updated_mcp_tool_output"),
    }


def read_reply(hook: Hook, event: Event, code: int, stdout: bytes,
               stderr: bytes) -> dict[str, Any]:
    """HookResult fields for a finished command; raises ReplyError for an unreadable reply."""
    if code == 2 and hook.dialect != "cline":
        reason = excerpt(stderr, 2000) or f"Blocked by hook '{hook.name}' (exit status 2)"
        return {"permission": "deny", "reason": reason}
    if code != 0:
        detail = excerpt(stderr)
        raise ReplyError(describe_exit(code) + (f": {detail}" if detail else ""))
    text = _decode(stdout)
    if hook.dialect == "cline":
        obj = last_json_object(text)
        return interpret(obj, hook, event) if obj is not None else {}
    stripped = text.strip()
    if not stripped:
        return {}
    if hook.dialect == "claude" and not stripped.startswith("{"):
        return {"contexts": (stripped,)} if event.name in _TEXT_CONTEXT else {}
    return interpret(_load_object(stripped), hook, event)


_TEXT_CONTEXT = frozenset({"UserPromptSubmit", "SessionStart"})


def result_from_reply(hook: Hook, event: Event, code: int, stdout: bytes, stderr: bytes,
                      duration: float) -> HookResult:
    try:
        fields = read_reply(hook, event, code, stdout, stderr)
    except ReplyError as exc:
        return HookResult(hook=hook, status="error", error=str(exc), duration=duration)
    return HookResult(hook=hook, duration=duration, **fields)
