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


def entries(role: str, content: Any, names: dict[str, str],
            user_text: Callable[[str], str | None] = lambda t: t) -> list[Entry]:
    """The entries of one message. ``names`` maps tool_use ids to tool names (filled from the
    calls, read by the results); ``user_text`` picks what of a user's text is the request
    (None: not the user's words, left out)."""
    text_role: Role = "assistant" if role == "assistant" else "user"
    if isinstance(content, str):
        text = content if role == "assistant" else user_text(content)
        return [Entry(text_role, text)] if text and text.strip() else []
    if not isinstance(content, list):
        return []
    out: list[Entry] = []
    for block in content:
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        if kind == "text":
            raw = str(block.get("text") or "")
            text = raw if role == "assistant" else user_text(raw)
            if text and text.strip():
                out.append(Entry(text_role, text))
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
