"""Anthropic-style message content, as Claude Code's session log and Cline's histories both
store it: a string, or blocks of ``text``, ``thinking``, ``tool_use`` and ``tool_result``."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from .conversation import Entry, Role


def compact(value: Any) -> str:
    """A tool's input or structured output as one short JSON text."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (ValueError, RecursionError):
        return str(value)


def result_text(content: Any) -> str:
    """A ``tool_result``'s content: a string, or blocks whose text is joined (other blocks,
    such as Cline's ``{query, result, success}``, as compact JSON)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, Mapping) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            elif isinstance(block, Mapping) and block.get("type") == "image":
                parts.append("[an image]")
            else:
                parts.append(compact(block))
        return "\n".join(parts)
    return compact(content) if content is not None else ""


# What of a user-role text is the user's words: the text, (another role, text) for text the
# host wrote in the user's turn, or None (left out).
UserText = Callable[[str], "str | tuple[Role, str] | None"]


def _said(role: str, text: str, user_text: UserText) -> Entry | None:
    if role == "assistant":
        return Entry("assistant", text) if text.strip() else None
    said = user_text(text)
    if isinstance(said, tuple):
        return Entry(said[0], said[1]) if said[1].strip() else None
    return Entry("user", said) if said and said.strip() else None


def entries(role: str, content: Any, names: dict[str, str],
            user_text: UserText = lambda t: t) -> list[Entry]:
    """The entries of one message. ``names`` maps tool_use ids to tool names (filled from the
    calls, read by the results); ``user_text`` picks what of a user's text is the request
    (None: not the user's words, left out)."""
    if isinstance(content, str):
        entry = _said(role, content, user_text)
        return [entry] if entry else []
    if not isinstance(content, list):
        return []
    out: list[Entry] = []
    for block in content:
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        if kind == "text":
            entry = _said(role, str(block.get("text") or ""), user_text)
            if entry:
                out.append(entry)
        elif kind == "tool_use":
            name = str(block.get("name") or "?")
            if isinstance(block.get("id"), str):
                names[block["id"]] = name
            out.append(Entry("tool_call", compact(block.get("input")), tool=name))
        elif kind == "tool_result":
            tool = block.get("name") or names.get(str(block.get("tool_use_id")))
            out.append(Entry("tool_result", result_text(block.get("content")),
                             tool=str(tool) if tool else None,
                             error=block.get("is_error") is True))
        # thinking, images, files the user attached: not the conversation's words
    return out
