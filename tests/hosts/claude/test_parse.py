"""Claude Code's input parsed into the canonical event; the raw bytes kept untouched."""

from __future__ import annotations

import json

from prompthooks.api import parse_event

from ...helpers import claude_bash, claude_event


def test_claude_pre_tool_use() -> None:
    data = json.dumps(claude_bash("rm -rf build", cwd="/work/p")).encode()
    host, event = parse_event(data, environ={"CLAUDE_PROJECT_DIR": "/work/p"})
    assert host.name == "claude"
    assert (event.name, event.tool_name, event.command) == ("PreToolUse", "Bash", "rm -rf build")
    assert event.project_dir == "/work/p"
    assert event.raw_bytes == data
    assert event.env["CLAUDE_PROJECT_DIR"] == "/work/p"


def test_claude_stop_and_session_start_subject() -> None:
    _, stop = parse_event(claude_event("Stop", stop_hook_active=True), environ={})
    assert stop.stop_hook_active
    _, start = parse_event(claude_event("SessionStart", source="resume"), environ={})
    assert start.subject == "resume"


def test_host_and_event_can_be_named() -> None:
    raw = {"tool_name": "Bash", "tool_input": {"command": "ls"}}
    host, event = parse_event(raw, host="claude", event_name="PreToolUse", environ={})
    assert host.name == "claude" and event.command == "ls"
