"""Attacks on the user's resident process that a hostile agent (the user) can make: racing the
spare's accept with many runs at once, holding it with connections that say nothing or send
garbage, and stopping the model process while a prompt hook's request is in it. A real
``prompthooks serve``, real runs of the console script."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from prompthooks.address import socket_name
from prompthooks.dispatcher.protocol import MAGIC
from prompthooks.model.model_process import model_path

from ..fake_model import Answer, FakeModel, serve, verdict
from ..helpers import claude_bash, reply, write_json
from ..helpers import wait_until as _wait
from ..model.test_worker import _model_process
from .test_system_attacks import _FakeModelSocket

pytestmark = pytest.mark.slow

SCRIPT = str(Path(sys.executable).parent / "prompthooks")
# Denies with the event's own command as the reason, and notes who ran it (the parent's
# command line: "serve" when handed over) in a file named for that command.
ECHO = ("c=$(python3 -c 'import json, sys; print(json.load(sys.stdin)[\"tool_input\"]"
        "[\"command\"])'); tr '\\0' ' ' < /proc/$PPID/cmdline > {out}/$(echo \"$c\" | tr ' ' -);"
        " echo \"$c\" >&2; exit 2")



@pytest.fixture
def resident(monkeypatch: pytest.MonkeyPatch) -> Iterator[subprocess.Popen[bytes]]:
    monkeypatch.setenv("PROMPTHOOKS_WORKER", "1")
    proc = subprocess.Popen([SCRIPT, "serve", "--idle", "60"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        assert _wait(lambda: os.path.exists(socket_name(os.environ))), "it did not listen"
        yield proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGCONT)
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)


def _run(cfg: Path, command: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SCRIPT, "run", "--host", "claude", "--config", str(cfg), *args],
                          input=json.dumps(claude_bash(command)), text=True,
                          capture_output=True, timeout=120)


def _reason(proc: subprocess.CompletedProcess[str]) -> str:
    return str(reply(proc)["hookSpecificOutput"]["permissionDecisionReason"])


def test_many_runs_at_once_each_get_their_own_answer(
        tmp_path: Path, resident: subprocess.Popen[bytes]) -> None:
    """Sixteen runs race for the spare: each answer is its own event's, whoever took it."""
    out = tmp_path / "who"
    out.mkdir()
    cfg = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": ECHO.replace("{out}", str(out))}]}]}})
    commands = [f"echo {n}" for n in range(16)]
    with ThreadPoolExecutor(len(commands)) as pool:
        procs = list(pool.map(lambda c: _run(cfg, c), commands))
    for command, proc in zip(commands, procs, strict=True):
        assert _reason(proc) == command, proc.stderr
    # The canary: the race was run against the resident process (most runs handed over).
    handed = [p.name for p in out.iterdir() if b" serve " in p.read_bytes()]
    assert len(handed) >= 2, handed


@pytest.mark.parametrize("sends", [
    pytest.param(b"", id="silent"),
    pytest.param(b"garbage\n" * 100, id="garbage"),
    pytest.param(MAGIC + (1 << 30).to_bytes(8, "big"), id="huge-header"),
])
def test_connections_that_say_nothing_useful_do_not_hold_the_next_run(
        tmp_path: Path, resident: subprocess.Popen[bytes], sends: bytes) -> None:
    """Connections held open (saying nothing, garbage, or a header larger than allowed) take
    spares; the next event still gets one and its answer."""
    out = tmp_path / "who"
    out.mkdir()
    cfg = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": ECHO.replace("{out}", str(out))}]}]}})
    held = []
    try:
        for _ in range(3):
            conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            conn.connect(socket_name(os.environ))
            if sends:
                with contextlib.suppress(OSError):
                    conn.sendall(sends)
            held.append(conn)
        proc = _run(cfg, "echo after")
        assert _reason(proc) == "echo after", proc.stderr
        assert b" serve " in (out / "echo-after").read_bytes()  # handed over all the same
    finally:
        for conn in held:
            conn.close()


def _state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


@pytest.mark.parametrize("closed", [True, False], ids=["fail-closed", "fail-open"])
def test_a_stopped_model_process_costs_a_prompt_hook_its_timeout_and_its_failure_policy(
        tmp_path: Path, model: FakeModel, monkeypatch: pytest.MonkeyPatch,
        resident: subprocess.Popen[bytes], closed: bool) -> None:
    """Anything running as the user can stop the model process (SIGSTOP): a prompt hook whose
    request it took answers by the hook's timeout with its failure policy, well before the
    run's budget; the resident process itself still answers."""
    # The model process was started with the environment the resident process was started
    # with: the run's must be the same (PROMPTHOOKS_DIRECT keeps the call off the direct path).
    cfg = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "prompt", "prompt": "Judge it. $ARGUMENTS", "timeout": 3,
         "failClosed": closed}]}]}})
    os.killpg(resident.pid, signal.SIGKILL)
    resident.wait(30)
    monkeypatch.setenv("PROMPTHOOKS_DIRECT", "0")
    proc = subprocess.Popen([SCRIPT, "serve", "--idle", "60"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        path = model_path(Path(socket_name(os.environ)))
        assert _wait(path.exists, 120), "the model process did not listen"
        mdl = _model_process(proc.pid)
        os.kill(mdl, signal.SIGSTOP)
        assert _wait(lambda: _state(mdl) == "T", 10)
        started = time.monotonic()
        run = subprocess.run([SCRIPT, "run", "--host", "claude", "--budget", "30",
                              "--config", str(cfg)],
                             input=json.dumps(claude_bash("rm -rf /")), text=True,
                             capture_output=True, timeout=120)
        took = time.monotonic() - started
        # The canary: the request went to the stopped model process (the model server never
        # heard of it) and the hook's time ran out there.
        assert "through the warm worker" in run.stderr, run.stderr
        assert model.requests == []
        assert _state(mdl) == "T"
        decision = reply(run).get("hookSpecificOutput", {}).get("permissionDecision")
        assert decision == ("deny" if closed else None), run.stdout
        assert took < 20  # the hook's 3 s and more, not the 30 s budget
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGCONT)
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)


def test_a_model_process_killed_with_a_request_in_it_leaves_a_fail_closed_deny_in_time(
        tmp_path: Path, model: FakeModel, monkeypatch: pytest.MonkeyPatch) -> None:
    """The model process killed while the model it called is still answering: the run gets
    an answer well before its budget, and the fail-closed prompt hook still denies."""
    monkeypatch.setenv("PROMPTHOOKS_WORKER", "1")
    monkeypatch.setenv("PROMPTHOOKS_DIRECT", "0")
    model.script(Answer(json.dumps({"ok": False, "reason": "too late"}), delay=20),
                 verdict(False, "asked again"))
    cfg = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "prompt", "prompt": "Judge it. $ARGUMENTS", "timeout": 15,
         "failClosed": True}]}]}})
    server = subprocess.Popen([SCRIPT, "serve", "--idle", "60"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        assert _wait(model_path(Path(socket_name(os.environ))).exists, 120)
        mdl = _model_process(server.pid)
        started = time.monotonic()
        run = subprocess.Popen([SCRIPT, "run", "--host", "claude", "--budget", "30",
                                "--config", str(cfg)], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert run.stdin is not None
        run.stdin.write(json.dumps(claude_bash("rm -rf /")))
        run.stdin.close()
        run.stdin = None  # closed: communicate must not flush it
        # The canary: the request reached the model through the model process, then it died.
        assert _wait(lambda: len(model.requests) >= 1, 60), "the model was never asked"
        os.kill(mdl, signal.SIGKILL)
        out, err = run.communicate(timeout=120)
        took = time.monotonic() - started
        decision = json.loads(out)["hookSpecificOutput"]
        assert decision["permissionDecision"] == "deny", err
        assert took < 27, err  # before the 30 s budget, not after
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGKILL)
        server.wait(30)


def test_a_fake_model_socket_never_answers_a_managed_prompt_hook_in_process(
        tmp_path: Path, model: FakeModel, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under a managed policy the run is done in the process the host started; a model socket
    the agent bound where the user's model process listens answers the user's own prompt hook
    (the canary: that is the user's business), never the managed one."""
    monkeypatch.setenv("PROMPTHOOKS_WORKER", "1")
    monkeypatch.setenv("PROMPTHOOKS_DIRECT", "0")
    server = serve()
    policy = next(server)
    policy.script(verdict(False, "managed model says no"))
    try:
        managed = write_json(tmp_path / "etc" / "hooks.json", {
            "prompthooks": {"model": "policy-model", "api_base": policy.url},
            "hooks": {"PreToolUse": [{"hooks": [
                {"type": "prompt", "prompt": "MANAGED-PROMPT judge it. $ARGUMENTS",
                 "failClosed": True}]}]}}).parent
        cfg = write_json(tmp_path / "user.json", {"hooks": {"PreToolUse": [{"hooks": [
            {"type": "prompt", "prompt": "USER-PROMPT judge it. $ARGUMENTS"}]}]}})
        run_socket = Path(socket_name(os.environ))
        run_socket.parent.mkdir(parents=True, mode=0o700)
        fake = _FakeModelSocket(model_path(run_socket))
        try:
            proc = subprocess.run([SCRIPT, "run", "--host", "claude", "--managed-dir",
                                   str(managed), "--config", str(cfg)],
                                  input=json.dumps(claude_bash("rm -rf /")), text=True,
                                  capture_output=True, timeout=120)
        finally:
            fake.close()
        assert any(b"USER-PROMPT" in data for data in fake.received), proc.stderr
        assert not any(b"MANAGED-PROMPT" in data for data in fake.received)
        assert model.requests == []
        decision = reply(proc)["hookSpecificOutput"]
        assert decision["permissionDecision"] == "deny", proc.stderr
        assert "managed model says no" in decision["permissionDecisionReason"]
    finally:
        next(server, None)
