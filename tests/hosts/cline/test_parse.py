"""Cline's input parsed into the canonical event; the raw bytes kept untouched."""

from __future__ import annotations

import pytest

from prompthooks.api import parse_event

from ...helpers import cline_event


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
    assert host.name == "cline"
    assert (event.name, event.tool_name, event.subject) == (name, tool, subject)
    assert event.project_dir == "/ws"


def test_cline_prompt() -> None:
    _, event = parse_event(cline_event("UserPromptSubmit", prompt="add a button",
                                       attachments=[]), environ={})
    assert event.prompt == "add a button"
