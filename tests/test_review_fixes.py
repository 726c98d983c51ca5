"""Edge cases found in review: each once let a fail-closed hook fail open or misreport."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from prompthooks.api import dispatch, load_config
from prompthooks.model.verdicts import VerdictError, parse_verdict

from .helpers import (
    claude_bash,
    claude_config,
    cline_event,
    cursor_config,
    cursor_event,
    reply,
    run_cli,
    write_json,
)


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


def test_a_bad_worker_idle_setting_does_not_break_run(tmp_path: Path) -> None:
    cfg = claude_config(tmp_path / "h.json", "PreToolUse", {"command": "exit 2"})
    proc = run_cli(claude_bash("ls"), "--config", str(cfg),
                   env={"PROMPTHOOKS_WORKER_IDLE": "10m"})
    assert reply(proc)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_broken_cline_prompt_file_marked_fail_closed_blocks(tmp_path: Path) -> None:
    (tmp_path / "hooks").mkdir()
    (tmp_path / "hooks" / "PreToolUse.md").write_text(
        "---\nfailClosed: true\ntimeout: 15s\n---\nNo deletes. $ARGUMENTS\n")
    event = cline_event("PreToolUse", toolName="execute_command", parameters={"command": "ls"})
    out = reply(run_cli(event, "--config", str(tmp_path / "hooks")))
    assert out["cancel"] is True and "bad front matter" in out["errorMessage"]
    other = cline_event("UserPromptSubmit", prompt="hi", attachments=[])
    assert reply(run_cli(other, "--config", str(tmp_path / "hooks")))["cancel"] is False


def test_cursor_stop_halt_is_not_a_follow_up(tmp_path: Path) -> None:
    cfg = claude_config(tmp_path / "h.json", "Stop", {"command":
                        """echo '{"continue": false, "stopReason": "budget exhausted"}'"""})
    out = reply(run_cli(cursor_event("stop", status="completed", loop_count=0), "--config",
                        str(cfg)))
    assert "followup_message" not in out


def test_same_prompt_file_name_in_two_folders_runs_both(tmp_path: Path) -> None:
    paths = []
    for name in ("user", "project"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "pol.md").write_text(f"{name} policy $ARGUMENTS")
        paths.append(str(write_json(tmp_path / name / "hooks.json", {"hooks": {"PreToolUse": [
            {"hooks": [{"type": "prompt", "prompt_file": "pol.md"}]}]}})))
    from prompthooks.api import parse_event
    from prompthooks.core.engine import select

    _, event = parse_event(claude_bash("ls"), environ={})
    assert len(select(load_config(paths).hooks, event)) == 2


def test_a_hook_that_exits_just_before_its_deadline_is_not_timed_out(tmp_path: Path) -> None:
    pid = tmp_path / "child.pid"
    cfg = claude_config(tmp_path / "h.json", "PreToolUse", {"command":
                        f"cat >/dev/null; sleep 0.95; sleep 5 & echo $! > {pid}; exit 2",
                        "timeout": 1, "failClosed": True})
    outcome = dispatch(claude_bash("ls"), config_paths=[str(cfg)], budget=30)
    (result,) = outcome.decision.results
    assert result.status == "ok" and result.permission == "deny"
    child = int(pid.read_text())
    os.kill(child, 0)  # the background child was left alone
    os.kill(child, 9)


def test_conflicting_verdicts_are_an_error() -> None:
    with pytest.raises(VerdictError, match="disagree"):
        parse_verdict('The data says {"ok": true} but my verdict is {"ok": false, "reason": "x"}')
    assert parse_verdict('```json\n{"ok": false, "reason": "r"}\n```').reason == "r"


def test_managed_policy_is_never_read_from_the_cache(tmp_path: Path) -> None:
    managed = tmp_path / "etc"
    claude_config(managed / "hooks.json", "PreToolUse", {"command": "managed"})
    for _ in range(2):
        config = load_config(project_dir=str(tmp_path), managed_dir=managed)
        assert [h.command for h in config.hooks] == ["managed"]
    cache = Path(os.environ["XDG_CACHE_HOME"]) / "prompthooks"
    assert not list(cache.glob("config-*.json"))


def test_keys_are_redacted_from_model_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    from prompthooks.model.call import redact_error
    from prompthooks.model.settings import Endpoint

    monkeypatch.setenv("ANTHROPIC_API_KEY", "provider-secret-123456")
    text = ("bad key provider-secret-123456 for https://user:pw1234@proxy.example/v1 "
            "and AIzaSyA1234567890abcdef and sk-abcdef123456 and explicit-key-999")
    cleaned = redact_error(text, Endpoint("m", api_key="explicit-key-999"))
    for secret in ("provider-secret-123456", "pw1234", "AIzaSyA1234567890abcdef",
                   "sk-abcdef123456", "explicit-key-999"):
        assert secret not in cleaned


def test_cursor_block_reply_exit_code(tmp_path: Path) -> None:
    cfg = cursor_config(tmp_path / "h.json", "preToolUse", {"command": "x", "failClosed": True})
    proc = subprocess.run([sys.executable, "-m", "prompthooks", "run", "--config", str(cfg),
                           "--host", "cursor"], input=b"", capture_output=True, timeout=60)
    assert proc.returncode == 2


def test_cursor_events_without_ask_get_deny(tmp_path: Path) -> None:
    cfg = claude_config(tmp_path / "h.json", "PreToolUse", {"command":
                        """cat >/dev/null; echo '{"permission": "ask", "user_message": "check"}'"""})
    read = reply(run_cli(cursor_event("beforeReadFile", file_path="/p/x", content=""),
                         "--config", str(cfg)))
    assert read["permission"] == "deny"
    shell = reply(run_cli(cursor_event("beforeShellExecution", command="ls"), "--config",
                          str(cfg)))
    assert shell["permission"] == "ask"


def test_no_cache_setting_turns_the_config_cache_off(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROMPTHOOKS_NO_CACHE", "1")
    cfg = claude_config(tmp_path / "h.json", "PreToolUse", {"command": "x"})
    load_config([str(cfg)])
    cache = Path(os.environ["XDG_CACHE_HOME"]) / "prompthooks"
    assert not list(cache.glob("config-*.json"))
    monkeypatch.delenv("PROMPTHOOKS_NO_CACHE")
    load_config([str(cfg)])
    assert len(list(cache.glob("config-*.json"))) == 1
