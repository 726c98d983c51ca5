"""Claude Code's session log: ``~/.claude/projects/<project>/<session>.jsonl``, one JSON
object per line (``{"type": "user"|"assistant", "message": {"role", "content"}}``; tool
results are user lines of ``tool_result`` blocks). A subagent's own log, on SubagentStop, is
``agent_transcript_path`` (``<session>/subagents/agent-<id>.jsonl``).

Not every user line is the user's: tool results (``toolUseResult``, ``tool_result`` blocks),
injected text (``isMeta``), background tasks' ``<task-notification>``, commands' output,
system reminders; newer logs say who wrote a line in ``origin.kind`` (``human`` for the
user). What the user types while the agent works is an ``attachment`` line of type
``queued_command`` (its ``prompt``), not a user line. A compaction writes a
``compact_boundary`` system line and then a user line marked ``isCompactSummary`` holding the
summary the model continues from.

As Claude Code's own prompt Stop hooks, the judge gets the conversation since the last
compaction, with its summary; the summary and the latest request are looked for further back
when the tail read in full lacks them (a long session's request can lie megabytes back).
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

_FEEDBACK = "Stop hook feedback"
SUMMARY = "the host's summary of the conversation before its last compaction"
# Text Claude Code writes in the user's turn (older logs have no ``origin`` to say so).
_INJECTED = ("<task-notification>", "<local-command-stdout>", "<local-command-stderr>",
             "<local-command-caveat>", "<bash-input>", "<bash-stdout>", "<bash-stderr>",
             "<user-prompt-submit-hook>", "[Request interrupted by user")
_REMINDER = re.compile(r"<system-reminder>.*?(?:</system-reminder>|\Z)", re.S)
_COMMAND = re.compile(r"<command-name>\s*(.*?)\s*</command-name>", re.S)
_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.S)
# The lines a search further back parses, told by their keys (a key cannot appear unescaped
# in a string value, so a user's text cannot fake one): user lines without a tool's result,
# queued prompts and compaction lines.
_USER_LINE = re.compile(rb'"type"\s*:\s*"(?:user|queued_command)"')
_TOOL_LINE = re.compile(rb'"toolUseResult"\s*:|"type"\s*:\s*"tool_result"')
_COMPACTION = re.compile(rb'"isCompactSummary"\s*:\s*true|"subtype"\s*:\s*"compact_boundary"')


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


def _text(content: Any) -> str:
    return blocks.result_text(content) if content is not None else ""


def _user_words(human: bool | None) -> blocks.UserText:
    """What of a user line's text is the user's words (``human``: what ``origin`` says, None
    where the log predates it)."""
    def said(text: str) -> str | tuple[Role, str] | None:
        text = _REMINDER.sub("", text).strip()
        if not text:
            return None
        if human is False or (human is None and text.startswith(_INJECTED)):
            return ("host", text)
        command = _COMMAND.search(text)
        if command and text.startswith(("<command-name>", "<command-message>")):
            # A slash command: with arguments it is a request (``/fix-issue 42``); bare, it
            # is an operation on the session (``/model``, ``/compact``), not one.
            found = _ARGS.search(text)
            args = found.group(1).strip() if found else ""
            line = f"{command.group(1)} {args}".strip()
            return line if args else ("host", line)
        return text
    return said


def _human(line: Mapping[str, Any]) -> bool | None:
    origin = line.get("origin")
    if isinstance(origin, Mapping) and isinstance(origin.get("kind"), str):
        return bool(origin["kind"] == "human")
    return None


def _compaction(line: object) -> str | None:
    """"summary" for the line holding a compaction's summary, "boundary" for the line that
    marks one, else None."""
    if not isinstance(line, Mapping):
        return None
    if line.get("isCompactSummary") is True:
        return "summary"
    if line.get("type") == "system" and line.get("subtype") == "compact_boundary":
        return "boundary"
    return None


def _queued(line: Mapping[str, Any]) -> str | None:
    """The prompt of a message the user sent while the agent worked, if the line is one."""
    attachment = line.get("attachment")
    if (line.get("type") != "attachment" or not isinstance(attachment, Mapping)
            or attachment.get("type") != "queued_command"
            or attachment.get("commandMode", "prompt") != "prompt"):
        return None
    prompt = attachment.get("prompt")
    return prompt if isinstance(prompt, str) and prompt.strip() else None


def _line_entries(line: object, names: dict[str, str]) -> list[Entry]:
    if isinstance(line, Mapping) and (queued := _queued(line)):
        return [Entry("user", queued)]
    if not isinstance(line, Mapping) or line.get("type") not in ("user", "assistant"):
        return []  # summaries, snapshots, system and queue lines, other attachments
    message = line.get("message")
    if not isinstance(message, Mapping):
        return []
    content = message.get("content")
    if line.get("isMeta") is True:
        # Text the host injected; a stop hook's earlier reason is worth seeing.
        text = _text(content)
        return [Entry("hook_feedback", text)] if _FEEDBACK in text else []
    role = str(message.get("role") or line.get("type"))
    return blocks.entries(role, content, names, _user_words(_human(line)))


def _request(line: object) -> Entry | None:
    """The user's request a line holds, if it holds one."""
    if not isinstance(line, Mapping):
        return None
    if (queued := _queued(line)) is not None:
        return Entry("user", queued)
    if line.get("type") != "user" or "toolUseResult" in line or _compaction(line):
        return None
    said = [e for e in _line_entries(line, {}) if e.role != "hook_feedback"]
    if said and all(e.role == "user" for e in said):
        return Entry("user", "\n".join(e.text for e in said))
    return None


def _summary(line: Mapping[str, Any]) -> Entry:
    message = line.get("message")
    content = message.get("content") if isinstance(message, Mapping) else None
    return Entry("summary", _text(content), pin=SUMMARY)


def parse(read: Read, path: Path) -> Conversation:
    values, notes = json_lines(read)
    conversation = Conversation(notes=notes)
    # The last compaction in what was read in full: the conversation starts after it.
    cut = next((i for i in range(len(values) - 1, -1, -1) if _compaction(values[i])), None)
    compaction: object = values[cut] if cut is not None else None
    names: dict[str, str] = {}
    since = [e for line in values[(cut + 1 if cut is not None else 0):]
             for e in _line_entries(line, names)]
    asked = any(e.role == "user" for e in since)
    request: Entry | None = None
    if not asked and cut is not None:
        request = next((r for line in reversed(values[:cut]) if (r := _request(line))), None)
    request_first = request is not None  # older than the compaction
    want_request = not asked and request is None
    want_compaction = cut is None
    if read.head_cut and (want_request or want_compaction):
        for line in earlier_values(read, _wanted):
            if want_compaction and _compaction(line):
                compaction, want_compaction = line, False
            elif want_request and (found := _request(line)):
                request, want_request = found, False
                request_first = compaction is not None
            if not (want_request or want_compaction):
                break
        if want_request and not read.searched_all:
            notes.append(f"the latest user request was not found in the last "
                         f"{(read.searched + TAIL_BYTES) // (1024 * 1024):,} MiB of the "
                         "transcript")
    summary = (_summary(compaction) if isinstance(compaction, Mapping)
               and _compaction(compaction) == "summary" else None)
    if compaction is not None:
        notes.append("the conversation before the host's last compaction is left out"
                     + ("; its summary is kept" if summary else " (its summary was not found)"))
    pinned = [summary] if summary else []
    if request is not None:
        pinned = [request, *pinned] if request_first else [*pinned, request]
    conversation.entries = pinned + since
    # Between pinned entries lies what was left out; between them and the tail read in full,
    # what was not read (unless the summary was in that tail, just before it).
    conversation.gaps = set(range(1, len(pinned)))
    if pinned and cut is None:
        conversation.gaps.add(len(pinned))
    return conversation


def _wanted(line: bytes) -> bool:
    """Whether a line further back may be a compaction or the user's request."""
    return bool(_COMPACTION.search(line)
                or (_USER_LINE.search(line) and not _TOOL_LINE.search(line)))

