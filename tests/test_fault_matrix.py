"""The fault matrix: one test per way a hook can fail, each asserting the exact reply.

Every row runs the faulty hook next to a healthy one and checks that the healthy hook's answer
reaches the host whatever the fault did (README, "Merge rules": one failing hook never
discards the other hooks' answers). Where the failure policy matters a row runs twice:

- fail-open: the healthy hook's answer alone decides, and stderr holds one line naming the
  faulty hook and its fault;
- fail-closed: the event is blocked with "Blocked by prompthooks: a fail-closed hook ...",
  and the healthy hook's output is still there where the host's format carries it.

Command rows run `prompthooks run` in a real process (the reply and exit code are what the
host reads). Prompt rows talk HTTP to the scripted fake model through
:func:`prompthooks.api.dispatch` in this process, so litellm is imported and warmed once
rather than once per row; a subprocess would add nothing but that import.

The audit database rows run as root too: the run's process drops the capabilities that let
root ignore file modes (helpers.file_modes_bind_root), so a read-only file is read-only to it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

import prompthooks.cli
import prompthooks.commands.run
import prompthooks.executors
from prompthooks.api import DEFAULT_BUDGET, Outcome, dispatch
from prompthooks.audit import store
from prompthooks.core.engine import STOP_MARGIN, hook_deadline
from prompthooks.core.events import Event
from prompthooks.core.hook import Hook
from prompthooks.core.result import HookResult
from prompthooks.errors import excerpt
from prompthooks.executors.command import CommandExecutor
from prompthooks.model.verdicts import MAX_REPLY_CHARS

from .fake_model import Answer, FakeModel, error
from .helpers import (
    assert_group_killed,
    claude_bash,
    claude_event,
    cline_event,
    cursor_event,
    file_modes_bind_root,
    living,
    read_pid,
    reply,
    run_cli,
    write_json,
    write_script,
)

POLICIES = pytest.mark.parametrize("fail_closed", [False, True], ids=["fail-open", "fail-closed"])

# The healthy hook of the Claude Code and Cline rows: a system message and a context.
HEALTHY = ("cat > /dev/null; echo '{\"systemMessage\": \"healthy note\", \"hookSpecificOutput\": "
           "{\"hookEventName\": \"PreToolUse\", \"additionalContext\": \"healthy context\"}}'")
# The healthy hook of the Cursor rows: Cursor's preToolUse carries only a permission and its
# messages, so the healthy hook there denies.
HEALTHY_CURSOR = ("cat > /dev/null; echo '{\"permission\": \"deny\", \"user_message\": "
                  "\"healthy says no\", \"agent_message\": \"healthy tells the agent no\"}'")
BLOCKED = "Blocked by prompthooks: a fail-closed "
TIMED_OUT = r"timed out after \d+\.\ds and was killed"
PROMPT = "Block commands that delete files outside the project."


# ---------------------------------------------------------------------------------------------
# The table-driven core


def _failure(lines: Sequence[str], name: str, label: str, error: str) -> str:
    """The single failure line, checked: it names the hook and where it was configured, and
    its fault fullmatches the regular expression ``error``. Returned as the merge wrote it."""
    assert len(lines) == 1, lines
    match = re.fullmatch(rf"hook '{re.escape(name)}' \({re.escape(label)}\): (?P<error>.*)",
                         lines[0], re.S)
    assert match, lines[0]
    assert re.fullmatch(error, match["error"], re.S), match["error"]
    return lines[0]


def _stderr_lines(proc: subprocess.CompletedProcess[str]) -> list[str]:
    """stderr as failure lines; every line must be one of ours."""
    lines = proc.stderr.splitlines()
    assert all(line.startswith("prompthooks: ") for line in lines), proc.stderr
    return [line.removeprefix("prompthooks: ") for line in lines]


def _claude_reply(failure: str | None, fail_closed: bool, *, system: str = "healthy note",
                  denial: str | None = None) -> dict[str, Any]:
    """The Claude Code reply when the healthy hook's note and context are merged with a
    faulty hook's ``failure`` (a fail-closed one denies) or its own ``denial``."""
    specific: dict[str, Any] = {"hookEventName": "PreToolUse",
                                "additionalContext": "healthy context"}
    reason = f"{BLOCKED}{failure}" if failure and fail_closed else denial
    if reason:
        specific |= {"permissionDecision": "deny", "permissionDecisionReason": reason}
    return {"systemMessage": system, "hookSpecificOutput": specific}


def _claude_config(tmp_path: Path, faulty: Mapping[str, Any],
                   fail_closed: bool) -> tuple[Path, str]:
    """A Claude Code style config: the faulty hook first, the healthy one second."""
    cfg = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", **faulty, "failClosed": fail_closed},
        {"type": "command", "command": HEALTHY},
    ]}]}})
    return cfg, f"{cfg}: hooks.PreToolUse[0].hooks[0]"


def _healthy_config(tmp_path: Path) -> Path:
    """The healthy hook alone, to run beside a Cline-style hook folder."""
    return write_json(tmp_path / "healthy.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": HEALTHY}]}]}})


def _run(tmp_path: Path, event: Mapping[str, Any], cfg: Path,
         *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(event, "--config", str(cfg), "--managed-dir", str(tmp_path / "no-managed"),
                   *args)


Run = tuple[subprocess.CompletedProcess[str], str]  # the run, and the faulty hook's label


def _claude_row(tmp_path: Path, command: str, fail_closed: bool, timeout: float = 10,
                event: Mapping[str, Any] | None = None) -> Run:
    """Run one Claude Code row; the hooks' working directory is ``tmp_path`` (the event's
    cwd), so scripts may write their PID files there."""
    cfg, label = _claude_config(tmp_path, {"command": command, "timeout": timeout}, fail_closed)
    proc = _run(tmp_path, event or claude_bash("ls", cwd=str(tmp_path)), cfg)
    assert proc.returncode == 0, proc.stderr
    return proc, label


def _assert_claude_failure(tmp_path: Path, command: str, fail_closed: bool, error: str,
                           timeout: float = 10) -> None:
    """The whole check for a Claude Code row whose faulty hook fails."""
    proc, label = _claude_row(tmp_path, command, fail_closed, timeout)
    failure = _failure(_stderr_lines(proc), command, label, error)
    assert reply(proc) == _claude_reply(failure, fail_closed)


def _assert_claude_no_failure(tmp_path: Path, command: str, fail_closed: bool,
                              expected: dict[str, Any], timeout: float = 10,
                              event: Mapping[str, Any] | None = None) -> None:
    """The whole check for a Claude Code row whose odd hook is not a failure: no stderr line,
    and a fail-closed mark changes nothing."""
    proc, _ = _claude_row(tmp_path, command, fail_closed, timeout, event)
    assert proc.stderr == ""
    assert reply(proc) == expected


# ---------------------------------------------------------------------------------------------
# Command hooks (Claude Code)


@POLICIES
def test_command_crashes_with_exit_1(tmp_path: Path, fail_closed: bool) -> None:
    _assert_claude_failure(tmp_path, "echo boom >&2; exit 1", fail_closed,
                           re.escape("exited with status 1: boom"))


@POLICIES
def test_command_killed_by_a_signal(tmp_path: Path, fail_closed: bool) -> None:
    _assert_claude_failure(tmp_path, "kill -SEGV $$", fail_closed,
                           re.escape("was killed by signal SIGSEGV"))


@POLICIES
def test_command_exits_2_with_nothing_on_stderr(tmp_path: Path, fail_closed: bool) -> None:
    # Exit 2 is Claude Code's block, not a fault: it blocks either way, with a stand-in reason.
    _assert_claude_no_failure(tmp_path, "exit 2", fail_closed, _claude_reply(
        None, fail_closed, denial="Blocked by hook 'exit 2' (exit status 2)"))


def test_command_exits_2_in_a_cline_hook_folder_is_an_error(tmp_path: Path) -> None:
    # Under Cline's rules exit 2 means nothing: it is a hook error (fail-open: a Cline hook
    # file has no way to say failClosed).
    hook = write_script(tmp_path / "hooks" / "PreToolUse", "cat > /dev/null; exit 2")
    healthy = _healthy_config(tmp_path)
    proc = run_cli(claude_bash("ls", cwd=str(tmp_path)), "--config", str(hook.parent),
                   "--config", str(healthy), "--managed-dir", str(tmp_path / "no-managed"))
    assert proc.returncode == 0
    _failure(_stderr_lines(proc), "hooks/PreToolUse", str(hook), re.escape("exited with status 2"))
    assert reply(proc) == _claude_reply(None, False)


@POLICIES
def test_command_prints_invalid_json(tmp_path: Path, fail_closed: bool) -> None:
    _assert_claude_failure(tmp_path, "echo '{not json'", fail_closed, re.escape(
        "reply is not valid JSON (Expecting property name enclosed in double quotes): "
        "'{not json'"))


@POLICIES
def test_command_prints_json_then_garbage(tmp_path: Path, fail_closed: bool) -> None:
    # A reply is read whole or not at all: the block before the garbage is not half-read.
    _assert_claude_failure(
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
    cfg, label = _claude_config(tmp_path, {"command": command}, fail_closed)
    event = json.dumps(claude_bash("ls", cwd=str(tmp_path))).encode()
    proc, peak_kib = _run_measured(tmp_path, event, [
        "--config", str(cfg), "--managed-dir", str(tmp_path / "no-managed")])
    assert proc.returncode == 0, proc.stderr
    failure = _failure(_stderr_lines(proc), command, label, re.escape(
        "printed more than 1 MB on stdout"))
    assert reply(proc) == _claude_reply(failure, fail_closed)
    # The 99 MB past the cap were read and dropped, never held: the run's peak is that of an
    # interpreter (about 30 MB here), far below the 100 MB the hook printed.
    assert peak_kib < 64 * 1024


@POLICIES
def test_command_never_reads_stdin_of_a_large_event(tmp_path: Path, fail_closed: bool) -> None:
    # 3 MB of event against a 64 KiB pipe: the writer must not block on a hook that never
    # reads, and a hook that answers without reading is no fault at all.
    big = claude_bash("echo " + "x" * 3_000_000, cwd=str(tmp_path))
    _assert_claude_no_failure(
        tmp_path, "sleep 0.3; echo '{\"systemMessage\": \"answered without reading\"}'",
        fail_closed, _claude_reply(None, fail_closed,
                                   system="answered without reading\nhealthy note"), event=big)


@POLICIES
def test_command_closes_stdout_early(tmp_path: Path, fail_closed: bool) -> None:
    # stdout reaches end-of-file long before the hook exits: the hook is still waited for
    # (its last step is done when the run answers), and its empty reply with exit 0 is "no
    # opinion", not a fault.
    _assert_claude_no_failure(
        tmp_path, "exec >&-; sleep 0.5; echo still working >&2; touch finished; exit 0",
        fail_closed, _claude_reply(None, fail_closed))
    assert (tmp_path / "finished").exists()


@POLICIES
def test_command_forks_a_background_child_that_keeps_the_pipe(tmp_path: Path,
                                                              fail_closed: bool) -> None:
    # README, "Command hooks": when a hook exits normally, a background child it started is
    # not waited for (its pipes are let go after 0.1 s) and not killed.
    command = ("sleep 30 & echo $! > child.pid; "
               "echo '{\"systemMessage\": \"answered before its child\"}'")
    try:
        _assert_claude_no_failure(tmp_path, command, fail_closed, _claude_reply(
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
    _assert_claude_failure(tmp_path, command, fail_closed, TIMED_OUT, timeout=1)
    assert time.monotonic() - started < 1 + 5 + 10  # the timeout, generous start-up, slack
    assert_group_killed(read_pid(tmp_path / "hook.pid"))  # the shell and its sleep


@POLICIES
def test_command_sleeps_past_the_deadline(tmp_path: Path, fail_closed: bool) -> None:
    command = "echo $$ > hook.pid; sleep 30"
    _assert_claude_failure(tmp_path, command, fail_closed, TIMED_OUT, timeout=1)
    assert_group_killed(read_pid(tmp_path / "hook.pid"))


def _shell_says(command: str, cwd: Path) -> str:
    """What /bin/sh itself prints for ``command`` (dash and bash word it differently)."""
    done = subprocess.run(["/bin/sh", "-c", command], capture_output=True, text=True, cwd=cwd)
    return excerpt(done.stderr)


@POLICIES
def test_command_does_not_exist(tmp_path: Path, fail_closed: bool) -> None:
    said = _shell_says("/no/such/hook", tmp_path)
    _assert_claude_failure(tmp_path, "/no/such/hook", fail_closed,
                           re.escape(f"exited with status 127 (command not found): {said}"))


@POLICIES
def test_command_file_is_not_executable(tmp_path: Path, fail_closed: bool) -> None:
    (tmp_path / "guard.sh").write_text("#!/bin/sh\necho '{\"decision\": \"block\"}'\n")
    said = _shell_says("./guard.sh", tmp_path)
    _assert_claude_failure(tmp_path, "./guard.sh", fail_closed,
                           re.escape(f"exited with status 126 (not executable): {said}"))


def test_command_file_is_not_executable_in_a_cline_hook_folder(tmp_path: Path) -> None:
    # A Cline-style hook file is executed directly, not through a shell.
    hook = tmp_path / "hooks" / "PreToolUse"
    hook.parent.mkdir()
    hook.write_text("#!/bin/sh\necho '{\"cancel\": true}'\n")
    healthy = _healthy_config(tmp_path)
    proc = run_cli(claude_bash("ls", cwd=str(tmp_path)), "--config", str(hook.parent),
                   "--config", str(healthy), "--managed-dir", str(tmp_path / "no-managed"))
    assert proc.returncode == 0
    _failure(_stderr_lines(proc), "hooks/PreToolUse", str(hook),
             re.escape(f"{hook} is not executable"))
    assert reply(proc) == _claude_reply(None, False)


# ---------------------------------------------------------------------------------------------
# Command hooks: Cursor and Cline replies (crash and timeout)


def _cursor_row(tmp_path: Path, command: str, fail_closed: bool, timeout: float = 10) -> Run:
    cfg = write_json(tmp_path / "hooks.json", {"version": 1, "hooks": {"preToolUse": [
        {"command": command, "timeout": timeout, "failClosed": fail_closed},
        {"command": HEALTHY_CURSOR},
    ]}})
    event = cursor_event("preToolUse", root=str(tmp_path), tool_name="Shell",
                         tool_input={"command": "ls"})
    proc = _run(tmp_path, event, cfg)
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
    cfg, label = _claude_config(tmp_path, {"command": command, "timeout": timeout}, fail_closed)
    event = cline_event("PreToolUse", root=str(tmp_path), toolName="execute_command",
                        parameters={"command": "ls"})
    proc = _run(tmp_path, event, cfg)
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
    failure = _failure(_stderr_lines(proc), command, label,
                       re.escape("exited with status 1: boom"))
    assert reply(proc) == expected(failure, fail_closed)


@POLICIES
@HOSTS
def test_command_sleeps_past_the_deadline_under_cursor_and_cline(
        tmp_path: Path, fail_closed: bool, host: str) -> None:
    row, expected = HOST_ROWS[host]
    command = "echo $$ > hook.pid; sleep 30"
    proc, label = row(tmp_path, command, fail_closed, 1)
    failure = _failure(_stderr_lines(proc), command, label, TIMED_OUT)
    assert reply(proc) == expected(failure, fail_closed)
    assert_group_killed(read_pid(tmp_path / "hook.pid"))


# ---------------------------------------------------------------------------------------------
# Prompt hooks (the fake model server)


@pytest.fixture(scope="module", autouse=True)
def _litellm_warm() -> Iterator[None]:
    """Import litellm and make one call up front, so deadline rows measure the fault, not the
    first call's set-up (over a second on this machine)."""
    from prompthooks.model.call import complete as call_model
    from prompthooks.model.call import import_litellm
    from prompthooks.model.settings import Endpoint
    from prompthooks.model.types import ModelRequest

    from .fake_model import serve

    import_litellm()
    server = serve()
    state = next(server)
    request = ModelRequest(Endpoint("test-model", state.url, "warm-up-key"),
                           ({"role": "user", "content": "warm up"},))
    call_model(request, time.monotonic() + 30)
    next(server, None)
    yield


def _prompt_row(tmp_path: Path, fail_closed: bool, timeout: float = 2) -> tuple[Outcome, str]:
    cfg = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "prompt", "prompt": PROMPT, "timeout": timeout, "failClosed": fail_closed},
        {"type": "command", "command": HEALTHY},
    ]}]}})
    outcome = dispatch(claude_bash("ls", cwd=str(tmp_path)), config_paths=[str(cfg)], budget=30,
                       managed_dir=tmp_path / "no-managed")
    assert outcome.exit_code == 0
    return outcome, f"{cfg}: hooks.PreToolUse[0].hooks[0]"


def _assert_prompt_failure(tmp_path: Path, fail_closed: bool, error: str,
                           timeout: float = 2) -> str:
    """The whole check for a prompt row whose model call fails; returns the error."""
    outcome, label = _prompt_row(tmp_path, fail_closed, timeout)
    failure = _failure(outcome.problems, "inline prompt", label, error)
    assert json.loads(outcome.stdout) == _claude_reply(failure, fail_closed)
    return failure


def _attempts(failure: str) -> int:
    match = re.search(r"\(test-model, (\d+) attempts?\)", failure)
    assert match, failure
    return int(match[1])


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@POLICIES
def test_prompt_endpoint_refuses_connections(tmp_path: Path, fail_closed: bool,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROMPTHOOKS_API_BASE", f"http://127.0.0.1:{_closed_port()}/v1")
    monkeypatch.setenv("PROMPTHOOKS_MODEL", "test-model")
    failure = _assert_prompt_failure(tmp_path, fail_closed, re.escape(
        "cannot connect to the model endpoint (test-model, ") + r"\d+" + re.escape(
        " attempts): litellm.InternalServerError: InternalServerError: OpenAIException - "
        "Connection error."))
    assert _attempts(failure) >= 2  # retried while time remained


def _assert_retried(tmp_path: Path, model: FakeModel, fail_closed: bool, what: str,
                    detail: str) -> None:
    failure = _assert_prompt_failure(tmp_path, fail_closed, re.escape(
        f"{what} (test-model, ") + r"\d+" + re.escape(f" attempts): {detail}"))
    assert _attempts(failure) == len(model.requests) >= 2


@POLICIES
def test_prompt_endpoint_answers_429_forever(tmp_path: Path, model: FakeModel,
                                             fail_closed: bool) -> None:
    model.script(error(429, "slow down"))
    _assert_retried(tmp_path, model, fail_closed, "rate limited (429)",
                    "litellm.RateLimitError: RateLimitError: OpenAIException - slow down")


@POLICIES
def test_prompt_endpoint_answers_500(tmp_path: Path, model: FakeModel, fail_closed: bool) -> None:
    model.script(error(500, "boom"))
    _assert_retried(tmp_path, model, fail_closed, "the model endpoint failed (500)",
                    "litellm.InternalServerError: InternalServerError: OpenAIException - boom")


@POLICIES
def test_prompt_endpoint_answers_an_empty_body(tmp_path: Path, model: FakeModel,
                                               fail_closed: bool) -> None:
    # The server said 200; the "500" is litellm's name for a body it cannot parse.
    model.script(Answer(body=""))
    _assert_retried(tmp_path, model, fail_closed, "the model endpoint failed (500)",
                    "litellm.InternalServerError: InternalServerError: OpenAIException - "
                    "Expecting value: line 1 column 1 (char 0)")


@POLICIES
def test_prompt_endpoint_answers_an_html_body(tmp_path: Path, model: FakeModel,
                                              fail_closed: bool) -> None:
    page = "<html><body>502 Bad Gateway</body></html>"
    model.script(Answer(body=page, content_type="text/html"))
    _assert_retried(tmp_path, model, fail_closed, "the model endpoint failed (500)",
                    "litellm.InternalServerError: InternalServerError: OpenAIException - Empty "
                    f"or invalid response from LLM endpoint. Received: '{page}'. Check the "
                    "reverse proxy or model server configuration.")


@POLICIES
def test_prompt_reply_of_the_wrong_schema(tmp_path: Path, model: FakeModel,
                                          fail_closed: bool) -> None:
    model.script(Answer('{"answer": "yes", "confidence": 0.9}'))
    _assert_prompt_failure(tmp_path, fail_closed, re.escape(
        "the model's reply is not a verdict: '{\"answer\": \"yes\", \"confidence\": 0.9}'"))
    assert len(model.requests) == 1  # a reply, however wrong, is not retried


@POLICIES
def test_prompt_reply_in_markdown_fences_is_accepted(tmp_path: Path, model: FakeModel,
                                                     fail_closed: bool) -> None:
    # README, "Verdicts": markdown fences are stripped. Not a fault: the verdict decides.
    model.script(Answer('```json\n{"ok": false, "reason": "deletes the home directory"}\n```'))
    outcome, _ = _prompt_row(tmp_path, fail_closed)
    assert outcome.problems == ()
    assert json.loads(outcome.stdout) == _claude_reply(
        None, fail_closed, denial="deletes the home directory")


@POLICIES
def test_prompt_reply_of_1_mb(tmp_path: Path, model: FakeModel, fail_closed: bool) -> None:
    # A verdict is a few hundred characters; a longer reply is a hook error, quoted short.
    text = ("all good " * 120_000)[:1_048_576] + '{"ok": true}'
    model.script(Answer(text))
    _assert_prompt_failure(tmp_path, fail_closed, re.escape(
        f"the model's reply is too long to be a verdict (1,048,588 characters, at most "
        f"{MAX_REPLY_CHARS:,}): {excerpt(text, 300)!r}"))


@POLICIES
@pytest.mark.parametrize("text", [
    "{" * MAX_REPLY_CHARS,  # searching each "{" used to cost a scan back to the start
    '{"a":' * (MAX_REPLY_CHARS // 5),  # nested past the JSON decoder's recursion limit
], ids=["open-braces", "deep-nesting"])
def test_prompt_reply_of_pathological_json_under_the_cap(tmp_path: Path, model: FakeModel,
                                                         fail_closed: bool, text: str) -> None:
    # Read in bounded time, and a hook error like any other reply without a verdict (the
    # nesting used to escape as "internal error: RecursionError(...)").
    model.script(Answer(text))
    _assert_prompt_failure(tmp_path, fail_closed, re.escape(
        f"the model's reply is not a verdict: {excerpt(text, 300)!r}"))


@POLICIES
def test_prompt_reply_after_the_deadline(tmp_path: Path, model: FakeModel,
                                         fail_closed: bool) -> None:
    model.script(Answer('{"ok": false, "reason": "too late"}', delay=30))
    started = time.monotonic()
    outcome, label = _prompt_row(tmp_path, fail_closed, timeout=2)
    assert time.monotonic() - started < 2 + 5
    failure = _failure(outcome.problems, "inline prompt", label,
                       re.escape("the model did not answer in time (test-model, 1 attempt)"))
    assert [r.status for r in outcome.decision.results] == ["timeout", "ok"]
    assert json.loads(outcome.stdout) == _claude_reply(failure, fail_closed)


def _cassette_row(tmp_path: Path, fail_closed: bool, cassette: Path) -> Run:
    cfg = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "prompt", "prompt": PROMPT, "failClosed": fail_closed},
        {"type": "command", "command": HEALTHY},
    ]}]}})
    proc = _run(tmp_path, claude_bash("ls", cwd=str(tmp_path)), cfg, "--replay", str(cassette))
    assert proc.returncode == 0, proc.stderr
    return proc, f"{cfg}: hooks.PreToolUse[0].hooks[0]"


@POLICIES
def test_prompt_replay_of_a_cassette_that_is_not_yaml(tmp_path: Path, fail_closed: bool) -> None:
    import yaml

    tape = tmp_path / "tape.yaml"
    tape.write_text("entries: [\n  {key: 'unclosed\n")
    with pytest.raises(yaml.YAMLError) as parsed:  # the error of the loader the cassette uses
        yaml.load(tape.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    proc, label = _cassette_row(tmp_path, fail_closed, tape)
    failure = _failure(_stderr_lines(proc), "inline prompt", label, re.escape(
        f"cassette {tape} cannot be read: {excerpt(str(parsed.value))}"))
    assert reply(proc) == _claude_reply(failure, fail_closed)


@POLICIES
def test_prompt_replay_of_a_file_that_is_not_a_cassette(tmp_path: Path,
                                                        fail_closed: bool) -> None:
    tape = tmp_path / "tape.yaml"
    tape.write_text("- just\n- a list\n")
    proc, label = _cassette_row(tmp_path, fail_closed, tape)
    failure = _failure(_stderr_lines(proc), "inline prompt", label, re.escape(
        f"cassette {tape} is not a cassette (no 'entries' list)"))
    assert reply(proc) == _claude_reply(failure, fail_closed)


# ---------------------------------------------------------------------------------------------
# The audit database: a log that cannot be written costs one line on stderr, never the reply


def _audit_row(tmp_path: Path, fail_closed: bool, db: Path) -> tuple[Run, list[str]]:
    """A Claude Code row whose faulty hook exits 1, logging to ``db``: the run, and its
    stderr lines about the audit log."""
    cfg = write_json(tmp_path / "hooks.json", {
        "hooks": {"PreToolUse": [{"hooks": [
            {"type": "command", "command": "exit 1", "failClosed": fail_closed},
            {"type": "command", "command": HEALTHY}]}]},
        "prompthooks": {"audit": {"path": str(db)}}})
    proc = run_cli(claude_bash("ls", cwd=str(tmp_path)), "--config", str(cfg), "--managed-dir",
                   str(tmp_path / "no-managed"), preexec_fn=file_modes_bind_root)
    assert proc.returncode == 0, proc.stderr
    lines = _stderr_lines(proc)
    audit = [line for line in lines if line.startswith("audit log ")]
    label = f"{cfg}: hooks.PreToolUse[0].hooks[0]"
    failure = _failure([line for line in lines if line not in audit], "exit 1", label,
                       re.escape("exited with status 1"))
    assert reply(proc) == _claude_reply(failure, fail_closed)  # the log changed nothing
    return (proc, label), audit


def _logged(db: Path) -> int:
    with contextlib.closing(store.connect(db, create=False)) as conn:
        return int(conn.execute("SELECT count(*) FROM decisions").fetchone()[0])


@POLICIES
def test_audit_database_locked_by_another_writer(tmp_path: Path, fail_closed: bool) -> None:
    db = tmp_path / "log" / "audit.db"
    holder = store.connect(db)
    holder.execute("BEGIN EXCLUSIVE")  # past the busy timeout: the run cannot wait for it
    try:
        _, audit = _audit_row(tmp_path, fail_closed, db)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert audit == [f"audit log {db}: database is locked; 2 row(s) kept in {db}.pending for "
                     "the next write"]
    assert _logged(db) == 0
    _, audit = _audit_row(tmp_path, fail_closed, db)  # the next writer moves them in
    assert audit == [] and _logged(db) == 4
    assert (tmp_path / "log" / "audit.db.pending").read_text() == ""


@POLICIES
def test_audit_database_file_is_read_only(tmp_path: Path, fail_closed: bool) -> None:
    db = tmp_path / "log" / "audit.db"
    store.connect(db).close()
    db.chmod(0o400)
    _, audit = _audit_row(tmp_path, fail_closed, db)
    assert audit == [f"audit log {db}: attempt to write a readonly database; 2 row(s) kept in "
                     f"{db}.pending for the next write"]
    for path in db.parent.glob("audit.db*"):  # mended (SQLite gave -wal and -shm its mode)
        path.chmod(0o600)
    _, audit = _audit_row(tmp_path, fail_closed, db)  # the next writer moves the rows in
    assert audit == [] and _logged(db) == 4


@POLICIES
def test_audit_database_and_its_folder_are_read_only(tmp_path: Path, fail_closed: bool) -> None:
    db = tmp_path / "log" / "audit.db"
    store.connect(db).close()
    db.chmod(0o400)
    db.parent.chmod(0o500)
    try:
        _, audit = _audit_row(tmp_path, fail_closed, db)
    finally:
        db.parent.chmod(0o700)
    (line,) = audit
    assert line.startswith(f"audit log {db}: ")
    assert line.endswith("; 2 row(s) lost: cannot spool them either (Permission denied)")
    assert _logged(db) == 0 and not (tmp_path / "log" / "audit.db.pending").exists()


# ---------------------------------------------------------------------------------------------
# The deadline promise, the default budgets, and exit code 3


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
    warm = _run(tmp_path, claude_event("Stop", cwd=str(tmp_path)), cfg)
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
    lines = _stderr_lines(proc)
    (audit_line,) = [line for line in lines if line.startswith("audit log ")]
    assert "database is locked" in audit_line and "2 row(s) kept in" in audit_line
    failure = _failure([line for line in lines if line != audit_line], "./stubborn.sh",
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
    failure = _failure(_stderr_lines(proc), "inline prompt",
                       f"{cfg}: hooks.PreToolUse[0].hooks[0]",
                       r"the model did not answer in time \(test-model(, \d+ attempts?)?\)"
                       r"|did not finish before the run's deadline")
    assert reply(proc) == _claude_reply(failure, fail_closed)


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
    failure = _failure(_stderr_lines(proc), "sleep 30", f"{cfg}: hooks.PreToolUse[0].hooks[0]",
                       TIMED_OUT)
    assert reply(proc) == {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": f"{BLOCKED}{failure}"}}


@pytest.mark.parametrize(("left", "hooks_get"), [
    (590.0, 588.8), (28.0, 26.8), (2.4, 1.2), (2.0, 1.0), (1.0, 0.5), (0.0, 0.0), (-1.0, -1.0)])
def test_hooks_are_done_a_reserve_before_the_run_answers(left: float, hooks_get: float) -> None:
    # README, "The run's budget": 1.2 s before it, or half of what is left when that is
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
    # README, "The run's budget": 590 s for Claude Code, 55 s for Cursor, 28 s for Cline. A
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

    monkeypatch.setattr(prompthooks.executors, "for_run", lambda: lambda hook: Recording())
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
