"""Each host's input parsed into the canonical event; the raw bytes kept untouched."""

from __future__ import annotations

import json

import pytest

from prompthooks.api import parse_event
from prompthooks.errors import InputError

from ..helpers import claude_bash, claude_event, cline_event, cursor_event


def test_claude_pre_tool_use() -> None:
    data = json.dumps(claude_bash("rm -rf build", cwd="/work/p")).encode()
    host, event = parse_event(data, environ={"CLAUDE_PROJECT_DIR": "/work/p"})
    assert host.NAME == "claude"
    assert (event.name, event.tool_name, event.command) == ("PreToolUse", "Bash", "rm -rf build")
    assert event.project_dir == "/work/p"
    assert event.raw_bytes == data
    assert event.env["CLAUDE_PROJECT_DIR"] == "/work/p"


def test_claude_stop_and_session_start_subject() -> None:
    _, stop = parse_event(claude_event("Stop", stop_hook_active=True), environ={})
    assert stop.stop_hook_active
    _, start = parse_event(claude_event("SessionStart", source="resume"), environ={})
    assert start.subject == "resume"


@pytest.mark.parametrize(("cursor_name", "fields", "name", "tool", "command"), [
    ("beforeShellExecution", {"command": "git push -f", "cwd": "/p"}, "PreToolUse", "Bash",
     "git push -f"),
    ("preToolUse", {"tool_name": "Shell", "tool_input": {"command": "ls"}}, "PreToolUse", "Bash",
     "ls"),
    ("preToolUse", {"tool_name": "MCP:search", "tool_input": {}}, "PreToolUse",
     "mcp__unknown__search", None),
    ("beforeMCPExecution", {"tool_name": "search", "tool_input": "{\"q\": 1}"}, "PreToolUse",
     "mcp__unknown__search", None),
    ("beforeReadFile", {"file_path": "/p/.env", "content": "X=1"}, "PreToolUse", "Read", None),
    ("afterFileEdit", {"file_path": "/p/a.ts", "edits": []}, "PostToolUse", "Write", None),
    ("beforeSubmitPrompt", {"prompt": "hi"}, "UserPromptSubmit", None, None),
    ("stop", {"status": "completed", "loop_count": 0}, "Stop", None, None),
])
def test_cursor_events(cursor_name: str, fields: dict[str, object], name: str,
                       tool: str | None, command: str | None) -> None:
    host, event = parse_event(cursor_event(cursor_name, root="/p", **fields), environ={})
    assert host.NAME == "cursor"
    assert (event.name, event.tool_name, event.command) == (name, tool, command)
    assert event.project_dir == "/p"
    assert event.env["CURSOR_PROJECT_DIR"] == "/p" and event.env["CLAUDE_PROJECT_DIR"] == "/p"
    assert event.env["CURSOR_VERSION"] == "1.7.2"


def test_cursor_mcp_input_string_becomes_object_and_stop_loop_count() -> None:
    _, mcp = parse_event(cursor_event("beforeMCPExecution", tool_name="t",
                                      tool_input="{\"q\": 1}"), environ={})
    assert mcp.tool_input == {"q": 1}
    _, stop = parse_event(cursor_event("stop", status="completed", loop_count=2), environ={})
    assert stop.loop_count == 2 and stop.stop_hook_active


def test_cursor_bom_is_stripped() -> None:
    data = b"\xef\xbb\xbf" + json.dumps(cursor_event("beforeSubmitPrompt", prompt="x")).encode()
    _, event = parse_event(data, environ={})
    assert event.prompt == "x"
    assert not event.raw_bytes.startswith(b"\xef\xbb\xbf")


@pytest.mark.parametrize(("hook", "data", "name", "tool", "subject"), [
    ("PreToolUse", {"toolName": "execute_command", "parameters": {"command": "ls"}},
     "PreToolUse", "Bash", None),
    ("PreToolUse", {"toolName": "write_to_file", "parameters": {"path": "a.js"}},
     "PreToolUse", "Write", None),
    ("PreToolUse", {"toolName": "use_mcp_tool",
                    "parameters": {"server_name": "github", "tool_name": "create_issue"}},
     "PreToolUse", "mcp__github__create_issue", None),
    ("PostToolUse", {"toolName": "read_file", "parameters": {}, "result": "x", "success": True,
                     "executionTimeMs": 5}, "PostToolUse", "Read", None),
    ("TaskStart", {"taskMetadata": {"taskId": "t", "ulid": "u", "initialTask": "go"}},
     "SessionStart", None, "startup"),
    ("TaskResume", {"taskMetadata": {}}, "SessionStart", None, "resume"),
    ("TaskCancel", {"taskMetadata": {}}, "SessionEnd", None, "cancel"),
    ("TaskComplete", {"taskMetadata": {}}, "Stop", None, None),
])
def test_cline_events(hook: str, data: dict[str, object], name: str, tool: str | None,
                      subject: str | None) -> None:
    host, event = parse_event(cline_event(hook, root="/ws", **data), environ={})
    assert host.NAME == "cline"
    assert (event.name, event.tool_name, event.subject) == (name, tool, subject)
    assert event.project_dir == "/ws"


def test_cline_prompt() -> None:
    _, event = parse_event(cline_event("UserPromptSubmit", prompt="add a button",
                                       attachments=[]), environ={})
    assert event.prompt == "add a button"


@pytest.mark.parametrize(("data", "message"), [
    (b"", "no event on stdin"),
    (b"   \n", "no event on stdin"),
    (b"{not json", "not valid JSON"),
    (b"[1, 2]", "must be a JSON object"),
    (b'"text"', "must be a JSON object"),
    (b"\xff\xfe\x00", "not valid JSON"),
    (b'{"foo": 1}', "cannot tell which host"),
    (json.dumps(claude_event("Bogus")).encode(), "unknown Claude Code event 'Bogus'"),
    (json.dumps(cursor_event("bogusEvent")).encode(), "unknown Cursor event"),
    (json.dumps(cline_event("Bogus")).encode(), "unknown Cline event"),
])
def test_bad_input_is_one_clear_error(data: bytes, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_event(data, environ={})


def test_host_and_event_can_be_named() -> None:
    raw = {"tool_name": "Bash", "tool_input": {"command": "ls"}}
    host, event = parse_event(raw, host="claude", event_name="PreToolUse", environ={})
    assert host.NAME == "claude" and event.command == "ls"
