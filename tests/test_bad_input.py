"""Bad input: one clear line on stderr, a documented exit code, no traceback, and never a
block unless a fail-closed hook asked for one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .helpers import (
    claude_bash,
    claude_config,
    cline_event,
    cursor_config,
    reply,
    run_cli,
)

BAD_STDIN = [
    (b"", "no event on stdin"),
    (b"{not json", "not valid JSON"),
    (b"[]", "must be a JSON object, not list"),
    (b"\x00\x01binary\xff", "not valid JSON"),
    (b'{"x": 1}', "cannot tell which host"),
    (json.dumps({"session_id": "s", "hook_event_name": "Nope"}).encode(),
     "unknown Claude Code event 'Nope'"),
]


def _one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


@pytest.mark.slow
@pytest.mark.parametrize(("stdin", "message"), BAD_STDIN)
def test_bad_stdin_is_exit_1_with_one_line(tmp_path: Path, stdin: bytes, message: str) -> None:
    cfg = claude_config(tmp_path / "h.json", "PreToolUse", {"command": "exit 2"})
    proc = run_cli(stdin, "--config", str(cfg))
    assert proc.returncode == 1 and proc.stdout == ""
    assert message in _one_line(proc.stderr)


@pytest.mark.slow
@pytest.mark.parametrize("stdin", [b"", b"{not json", b"[]"])
def test_bad_stdin_with_a_fail_closed_hook_blocks(tmp_path: Path, stdin: bytes) -> None:
    cfg = claude_config(tmp_path / "h.json", "PreToolUse",
                        {"command": "exit 0", "failClosed": True})
    proc = run_cli(stdin, "--config", str(cfg))
    assert proc.returncode == 2  # Claude Code and Cursor: block, reason on stderr
    assert _one_line(proc.stderr).startswith(
        "prompthooks: Blocked by prompthooks: a managed or fail-closed hook could not judge this event (")


@pytest.mark.slow
def test_bad_stdin_with_a_fail_closed_hook_blocks_for_cline(tmp_path: Path) -> None:
    cfg = cursor_config(tmp_path / "h.json", "preToolUse",
                        {"command": "exit 0", "failClosed": True})
    proc = run_cli(b"{broken", "--host", "cline", "--config", str(cfg))
    assert proc.returncode == 0
    assert reply(proc)["cancel"] is True


@pytest.mark.slow
def test_unknown_event_does_not_block_even_with_fail_closed_hooks(tmp_path: Path) -> None:
    cfg = claude_config(tmp_path / "h.json", "PreToolUse",
                        {"command": "exit 0", "failClosed": True})
    proc = run_cli({"session_id": "s", "hook_event_name": "Nope"}, "--config", str(cfg))
    assert proc.returncode == 1


def test_config_not_json_is_one_line_and_exit_1(tmp_path: Path) -> None:
    cfg = tmp_path / "hooks.json"
    cfg.write_text("hooks: yes")
    proc = run_cli(claude_bash("ls"), "--config", str(cfg))
    assert proc.returncode == 1 and proc.stdout == ""
    assert _one_line(proc.stderr) == (f"prompthooks: config {cfg}: not valid JSON: line 1 "
                                      "column 1: Expecting value")


@pytest.mark.slow
def test_broken_config_does_not_silence_a_working_one(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    good = claude_config(tmp_path / "good.json", "PreToolUse",
                         {"command": "echo nope >&2; exit 2"})
    proc = run_cli(claude_bash("ls"), "--config", str(broken), "--config", str(good))
    assert proc.returncode == 0
    assert reply(proc)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "broken.json" in proc.stderr


@pytest.mark.slow
def test_broken_config_that_marked_a_hook_fail_closed_blocks(tmp_path: Path) -> None:
    cfg = tmp_path / "hooks.json"
    cfg.write_text(json.dumps({"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": "x", "failClosed": True, "timeout": "soon"}]}]}}))
    proc = run_cli(claude_bash("ls"), "--config", str(cfg))
    specific = reply(proc)["hookSpecificOutput"]
    assert specific["permissionDecision"] == "deny"
    assert "timeout" in specific["permissionDecisionReason"]
    other_event = run_cli({"session_id": "s", "hook_event_name": "Stop"}, "--config", str(cfg))
    assert other_event.stdout == "" and other_event.returncode == 1


def test_broken_managed_policy_fails_closed(tmp_path: Path) -> None:
    managed = tmp_path / "etc"
    managed.mkdir()
    (managed / "hooks.json").write_text("{oops")
    proc = run_cli(cline_event("PreToolUse", toolName="read_file", parameters={}),
                   "--managed-dir", str(managed), cwd=tmp_path)
    out = reply(proc)
    assert out["cancel"] is True and "not valid JSON" in out["errorMessage"]


@pytest.mark.slow
def test_missing_and_non_executable_hooks(tmp_path: Path) -> None:
    script = tmp_path / "noexec.sh"
    script.write_text("#!/bin/sh\nexit 2\n")
    cfg = claude_config(tmp_path / "h.json", "PreToolUse", {"command": str(script)},
                        {"command": str(tmp_path / "missing.sh")})
    proc = run_cli(claude_bash("ls"), "--config", str(cfg))
    assert proc.returncode == 0 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 2 and "Traceback" not in proc.stderr
    assert "status 126 (not executable)" in lines[0]
    assert "status 127 (command not found)" in lines[1]


@pytest.mark.parametrize(("args", "code"), [
    (["--host", "vscode"], 64),
    (["--budget", "soon"], 64),
    (["--nope"], 64),
])
def test_usage_errors_never_exit_2(args: list[str], code: int) -> None:
    proc = run_cli(b"{}", *args)
    assert proc.returncode == code
    assert _one_line(proc.stderr).startswith("prompthooks: ")


def test_debug_shows_the_traceback() -> None:
    proc = run_cli(b"{}", "--nope", env={"PROMPTHOOKS_DEBUG": "1"})
    assert "Traceback" in proc.stderr


def test_a_lone_surrogate_in_a_reply_cannot_break_the_output(tmp_path: Path) -> None:
    cfg = claude_config(tmp_path / "h.json", "PreToolUse", {"command":
                        """echo '{"decision": "block", "reason": "bad \\ud800 char"}'""",
                        "failClosed": True})
    proc = run_cli(claude_bash("ls"), "--config", str(cfg))
    assert proc.returncode == 0, proc.stderr
    assert reply(proc)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_deeply_nested_input_is_bad_input_and_fail_closed_blocks(tmp_path: Path) -> None:
    cfg = claude_config(tmp_path / "h.json", "PreToolUse", {"command": "exit 0",
                                                            "failClosed": True})
    proc = run_cli(b"[" * 100_000 + b"]" * 100_000, "--config", str(cfg))
    assert proc.returncode == 2 and "nested too deeply" in proc.stderr
    assert "Traceback" not in proc.stderr
