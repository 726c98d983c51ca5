"""Cline's task histories. A hook is handed no path: the history is found by the task's id.

- Current (the SDK that the extension and the CLI share):
  ``<sessions>/<id>/<id>.messages.json``, one JSON document ``{"messages": [...]}`` of
  Anthropic-style messages (tool results in user messages). ``<sessions>`` is
  ``$CLINE_SESSION_DATA_DIR``, else ``$CLINE_DATA_DIR/sessions``, else
  ``$CLINE_DIR/data/sessions``, else ``~/.cline/data/sessions``. The id is
  ``sessionContext.rootSessionId`` when the event has it, else ``taskId``. The user's words
  may be wrapped in ``<user_input mode="act">``.
- Older extension tasks: ``<VS Code globalStorage>/saoudrizwan.claude-dev/tasks/<taskId>/
  api_conversation_history.json``, a JSON list of the same messages.

Both are rewritten whole at turn boundaries, so they are read whole (up to a bound).

The extension writes a tool's result as user text opening with ``[tool for 'what'] Result:``
(``[execute_command for 'npm test'] Result:``, ``[attempt_completion] Result:``; older versions
put the result in the text blocks after that line, newer ones after it in the same block or in
a ``tool_result`` block): such text is the tool's result, never the user's words, up to the
next result or the message's end. It appends ``<environment_details>`` to user turns, and
writes notices of its own (``[TASK RESUMPTION]``, ``[ERROR]``) in the user's turn. The task is
the first user message (``<task>...</task>`` in the extension's histories): it is kept
whatever the budget, as the latest request is.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...transcripts import blocks
from ...transcripts.conversation import Conversation, Entry, Role
from ...transcripts.reading import WHOLE_BYTES, Read, Unreadable

LIMIT, WHOLE = WHOLE_BYTES, True
# An id becomes a folder and file name: nothing that could climb out of the folder.
_SAFE_ID = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9_.-]{0,199}\Z")
_EXTENSION = "saoudrizwan.claude-dev"
_EDITORS = ("Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf")
# Context the extension appends to the user's text on every turn: not the user's words.
_DETAILS = re.compile(r"<environment_details>.*?(?:</environment_details>|\Z)", re.S)


def sessions_dir(environ: Mapping[str, str]) -> Path:
    if environ.get("CLINE_SESSION_DATA_DIR"):
        return Path(environ["CLINE_SESSION_DATA_DIR"])
    if environ.get("CLINE_DATA_DIR"):
        return Path(environ["CLINE_DATA_DIR"]) / "sessions"
    if environ.get("CLINE_DIR"):
        return Path(environ["CLINE_DIR"]) / "data" / "sessions"
    return Path(os.path.expanduser("~/.cline/data/sessions"))


def storage_dirs(environ: Mapping[str, str]) -> list[Path]:
    """The extension's task folders, for the editors it runs in."""
    if sys.platform == "darwin":
        base = Path(os.path.expanduser("~/Library/Application Support"))
    elif sys.platform == "win32":
        base = Path(environ.get("APPDATA") or os.path.expanduser("~/AppData/Roaming"))
    else:
        base = Path(environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config"))
    return [base / editor / "User" / "globalStorage" / _EXTENSION / "tasks"
            for editor in _EDITORS]


def _ids(raw: Mapping[str, Any]) -> list[str]:
    context = raw.get("sessionContext")
    root = context.get("rootSessionId") if isinstance(context, Mapping) else None
    ids = [i for i in (root, raw.get("taskId")) if isinstance(i, str) and _SAFE_ID.match(i)]
    return list(dict.fromkeys(ids))


def locate(raw: Mapping[str, Any], event_name: str,
           environ: Mapping[str, str]) -> tuple[list[str], list[Path]]:
    """(the history files the task may have, first match wins; the folders they lie in)."""
    sessions = sessions_dir(environ)
    legacy = storage_dirs(environ)
    candidates = []
    for task in _ids(raw):
        candidates.append(str(sessions / task / f"{task}.messages.json"))
        candidates += [str(folder / task / "api_conversation_history.json")
                       for folder in legacy]
    return candidates, [sessions, *legacy]


# A tool's result as the extension writes it: ``[name]``, ``[name for '...']`` (a path, a
# command, a question...), then `` Result:`` at the start of a text block.
_RESULT = re.compile(r"\A\s*\[(?P<tool>[A-Za-z_][\w.-]*)(?:[ :][^\n]*?)?\] Result:")
_NOTICE = re.compile(r"\A\s*\[(?:TASK RESUMPTION|ERROR)\]")
# The extension's tools called in XML in the assistant's text.
_XML_TOOLS = frozenset({
    "execute_command", "read_file", "write_to_file", "replace_in_file", "search_files",
    "list_files", "list_code_definition_names", "browser_action", "use_mcp_tool",
    "access_mcp_resource", "ask_followup_question", "attempt_completion", "new_task",
    "plan_mode_respond", "act_mode_respond", "load_mcp_documentation", "web_fetch",
    "web_search", "condense", "summarize_task", "report_bug", "use_skill", "apply_patch",
    "generate_explanation", "use_subagents"})
_XML_CALL = re.compile(r"^\s*<(?P<tool>[a-z_]+)>", re.M)
_USER_INPUT = re.compile(r"<user_input\b[^>]*>(.*?)</user_input>", re.S)
_USER_MESSAGE = re.compile(r"<user_message>\s*(.*?)\s*</user_message>", re.S)
TASK = "the task, as the user first gave it"
# Results the extension writes with no ``[...] Result:`` line (a result of several blocks, a
# screenshot and the page's console output, for a tool called in XML): known by their words.
_BARE_RESULTS = (("The browser action has been executed.", "browser_action"),
                 ("The browser has been closed.", "browser_action"))
# The tools whose result is the user's reply (the extension writes it in one of these tags).
_ASKS = frozenset({"ask_followup_question", "attempt_completion", "plan_mode_respond"})
_REPLY = re.compile(r"(?:[^\n<]*\n)?<(answer|feedback|user_message)>(.*)</\1>", re.S)


def _user_text(text: str) -> str | tuple[Role, str] | None:
    text = _DETAILS.sub("", text).strip()
    wrapped = _USER_INPUT.findall(text)
    if wrapped:
        # The SDK wraps the user's words (a mode switch's notice and attachments around them).
        return "\n".join(w.strip() for w in wrapped) or None
    if _NOTICE.match(text):
        # The extension's own words; a resumed task's new instructions are the user's.
        words = _USER_MESSAGE.findall(text)
        return "\n".join(words) if words else ("host", text)
    return text or None


def _content(content: Any, called: str | None) -> Any:
    """A user message's content with the tool results written as text made ``tool_result``
    blocks: a result runs from its ``[...] Result:`` line to the next one or the end. The
    user's reply to a question or a completion follows its result as the user's text.
    ``called``: the tool the assistant called in XML just before, whose result this message
    holds even with no ``Result:`` line (the extension leaves it out of a result of several
    blocks, such as an MCP tool's text and image)."""
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if not isinstance(content, list):
        return content
    out: list[Any] = []
    result: dict[str, Any] | None = None
    heads: list[tuple[dict[str, Any], list[str]]] = []
    texts = [_DETAILS.sub("", str(b.get("text") or "")).strip() for b in content
             if isinstance(b, Mapping) and b.get("type") == "text"]
    if (called and not any(_RESULT.match(t) for t in texts)
            and not any(isinstance(b, Mapping) and b.get("type") == "tool_result"
                        for b in content)
            and not any(_NOTICE.match(t) for t in texts[:1])):
        result = {"type": "tool_result", "name": called, "content": ""}
        heads.append((result, []))
        out.append(result)
    for block in content:
        if not isinstance(block, Mapping) or block.get("type") != "text":
            if result is not None and isinstance(block, Mapping) and block.get("type") == "image":
                result["content"] += "\n[an image]"
                continue
            result = None
            out.append(block)
            continue
        text = _DETAILS.sub("", str(block.get("text") or "")).strip()
        found = _RESULT.match(text)
        bare = next((tool for start, tool in _BARE_RESULTS if text.startswith(start)), None)
        if found or bare:
            tool = found["tool"] if found else bare
            result = {"type": "tool_result", "name": tool, "content": text}
            heads.append((result, [text[found.end():] if found else text]))
            out.append(result)
        elif result is not None:
            if text:
                result["content"] = f"{result['content']}\n{text}".lstrip("\n")
                heads[-1][1].append(text)
        else:
            out.append(block)
    if heads and not heads[0][0]["content"]:
        out.remove(heads.pop(0)[0])  # nothing followed: no result after all
    for result, parts in heads:
        words = _reply(result["name"], parts)
        if words:
            out.insert(out.index(result) + 1, {"type": "text", "text": words})
    return out


def _reply(tool: str, parts: list[str]) -> str | None:
    """The user's words in the result of a tool that asks the user: a text block the
    extension wrote as ``<answer>``, ``<feedback>`` or ``<user_message>`` (after at most one
    line of its own). Only a whole block counts: a command's output or a file in the same
    result can hold such tags, never a block that is only them."""
    if tool not in _ASKS:
        return None
    for part in parts:
        found = _REPLY.fullmatch(part.strip())
        if found:
            return found.group(2).strip() or None
    return None


def _xml_call(content: Any) -> str | None:
    """The tool an assistant message calls in the extension's XML (``<read_file>`` opening a
    line), if it calls one that way."""
    texts = ([content] if isinstance(content, str) else
             [str(b.get("text") or "") for b in content
              if isinstance(b, Mapping) and b.get("type") == "text"]
             if isinstance(content, list) else [])
    for text in texts:
        for found in _XML_CALL.finditer(text):
            if found["tool"] in _XML_TOOLS:
                return found["tool"]
    return None


def parse(read: Read, path: Path) -> Conversation:
    try:
        data = json.loads(read.data)
    except (ValueError, RecursionError):
        raise Unreadable("the task history is not JSON (cut off or malformed)") from None
    messages = data.get("messages") if isinstance(data, Mapping) else data
    if not isinstance(messages, list):
        raise Unreadable("the task history holds no list of messages")
    conversation = Conversation()
    names: dict[str, str] = {}
    called: str | None = None  # the tool the last assistant message called in XML
    for message in messages:
        if isinstance(message, Mapping) and message.get("role") in ("user", "assistant"):
            role = str(message["role"])
            content = message.get("content")
            if role == "assistant":
                called = _xml_call(content)
            else:
                content, called = _content(content, called), None
            conversation.entries += blocks.entries(role, content, names, _user_text)
    entries = conversation.entries
    first = next((i for i, e in enumerate(entries) if e.role == "user"), None)
    if first is not None:
        entries[first] = Entry("user", entries[first].text, pin=TASK)
    return conversation
