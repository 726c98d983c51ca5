"""Fault matrix, command hooks: a hook that crashes, prints garbage, floods its pipes,
outlives its deadline or cannot start (see rows.py for how a row runs)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from prompthooks.errors import excerpt

from ..helpers import (
    assert_group_killed,
    claude_bash,
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
    HEALTHY_CURSOR,
    POLICIES,
    TIMED_OUT,
    Run,
    assert_claude_failure,
    assert_claude_no_failure,
    claude_fault_config,
    claude_reply,
    expected_failure,
    healthy_config,
    run_row,
    stderr_lines,
)


@POLICIES
def test_command_crashes_with_exit_1(tmp_path: Path, fail_closed: bool) -> None:
    assert_claude_failure(tmp_path, "echo boom >&2; exit 1", fail_closed,
                           re.escape("exited with status 1: boom"))


@POLICIES
def test_command_killed_by_a_signal(tmp_path: Path, fail_closed: bool) -> None:
    assert_claude_failure(tmp_path, "kill -SEGV $$", fail_closed,
                           re.escape("was killed by signal SIGSEGV"))


@POLICIES
def test_command_exits_2_with_nothing_on_stderr(tmp_path: Path, fail_closed: bool) -> None:
    # Exit 2 is Claude Code's block, not a fault: it blocks either way, with a stand-in reason.
    assert_claude_no_failure(tmp_path, "exit 2", fail_closed, claude_reply(
        None, fail_closed, denial="Blocked by hook 'exit 2' (exit status 2)"))


def test_command_exits_2_in_a_cline_hook_folder_is_an_error(tmp_path: Path) -> None:
    # Under Cline's rules exit 2 means nothing: it is a hook error (fail-open: a Cline hook
    # file has no way to say failClosed).
    hook = write_script(tmp_path / "hooks" / "PreToolUse", "cat > /dev/null; exit 2")
    healthy = healthy_config(tmp_path)
    proc = run_cli(claude_bash("ls", cwd=str(tmp_path)), "--config", str(hook.parent),
                   "--config", str(healthy), "--managed-dir", str(tmp_path / "no-managed"))
    assert proc.returncode == 0
    expected_failure(stderr_lines(proc), "hooks/PreToolUse", str(hook), re.escape("exited with status 2"))
    assert reply(proc) == claude_reply(None, False)


@POLICIES
def test_command_prints_invalid_json(tmp_path: Path, fail_closed: bool) -> None:
    assert_claude_failure(tmp_path, "echo '{not json'", fail_closed, re.escape(
        "reply is not valid JSON (Expecting property name enclosed in double quotes): "
        "'{not json'"))


@POLICIES
def test_command_prints_json_then_garbage(tmp_path: Path, fail_closed: bool) -> None:
    # A reply is read whole or not at all: the block before the garbage is not half-read.
    assert_claude_failure(
        tmp_path, "echo '{\"decision\": \"block\", \"reason\": \"half\"} garbage'", fail_closed,
        re.escape("reply is not valid JSON (Extra data): "
                  "'{\"decision\": \"block\", \"reason\": \"half\"} garbage'"))


# Runs a command and writes the peak resident memory (KiB) of its process tree to a file. A
# small process of its own: a child forked straight from pytest would count pytest's memory.
_MEASURE = ("import resource, subprocess, sys\n"
            "code = subprocess.call(sys.argv[2:])\n"
            "with open(sys.argv[1], 'w') as f:\n"
            "    f.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n"
            "sys.exit(code)\n")


def _run_measured(tmp_path: Path, stdin: bytes,
                  args: Sequence[str]) -> tuple[subprocess.CompletedProcess[str], int]:
    """`prompthooks run ARGS`, and the peak resident memory (KiB) of it and its children."""
    peak = tmp_path / "peak-kib"
    proc = subprocess.run([sys.executable, "-c", _MEASURE, str(peak), sys.executable, "-m",
                           "prompthooks", "run", *args], input=stdin, capture_output=True,
                          timeout=120)  # a hang fails the test, not the suite
    done = subprocess.CompletedProcess(proc.args, proc.returncode,
                                       proc.stdout.decode("utf-8", "replace"),
                                       proc.stderr.decode("utf-8", "replace"))
    return done, int(peak.read_text())


@POLICIES
def test_command_prints_100_mb(tmp_path: Path, fail_closed: bool) -> None:
    command = "head -c 104857600 /dev/zero | tr '\\0' a"
    cfg, label = claude_fault_config(tmp_path, {"command": command}, fail_closed)
    event = json.dumps(claude_bash("ls", cwd=str(tmp_path))).encode()
    proc, peak_kib = _run_measured(tmp_path, event, [
        "--config", str(cfg), "--managed-dir", str(tmp_path / "no-managed")])
    assert proc.returncode == 0, proc.stderr
    failure = expected_failure(stderr_lines(proc), command, label, re.escape(
        "printed more than 1 MB on stdout"))
    assert reply(proc) == claude_reply(failure, fail_closed)
    # The 99 MB past the cap were read and dropped, never held: the run's peak is that of an
    # interpreter (about 30 MB here), far below the 100 MB the hook printed.
    assert peak_kib < 64 * 1024


@POLICIES
def test_command_never_reads_stdin_of_a_large_event(tmp_path: Path, fail_closed: bool) -> None:
    # 3 MB of event against a 64 KiB pipe: the writer must not block on a hook that never
    # reads, and a hook that answers without reading is no fault at all.
    big = claude_bash("echo " + "x" * 3_000_000, cwd=str(tmp_path))
    assert_claude_no_failure(
        tmp_path, "sleep 0.3; echo '{\"systemMessage\": \"answered without reading\"}'",
        fail_closed, claude_reply(None, fail_closed,
                                   system="answered without reading\nhealthy note"), event=big)


@POLICIES
def test_command_closes_stdout_early(tmp_path: Path, fail_closed: bool) -> None:
    # stdout reaches end-of-file long before the hook exits: the hook is still waited for
    # (its last step is done when the run answers), and its empty reply with exit 0 is "no
    # opinion", not a fault.
    assert_claude_no_failure(
        tmp_path, "exec >&-; sleep 0.5; echo still working >&2; touch finished; exit 0",
        fail_closed, claude_reply(None, fail_closed))
    assert (tmp_path / "finished").exists()


@POLICIES
def test_command_forks_a_background_child_that_keeps_the_pipe(tmp_path: Path,
                                                              fail_closed: bool) -> None:
    # docs/config.md, "Command hooks": when a hook exits normally, a background child it started is
    # not waited for (its pipes are let go after 0.1 s) and not killed.
    command = ("sleep 30 & echo $! > child.pid; "
               "echo '{\"systemMessage\": \"answered before its child\"}'")
    try:
        assert_claude_no_failure(tmp_path, command, fail_closed, claude_reply(
            None, fail_closed, system="answered before its child\nhealthy note"), timeout=20)
        child = read_pid(tmp_path / "child.pid")
        assert living([child]) == [child]  # documented: left running, not killed
    finally:
        if (tmp_path / "child.pid").exists():
            os.kill(read_pid(tmp_path / "child.pid"), 9)


@POLICIES
def test_command_ignores_sigterm_and_sleeps_past_the_deadline(tmp_path: Path,
                                                              fail_closed: bool) -> None:
    command = "echo $$ > hook.pid; trap '' TERM; sleep 30"
    started = time.monotonic()
    assert_claude_failure(tmp_path, command, fail_closed, TIMED_OUT, timeout=1)
    assert time.monotonic() - started < 1 + 5 + 10  # the timeout, generous start-up, slack
    assert_group_killed(read_pid(tmp_path / "hook.pid"))  # the shell and its sleep


@POLICIES
def test_command_sleeps_past_the_deadline(tmp_path: Path, fail_closed: bool) -> None:
    command = "echo $$ > hook.pid; sleep 30"
    assert_claude_failure(tmp_path, command, fail_closed, TIMED_OUT, timeout=1)
    assert_group_killed(read_pid(tmp_path / "hook.pid"))


def _shell_says(command: str, cwd: Path) -> str:
    """What /bin/sh itself prints for ``command`` (dash and bash word it differently)."""
    done = subprocess.run(["/bin/sh", "-c", command], capture_output=True, text=True, cwd=cwd)
    return excerpt(done.stderr)


@POLICIES
def test_command_does_not_exist(tmp_path: Path, fail_closed: bool) -> None:
    said = _shell_says("/no/such/hook", tmp_path)
    assert_claude_failure(tmp_path, "/no/such/hook", fail_closed,
                           re.escape(f"exited with status 127 (command not found): {said}"))


@POLICIES
def test_command_file_is_not_executable(tmp_path: Path, fail_closed: bool) -> None:
    (tmp_path / "guard.sh").write_text("#!/bin/sh\necho '{\"decision\": \"block\"}'\n")
    said = _shell_says("./guard.sh", tmp_path)
    assert_claude_failure(tmp_path, "./guard.sh", fail_closed,
                           re.escape(f"exited with status 126 (not executable): {said}"))


def test_command_file_is_not_executable_in_a_cline_hook_folder(tmp_path: Path) -> None:
    # A Cline-style hook file is executed directly, not through a shell.
    hook = tmp_path / "hooks" / "PreToolUse"
    hook.parent.mkdir()
    hook.write_text("#!/bin/sh\necho '{\"cancel\": true}'\n")
    healthy = healthy_config(tmp_path)
    proc = run_cli(claude_bash("ls", cwd=str(tmp_path)), "--config", str(hook.parent),
                   "--config", str(healthy), "--managed-dir", str(tmp_path / "no-managed"))
    assert proc.returncode == 0
    expected_failure(stderr_lines(proc), "hooks/PreToolUse", str(hook),
             re.escape(f"{hook} is not executable"))
    assert reply(proc) == claude_reply(None, False)


# ---------------------------------------------------------------------------------------------
# Command hooks: Cursor and Cline replies (crash and timeout)


def _cursor_row(tmp_path: Path, command: str, fail_closed: bool, timeout: float = 10) -> Run:
    cfg = write_json(tmp_path / "hooks.json", {"version": 1, "hooks": {"preToolUse": [
        {"command": command, "timeout": timeout, "failClosed": fail_closed},
        {"command": HEALTHY_CURSOR},
    ]}})
    event = cursor_event("preToolUse", root=str(tmp_path), tool_name="Shell",
                         tool_input={"command": "ls"})
    proc = run_row(tmp_path, event, cfg)
    assert proc.returncode == 0, proc.stderr
    return proc, f"{cfg}: hooks.preToolUse[0]"


def _cursor_reply(failure: str, fail_closed: bool) -> dict[str, Any]:
    if not fail_closed:
        return {"permission": "deny", "user_message": "healthy says no",
                "agent_message": "healthy tells the agent no"}
    return {"permission": "deny", "user_message": f"{BLOCKED}{failure}\nhealthy says no",
            "agent_message": f"{BLOCKED}{failure}\nhealthy tells the agent no"}


def _cline_row(tmp_path: Path, command: str, fail_closed: bool, timeout: float = 10) -> Run:
    # A Claude Code style config serves Cline's events (Cline's own hook files cannot say
    # failClosed); Cline's reply carries the healthy context, not its system message.
    cfg, label = claude_fault_config(tmp_path, {"command": command, "timeout": timeout}, fail_closed)
    event = cline_event("PreToolUse", root=str(tmp_path), toolName="execute_command",
                        parameters={"command": "ls"})
    proc = run_row(tmp_path, event, cfg)
    assert proc.returncode == 0, proc.stderr
    return proc, label


def _cline_reply(failure: str, fail_closed: bool) -> dict[str, Any]:
    if not fail_closed:
        return {"cancel": False, "contextModification": "healthy context"}
    return {"cancel": True, "contextModification": "healthy context",
            "errorMessage": f"{BLOCKED}{failure}"}


# Per host: how a row runs, and the reply when the faulty hook failed.
HOST_ROWS = {"cursor": (_cursor_row, _cursor_reply), "cline": (_cline_row, _cline_reply)}
HOSTS = pytest.mark.parametrize("host", sorted(HOST_ROWS))


@POLICIES
@HOSTS
def test_command_crashes_under_cursor_and_cline(tmp_path: Path, fail_closed: bool,
                                                host: str) -> None:
    row, expected = HOST_ROWS[host]
    command = "echo boom >&2; exit 1"
    proc, label = row(tmp_path, command, fail_closed)
    failure = expected_failure(stderr_lines(proc), command, label,
                       re.escape("exited with status 1: boom"))
    assert reply(proc) == expected(failure, fail_closed)


@POLICIES
@HOSTS
def test_command_sleeps_past_the_deadline_under_cursor_and_cline(
        tmp_path: Path, fail_closed: bool, host: str) -> None:
    row, expected = HOST_ROWS[host]
    command = "echo $$ > hook.pid; sleep 30"
    proc, label = row(tmp_path, command, fail_closed, 1)
    failure = expected_failure(stderr_lines(proc), command, label, TIMED_OUT)
    assert reply(proc) == expected(failure, fail_closed)
    assert_group_killed(read_pid(tmp_path / "hook.pid"))
