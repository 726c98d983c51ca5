"""Cursor's agent transcripts: ``~/.cursor/projects/<project>/agent-transcripts/...``, named by
``transcript_path`` (``agent_transcript_path`` on subagentStop). Two formats:

- JSON Lines, role-nested: ``{"role": "user"|"assistant", "message": {"content": [...]}}``,
  the user's words wrapped in ``<user_query>`` (other user lines are rules and notices the
  host adds), ``{"type": "turn_ended"}`` control lines. Tool calls are there, their output is
  not (Cursor keeps it elsewhere).
- plain text (``.txt``): ``user:`` / ``assistant:`` lines open a message, ``[Tool call] Name``
  and ``[Tool result] Name`` a tool step, ``[Thinking]`` thinking (left out).

When the tail read in full holds no ``<user_query>``, the latest one is looked for further back
(the JSONL only; no compaction marker of Cursor's is known in it, so nothing is cut there).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...transcripts import blocks
from ...transcripts.conversation import Conversation, Entry, Role
from ...transcripts.reading import TAIL_BYTES, Read, earlier_values, json_lines

LIMIT, WHOLE = TAIL_BYTES, False
_QUERY = re.compile(r"<user_query>\s*(.*?)\s*</user_query>", re.S)
_MARKER = re.compile(r"^(user|assistant):\s*(.*)$|^\[(Tool call|Tool result|Thinking)\]\s*(.*)$")


def locate(raw: Mapping[str, Any], event_name: str,
           environ: Mapping[str, str]) -> tuple[list[str], list[Path]]:
    """(the transcript path the event names, if any; the folders it must lie in)."""
    path = raw.get("agent_transcript_path") if event_name == "SubagentStop" else None
    if not isinstance(path, str) or not path:
        path = raw.get("transcript_path")
    roots = [Path(os.path.expanduser("~/.cursor/projects"))]
    return ([path] if isinstance(path, str) and path else []), roots


def user_query(text: str) -> str | None:
    """The user's words in a user line: what ``<user_query>`` holds (None: a notice)."""
    found = _QUERY.findall(text)
    return "\n".join(found) if found else None


def parse(read: Read, path: Path) -> Conversation:
    if path.suffix == ".txt":
        return _parse_text(read.data.decode("utf-8", "replace"))
    values, notes = json_lines(read)
    conversation = Conversation(notes=notes)
    names: dict[str, str] = {}
    for line in values:
        conversation.entries += _entries(line, names)
    if read.head_cut and not any(e.role == "user" for e in conversation.entries):
        for line in earlier_values(read, lambda raw: b"<user_query>" in raw):
            request = [e for e in _entries(line, {}) if e.role == "user"]
            if request:
                conversation.entries[:0] = request[-1:]
                conversation.gaps.add(1)
                break
        else:
            if not read.searched_all:
                notes.append(f"the latest user request was not found in the last "
                             f"{(read.searched + TAIL_BYTES) // (1024 * 1024):,} MiB of the "
                             "transcript")
    return conversation


def _entries(line: object, names: dict[str, str]) -> list[Entry]:
    if not isinstance(line, Mapping) or line.get("role") not in ("user", "assistant"):
        return []  # turn_ended and other control lines
    message = line.get("message")
    content = message.get("content") if isinstance(message, Mapping) else None
    return blocks.entries(str(line["role"]), content, names, user_query)


def _parse_text(text: str) -> Conversation:
    conversation = Conversation()
    current: tuple[Role | None, str | None] = (None, None)
    body: list[str] = []

    def close() -> None:
        role, tool = current
        words = "\n".join(body).strip()
        if role == "user":
            words = user_query(words) or words
        if role is not None and (words or role in ("tool_call", "tool_result")):
            conversation.entries.append(Entry(role, words, tool=tool))

    for line in text.splitlines():
        match = _MARKER.match(line)
        if match is None:
            body.append(line)
            continue
        close()
        body = []
        if match.group(1):
            current = (match.group(1), None)  # type: ignore[assignment]
            body.append(match.group(2))
        elif match.group(3) == "Thinking":
            current = (None, None)
        else:
            role: Role = "tool_call" if match.group(3) == "Tool call" else "tool_result"
            current = (role, match.group(4).strip() or None)
    close()
    return conversation
