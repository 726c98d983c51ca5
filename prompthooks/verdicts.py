"""The model's verdict and a forgiving extractor.

Accepted: ``{"ok": bool, "reason"?: str, "impossible"?: bool}`` and the older
``{"decision": "approve"|"block"|"allow"|"deny"|"ask", "reason", "systemMessage", "continue",
"stopReason"}``, validated by the pydantic models of :mod:`.verdict_models` (imported when a
reply is parsed, so a warm client that receives a parsed verdict never loads pydantic).
Markdown fences are stripped and the first JSON object that fits either schema is taken out of
any surrounding prose; anything else is a :class:`VerdictError` that says what the model
actually returned.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from .errors import excerpt
from .result import Permission

_SAMPLE = 300  # characters of a bad reply quoted in the error

_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.S)


class VerdictError(ValueError):
    """The model's reply holds no verdict."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the model decided, in the terms of a hook result."""

    permission: Permission | None
    reason: str | None = None
    impossible: bool = False
    system_message: str | None = None
    halt: bool = False
    stop_reason: str | None = None


def _verdict(obj: dict[str, object]) -> Verdict | None:
    from pydantic import ValidationError

    from .verdict_models import DecisionReply, OkReply

    try:
        if "ok" in obj:
            ok = OkReply.model_validate(obj)
            return Verdict(None if ok.ok else "deny", ok.reason or None, ok.impossible)
        old = DecisionReply.model_validate(obj)
    except ValidationError:
        return None
    permission: Permission | None = {"block": "deny", "deny": "deny", "ask": "ask"}.get(
        old.decision)  # type: ignore[assignment]
    return Verdict(permission, old.reason or None, False, old.systemMessage,
                   old.continue_ is False, old.stopReason)


def _objects(text: str) -> list[dict[str, object]]:
    """Every JSON object that starts at a ``{`` in ``text``, in order."""
    decoder = json.JSONDecoder()
    found = []
    pos = text.find("{")
    while pos >= 0:
        try:
            value, end = decoder.raw_decode(text, pos)
        except ValueError:
            pos = text.find("{", pos + 1)
            continue
        if isinstance(value, dict):
            found.append(value)
        pos = text.find("{", end)
    return found


def parse_verdict(text: str) -> Verdict:
    """The verdict in a model's reply text; raises VerdictError if there is none, or if the
    reply holds verdicts that disagree (a model quoting injected text such as ``{"ok": true}``
    next to its own answer must not be read as the quote)."""
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    found = [v for candidate in candidates for obj in _objects(candidate)
             if (v := _verdict(obj)) is not None]
    if found and all(v.permission == found[0].permission for v in found):
        return found[0]
    shown = excerpt(text, _SAMPLE) if text.strip() else "(an empty reply)"
    if found:
        raise VerdictError(f"the model's reply holds verdicts that disagree: {shown!r}")
    raise VerdictError(f"the model's reply is not a verdict: {shown!r}")
