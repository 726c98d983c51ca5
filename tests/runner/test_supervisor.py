"""The supervisor of `prompthooks run`: whatever becomes of the work (a hook that kills or stops
its parent, a hang, an exception, SIGTERM from the host, a host that never closes stdin, closed
stdio), the host gets its answer by the deadline, a managed or fail-closed gate blocks, and the
audit log keeps a row."""

from __future__ import annotations

import json
import os
import select
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any

import pytest

from prompthooks.audit import store

from ..helpers import (
    assert_group_killed,
    claude_bash,
    claude_config,
    living,
    process_group,
    read_pid,
    reply,
    run_cli,
    wait_until,
    write_json,
)
from ..otlp_collector import Collector, collect

# Seconds a host waits past the budget in these tests (Cline's default margin, the smallest).
HOST_MARGIN = 2.0
BUDGET = 4.0
BLOCKED = "Blocked by prompthooks: a managed or fail-closed hook could not judge this event"
POLICIES = pytest.mark.parametrize("fail_closed", [False, True], ids=["fail-open", "fail-closed"])


def _rows(home: Path) -> list[dict[str, Any]]:
    db = home / ".local" / "share" / "prompthooks" / "audit.db"
    return store.read(db) if db.exists() else []


def _timed(stdin: bytes | str | Mapping[str, Any], *args: str,
           cwd: Path | None = None) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    proc = run_cli(stdin, *args, "--budget", str(BUDGET), cwd=cwd)
    return proc, time.monotonic() - started


def _no_managed(tmp_path: Path) -> tuple[str, str]:
    return "--managed-dir", str(tmp_path / "no-managed")


@POLICIES
def test_a_hook_that_kills_its_runner_is_answered(tmp_path: Path, isolated_home: Path,
                                                  fail_closed: bool) -> None:
    # `kill -9 $PPID`: the hook's parent is the work; the supervisor answers for it.
    cfg = claude_config(tmp_path / "h.json", "PreToolUse",
                        {"command": "kill -9 $PPID", "failClosed": fail_closed})
    proc, took = _timed(claude_bash("ls"), "--config", str(cfg), *_no_managed(tmp_path))
    assert took < BUDGET + HOST_MARGIN
    problem = "internal error: the run was killed by SIGKILL before it answered"
    if fail_closed:
        assert (proc.returncode, proc.stdout) == (2, "")  # Claude Code: block, reason on stderr
        assert proc.stderr == f"prompthooks: {BLOCKED} ({problem})\n"
    else:
        assert (proc.returncode, proc.stdout) == (3, "")  # a non-blocking error
        assert proc.stderr == f"prompthooks: {problem}\n"
    (row,) = _rows(isolated_home)
    assert (row["kind"], row["event"], row["decision"]) == (
        "internal", "PreToolUse", "deny" if fail_closed else "none")
    assert row["error"] == problem


def test_a_hook_that_stops_its_runner_is_answered_and_cleaned_up(tmp_path: Path,
                                                                 isolated_home: Path) -> None:
    # `kill -STOP $PPID`: the work can do nothing more. The supervisor answers by the
    # budget, blocks (fail-closed), and kills the stopped work and the hooks it started.
    # The stopper waits (a bounded while) for the sleeper to have started: on a busy machine
    # it could otherwise stop the work before the work spawned the sleeper.
    stopper = ("for i in $(seq 200); do [ -s sleeper.pid ] && break; sleep 0.05; done; "
               "echo $PPID > work.pid; kill -STOP $PPID")
    cfg = claude_config(tmp_path / "h.json", "PreToolUse",
                        {"command": stopper, "failClosed": True},
                        {"command": "echo $$ > sleeper.pid; exec sleep 60"})
    proc, took = _timed(claude_bash("ls", cwd=str(tmp_path)), "--config", str(cfg),
                        *_no_managed(tmp_path))
    assert took < BUDGET + HOST_MARGIN
    assert proc.returncode == 2
    assert proc.stderr == (f"prompthooks: {BLOCKED} (internal error: the run did not answer "
                           "before its deadline)\n")
    # Both are killed (not reaped: the stopped work was the sleeper's parent, and PID 1
    # here need not reap orphans).
    sleeper, work = read_pid(tmp_path / "sleeper.pid"), read_pid(tmp_path / "work.pid")
    deadline = time.monotonic() + 5
    while living([work, *process_group(sleeper)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert living([work, *process_group(sleeper)]) == []
    (row,) = _rows(isolated_home)
    assert row["decision"] == "deny"


def test_a_managed_hook_guards_the_event_even_when_not_fail_closed(tmp_path: Path) -> None:
    # "Blocked when a managed or fail-closed hook could apply": the managed hook is an
    # ordinary one; a project hook kills the run before it could judge.
    etc = tmp_path / "etc"
    claude_config(etc / "hooks.json", "PreToolUse", {"command": "exit 0"})
    project = claude_config(tmp_path / "p.json", "PreToolUse", {"command": "kill -9 $PPID"})
    proc, took = _timed(claude_bash("ls"), "--config", str(project), "--managed-dir", str(etc))
    assert took < BUDGET + HOST_MARGIN
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"prompthooks: {BLOCKED} (")


def test_no_guard_for_another_event(tmp_path: Path) -> None:
    # The fail-closed hook is on Stop; a crash on PreToolUse is a non-blocking error.
    cfg = write_json(tmp_path / "h.json", {"hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "true", "failClosed": True}]}],
        "PreToolUse": [{"hooks": [{"type": "command", "command": "kill -9 $PPID"}]}]}})
    proc, _ = _timed(claude_bash("ls"), "--config", str(cfg), *_no_managed(tmp_path))
    assert (proc.returncode, proc.stdout) == (3, "")


def test_an_exception_in_the_work_is_answered_by_the_supervisor(tmp_path: Path) -> None:
    # The engine raises in the forked work (the command line is the process's own: argv
    # None, as for a host).
    code = ("import sys, prompthooks.api\n"
            "def broken(*args, **kwargs):\n"
            "    raise RuntimeError('planted fault')\n"
            "prompthooks.api.decide = broken\n"
            "from prompthooks.cli import main\n"
            "sys.argv[0] = 'prompthooks'\n"
            "sys.exit(main())\n")
    cfg = claude_config(tmp_path / "h.json", "PreToolUse",
                        {"command": "true", "failClosed": True})
    proc = subprocess.run([sys.executable, "-c", code, "run", "--config", str(cfg),
                           *_no_managed(tmp_path)],
                          input=json.dumps(claude_bash("ls")).encode(), capture_output=True,
                          timeout=60)
    assert (proc.returncode, proc.stdout) == (2, b"")
    assert proc.stderr.decode() == (
        f"prompthooks: {BLOCKED} (internal error: RuntimeError('planted fault') (set "
        "PROMPTHOOKS_DEBUG=1 for the traceback))\n")


def test_a_config_that_hangs_the_load_is_answered_by_the_managed_policy(tmp_path: Path) -> None:
    # A FIFO where a config file should be: opening it blocks. The managed policy, loaded on
    # its own, says the event is guarded; the run blocks by its budget.
    etc = tmp_path / "etc"
    claude_config(etc / "hooks.json", "PreToolUse", {"command": "echo no >&2; exit 2"})
    fifo = tmp_path / "hooks.json"
    os.mkfifo(fifo)
    proc, took = _timed(claude_bash("ls"), "--config", str(fifo), "--managed-dir", str(etc))
    assert took < BUDGET + HOST_MARGIN
    # Blocked: by the managed hook itself once the FIFO is refused, or for it if the load hung.
    assert proc.returncode in (0, 2)
    if proc.returncode == 0:
        assert reply(proc)["hookSpecificOutput"]["permissionDecision"] == "deny"
    else:
        assert f"prompthooks: {BLOCKED} (" in proc.stderr


def test_the_command_line_cannot_replace_the_managed_policy(tmp_path: Path) -> None:
    # `--managed-dir` adds a managed folder; the real one (here a stand-in for
    # /etc/prompthooks, set in the process) stays in force.
    etc = tmp_path / "etc"
    claude_config(etc / "hooks.json", "PreToolUse", {"command": "echo managed says no >&2; exit 2"})
    other = tmp_path / "other"
    other.mkdir()
    code = ("import sys, pathlib, prompthooks.config.discovery as d\n"
            f"d.MANAGED_DIR = pathlib.Path({str(etc)!r})\n"
            "from prompthooks.cli import main\n"
            "sys.exit(main())\n")
    proc = subprocess.run([sys.executable, "-c", code, "run", "--managed-dir", str(other)],
                          input=json.dumps(claude_bash("ls", cwd=str(tmp_path))).encode(),
                          capture_output=True, timeout=60, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["hookSpecificOutput"]["permissionDecisionReason"] == "managed says no"


# ---------------------------------------------------------------------------------------------
# Stdio


def _with_open_stdin(data: bytes, cfg: Path, tmp_path: Path
                     ) -> tuple[subprocess.CompletedProcess[str], float]:
    """`run` with ``data`` on a stdin whose writer never closes it; (process, seconds)."""
    read_end, write_end = os.pipe()
    os.write(write_end, data)
    started = time.monotonic()
    try:
        proc = subprocess.run([sys.executable, "-m", "prompthooks", "run", "--config", str(cfg),
                               *_no_managed(tmp_path), "--budget", str(BUDGET)],
                              stdin=read_end, capture_output=True, text=True, timeout=60)
    finally:
        os.close(read_end)
        os.close(write_end)
    return proc, time.monotonic() - started


def test_a_complete_event_is_answered_though_stdin_stays_open(tmp_path: Path) -> None:
    cfg = claude_config(tmp_path / "h.json", "PreToolUse", {"command": "echo no >&2; exit 2"})
    proc, took = _with_open_stdin(json.dumps(claude_bash("ls")).encode(), cfg, tmp_path)
    assert took < BUDGET + HOST_MARGIN
    assert proc.returncode == 0, proc.stderr
    assert reply(proc)["hookSpecificOutput"]["permissionDecision"] == "deny"


@POLICIES
def test_an_incomplete_event_on_an_open_stdin_is_answered(tmp_path: Path,
                                                          fail_closed: bool) -> None:
    cfg = claude_config(tmp_path / "h.json", "PreToolUse",
                        {"command": "true", "failClosed": fail_closed})
    proc, took = _with_open_stdin(b'{"hook_event_name": "PreToolUse", "tool_name": "Ba', cfg,
                                  tmp_path)
    assert took < BUDGET + HOST_MARGIN
    problem = "no complete event on stdin in time (stdin was not closed)"
    if fail_closed:
        assert (proc.returncode, proc.stderr) == (2, f"prompthooks: {BLOCKED} ({problem})\n")
    else:
        assert (proc.returncode, proc.stderr) == (1, f"prompthooks: {problem}\n")


def test_sigterm_stops_the_hooks_answers_and_logs(tmp_path: Path, isolated_home: Path) -> None:
    # The host gives up and sends SIGTERM: the hooks' process groups are killed, the run
    # answers with what it has (the stopped hook timed out: fail-closed blocks) and the rows
    # are written.
    cfg = claude_config(tmp_path / "h.json", "PreToolUse",
                        {"command": "echo $$ > hook.pid; exec sleep 60", "failClosed": True})
    event = write_json(tmp_path / "event.json", claude_bash("ls", cwd=str(tmp_path)))
    with event.open("rb") as stdin:
        proc = subprocess.Popen([sys.executable, "-m", "prompthooks", "run", "--config",
                                 str(cfg), *_no_managed(tmp_path)],
                                stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, cwd=tmp_path)
    deadline = time.monotonic() + 30
    while not (tmp_path / "hook.pid").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    decision = json.loads(out)["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny"
    assert "the run was stopped before it finished" in decision["permissionDecisionReason"]
    assert_group_killed(read_pid(tmp_path / "hook.pid"))
    rows = _rows(isolated_home)
    deadline = time.monotonic() + 10
    while not rows and time.monotonic() < deadline:  # written by the work just after the reply
        time.sleep(0.1)
        rows = _rows(isolated_home)
    (row,) = rows
    assert (row["status"], row["decision"]) == ("timeout", "deny")


def test_closed_stderr_never_mixes_lines_into_the_reply(tmp_path: Path) -> None:
    cfg = claude_config(tmp_path / "h.json", "PreToolUse",
                        {"command": "exit 1"}, {"command": "echo no >&2; exit 2"})
    proc = subprocess.run(
        [sys.executable, "-m", "prompthooks", "run", "--config", str(cfg),
         *_no_managed(tmp_path)],
        input=json.dumps(claude_bash("ls")).encode(), stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, timeout=60, pass_fds=(),
        preexec_fn=lambda: os.close(2))
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_closed_stdout_keeps_the_exit_code_and_the_row(tmp_path: Path,
                                                       isolated_home: Path) -> None:
    cfg = claude_config(tmp_path / "h.json", "PreToolUse",
                        {"command": "echo no >&2; exit 2"})
    proc = subprocess.run(
        [sys.executable, "-m", "prompthooks", "run", "--config", str(cfg),
         *_no_managed(tmp_path)],
        input=json.dumps(claude_bash("ls")).encode(), stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, timeout=60, preexec_fn=lambda: os.close(1))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == b""
    (row,) = _rows(isolated_home)
    assert row["decision"] == "deny"


# ---------------------------------------------------------------------------------------------
# The audit log cannot change the answer


def test_a_poisoned_spool_neither_changes_the_answer_nor_blocks_later_rows(
        tmp_path: Path, isolated_home: Path) -> None:
    cfg = claude_config(tmp_path / "h.json", "PreToolUse", {"command": "echo no >&2; exit 2"})
    first = run_cli(claude_bash("ls"), "--config", str(cfg), *_no_managed(tmp_path))
    assert first.returncode == 0
    db = isolated_home / ".local" / "share" / "prompthooks" / "audit.db"
    spool = db.with_name("audit.db.pending")
    good = {**_rows(isolated_home)[0]}
    del good["id"]
    spool.write_text("[]\n" + json.dumps({"time": "x"}) + "\n" + "{not json\n"
                     + json.dumps({**good, "reason": "spooled row"}) + "\n"
                     + json.dumps({**good, "hook": ["a", "list"]}) + "\n")
    for _ in range(2):
        proc = run_cli(claude_bash("ls"), "--config", str(cfg), *_no_managed(tmp_path))
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr == ""
        assert reply(proc)["hookSpecificOutput"]["permissionDecision"] == "deny"
    rows = _rows(isolated_home)
    assert len(rows) == 4  # three runs, and the one spooled row SQLite takes
    assert [r["reason"] for r in rows].count("spooled row") == 1
    assert spool.read_text() == ""


def test_an_audit_path_holding_a_nul_byte_does_not_change_the_answer(tmp_path: Path) -> None:
    cfg = write_json(tmp_path / "h.json", {
        "prompthooks": {"audit": {"path": "log\u0000.db"}},
        "hooks": {"PreToolUse": [{"hooks": [
            {"type": "command", "command": "echo no >&2; exit 2"}]}]}})
    proc = run_cli(claude_bash("ls"), "--config", str(cfg), *_no_managed(tmp_path))
    assert proc.returncode == 0
    assert reply(proc)["hookSpecificOutput"]["permissionDecision"] == "deny"
    (line,) = proc.stderr.splitlines()
    assert line.startswith("prompthooks: audit log ") and "row(s) lost" in line


@pytest.mark.parametrize("which", ["audit.db", "audit.db-wal", "audit.db.pending"])
def test_a_fifo_in_the_audit_log_s_place_neither_hangs_nor_changes_the_answer(
        tmp_path: Path, which: str) -> None:
    # A config may move the log; a FIFO there (or at its journal or spool) would block the
    # open or the first read forever. The run still ends long before its 30 s budget.
    os.mkfifo(tmp_path / which)
    cfg = write_json(tmp_path / "h.json", {
        "prompthooks": {"audit": {"path": str(tmp_path / "audit.db")}},
        "hooks": {"PreToolUse": [{"hooks": [
            {"type": "command", "command": "echo no >&2; exit 2"}]}]}})
    started = time.monotonic()
    proc = run_cli(claude_bash("ls"), "--config", str(cfg), *_no_managed(tmp_path),
                   "--budget", "30")
    assert time.monotonic() - started < 15
    assert proc.returncode == 0
    assert reply(proc)["hookSpecificOutput"]["permissionDecision"] == "deny"
    (line,) = proc.stderr.splitlines()
    if which.endswith(".pending"):
        # A spool that is not one prompthooks wrote is left alone; the row goes in.
        assert line == (f"prompthooks: audit log {tmp_path / 'audit.db'}: "
                        f"{tmp_path / which}: not a regular file; ignored")
        with sqlite3.connect(tmp_path / "audit.db") as db:
            assert db.execute("SELECT decision FROM decisions").fetchall() == [("deny",)]
    else:  # the row waits in the spool
        assert f"{tmp_path / which} is not a regular file" in line
        assert "1 row(s) kept in" in line


def test_sigterm_to_a_run_whose_work_cannot_answer_is_answered_by_the_supervisor(
        tmp_path: Path) -> None:
    # The work is stopped, so it cannot act on SIGTERM: the supervisor answers for it within
    # its grace (a second), long before the 60 s budget.
    cfg = claude_config(tmp_path / "h.json", "PreToolUse",
                        {"command": "echo $PPID > work.pid; kill -STOP $PPID", "failClosed": True})
    event = write_json(tmp_path / "event.json", claude_bash("ls", cwd=str(tmp_path)))
    with event.open("rb") as stdin:
        proc = subprocess.Popen([sys.executable, "-m", "prompthooks", "run", "--config",
                                 str(cfg), *_no_managed(tmp_path), "--budget", "60"],
                                stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, cwd=tmp_path)
    deadline = time.monotonic() + 30
    while not (tmp_path / "work.pid").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)  # the stop has landed
    signalled = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert time.monotonic() - signalled < 10
    assert (proc.returncode, out) == (2, "")
    assert err.startswith(f"prompthooks: {BLOCKED} (")
    work = read_pid(tmp_path / "work.pid")
    end = time.monotonic() + 5
    while living([work]) and time.monotonic() < end:
        time.sleep(0.05)
    assert living([work]) == []


# ---------------------------------------------------------------------------------------------
# After the reply: the host's process exits at once; the work's audit rows come after it


@pytest.fixture
def silent_collector() -> Iterator[Collector]:
    """An OTLP collector that takes the request and does not answer: the work's export waits
    for it (5 s at most) after the reply."""
    server = collect()
    collector = next(server)
    collector.delay = 60.0
    yield collector
    next(server, None)


def _export_to(tmp_path: Path, collector: Collector, command: str) -> Path:
    return write_json(tmp_path / "h.json", {
        "prompthooks": {"audit": {"path": str(tmp_path / "audit.db"),
                                  "export": {"otlp": {"endpoint": collector.url, "timeout": 5}}}},
        "hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": command}]}]}})


def _at_end(stream: IO[bytes]) -> bool:
    """Whether every holder of the pipe's write end has closed it (nothing is written to it
    here before its end)."""
    readable, _, _ = select.select([stream], [], [], 0)
    return bool(readable) and os.read(stream.fileno(), 1 << 16) == b""


def test_the_process_exits_with_the_reply_while_the_work_logs_after_it(
        tmp_path: Path, silent_collector: Collector) -> None:
    # The host waits for the process it started: its exit (and the exit code, the answer)
    # must not wait for the audit rows, which the work still writes after it, holding stderr.
    cfg = _export_to(tmp_path, silent_collector, "echo no >&2; exit 2")
    proc = subprocess.Popen([sys.executable, "-m", "prompthooks", "run", "--config", str(cfg),
                             *_no_managed(tmp_path), "--budget", "30"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=tmp_path,
                            env={**os.environ, "PROMPTHOOKS_DEBUG": "1"})
    assert proc.stdin and proc.stdout and proc.stderr
    proc.stdin.write(json.dumps(claude_bash("ls")).encode())
    proc.stdin.close()
    out = proc.stdout.read()
    assert proc.wait(timeout=60) == 0
    assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"
    # The canary: the work's export reached the collector, which holds it for up to 5 s.
    assert wait_until(lambda: silent_collector.received, 30)
    assert not silent_collector.stopping.is_set()
    # The process has exited; the work has not: it still holds stderr.
    assert not _at_end(proc.stderr)
    err = proc.stderr.read().decode()  # to its end: the work's export gave up, rows written
    assert "audit export" in err, err
    (row,) = store.read(tmp_path / "audit.db")
    assert row["decision"] == "deny"


def test_work_stopped_after_the_reply_is_killed_by_the_deadline(
        tmp_path: Path, silent_collector: Collector) -> None:
    # The process the host started has exited with the reply; a copy of it (the watcher)
    # still bounds the work: stopped after the reply (a hook's leftover can signal it), it is
    # killed by the run's deadline, and stderr, which it held, reaches its end.
    stopper = ("echo $PPID > work.pid; setsid sh -c 'for i in $(seq 600); do "
               "[ -s exported ] && break; sleep 0.05; done; "
               "kill -STOP $(cat work.pid) && echo yes > stopped' </dev/null >/dev/null 2>&1 &")
    cfg = _export_to(tmp_path, silent_collector, stopper)
    proc = subprocess.Popen([sys.executable, "-m", "prompthooks", "run", "--config", str(cfg),
                             *_no_managed(tmp_path), "--budget", "6"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=tmp_path)
    assert proc.stdin and proc.stdout and proc.stderr
    proc.stdin.write(json.dumps(claude_bash("ls", cwd=str(tmp_path))).encode())
    proc.stdin.close()
    assert proc.stdout.read() == b""  # allowed: no output
    assert proc.wait(timeout=60) == 0
    assert wait_until(lambda: silent_collector.received, 30)
    (tmp_path / "exported").write_text("1")  # the work is in its export: stop it now
    assert wait_until(lambda: (tmp_path / "stopped").exists(), 30)
    work = read_pid(tmp_path / "work.pid")
    # The canary: the work was stopped (or already killed, on a slow machine) after the reply.
    state = Path(f"/proc/{work}/stat").read_bytes().rsplit(b")", 1)[1].split()[0] \
        if Path(f"/proc/{work}/stat").exists() else b"gone"
    assert state in (b"T", b"Z", b"gone"), state
    readable, _, _ = select.select([proc.stderr], [], [], 60)
    assert readable and _at_end(proc.stderr)  # killed by the watcher at the deadline
    assert wait_until(lambda: not living([work]), 10)


def test_the_supervisor_loads_only_what_supervising_needs() -> None:
    # The work loads the run's modules in its own memory after the fork (a child forked from
    # a process holding them copies each page it touches); the supervisor loads what it
    # supervises with and the failure policy's modules, before the fork, so that answering
    # for a work that failed never waits on an import.
    probe = ("import sys, prompthooks.runner.supervisor; "
             "print(' '.join(sorted(m for m in sys.modules if m.startswith('prompthooks'))))")
    loaded = set(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                                check=True, timeout=60).stdout.split())
    # The canary: the probe saw the supervisor, its channel and the failure policy.
    assert {"prompthooks.runner.supervisor", "prompthooks.runner.channel",
            "prompthooks.runner.fallback", "prompthooks.loading.sources"} <= loaded, loaded
    work = {"prompthooks.runner.judge", "prompthooks.api", "prompthooks.core.engine",
            "prompthooks.executors.command", "prompthooks.loading.trust", "prompthooks.audit"}
    assert not work & loaded, work & loaded
