"""The model's verdict and a forgiving extractor.

Accepted: ``{"ok": bool, "reason"?: str, "impossible"?: bool}`` and the older
``{"decision": "approve"|"block"|"allow"|"deny"|"ask", "reason", "systemMessage", "continue",
"stopReason"}``, validated by the pydantic models of :mod:`.verdict_models` (imported when a
reply is parsed, so a warm client that receives a parsed verdict never loads pydantic).
Markdown fences are stripped and the first JSON object that fits either schema is taken out of
any surrounding prose. A refusal cut off by the reply's token cap (``{"ok": false, "reason":
"It dele``) is a refusal, its reason marked as cut (:mod:`.verdict_cut`). Anything else is a
:class:`VerdictError` that says what the model actually returned.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace

from ..core.result import Permission
from ..errors import excerpt
from .verdict_cut import Pair, cut_pairs, cut_permission, cut_reason

_SAMPLE = 300  # characters of a bad reply quoted in the error
# A verdict is a few hundred characters (the request allows 300 tokens). A longer reply is not
# searched: looking for JSON objects in it costs time that grows with the square of its length
# (a 1 MB reply of "{" took minutes), and that time is past the hook's deadline.
MAX_REPLY_CHARS = 20_000
_OBJECT_START = re.compile(r'\{\s*"')  # a verdict is an object with at least one key

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


def _objects(text: str) -> tuple[list[dict[str, object]], list[Pair] | None]:
    """Every JSON object with a key that starts at a ``{`` in ``text``, in order, and the
    top-level pairs of the first (outermost) object the end of the text cuts off, if any."""
    decoder = json.JSONDecoder()
    found = []
    cut = None
    match = _OBJECT_START.search(text)
    while match:
        try:
            value, end = decoder.raw_decode(text, match.start())
        except (ValueError, RecursionError):  # RecursionError: nested too deeply
            if cut is None:
                cut = cut_pairs(text, match.start())
            match = _OBJECT_START.search(text, match.start() + 1)
            continue
        if isinstance(value, dict):
            found.append(value)
        match = _OBJECT_START.search(text, end)
    return found, cut


def _cut_verdict(pairs: list[Pair] | None) -> tuple[bool, Verdict | None]:
    """(whether the reply ends in a cut-off verdict, the refusal it says if it says one
    without doubt). A cut refusal is a refusal: the model said no and ran out of tokens while
    saying why. A cut ``{"ok": true`` is not a verdict: its end might have said otherwise."""
    if not pairs:
        return False, None
    certain, permission = cut_permission(pairs)
    if not certain:
        return any(key in ("ok", "decision") for key, _, _ in pairs), None
    if permission != "deny":
        return True, None
    return True, Verdict("deny", cut_reason(pairs))


def parse_verdict(text: str) -> Verdict:
    """The verdict in a model's reply text; raises VerdictError if there is none, or if the
    reply holds verdicts that disagree (a model quoting injected text such as ``{"ok": true}``
    next to its own answer must not be read as the quote)."""
    if len(text) > MAX_REPLY_CHARS:
        raise VerdictError(f"the model's reply is too long to be a verdict ({len(text):,} "
                           f"characters, at most {MAX_REPLY_CHARS:,}): "
                           f"{excerpt(text, _SAMPLE)!r}")
    candidates = [m.group(1) for m in _FENCE.finditer(text)]
    objects, cut = _objects(text)
    found = [v for obj in [o for c in candidates for o in _objects(c)[0]] + objects
             if (v := _verdict(obj)) is not None]
    was_cut, refusal = _cut_verdict(cut)
    if was_cut and refusal is None:
        # A cut verdict that is not a sure refusal: with nothing else it is no verdict, and
        # beside a complete verdict it is one that may disagree.
        shown = excerpt(text, _SAMPLE)
        if found:
            raise VerdictError(f"the model's reply holds verdicts that disagree: {shown!r}")
        raise VerdictError(f"the model's reply was cut off before its verdict was complete: "
                           f"{shown!r}")
    if refusal is not None:
        found.append(refusal)
    if found and all(v.permission == found[0].permission for v in found):
        # "impossible" lifts a stop hook's block: an echoed {"ok": false, "impossible": true}
        # beside the model's own block must not, so it holds only if every verdict says so.
        return replace(found[0], impossible=all(v.impossible for v in found))
    shown = excerpt(text, _SAMPLE) if text.strip() else "(an empty reply)"
    if found:
        raise VerdictError(f"the model's reply holds verdicts that disagree: {shown!r}")
    raise VerdictError(f"the model's reply is not a verdict: {shown!r}")
