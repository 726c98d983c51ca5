"""Claude Code's session log: ``~/.claude/projects/<project>/<session>.jsonl``, one JSON
object per line (``{"type": "user"|"assistant", "message": {"role", "content"}}``; tool
results are user lines of ``tool_result`` blocks). A subagent's own log, on SubagentStop, is
``agent_transcript_path`` (``<session>/subagents/agent-<id>.jsonl``)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...transcripts import blocks
from ...transcripts.conversation import Conversation, Entry
from ...transcripts.reading import TAIL_BYTES, Read, json_lines

_FEEDBACK = "Stop hook feedback"


def locate(raw: Mapping[str, Any], event_name: str,
           environ: Mapping[str, str]) -> tuple[list[str], list[Path]]:
    """(the transcript path the event names, if any; the folders it must lie in)."""
    path = raw.get("agent_transcript_path") if event_name == "SubagentStop" else None
    if not isinstance(path, str) or not path:
        path = raw.get("transcript_path")
    roots = [Path(os.path.expanduser("~/.claude/projects"))]
    if environ.get("CLAUDE_CONFIG_DIR"):
        roots.append(Path(os.path.expanduser(environ["CLAUDE_CONFIG_DIR"])) / "projects")
    return ([path] if isinstance(path, str) and path else []), roots


LIMIT, WHOLE = TAIL_BYTES, False


def parse(read: Read, path: Path) -> Conversation:
    values, notes = json_lines(read)
    conversation = Conversation(notes=notes)
    names: dict[str, str] = {}
    for line in values:
        if not isinstance(line, Mapping) or line.get("type") not in ("user", "assistant"):
            continue  # summaries, snapshots, system and queue lines
        message = line.get("message")
        if not isinstance(message, Mapping):
            continue
        content = message.get("content")
        if line.get("isMeta") is True:
            # Text the host injected; a stop hook's earlier reason is worth seeing.
            text = blocks.result_text(content)
            if _FEEDBACK in text:
                conversation.entries.append(Entry("hook_feedback", text))
            continue
        role = str(message.get("role") or line.get("type"))
        conversation.entries += blocks.entries(role, content, names)
    return conversation
