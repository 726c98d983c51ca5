"""`prompthooks run` for Claude Code: real processes end to end, Claude Code's JSON out."""

from __future__ import annotations

from pathlib import Path

import pytest

from ...helpers import (
    approve,
    claude_bash,
    claude_config,
    claude_event,
    reply,
    run_in_process,
    write_json,
)

DENY = ('{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", '
        '"permissionDecisionReason": "no force pushes"}}')


def test_deny_with_reason(tmp_path: Path) -> None:
    cfg = claude_config(tmp_path / "h.json", "PreToolUse", {"command": f"echo '{DENY}'"},
                        matcher="Bash")
    proc = run_in_process(claude_bash("git push -f"), "--config", str(cfg))
    assert proc.returncode == 0, proc.stderr
    assert reply(proc) == {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": "no force pushes"}}


def test_exit_2_blocks_with_stderr_as_reason(tmp_path: Path) -> None:
    cfg = claude_config(tmp_path / "h.json", "PreToolUse",
                        {"command": "echo 'rm -rf is not allowed' >&2; exit 2"})
    out = reply(run_in_process(claude_bash("rm -rf /"), "--config", str(cfg)))
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert out["hookSpecificOutput"]["permissionDecisionReason"] == "rm -rf is not allowed"


def test_matcher_selects_hooks(tmp_path: Path) -> None:
    cfg = write_json(tmp_path / "h.json", {"hooks": {"PreToolUse": [
        {"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "exit 2"}]},
        {"matcher": "Ba.*", "hooks": [{"type": "command",
                                       "command": "echo matched-regex >&2; exit 2"}]},
    ]}})
    out = reply(run_in_process(claude_bash("ls"), "--config", str(cfg)))
    assert out["hookSpecificOutput"]["permissionDecisionReason"] == "matched-regex"


def test_no_opinion_prints_nothing(tmp_path: Path) -> None:
    cfg = claude_config(tmp_path / "h.json", "PreToolUse", {"command": "cat > /dev/null"})
    proc = run_in_process(claude_bash("ls"), "--config", str(cfg))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


def test_ask_beats_allow_and_updated_input(tmp_path: Path) -> None:
    allow = ('{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": '
             '"allow", "updatedInput": {"command": "ls -la"}}}')
    ask = '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask"}}'
    cfg = claude_config(tmp_path / "h.json", "PreToolUse", {"command": f"echo '{allow}'"},
                        {"command": f"echo '{ask}'"})
    specific = reply(run_in_process(claude_bash("ls"), "--config", str(cfg)))["hookSpecificOutput"]
    assert specific["permissionDecision"] == "ask"
    assert specific["updatedInput"] == {"command": "ls -la"}


def test_user_prompt_submit_block_and_plain_text_context(tmp_path: Path) -> None:
    cfg = write_json(tmp_path / "h.json", {"hooks": {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": "echo 'Sprint 23: auth'"},
        {"type": "command", "command": "echo '{\"decision\": \"block\", \"reason\": \"no secrets in prompts\"}'"},
    ]}]}})
    out = reply(run_in_process(claude_event("UserPromptSubmit", prompt="my key is sk-1"),
                        "--config", str(cfg)))
    assert out["decision"] == "block" and out["reason"] == "no secrets in prompts"
    assert out["hookSpecificOutput"] == {"hookEventName": "UserPromptSubmit",
                                         "additionalContext": "Sprint 23: auth"}


def test_stop_block_and_session_start_context(tmp_path: Path) -> None:
    cfg = write_json(tmp_path / "h.json", {"hooks": {
        "Stop": [{"hooks": [{"type": "command", "command":
                             "echo '{\"decision\": \"block\", \"reason\": \"tests fail\"}'"}]}],
        "SessionStart": [{"matcher": "startup", "hooks": [
            {"type": "command", "command": "echo 'ctx one'"},
            {"type": "command", "command": "echo '{\"hookSpecificOutput\": {\"hookEventName\": \"SessionStart\", \"additionalContext\": \"ctx two\"}}'"},
        ]}]}})
    stop = reply(run_in_process(claude_event("Stop", stop_hook_active=False), "--config", str(cfg)))
    assert stop == {"decision": "block", "reason": "tests fail"}
    start = reply(run_in_process(claude_event("SessionStart", source="startup"), "--config", str(cfg)))
    assert start["hookSpecificOutput"]["additionalContext"] == "ctx one\n\nctx two"
    resumed = run_in_process(claude_event("SessionStart", source="resume"), "--config", str(cfg))
    assert resumed.stdout == ""  # the matcher compares SessionStart's source


def test_continue_false_and_system_message(tmp_path: Path) -> None:
    cfg = claude_config(tmp_path / "h.json", "PostToolUse", {"command":
                        "echo '{\"continue\": false, \"stopReason\": \"quota\", \"systemMessage\": \"hi\"}'"})
    out = reply(run_in_process(claude_event("PostToolUse", tool_name="Bash", tool_input={},
                                     tool_response={}), "--config", str(cfg)))
    assert out == {"continue": False, "stopReason": "quota", "systemMessage": "hi"}


def test_permission_request(tmp_path: Path) -> None:
    cfg = claude_config(tmp_path / "h.json", "PermissionRequest", {"command": "exit 2"})
    out = reply(run_in_process(claude_event("PermissionRequest", tool_name="Bash",
                                     tool_input={"command": "ls"}), "--config", str(cfg)))
    assert out["hookSpecificOutput"]["decision"]["behavior"] == "deny"


def test_other_exit_code_is_non_blocking_and_reported(tmp_path: Path) -> None:
    cfg = claude_config(tmp_path / "h.json", "PreToolUse", {"command": "echo broken >&2; exit 1"})
    proc = run_in_process(claude_bash("ls"), "--config", str(cfg))
    assert (proc.returncode, proc.stdout) == (0, "")
    assert "exited with status 1: broken" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.slow
def test_fail_closed_timeout_blocks(tmp_path: Path) -> None:
    cfg = claude_config(tmp_path / "h.json", "PreToolUse",
                        {"command": "sleep 30", "timeout": 1, "failClosed": True})
    out = reply(run_in_process(claude_bash("ls"), "--config", str(cfg)))
    specific = out["hookSpecificOutput"]
    assert specific["permissionDecision"] == "deny"
    assert "fail-closed" in specific["permissionDecisionReason"]
    assert "timed out" in specific["permissionDecisionReason"]


def test_project_dir_discovery_from_environment(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    claude_config(project / ".prompthooks" / "hooks.json", "PreToolUse",
                  {"command": "echo \"$CLAUDE_PROJECT_DIR\" >&2; exit 2"})
    approve(project / ".prompthooks")
    proc = run_in_process(claude_bash("ls", cwd=str(tmp_path)), "--managed-dir", str(tmp_path / "none"),
                   env={"CLAUDE_PROJECT_DIR": str(project)})
    assert reply(proc)["hookSpecificOutput"]["permissionDecisionReason"] == str(project)
