"""How a hook written for Claude Code answers: exit 2 blocks with stderr as the reason; exit 0
with stdout starting with ``{`` is a JSON reply; other stdout is plain text (context for
UserPromptSubmit and SessionStart); any other exit code is a hook error."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._framing import Framed, decode, exit_2_block, failed, load_object

if TYPE_CHECKING:
    from ...core.events import Event
    from ...core.hook import Hook

_TEXT_CONTEXT = frozenset({"UserPromptSubmit", "SessionStart"})


def frame_reply(hook: Hook, event: Event, code: int, stdout: bytes, stderr: bytes) -> Framed:
    if code == 2:
        return exit_2_block(hook.name, stderr)
    if code != 0:
        raise failed(code, stderr)
    text = decode(stdout).strip()
    if not text:
        return "fields", {}
    if not text.startswith("{"):
        return "fields", {"contexts": (text,)} if event.name in _TEXT_CONTEXT else {}
    return "json", load_object(text)
