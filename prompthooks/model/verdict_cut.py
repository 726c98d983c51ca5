"""Reading a verdict object that the reply's token cap cut off (see :mod:`.verdicts`).

A model that hits ``max_tokens`` mid-answer returns ``{"ok": false, "reason": "It delet`` with
no end. Only the object's top-level pairs written before the cut are read, and only what they
say without doubt counts: ``"ok": false`` or ``"decision": "block"``/``"deny"`` complete before
the cut is a refusal; a cut ``"ok": fa``, a cut ``{"ok": true``, or pairs that disagree are not.
"""

from __future__ import annotations

import json
import re

_SPACE = " \t\r\n"
_DECODER = json.JSONDecoder(strict=False)
_PARTIAL_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{0,3})?$")
_LITERALS = ("true", "false", "null")
_NUMBER_CHARS = frozenset("0123456789+-.eE")
_CLOSERS = {"{": "}", "[": "]"}

# key, value, whether the end cut the value (a cut string keeps its start; any other is None)
Pair = tuple[str, object, bool]


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _SPACE:
        pos += 1
    return pos


def _open_string(text: str, pos: int) -> bool:
    """Whether the string whose body starts at ``pos`` runs to the end of ``text``."""
    escaped = False
    for char in text[pos:]:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == '"':
            return False
    return True


def _partial_string(body: str) -> str:
    body = _PARTIAL_ESCAPE.sub("", body)
    try:
        text = _DECODER.decode(f'"{body}"')
    except ValueError:
        return body
    return text if isinstance(text, str) else body


def _runs_to_end(rest: str) -> bool:
    """Whether a value that failed to parse is a value cut by the end of the text (a literal
    or number's start, or a container never closed), not a malformed one."""
    rest = rest.rstrip(_SPACE)
    if any(literal.startswith(rest) for literal in _LITERALS):
        return True
    if rest[0] in "-0123456789":
        return set(rest) <= _NUMBER_CHARS
    if rest[0] not in _CLOSERS:
        return False
    stack: list[str] = []
    in_string = escaped = False
    for char in rest:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in _CLOSERS:
            stack.append(_CLOSERS[char])
        elif char in "]}" and (not stack or stack.pop() != char or not stack):
            return False  # closed or mismatched before the end: malformed, not cut
    return bool(stack)


def cut_pairs(text: str, start: int) -> list[Pair] | None:
    """The top-level pairs of the object at ``start`` when the end of ``text`` cuts it off;
    None when it is not cut off (it is complete, or malformed before the end)."""
    pairs: list[Pair] = []
    pos = start + 1
    end = len(text)
    while True:
        pos = _skip(text, pos)
        if pos == end:
            return pairs
        if text[pos] != '"':
            return None
        if _open_string(text, pos + 1):
            return pairs  # cut inside a key
        try:
            key, pos = _DECODER.raw_decode(text, pos)
        except ValueError:  # a bad escape: malformed
            return None
        pos = _skip(text, pos)
        if pos == end:
            return pairs
        if text[pos] != ":":
            return None
        pos = _skip(text, pos + 1)
        if pos == end:
            return pairs
        value: object
        if text[pos] == '"' and _open_string(text, pos + 1):
            pairs.append((key, _partial_string(text[pos + 1:]), True))
            return pairs
        try:
            value, pos = _DECODER.raw_decode(text, pos)
        except (ValueError, RecursionError):
            if not _runs_to_end(text[pos:]):
                return None
            pairs.append((key, None, True))  # its value is unknown: cut before it ended
            return pairs
        pairs.append((key, value, False))
        pos = _skip(text, pos)
        if pos == end:
            return pairs
        if text[pos] != ",":
            return None
        pos += 1


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
            if partial or value not in _DECISIONS:
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
