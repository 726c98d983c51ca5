"""Current Cline: the extension's SDK tool names with string-valued parameters, and the SDK/CLI
engine's own events and replies (``tool_call``, ``HOOK_CONTROL``, ``context``,
``overrideInput``). Payload shapes are those of cline/cline's hooks adapter and
``sdk/packages/core/src/hooks/hook-file-hooks.ts``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from prompthooks.api import parse_event

from ...helpers import claude_config, cline_event, reply, run_in_process, write_script

# The extension's PreToolUse for a run_commands call (hooks-adapter.ts + hook-factory.ts):
# legacy names, an SDK tool name, every parameter a string, a model, a millisecond timestamp.
EXTENSION_RUN_COMMANDS: dict[str, Any] = {
    "clineVersion": "3.40.0", "hookName": "PreToolUse", "timestamp": "1763951234567",
    "taskId": "conv-1", "workspaceRoots": ["/repo"], "userId": "u-1",
    "model": {"provider": "unknown", "slug": "unknown"},
    "preToolUse": {"toolName": "run_commands",
                   "parameters": {"commands": "[\"git push --force origin main\"]"}},
}


def _sdk(hook_name: str, **fields: Any) -> dict[str, Any]:
    """The SDK engine's common fields (createPayloadBase): an ISO timestamp, no model."""
    return {"hookName": hook_name, "clineVersion": "1.0.0",
            "timestamp": "2026-01-15T10:30:00Z", "taskId": "conv-123",
            "sessionContext": {"rootSessionId": "sess-1"}, "workspaceRoots": ["/repo"],
            "userId": "user", "agent_id": "agent-1", "parent_agent_id": None, **fields}


def _sdk_tool_call(name: str, tool_input: Any) -> dict[str, Any]:
    # The SDK sends its own object with the raw input AND the legacy block, stringified.
    params = {k: v if isinstance(v, str) else json.dumps(v)
              for k, v in (tool_input.items() if isinstance(tool_input, dict) else {})}
    return _sdk("tool_call", iteration=1,
                tool_call={"id": "call-456", "name": name, "input": tool_input},
                preToolUse={"toolName": name, "parameters": params})


@pytest.mark.parametrize(("tool_input", "command"), [
    ({"commands": ["git push --force origin main"]}, "git push --force origin main"),
    ({"commands": ["ls", "rm -rf build"]}, "ls\nrm -rf build"),
    ({"commands": [{"command": "rm", "args": ["-rf", "build"]}]}, "rm -rf build"),
    ({"command": "rm -rf build"}, "rm -rf build"),
    ({"cmd": "rm -rf build"}, "rm -rf build"),
    ("rm -rf build", "rm -rf build"),
    (["ls", "rm -rf build"], "ls\nrm -rf build"),
])
def test_every_run_commands_shape_is_a_bash_command(tool_input: Any, command: str) -> None:
    _, event = parse_event(_sdk_tool_call("run_commands", tool_input), environ={})
    assert (event.name, event.tool_name, event.host_tool_name) == \
        ("PreToolUse", "Bash", "run_commands")
    assert event.command == command


def test_extension_string_valued_parameters_are_decoded() -> None:
    _, event = parse_event(EXTENSION_RUN_COMMANDS, environ={})
    assert (event.tool_name, event.command) == ("Bash", "git push --force origin main")
    assert event.tool_input == {"commands": ["git push --force origin main"]}
    assert event.project_dir == "/repo"


@pytest.mark.parametrize(("name", "parameters", "tool"), [
    ("read_files", {"files": "[{\"path\": \"/repo/.env\"}]"}, "Read"),
    ("editor", {"path": "/repo/a.ts", "new_text": "{\"not\": \"decoded\"}"}, "Edit"),
    ("apply_patch", {"input": "*** Begin Patch"}, "Edit"),
    ("search_codebase", {"queries": "[\"TODO\"]"}, "Grep"),
    ("fetch_web_content", {"requests": "[{\"url\": \"https://x\"}]"}, "WebFetch"),
    ("github__create_issue", {"title": "x"}, "mcp__github__create_issue"),
])
def test_sdk_tool_names_map_to_canonical_tools(name: str, parameters: dict[str, str],
                                               tool: str) -> None:
    raw = cline_event("PreToolUse", toolName=name, parameters=parameters)
    _, event = parse_event(raw, environ={})
    assert event.tool_name == tool
    if name == "editor":  # a file's new text stays text, even when it looks like JSON
        assert event.tool_input["new_text"] == "{\"not\": \"decoded\"}"
    if name == "read_files":
        assert event.tool_input["files"] == [{"path": "/repo/.env"}]


def test_the_bash_guard_fires_on_run_commands(tmp_path: Path) -> None:
    """A Claude Code style guard matched on Bash blocks a force push sent as run_commands."""
    guard = write_script(tmp_path / "guard.sh", """
input=$(cat)
case "$input" in *push*--force*) echo "no force push" >&2; exit 2 ;; esac
""")
    config = claude_config(tmp_path / "hooks.json", "PreToolUse", {"command": str(guard)},
                           matcher="Bash")
    ext = reply(run_in_process(EXTENSION_RUN_COMMANDS, "--config", str(config)))
    assert ext == {"cancel": True, "errorMessage": "no force push"}
    sdk = reply(run_in_process(_sdk_tool_call("run_commands", {"commands": ["git push --force"]}),
                        "--config", str(config)))
    assert sdk == {"cancel": True, "errorMessage": "no force push"}
    ok = reply(run_in_process(_sdk_tool_call("run_commands", "git status"), "--config", str(config)))
    assert ok == {"cancel": False}


@pytest.mark.parametrize(("hook_name", "event", "subject"), [
    ("tool_call", "PreToolUse", None), ("tool_result", "PostToolUse", None),
    ("prompt_submit", "UserPromptSubmit", None), ("agent_start", "SessionStart", "startup"),
    ("agent_resume", "SessionStart", "resume"), ("agent_end", "Stop", None),
    ("agent_abort", "SessionEnd", "cancel"), ("agent_error", "SessionEnd", "error"),
    ("session_shutdown", "SessionEnd", "shutdown"), ("pre_compact", "PreCompact", None),
])
def test_sdk_engine_events_are_understood(hook_name: str, event: str,
                                          subject: str | None) -> None:
    host, parsed = parse_event(_sdk(hook_name), environ={})
    assert host.name == "cline"
    assert (parsed.host_event, parsed.name, parsed.subject) == (hook_name, event, subject)


def test_sdk_documented_tool_call_and_tool_result() -> None:
    # Verbatim from cline's sdk/examples/hooks/README.md.
    call = {"hookName": "tool_call", "clineVersion": "1.0.0",
            "timestamp": "2026-01-15T10:30:00Z", "taskId": "conv-123",
            "workspaceRoots": ["/path/to/repo"], "userId": "user", "iteration": 1,
            "tool_call": {"id": "call-456", "name": "read_files",
                          "input": {"filePath": "/path/to/file.ts"}}}
    _, event = parse_event(call, environ={})
    assert (event.name, event.tool_name) == ("PreToolUse", "Read")
    assert event.tool_input == {"filePath": "/path/to/file.ts"}
    result = {"hookName": "tool_result", "clineVersion": "1.0.0",
              "timestamp": "2026-01-15T10:30:00Z",
              "tool_result": {"id": "call-456", "name": "read_files",
                              "input": {"filePath": "/path/to/file.ts"},
                              "output": "file contents here", "error": None, "durationMs": 45}}
    _, after = parse_event(result, environ={})
    assert (after.name, after.tool_name, after.tool_response) == \
        ("PostToolUse", "Read", "file contents here")


def test_sdk_prompt_submit_reads_the_prompt() -> None:
    raw = _sdk("prompt_submit", userPromptSubmit={"prompt": "deploy it", "attachments": []})
    _, event = parse_event(raw, environ={})
    assert (event.name, event.prompt) == ("UserPromptSubmit", "deploy it")


def test_sdk_force_push_is_cancelled_by_a_cline_hook_file(tmp_path: Path) -> None:
    """Cline's own example hook shape: a PreToolUse file reading the SDK's tool_call, its
    answer on a HOOK_CONTROL line after log lines, honoured whatever the exit code."""
    write_script(tmp_path / "hooks" / "PreToolUse", r"""
input=$(cat)
echo "checking"
case "$input" in
  *'"hookName": "tool_call"'*push*--force*)
    printf 'HOOK_CONTROL\t{"cancel": true, "errorMessage": "force push refused"}\n'
    exit 1 ;;
esac
printf 'HOOK_CONTROL\t{"context": "checked by policy"}\n'
""", "#!/usr/bin/env bash")
    bad = run_in_process(_sdk_tool_call("run_commands", {"commands": ["git push --force"]}),
                  "--config", str(tmp_path / "hooks"))
    assert reply(bad) == {"cancel": True, "errorMessage": "force push refused"}
    good = run_in_process(_sdk_tool_call("run_commands", {"commands": ["git status"]}),
                   "--config", str(tmp_path / "hooks"))
    # The SDK engine's own name for the context, so it is not read as an error.
    assert reply(good) == {"cancel": False, "context": "checked by policy"}


def test_sdk_override_input_is_passed_on(tmp_path: Path) -> None:
    write_script(tmp_path / "hooks" / "PreToolUse", """
cat >/dev/null
echo '{"overrideInput": {"commands": ["git push --force-with-lease"]}}'
""")
    out = reply(run_in_process(_sdk_tool_call("run_commands", {"commands": ["git push --force"]}),
                        "--config", str(tmp_path / "hooks")))
    assert out == {"cancel": False,
                   "overrideInput": {"commands": ["git push --force-with-lease"]}}


def test_sdk_no_json_on_a_failing_exit_is_still_an_error(tmp_path: Path) -> None:
    write_script(tmp_path / "hooks" / "PreToolUse", "cat >/dev/null; echo oops; exit 3")
    proc = run_in_process(_sdk_tool_call("run_commands", "ls"), "--config", str(tmp_path / "hooks"))
    assert reply(proc) == {"cancel": False}
    assert "exited with status 3" in proc.stderr
