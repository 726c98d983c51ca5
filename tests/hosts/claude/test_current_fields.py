"""Claude Code's current payloads (code.claude.com/docs/en/hooks): PostToolUse
``tool_response`` objects, Stop ``last_assistant_message``, subagent ids and transcripts,
``notification_type``, ``permission_suggestions``, events without ``permission_mode``; and a
Stop hook's ``additionalContext``, which keeps the turn going."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from prompthooks.api import parse_event

from ...helpers import claude_config, reply, run_in_process, write_script

BASE = {"session_id": "abc123",
        "transcript_path": "~/.claude/projects/.../00893aaf-19fa-41d2-8238-13269b9b3ca0.jsonl",
        "cwd": "/tmp"}

# Verbatim from the docs (cwd made real).
POST_TOOL_USE: dict[str, Any] = {
    **BASE, "permission_mode": "default", "hook_event_name": "PostToolUse",
    "tool_name": "Write", "tool_input": {"file_path": "/path/to/file.txt",
                                         "content": "file content"},
    "tool_response": {"filePath": "/path/to/file.txt", "success": True},
    "tool_use_id": "toolu_01ABC123...", "duration_ms": 12}
STOP: dict[str, Any] = {
    **BASE, "permission_mode": "default", "hook_event_name": "Stop", "stop_hook_active": True,
    "last_assistant_message": "I've completed the refactoring. Here's a summary...",
    "background_tasks": [{"id": "task-001", "type": "shell", "status": "running",
                          "description": "tail logs", "command": "tail -f /var/log/syslog"}],
    "session_crons": [{"id": "cron-001", "schedule": "0 9 * * 1-5", "recurring": True,
                       "prompt": "check the build"}]}
SUBAGENT_STOP: dict[str, Any] = {
    **BASE, "permission_mode": "default", "hook_event_name": "SubagentStop",
    "stop_hook_active": False, "agent_id": "def456", "agent_type": "Explore",
    "agent_transcript_path": "~/.claude/projects/.../abc123/subagents/agent-def456.jsonl",
    "last_assistant_message": "Analysis complete. Found 3 potential issues...",
    "background_tasks": [], "session_crons": []}
PERMISSION_REQUEST: dict[str, Any] = {
    **BASE, "permission_mode": "default", "hook_event_name": "PermissionRequest",
    "tool_name": "Bash",
    "tool_input": {"command": "rm -rf node_modules", "description": "Remove node_modules"},
    "permission_suggestions": [{"type": "addRules", "rules": [
        {"toolName": "Bash", "ruleContent": "rm -rf node_modules"}], "behavior": "allow",
        "destination": "localSettings"}]}
NOTIFICATION: dict[str, Any] = {  # no permission_mode on this event
    **BASE, "hook_event_name": "Notification", "message": "Claude needs your permission",
    "title": "Permission needed", "notification_type": "permission_prompt"}


def test_post_tool_use_tool_response_is_the_object() -> None:
    _, event = parse_event(POST_TOOL_USE, environ={})
    assert event.tool_response == {"filePath": "/path/to/file.txt", "success": True}
    assert event.tool_name == "Write"


def test_subagent_stop_is_matched_on_its_agent_type() -> None:
    _, event = parse_event(SUBAGENT_STOP, environ={})
    assert (event.name, event.subject) == ("SubagentStop", "Explore")
    _, stop = parse_event(STOP, environ={})
    assert stop.stop_hook_active and stop.raw["last_assistant_message"].startswith("I've")


def test_permission_request_with_suggestions_and_no_tool_use_id() -> None:
    _, event = parse_event(PERMISSION_REQUEST, environ={})
    assert (event.name, event.tool_name, event.command) == \
        ("PermissionRequest", "Bash", "rm -rf node_modules")


@pytest.mark.slow
def test_notification_without_permission_mode_matches_its_type(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    hook = write_script(tmp_path / "n.sh", f"cat > {marker}")
    config = claude_config(tmp_path / "hooks.json", "Notification", {"command": str(hook)},
                           matcher="permission_prompt")
    proc = run_in_process(NOTIFICATION, "--config", str(config))
    assert proc.returncode == 0, proc.stderr
    assert "notification_type" in marker.read_text()


def test_a_hook_reads_last_assistant_message_from_its_input(tmp_path: Path) -> None:
    hook = write_script(tmp_path / "stop.py", """
import json, sys
data = json.load(sys.stdin)
if "summary" in data["last_assistant_message"] and not data["background_tasks"] == []:
    print(json.dumps({"decision": "block", "reason": "stop the background task first"}))
""", "#!/usr/bin/env python3")
    config = claude_config(tmp_path / "hooks.json", "Stop", {"command": str(hook)})
    out = reply(run_in_process(STOP, "--config", str(config)))
    assert out == {"decision": "block", "reason": "stop the background task first"}


def test_stop_additional_context_is_rendered_not_dropped(tmp_path: Path) -> None:
    hook = write_script(tmp_path / "stop.sh", """
cat >/dev/null
echo '{"hookSpecificOutput": {"hookEventName": "Stop", "additionalContext": "Please run the test suite before finishing"}}'
""")
    for event, data in (("Stop", STOP), ("SubagentStop", SUBAGENT_STOP)):
        config = claude_config(tmp_path / f"{event}.json", event, {"command": str(hook)})
        out = reply(run_in_process(data, "--config", str(config)))
        assert out == {"hookSpecificOutput": {
            "hookEventName": event,
            "additionalContext": "Please run the test suite before finishing"}}
