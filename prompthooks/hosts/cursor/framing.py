"""How a hook written for Cursor answers: exit 2 blocks (Cursor's deny); exit 0 with stdout
is a JSON reply, empty stdout no opinion; any other exit code is a hook error."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._framing import Framed, decode, exit_2_block, failed, load_object

if TYPE_CHECKING:
    from ...core.events import Event
    from ...core.hook import Hook


def frame_reply(hook: Hook, event: Event, code: int, stdout: bytes, stderr: bytes) -> Framed:
    if code == 2:
        return exit_2_block(hook.name, stderr)
    if code != 0:
        raise failed(code, stderr)
    text = decode(stdout).strip()
    return ("json", load_object(text)) if text else ("fields", {})
