"""Claude Code's current hooks reference (code.claude.com/docs/en/hooks): its newer events,
what their matchers see, how their replies are read back, the handler keys it has added, and
``continueOnBlock`` on prompt hooks (real runs; the model is the local fake)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from prompthooks.api import load_config, parse_event

from ...fake_model import FakeModel, verdict
from ...helpers import claude_bash, claude_config, reply, run_in_process, write_json, write_script

BASE = {"session_id": "abc123", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp"}


def _event(name: str, **fields: Any) -> dict[str, Any]:
    return {**BASE, "hook_event_name": name, **fields}


# Verbatim from the reference's examples (paths made short).
EVENTS: dict[str, dict[str, Any]] = {
    "PermissionDenied": _event("PermissionDenied", permission_mode="auto", tool_name="Bash",
                               tool_input={"command": "rm -rf /tmp/build"},
                               tool_use_id="toolu_01", reason="Blocked by classifier"),
    "UserPromptExpansion": _event("UserPromptExpansion", permission_mode="default",
                                  expansion_type="slash_command", command_name="example-skill",
                                  command_args="arg1 arg2", command_source="plugin",
                                  prompt="/example-skill arg1 arg2"),
    "PostToolBatch": _event("PostToolBatch", permission_mode="default", tool_calls=[
        {"tool_name": "Read", "tool_input": {"file_path": "/x/accounts.py"},
         "tool_use_id": "toolu_01", "tool_response": "1\tfrom x import y"}]),
    "StopFailure": _event("StopFailure", error="rate_limit",
                          error_details="429 Too Many Requests",
                          last_assistant_message="API Error: Rate limit reached"),
    "TaskCreated": _event("TaskCreated", permission_mode="default", task_id="task-001",
                          task_subject="Implement user authentication"),
    "TaskCompleted": _event("TaskCompleted", permission_mode="default", task_id="task-001",
                            task_subject="Implement user authentication"),
    "TeammateIdle": _event("TeammateIdle", permission_mode="default",
                           teammate_name="researcher", team_name="session-a1b2c3d4"),
    "ConfigChange": _event("ConfigChange", source="project_settings",
                           file_path="/p/.claude/settings.json"),
    "CwdChanged": _event("CwdChanged", old_cwd="/p", new_cwd="/p/src"),
    "FileChanged": _event("FileChanged", file_path="/p/.envrc", event="change"),
    "DirectoryAdded": _event("DirectoryAdded", directory="/other", source="slash_command"),
    "WorktreeRemove": _event("WorktreeRemove", worktree_path="/p/.claude/worktrees/a"),
    "PostCompact": _event("PostCompact", trigger="manual", compact_summary="Summary..."),
    "Setup": _event("Setup", trigger="init"),
    "InstructionsLoaded": _event("InstructionsLoaded", file_path="/p/CLAUDE.md",
                                 memory_type="Project", load_reason="session_start"),
    "Elicitation": _event("Elicitation", mcp_server_name="memory", message="Your name?",
                          requested_schema={"type": "object"}),
    "ElicitationResult": _event("ElicitationResult", mcp_server_name="memory",
                                action="accept", content={"name": "x"}),
}
# What each event's matcher is compared with (None: matchers are ignored there).
SUBJECTS = {"PermissionDenied": None, "UserPromptExpansion": "example-skill",
            "PostToolBatch": None, "StopFailure": "rate_limit", "TaskCreated": None,
            "TaskCompleted": None, "TeammateIdle": None, "ConfigChange": "project_settings",
            "CwdChanged": None, "FileChanged": ".envrc", "DirectoryAdded": "slash_command",
            "WorktreeRemove": None, "PostCompact": "manual", "Setup": "init",
            "InstructionsLoaded": "session_start", "Elicitation": "memory",
            "ElicitationResult": "memory"}


@pytest.mark.parametrize("name", sorted(EVENTS))
def test_the_newer_events_are_read(name: str) -> None:
    host, event = parse_event(EVENTS[name])
    assert (host.name, event.name, event.host_event) == ("claude", name, name)
    assert event.subject == SUBJECTS[name]
    if name == "PermissionDenied":
        assert (event.tool_name, event.command) == ("Bash", "rm -rf /tmp/build")


BLOCK = "cat >/dev/null; echo 'not now' >&2; exit 2"


@pytest.mark.parametrize(("name", "expected"), [
    ("UserPromptExpansion", {"decision": "block", "reason": "not now"}),
    ("PostToolBatch", {"decision": "block", "reason": "not now"}),
    ("ConfigChange", {"decision": "block", "reason": "not now"}),
    ("TaskCreated", {"decision": "block", "reason": "not now"}),
    # Read by Claude Code from exit 2 or {"continue": false} only: the reply says the latter.
    ("TeammateIdle", {"continue": False, "stopReason": "not now"}),
    ("TaskCompleted", {"continue": False, "stopReason": "not now"}),
    ("Elicitation", {"hookSpecificOutput": {"hookEventName": "Elicitation",
                                            "action": "decline"}}),
    ("ElicitationResult", {"hookSpecificOutput": {"hookEventName": "ElicitationResult",
                                                  "action": "decline"}}),
])
def test_a_block_is_said_as_claude_code_reads_it_on_each_event(
        tmp_path: Path, name: str, expected: dict[str, Any]) -> None:
    hook = write_script(tmp_path / "block.sh", BLOCK)
    config = claude_config(tmp_path / "hooks.json", name, {"command": str(hook)})
    proc = run_in_process(EVENTS[name], "--config", str(config))
    assert proc.returncode == 0, proc.stderr
    assert reply(proc) == expected


def test_a_matcher_selects_on_the_events_own_field(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    hook = write_script(tmp_path / "block.sh", f"cat >/dev/null; touch {marker}; exit 2")
    config = claude_config(tmp_path / "hooks.json", "ConfigChange", {"command": str(hook)},
                           matcher="user_settings|policy_settings")
    assert reply(run_in_process(EVENTS["ConfigChange"], "--config", str(config))) == {}
    assert not marker.exists()
    files = claude_config(tmp_path / "files.json", "FileChanged", {"command": str(hook)},
                          matcher=".envrc|.env")
    # FileChanged's matcher names files: the changed file's name, not its path, is compared.
    assert reply(run_in_process(EVENTS["FileChanged"], "--config", str(files))) == {}
    assert marker.exists()


def test_context_and_a_rewritten_tool_output_reach_claude_code(tmp_path: Path) -> None:
    context = write_script(tmp_path / "context.sh", """
cat >/dev/null
echo '{"hookSpecificOutput": {"hookEventName": "UserPromptExpansion", "additionalContext": "use the staging data"}}'
""")
    config = claude_config(tmp_path / "expansion.json", "UserPromptExpansion",
                           {"command": str(context)})
    assert reply(run_in_process(EVENTS["UserPromptExpansion"], "--config", str(config))) == {
        "hookSpecificOutput": {"hookEventName": "UserPromptExpansion",
                               "additionalContext": "use the staging data"}}
    redact = write_script(tmp_path / "redact.sh", """
cat >/dev/null
echo '{"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": {"stdout": "[redacted]", "stderr": ""}}}'
""")
    config = claude_config(tmp_path / "post.json", "PostToolUse", {"command": str(redact)})
    event = {**claude_bash("env"), "hook_event_name": "PostToolUse",
             "tool_response": {"stdout": "API_KEY=1", "stderr": ""}}
    assert reply(run_in_process(event, "--config", str(config))) == {"hookSpecificOutput": {
        "hookEventName": "PostToolUse",
        "updatedToolOutput": {"stdout": "[redacted]", "stderr": ""}}}


@pytest.mark.parametrize("name", ["WorktreeCreate", "MessageDisplay"])
def test_events_that_ask_a_hook_for_a_product_are_not_taken(tmp_path: Path, name: str) -> None:
    config = claude_config(tmp_path / "hooks.json", name, {"command": "true"})
    loaded = load_config([str(config)], keep_managed=False, trusted_only=False).loaded
    assert not loaded.hooks
    assert any(f"hooks.{name}: unknown Claude Code event" in line
               for line in loaded.unknown_events)


def test_handler_keys_of_the_current_reference(tmp_path: Path) -> None:
    config = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": "true", "statusMessage": "Checking...", "once": True},
        {"type": "prompt", "prompt": "p", "continueOnBlock": False},
        {"type": "command", "command": "true", "async": True, "asyncRewake": True,
         "if": "Bash(git *)", "args": ["-x"], "shell": "bash"},
    ]}]}})
    loaded = load_config([str(config)], keep_managed=False, trusted_only=False).loaded
    assert len(loaded.hooks) == 3
    said = "\n".join(loaded.warnings)
    assert "hooks[0]" not in said and "hooks[1]" not in said, said
    for text in ("'async' is not supported", "'asyncRewake' is not supported",
                 "'if' is not evaluated", "'args' is not supported",
                 "'shell' is not supported"):
        assert f"hooks.PreToolUse[0].hooks[2]: {text}" in said, said
    assert "unknown key" not in said


@pytest.mark.slow
@pytest.mark.parametrize(("setting", "ends_turn"), [(None, False), (True, False),
                                                    (False, True)])
def test_continue_on_block(tmp_path: Path, model: FakeModel, setting: bool | None,
                           ends_turn: bool) -> None:
    model.script(verdict(False, "it deletes the home directory"))
    handler: dict[str, Any] = {"type": "prompt", "prompt": "No deletes of ~."}
    if setting is not None:
        handler["continueOnBlock"] = setting
    config = claude_config(tmp_path / "hooks.json", "PreToolUse", handler)
    out = reply(run_in_process(claude_bash("rm -rf ~"), "--config", str(config)))
    assert model.requests, "the model was asked"
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert out["hookSpecificOutput"]["permissionDecisionReason"] == \
        "it deletes the home directory"
    if ends_turn:
        assert (out["continue"], out["stopReason"]) == (False, "it deletes the home directory")
    else:
        assert "continue" not in out


@pytest.mark.slow
def test_continue_on_block_false_leaves_an_allowed_call_alone(tmp_path: Path,
                                                              model: FakeModel) -> None:
    model.script(verdict(True))
    config = claude_config(tmp_path / "hooks.json", "PreToolUse",
                           {"type": "prompt", "prompt": "No deletes.",
                            "continueOnBlock": False})
    assert reply(run_in_process(claude_bash("ls"), "--config", str(config))) == {}
    assert model.requests


@pytest.mark.slow
def test_user_prompt_submit_is_answered_within_claude_codes_30_seconds(tmp_path: Path) -> None:
    """Claude Code gives a UserPromptSubmit hook 30 s unless its entry says otherwise, and a
    hook it kills blocks nothing: a fail-closed hook that hangs must still block in time."""
    started = tmp_path / "started"
    hook = write_script(tmp_path / "hang.sh", f"cat >/dev/null; touch {started}; sleep 120")
    config = claude_config(tmp_path / "hooks.json", "UserPromptSubmit",
                           {"command": str(hook), "failClosed": True})
    event = _event("UserPromptSubmit", permission_mode="default", prompt="deploy it")
    # With the 590 s budget of other events the run would still be waiting here.
    proc = run_in_process(event, "--config", str(config))
    assert started.exists(), "the hook ran"
    out = reply(proc)
    assert out["decision"] == "block" and "timed out" in out["reason"], (out, proc.stderr)


def test_the_budget_follows_the_event() -> None:
    from prompthooks import hosts

    claude = hosts.get("claude")
    assert hosts.budget(claude, "UserPromptSubmit") == 28.0
    assert hosts.budget(claude, "PreToolUse") == claude.budget == 590.0
    assert hosts.budget(hosts.get("cline"), "UserPromptSubmit") == 28.0


def test_an_mcp_tool_handler_is_skipped_not_the_whole_file(tmp_path: Path) -> None:
    config = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "mcp_tool", "server": "memory", "tool": "check"},
        {"type": "command", "command": "true"}]}]}})
    loaded = load_config([str(config)], keep_managed=False, trusted_only=False).loaded
    assert [hook.command for hook in loaded.hooks] == ["true"]
    assert any("type 'mcp_tool' is not supported" in w for w in loaded.warnings)


@pytest.mark.slow
def test_a_prompt_hook_judges_a_newer_event(tmp_path: Path, model: FakeModel) -> None:
    model.script(verdict(False, "project settings change only through review"))
    config = claude_config(tmp_path / "hooks.json", "ConfigChange",
                           {"type": "prompt", "prompt": "Refuse edits to project settings."},
                           matcher="project_settings")
    out = reply(run_in_process(EVENTS["ConfigChange"], "--config", str(config)))
    (request,) = model.requests
    assert "the configuration change is not applied" in request.system
    assert out == {"decision": "block",
                   "reason": "project settings change only through review"}


def test_a_user_prompt_submit_command_hook_has_claude_codes_default_timeout(
        tmp_path: Path) -> None:
    config = write_json(tmp_path / "hooks.json", {"hooks": {
        event: [{"hooks": [{"type": "command", "command": "true"},
                           {"type": "command", "command": "true", "timeout": 90}]}]
        for event in ("UserPromptSubmit", "PreToolUse")}})
    loaded = load_config([str(config)], keep_managed=False, trusted_only=False).loaded
    assert {(h.config_event, h.timeout) for h in loaded.hooks} == {
        ("UserPromptSubmit", 30.0), ("UserPromptSubmit", 90.0), ("PreToolUse", 600.0),
        ("PreToolUse", 90.0)}


def test_the_thin_clients_event_budgets_are_the_hosts() -> None:
    """The client that hands runs to the resident process reads the hosts' table
    (``hosts/markers.py``), never a host module: it must give up no later than the run it
    handed over."""
    from prompthooks import hosts
    from prompthooks.dispatcher import client

    expected = {event: seconds for host in hosts.HOSTS.values()
                for event, seconds in host.event_budgets.items()}
    assert expected == client._EVENT_BUDGETS
    event = json.dumps(_event("UserPromptSubmit", prompt="hi")).encode()
    assert client._event_budget(event, 590.0) == 28.0
    assert client._event_budget(json.dumps(EVENTS["ConfigChange"]).encode(), 590.0) == 590.0
