"""Verdicts keep their meaning across hosts: another dialect's "allow" is "no objection", not
this host's auto-approve, unless its handler says ``allow_approves``; a host's own allow, and
every dialect's deny, keep theirs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..helpers import (
    claude_bash,
    claude_config,
    cursor_config,
    cursor_event,
    reply,
    run_in_process,
    write_json,
    write_script,
)

CURSOR_EVENT = cursor_event("preToolUse", tool_name="Shell",
                            tool_input={"command": "git push origin main"})


def _cursor_allow(tmp_path: Path, **handler: Any) -> Path:
    """A typical Cursor script: allow unless the command is obviously dangerous."""
    script = write_script(tmp_path / "cursor-guard.sh", """
input=$(cat)
case "$input" in *"rm -rf"*) echo '{"permission": "deny", "agent_message": "no rm -rf"}'; exit 0 ;; esac
echo '{"permission": "allow"}'
""")
    return cursor_config(tmp_path / "cursor" / "hooks.json", "preToolUse",
                         {"command": str(script), **handler})


def test_cursor_default_allow_under_claude_is_no_objection(tmp_path: Path) -> None:
    out = reply(run_in_process(claude_bash("git push origin main"), "--config",
                        str(_cursor_allow(tmp_path))))
    assert out == {}  # Claude Code asks the user as it would without prompthooks


def test_the_same_script_under_cursor_keeps_its_allow(tmp_path: Path) -> None:
    out = reply(run_in_process(CURSOR_EVENT, "--config", str(_cursor_allow(tmp_path))))
    assert out == {"permission": "allow"}


def test_allow_approves_opts_in_per_handler(tmp_path: Path) -> None:
    config = _cursor_allow(tmp_path, allow_approves=True)
    out = reply(run_in_process(claude_bash("git push origin main"), "--config", str(config)))
    assert out["hookSpecificOutput"]["permissionDecision"] == "allow"


def test_a_foreign_deny_still_denies(tmp_path: Path) -> None:
    out = reply(run_in_process(claude_bash("rm -rf /"), "--config", str(_cursor_allow(tmp_path))))
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert out["hookSpecificOutput"]["permissionDecisionReason"] == "no rm -rf"


def test_claude_allow_is_claude_codes_own_and_no_objection_elsewhere(tmp_path: Path) -> None:
    script = write_script(tmp_path / "allow.sh", """
cat >/dev/null
echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}'
""")
    config = claude_config(tmp_path / "hooks.json", "PreToolUse", {"command": str(script)})
    own = reply(run_in_process(claude_bash("ls"), "--config", str(config)))
    assert own["hookSpecificOutput"]["permissionDecision"] == "allow"
    under_cursor = reply(run_in_process(CURSOR_EVENT, "--config", str(config)))
    assert "permission" not in under_cursor


def test_allow_approves_must_be_a_boolean(tmp_path: Path) -> None:
    config = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": "true", "allow_approves": "yes"}]}]}})
    proc = run_in_process(claude_bash("ls"), "--config", str(config))
    assert "allow_approves" in proc.stderr
