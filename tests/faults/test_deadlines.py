"""Fault matrix, deadlines: the run answers within its budget whatever its hooks do, the
default budgets per host, and exit code 3 for an internal error."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import prompthooks.cli
import prompthooks.commands.run
import prompthooks.executors
from prompthooks.api import DEFAULT_BUDGET, dispatch
from prompthooks.audit import store
from prompthooks.core.engine import STOP_MARGIN, hook_deadline
from prompthooks.core.events import Event
from prompthooks.core.hook import Hook
from prompthooks.core.result import HookResult
from prompthooks.executors.command import CommandExecutor

from ..helpers import (
    assert_group_killed,
    claude_bash,
    claude_event,
    cline_event,
    cursor_event,
    living,
    read_pid,
    reply,
    run_cli,
    write_json,
    write_script,
)
from .rows import (
    BLOCKED,
    HEALTHY,
    POLICIES,
    PROMPT,
    TIMED_OUT,
    claude_reply,
    expected_failure,
    run_row,
    stderr_lines,
)

# The promise: the host gets its answer before it gives up. The default budgets leave the host
# 10 s (Claude Code), 5 s (Cursor) and 2 s (Cline) past the budget; a run that ends within
# HOST_MARGIN of its budget, measured as the host measures it (spawn to exit), keeps it.
HOST_MARGIN = 2.0
BUDGET = 3.0


def _timed_run(event: Mapping[str, Any], cfg: Path, tmp_path: Path,
               env: Mapping[str, str] | None = None) -> tuple[subprocess.CompletedProcess[str],
                                                              float]:
    started = time.monotonic()
    proc = run_cli(event, "--config", str(cfg), "--managed-dir", str(tmp_path / "no-managed"),
                   "--budget", str(BUDGET), env=env)
    return proc, time.monotonic() - started


def _warm(tmp_path: Path, cfg: Path) -> None:
    """Load ``cfg`` once (an event no hook matches), so it is validated and cached: the budget
    counts from the spawn, and a cold pydantic import on a busy machine would otherwise eat
    the hooks' share of it."""
    warm = run_row(tmp_path, claude_event("Stop", cwd=str(tmp_path)), cfg)
    assert (warm.returncode, warm.stdout, warm.stderr) == (0, "", "")


@POLICIES
def test_the_run_answers_within_its_budget_and_kills_the_wholeprocess_group(
        tmp_path: Path, isolated_home: Path, fail_closed: bool) -> None:
    # No hook timeout (Claude Code style: 600 s); only the run's --budget stops it. The hook
    # ignores SIGTERM and leaves two children behind, one holding its stdout. Another
    # process holds the audit database all along: the rows wait in the spool, not the host.
    write_script(tmp_path / "stubborn.sh", """
trap '' TERM
awk '{print $5}' /proc/$$/stat > hook.pgid
sleep 30 &
echo $! > child.pid
sleep 30 > /dev/null 2>&1 &
echo $! > quiet.pid
sleep 30
""")
    cfg = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": "./stubborn.sh", "failClosed": fail_closed},
        {"type": "command", "command": "cat > /dev/null; echo healthy says no >&2; exit 2"},
    ]}]}})
    _warm(tmp_path, cfg)
    db = isolated_home / ".local" / "share" / "prompthooks" / "audit.db"
    holder = store.connect(db)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        proc, took = _timed_run(claude_bash("ls", cwd=str(tmp_path)), cfg, tmp_path)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert took < BUDGET + HOST_MARGIN
    assert proc.returncode == 0, proc.stderr
    lines = stderr_lines(proc)
    (audit_line,) = [line for line in lines if line.startswith("audit log ")]
    assert "database is locked" in audit_line and "2 row(s) kept in" in audit_line
    failure = expected_failure([line for line in lines if line != audit_line], "./stubborn.sh",
                       f"{cfg}: hooks.PreToolUse[0].hooks[0]", TIMED_OUT)
    reason = f"{BLOCKED}{failure}\nhealthy says no" if fail_closed else "healthy says no"
    assert reply(proc) == {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": reason}}
    assert_group_killed(read_pid(tmp_path / "hook.pgid"))
    assert living([read_pid(tmp_path / "child.pid"), read_pid(tmp_path / "quiet.pid")]) == []


@POLICIES
def test_the_run_answers_within_its_budget_when_the_model_never_does(
        tmp_path: Path, fail_closed: bool) -> None:
    # The endpoint accepts connections and never answers; the prompt hook's own timeout is
    # far past the budget; and this process has no warm worker, so it first imports litellm
    # (4 to 7 s here, longer than the whole budget). The run answers in time regardless.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        cfg = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
            {"type": "prompt", "prompt": PROMPT, "timeout": 100, "failClosed": fail_closed},
            {"type": "command", "command": HEALTHY},
        ]}]}})
        _warm(tmp_path, cfg)
        env = {"PROMPTHOOKS_API_BASE": f"http://127.0.0.1:{silent.getsockname()[1]}/v1",
               "PROMPTHOOKS_MODEL": "test-model", "PROMPTHOOKS_WORKER": "0"}
        proc, took = _timed_run(claude_bash("ls", cwd=str(tmp_path)), cfg, tmp_path, env)
    assert took < BUDGET + HOST_MARGIN
    assert proc.returncode == 0, proc.stderr
    # Which of the two says it depends on the machine's load: the model call gives up by its
    # own deadline, or (litellm's import still running) the engine stops waiting for it.
    failure = expected_failure(stderr_lines(proc), "inline prompt",
                       f"{cfg}: hooks.PreToolUse[0].hooks[0]",
                       r"the model did not answer in time \(test-model(, \d+ attempts?)?\)"
                       r"|did not finish before the run's deadline")
    assert reply(proc) == claude_reply(failure, fail_closed)


def test_a_slow_start_counts_against_the_budget(tmp_path: Path) -> None:
    # The host's clock starts at the spawn. Here the interpreter takes 4 s to start (a
    # sitecustomize that sleeps: a machine under load), and the run still answers by its
    # 6 s budget, giving its hooks what is left; counted from its own start it would answer
    # about 9 s after the spawn.
    (tmp_path / "slow").mkdir()
    (tmp_path / "slow" / "sitecustomize.py").write_text("import time\ntime.sleep(4)\n")
    cfg = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": "sleep 30", "failClosed": True}]}]}})
    _warm(tmp_path, cfg)
    started = time.monotonic()
    proc = run_cli(claude_bash("ls", cwd=str(tmp_path)), "--config", str(cfg), "--managed-dir",
                   str(tmp_path / "no-managed"), "--budget", "6",
                   env={"PYTHONPATH": str(tmp_path / "slow")})
    took = time.monotonic() - started
    assert took >= 4  # the slow start happened
    assert took < 6 + HOST_MARGIN
    assert proc.returncode == 0, proc.stderr
    failure = expected_failure(stderr_lines(proc), "sleep 30", f"{cfg}: hooks.PreToolUse[0].hooks[0]",
                       TIMED_OUT)
    assert reply(proc) == {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": f"{BLOCKED}{failure}"}}


@pytest.mark.parametrize(("left", "hooks_get"), [
    (590.0, 588.8), (28.0, 26.8), (2.4, 1.2), (2.0, 1.0), (1.0, 0.5), (0.0, 0.0), (-1.0, -1.0)])
def test_hooks_are_done_a_reserve_before_the_run_answers(left: float, hooks_get: float) -> None:
    # docs/performance.md, "The run's budget": 1.2 s before it, or half of what is left when that is
    # under 2.4 s; nothing is added once the time is gone.
    reserve = CommandExecutor.stop_grace + STOP_MARGIN
    assert reserve == pytest.approx(1.2)
    assert hook_deadline(100.0 + left, 100.0, reserve) == pytest.approx(100.0 + hooks_get)


@pytest.mark.parametrize(("host", "event", "budget"), [
    ("claude", claude_bash("ls"), 590.0),
    ("cursor", cursor_event("preToolUse", tool_name="Shell", tool_input={"command": "ls"}), 55.0),
    ("cline", cline_event("PreToolUse", toolName="execute_command",
                          parameters={"command": "ls"}), 28.0),
])
def test_default_budget_per_host_is_the_deadline_without_budget(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, host: str, event: dict[str, Any],
        budget: float) -> None:
    # docs/performance.md, "The run's budget": 590 s for Claude Code, 55 s for Cursor, 28 s for Cline. A
    # hook whose own timeout is longer must be done the engine's reserve before the run's
    # deadline, so that its fallback is in the answer.
    assert DEFAULT_BUDGET[host] == budget
    seen: list[float] = []

    class Recording:
        stop_grace = CommandExecutor.stop_grace

        def run(self, hook: Hook, event: Event, deadline: float) -> HookResult:
            seen.append(deadline)
            return HookResult(hook=hook)

        def stop(self) -> None:
            pass

    monkeypatch.setattr(prompthooks.executors, "for_run", lambda *_: lambda hook: Recording())
    cfg = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": "true", "timeout": 100_000}]}]}})
    before = time.monotonic()
    outcome = dispatch(event, config_paths=[str(cfg)], managed_dir=tmp_path / "no-managed")
    after = time.monotonic()
    assert outcome.event.host == host
    (deadline,) = seen
    reserve = Recording.stop_grace + STOP_MARGIN
    assert before + budget - reserve <= deadline <= after + budget - reserve


def test_an_internal_error_is_exit_3_and_one_line(monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    def broken(args: object) -> int:
        raise RuntimeError("planted fault")

    monkeypatch.setattr(prompthooks.commands.run, "main", broken)
    assert prompthooks.cli.main(["run"]) == 3
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == ("prompthooks: internal error: RuntimeError('planted fault') "
                            "(set PROMPTHOOKS_DEBUG=1 for the traceback)\n")


@POLICIES
def test_an_internal_error_in_a_real_process(tmp_path: Path, fail_closed: bool) -> None:
    # The engine itself raises mid-run. Exit 3 is a non-blocking error for every host, so
    # with a fail-closed hook on the event it is a block instead.
    code = ("import sys, prompthooks.api\n"
            "def broken(*args, **kwargs):\n"
            "    raise RuntimeError('planted fault')\n"
            "prompthooks.api.decide = broken\n"
            "from prompthooks.cli import main\n"
            "sys.exit(main(sys.argv[1:]))\n")
    cfg = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": "true", "failClosed": fail_closed}]}]}})
    proc = subprocess.run([sys.executable, "-c", code, "run", "--config", str(cfg),
                           "--managed-dir", str(tmp_path / "no-managed")],
                          input=json.dumps(claude_bash("ls")).encode(), capture_output=True,
                          timeout=60)
    problem = ("internal error: RuntimeError('planted fault') (set PROMPTHOOKS_DEBUG=1 for the "
               "traceback)")
    if not fail_closed:
        assert (proc.returncode, proc.stdout) == (3, b"")
        assert proc.stderr.decode() == f"prompthooks: {problem}\n"
        return
    message = f"Blocked by prompthooks: a managed or fail-closed hook could not judge this event ({problem})"
    assert (proc.returncode, proc.stdout) == (2, b"")  # Claude Code's block: reason on stderr
    assert proc.stderr.decode() == f"prompthooks: {message}\n"
