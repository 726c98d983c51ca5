"""Replacing string values in a JSON text in place, leaving every other byte as it was (its
indentation, key order, spacing): ``autoupdate`` moves a pack's ``rev`` this way, as
pre-commit rewrites only the ``rev:`` lines of its config."""

from __future__ import annotations

import json
from collections.abc import Mapping
from json.decoder import scanstring  # type: ignore[attr-defined]

Path = tuple[int | str, ...]
_WS = " \t\n\r"
_DECODER = json.JSONDecoder()


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i


def string_spans(text: str) -> dict[Path, tuple[int, int]]:
    """Where each string value of the document lies (start and end offsets, quotes
    included), by its path. ValueError for text that is not one JSON value."""
    spans: dict[Path, tuple[int, int]] = {}

    def value(i: int, path: Path, depth: int) -> int:
        if depth > 200:
            raise ValueError("nested too deeply")
        i = _skip(text, i)
        if i >= len(text):
            raise ValueError("unexpected end")
        char = text[i]
        if char == '"':
            _, end = scanstring(text, i + 1)
            spans[path] = (i, end)
            return int(end)
        if char == "{":
            i = _skip(text, i + 1)
            if text[i:i + 1] == "}":
                return i + 1
            while True:
                i = _skip(text, i)
                if text[i:i + 1] != '"':
                    raise ValueError("expected a key")
                key, i = scanstring(text, i + 1)
                i = _skip(text, i)
                if text[i:i + 1] != ":":
                    raise ValueError("expected ':'")
                i = _skip(text, value(i + 1, (*path, key), depth + 1))
                if text[i:i + 1] == "}":
                    return i + 1
                if text[i:i + 1] != ",":
                    raise ValueError("expected ',' or '}'")
                i += 1
        if char == "[":
            i = _skip(text, i + 1)
            if text[i:i + 1] == "]":
                return i + 1
            index = 0
            while True:
                i = _skip(text, value(i, (*path, index), depth + 1))
                index += 1
                if text[i:i + 1] == "]":
                    return i + 1
                if text[i:i + 1] != ",":
                    raise ValueError("expected ',' or ']'")
                i += 1
        _, end = _DECODER.raw_decode(text, i)  # a number, true, false or null
        return int(end)

    end = _skip(text, value(0, (), 0))
    if end != len(text):
        raise ValueError("extra data after the document")
    return spans


def replace_strings(text: str, changes: Mapping[Path, str]) -> str:
    """``text`` with the string at each path replaced by the new value."""
    spans = string_spans(text)
    out = text
    for path, (start, end) in sorted(((p, spans[p]) for p in changes), key=lambda x: -x[1][0]):
        out = out[:start] + json.dumps(changes[path], ensure_ascii=False) + out[end:]
    return out
