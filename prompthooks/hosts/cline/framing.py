"""How a hook written for Cline answers. Its reply is JSON on stdout: a ``HOOK_CONTROL<TAB>``
line (the SDK engine's form; the last one counts), else the LAST JSON object in stdout, log
lines before it allowed (the extension's rule; a whole-stdout object is one too). Valid JSON
is honoured whatever the exit code, as both engines do. No JSON at all means
``{"cancel": false}`` on exit 0 and a hook error otherwise (exit 2 is not a block here)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._framing import Framed, ReplyError, decode, failed, last_json_object, load_object

if TYPE_CHECKING:
    from ...core.events import Event
    from ...core.hook import Hook

CONTROL_PREFIX = "HOOK_CONTROL\t"


def frame_reply(hook: Hook, event: Event, code: int, stdout: bytes, stderr: bytes) -> Framed:
    try:
        text = decode(stdout)
        control = [line for line in text.splitlines() if line.startswith(CONTROL_PREFIX)]
        obj = (load_object(control[-1][len(CONTROL_PREFIX):]) if control
               else last_json_object(text))
    except ReplyError:
        if code != 0:
            raise failed(code, stderr) from None
        raise
    if obj is not None:
        return "json", obj
    if code != 0:
        raise failed(code, stderr)
    return "fields", {}
