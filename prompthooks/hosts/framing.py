"""Reading a command hook's stdout and exit code: the pieces every dialect's framing rule is
made of (each host's ``wire.frame_reply`` says which apply to hooks written for it)."""

from __future__ import annotations

import json
import signal
from typing import Any

from ..errors import excerpt

_MAX_CANDIDATES = 10_000  # '{' positions tried when looking for the last JSON object

# What a framing rule makes of a finished hook: a JSON reply to read field by field, or
# result fields decided by the framing itself (exit 2's block, plain text as context).
Framed = tuple[str, Any]


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


def failed(code: int, stderr: bytes) -> ReplyError:
    detail = excerpt(stderr)
    return ReplyError(describe_exit(code) + (f": {detail}" if detail else ""))


def exit_2_block(hook_name: str, stderr: bytes) -> Framed:
    reason = excerpt(stderr, 2000) or f"Blocked by hook '{hook_name}' (exit status 2)"
    return "fields", {"permission": "deny", "reason": reason}


def decode(stdout: bytes) -> str:
    try:
        return stdout.decode("utf-8")
    except UnicodeDecodeError:
        raise ReplyError(f"stdout is not UTF-8 text: {excerpt(stdout, 60)!r}") from None


def load_object(text: str) -> dict[str, Any]:
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
