"""Reading a verdict object that the reply's token cap cut off (see :mod:`.verdicts`).

A model that hits ``max_tokens`` mid-answer returns ``{"ok": false, "reason": "It delet`` with
no end. Only the object's top-level pairs written before the cut are read (pydantic_core's
partial JSON, a cut string kept as far as it goes), and only what they say without doubt
counts: ``"ok": false`` or ``"decision": "block"``/``"deny"`` complete before the cut is a
refusal; a cut ``"ok": fa``, a cut ``{"ok": true``, or pairs that disagree are not.
"""

from __future__ import annotations

import re

_CONTROL = dict.fromkeys(range(32), " ")
# The end of a text cut inside a literal or a number (``"ok": fa``): partial JSON drops it.
_CUT_LITERAL = re.compile(r':\s*([^\s"{}\[\],:]+)$')

# key, value, whether the end cut the value (a cut string keeps its start; any other is None)
Pair = tuple[str, object, bool]


def cut_pairs(text: str, start: int) -> list[Pair] | None:
    """The top-level pairs of the object at ``start`` when the end of ``text`` cuts it off;
    None when it is not cut off (it is complete, or malformed before the end)."""
    # Imported here: only a reply holding a cut or broken object comes this way, and the
    # verdict's pydantic models, loaded for any reply, import it anyway.
    from pydantic_core import from_json

    # A model may break a line inside its reason, which JSON forbids: a raw control character
    # reads as a space (outside a string it is one already).
    body = text[start:].translate(_CONTROL)
    try:
        from_json(body)
    except ValueError as exc:
        if not str(exc).startswith("EOF while parsing"):
            return None  # malformed before the end, or nested past the parser's limit
    else:
        return None  # complete
    said = from_json(body, allow_partial="trailing-strings")
    if not isinstance(said, dict):
        return None
    whole = from_json(body, allow_partial=True)  # without the string the end cut
    pairs: list[Pair] = [(key, value, False) for key, value in said.items()]
    if pairs:
        key, value, _ = pairs[-1]
        if key not in whole or whole[key] != value:
            pairs[-1] = (key, value, True)
    literal = _CUT_LITERAL.search(body)
    if literal:
        # The pair whose literal the end cut, if it is a top-level one: the one that
        # appears when a complete value stands in for the cut one.
        filled = from_json(body[:literal.start(1)] + "null", allow_partial=True)
        pairs += [(key, None, True) for key in filled if key not in said]
    return pairs


_DECISIONS: dict[object, str | None] = {"block": "deny", "deny": "deny", "ask": "ask",
                                        "approve": None, "allow": None}


def cut_permission(pairs: list[Pair]) -> tuple[bool, str | None]:
    """(whether the cut pairs say one verdict without doubt, that verdict's permission)."""
    said: set[str | None] = set()
    for key, value, partial in pairs:
        if key == "ok":
            if partial or not isinstance(value, bool):
                return False, None
            said.add(None if value else "deny")
        elif key == "decision":
            if partial or not isinstance(value, str) or value not in _DECISIONS:
                return False, None
            said.add(_DECISIONS[value])
    if len(said) != 1:
        return False, None
    return True, next(iter(said))


def cut_reason(pairs: list[Pair]) -> str:
    """The reason written before the cut, marked as cut when the cut fell inside it."""
    reasons = [(value, partial) for key, value, partial in pairs
               if key == "reason" and isinstance(value, str)]
    if not reasons:
        return "[the model's reason was cut off]"
    reason, partial = reasons[-1]
    reason = reason.rstrip()
    if partial:
        return f"{reason}... [cut off]"
    return reason or "[the model's reason was cut off]"
