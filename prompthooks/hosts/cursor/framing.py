"""How a hook written for Cursor answers: exit 2 blocks (Cursor's deny), with the hook's own
``user_message``/``agent_message`` when its stdout is a JSON object holding them, else its
stderr; exit 0 with stdout is a JSON reply, empty stdout no opinion; any other exit code is a
hook error."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .._framing import Framed, decode, exit_2_block, failed, load_object

if TYPE_CHECKING:
    from ...core.events import Event
    from ...core.hook import Hook


def frame_reply(hook: Hook, event: Event, code: int, stdout: bytes, stderr: bytes) -> Framed:
    if code == 2:
        return _exit_2(hook, stdout, stderr)
    if code != 0:
        raise failed(code, stderr)
    text = decode(stdout).strip()
    return ("json", load_object(text)) if text else ("fields", {})


def _message(reply: dict[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = reply.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None


def _exit_2(hook: Hook, stdout: bytes, stderr: bytes) -> Framed:
    """Exit 2 is a deny whatever stdout says; Cursor keeps the messages of a JSON deny
    printed with it, verbatim, so they are the block's text (stderr's where one is missing).
    Read only for its messages: a reply that is not JSON, or has fields of the wrong type,
    still blocks."""
    kind, fields = exit_2_block(hook.name, stderr)
    try:
        reply = json.loads(stdout.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return kind, fields
    if not isinstance(reply, dict):
        return kind, fields
    agent = _message(reply, "agent_message", "agentMessage")
    user = _message(reply, "user_message", "userMessage")
    if agent:
        fields = {**fields, "reason": agent}
    if user:
        fields = {**fields, "user_message": user}
    return kind, fields
