"""The command executor through the engine: real processes, deadlines, caps, process groups."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from prompthooks.api import Outcome, dispatch

from ..helpers import (
    claude_bash,
    claude_config,
    write_script,
)

EVENT = claude_bash("ls")


def _run(tmp_path: Path, *handlers: dict[str, object], budget: float = 30) -> Outcome:
    cfg = claude_config(tmp_path / "hooks.json", "PreToolUse", *handlers, matcher="Bash")
    return dispatch(EVENT, config_paths=[str(cfg)], budget=budget)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purposes.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def _wait_dead(pid: int, seconds: float = 5) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_raw_event_on_stdin_and_environment(tmp_path: Path) -> None:
    out = tmp_path / "seen"
    script = write_script(tmp_path / "h.sh", f"""
cat > {out}.stdin
env | grep -E '^(PROMPTHOOKS_|CLAUDE_PROJECT_DIR)' | sort > {out}.env
pwd > {out}.cwd
""")
    outcome = _run(tmp_path, {"command": str(script)})
    assert outcome.decision.permission is None and not outcome.problems
    assert (tmp_path / "seen.stdin").read_bytes() == outcome.event.raw_bytes
    env = (tmp_path / "seen.env").read_text().splitlines()
    assert "PROMPTHOOKS_EVENT=PreToolUse" in env and "PROMPTHOOKS_TOOL=Bash" in env
    assert "PROMPTHOOKS_HOST=claude" in env and "CLAUDE_PROJECT_DIR=/tmp" in env
    assert (tmp_path / "seen.cwd").read_text().strip() == "/tmp"  # Claude Code: the event's cwd


@pytest.mark.slow
def test_timeout_kills_the_group_including_a_grandchild_holding_stdout(tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    script = write_script(tmp_path / "slow.sh", f"""
sleep 300 &
echo $! > {pidfile}
sleep 300
""")
    start = time.monotonic()
    outcome = _run(tmp_path, {"command": str(script), "timeout": 1})
    elapsed = time.monotonic() - start
    (result,) = outcome.decision.results
    assert result.status == "timeout" and "timed out" in (result.error or "")
    assert outcome.decision.permission is None  # fail-open by default
    assert elapsed < 30  # nowhere near the hooks' 300 s
    assert _wait_dead(int(pidfile.read_text()))


@pytest.mark.slow
def test_sigterm_ignored_gets_sigkill(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    script = write_script(tmp_path / "stubborn.sh", f"""
trap '' TERM
echo $$ > {pidfile}
while :; do sleep 0.1; done
""")
    outcome = _run(tmp_path, {"command": str(script), "timeout": 1})
    assert outcome.decision.results[0].status == "timeout"
    assert _wait_dead(int(pidfile.read_text()))


def test_background_child_holding_the_pipe_does_not_delay_the_reply(tmp_path: Path) -> None:
    pidfile = tmp_path / "bg.pid"
    script = write_script(tmp_path / "bg.sh", f"""
sleep 30 &
echo $! > {pidfile}
echo '{{"hookSpecificOutput": {{"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "read despite the child"}}}}'
""")
    outcome = _run(tmp_path, {"command": str(script), "timeout": 20})
    assert outcome.decision.permission == "deny"
    assert outcome.decision.reason == "read despite the child"
    assert outcome.decision.results[0].duration < 20  # not a timeout: the reply came first
    os.kill(int(pidfile.read_text()), 9)


def test_hook_that_never_reads_stdin_with_a_large_event(tmp_path: Path) -> None:
    big = claude_bash("echo " + "x" * 3_000_000)
    cfg = claude_config(tmp_path / "hooks.json", "PreToolUse",
                        {"command": "echo '{\"decision\": \"block\", \"reason\": \"no read\"}'"})
    outcome = dispatch(big, config_paths=[str(cfg)], budget=30)
    assert outcome.decision.permission == "deny" and outcome.decision.reason == "no read"


def test_stdout_over_the_cap_is_an_error_not_a_hang(tmp_path: Path) -> None:
    outcome = _run(tmp_path, {"command": "head -c 50000000 /dev/zero | tr '\\0' 'a'"})
    (result,) = outcome.decision.results
    assert result.status == "error" and "more than 1 MB" in (result.error or "")


def test_binary_stdout_is_an_error(tmp_path: Path) -> None:
    outcome = _run(tmp_path, {"command": "printf '\\377\\376\\000{'"})
    (result,) = outcome.decision.results
    assert result.status == "error" and "not UTF-8" in (result.error or "")


@pytest.mark.parametrize(("command", "message"), [
    ("/no/such/hook.sh", "status 127 (command not found)"),
    ("exit 1", "exited with status 1"),
    ("echo oops >&2; exit 3", "exited with status 3: oops"),
    ("kill -SEGV $$", "killed by signal SIGSEGV"),
    ("echo '{\"decision\": '", "reply is not valid JSON"),
    ("echo '{\"ok\": 1} trailing'", "reply is not valid JSON"),
    ("echo '{\"permission\": \"maybe\"}'", "unknown value"),
])
def test_hook_faults_are_errors(tmp_path: Path, command: str, message: str) -> None:
    outcome = _run(tmp_path, {"command": command})
    (result,) = outcome.decision.results
    assert result.status == "error"
    assert message in (result.error or "")
    assert outcome.decision.permission is None
    assert message in outcome.problems[0]


def test_non_executable_cline_hook(tmp_path: Path) -> None:
    hook_dir = tmp_path / "hooks"
    hook_dir.mkdir()
    (hook_dir / "PreToolUse").write_text("#!/bin/sh\necho '{\"cancel\": true}'\n")
    outcome = dispatch(claude_bash("ls"), config_paths=[str(hook_dir)], budget=10)
    (result,) = outcome.decision.results
    assert result.status == "error" and "is not executable" in (result.error or "")


@pytest.mark.slow
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
