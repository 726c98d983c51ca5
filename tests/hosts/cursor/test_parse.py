"""Cursor's input parsed into the canonical event; the raw bytes kept untouched."""

from __future__ import annotations

import json

import pytest

from prompthooks.api import parse_event

from ...helpers import cursor_event


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
    assert host.name == "cursor"
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
