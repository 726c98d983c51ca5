"""The resident dispatcher and the thin client: real `prompthooks serve`, real console script,
real hooks; and the attacks a process on the socket path can make."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from prompthooks.address import socket_name
from prompthooks.dispatcher import client
from prompthooks.dispatcher.protocol import exit_frame
from prompthooks.model.model_process import model_path
from prompthooks.runner.job import Job

from ..helpers import (
    approve,
    claude_bash,
    claude_config,
    claude_event,
    reply,
    write_json,
    write_script,
)
from ..helpers import wait_until as _wait

SCRIPT = str(Path(sys.executable).parent / "prompthooks")  # the console script users run
# The hook's parent is the run's process: forked from the resident process ("serve") when the
# run was handed over, from `prompthooks run` when it ran in process.
WHO = "{{ tr '\\0' ' ' < /proc/$PPID/cmdline; echo; echo \"$FOO\"; }} > {out}; cat > /dev/null"


def _run(stdin: object, *args: str, env: dict[str, str] | None = None,
         cwd: Path | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SCRIPT, "run", *args], input=json.dumps(stdin), text=True,
                          capture_output=True, env={**os.environ, **(env or {})}, cwd=cwd,
                          timeout=timeout)



@pytest.fixture
def dispatcher(monkeypatch: pytest.MonkeyPatch) -> Iterator[subprocess.Popen[bytes]]:
    """A real resident process for this test's runtime folder."""
    monkeypatch.setenv("PROMPTHOOKS_WORKER", "1")
    proc = subprocess.Popen([SCRIPT, "serve", "--idle", "60"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    path = socket_name(os.environ)
    try:
        assert _wait(lambda: os.path.exists(path)), "the dispatcher did not listen"
        yield proc
    finally:
        proc.terminate()
        proc.wait(30)


class FakeDispatcher:
    """Something else listening on the socket path (an agent running as the user can bind it),
    answering each connection with ``answer``."""

    def __init__(self, answer: Callable[[socket.socket], None]) -> None:
        path = socket_name(os.environ)
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(8)
        self.connections = 0
        self._answer = answer
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            with contextlib.suppress(OSError):
                conn.recv(1 << 16)
                self._answer(conn)
            hang = threading.Timer(60, conn.close)  # a hang: the connection stays open
            hang.daemon = True
            hang.start()

    def close(self) -> None:
        self.listener.close()


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., FakeDispatcher]]:
    monkeypatch.setenv("PROMPTHOOKS_WORKER", "1")
    made: list[FakeDispatcher] = []

    def make(answer: Callable[[socket.socket], None]) -> FakeDispatcher:
        made.append(FakeDispatcher(answer))
        return made[-1]

    yield make
    for one in made:
        one.close()


def _allow(conn: socket.socket) -> None:
    conn.sendall(exit_frame(b"", 0))


def test_run_is_handed_to_the_dispatcher_with_the_callers_environment_and_folder(
        tmp_path: Path, dispatcher: subprocess.Popen[bytes]) -> None:
    out = tmp_path / "who"
    cfg = claude_config(tmp_path / "hooks.json", "PreToolUse",
                        {"command": WHO.format(out=out)},
                        {"command": "echo 'no rm here' >&2; exit 2"})
    # A relative --config is found from the caller's folder.
    proc = _run(claude_bash("rm -rf /"), "--config", cfg.name, env={"FOO": "caller's"},
                cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    output = reply(proc)["hookSpecificOutput"]
    assert output["permissionDecision"] == "deny"
    assert output["permissionDecisionReason"] == "no rm here"
    ancestry, seen = out.read_text().splitlines()
    assert "serve" in ancestry.split(), ancestry  # the resident process did the run
    assert seen == "caller's"

    # The same run with the hand-over turned off is done in process, with the same answer.
    proc = _run(claude_bash("rm -rf /"), "--config", cfg.name, env={"FOO": "caller's",
                "PROMPTHOOKS_DISPATCH": "0"}, cwd=tmp_path)
    assert reply(proc)["hookSpecificOutput"]["permissionDecisionReason"] == "no rm here"
    ancestry, seen = out.read_text().splitlines()
    assert "run" in ancestry.split() and "serve" not in ancestry.split()


def test_a_handed_over_event_is_judged_by_a_child_of_the_resident_process(
        tmp_path: Path, dispatcher: subprocess.Popen[bytes]) -> None:
    """Two of our processes see the event: the client, and the run's process, which the
    resident process forked ahead and which took the connection itself (no process between
    them passes it on)."""
    out = tmp_path / "parents"
    cfg = claude_config(tmp_path / "hooks.json", "PreToolUse", {
        "command": f"{{ echo $PPID; cut -d' ' -f4 /proc/$PPID/stat; }} > {out}; cat > /dev/null"})
    proc = _run(claude_bash("ls"), "--config", str(cfg))
    assert proc.returncode == 0, proc.stderr
    run_pid, its_parent = (int(line) for line in out.read_text().split())
    assert its_parent == dispatcher.pid  # the run's process is the resident process's child
    assert run_pid != dispatcher.pid and not _is_model_process(run_pid)


def test_the_run_socket_listens_while_litellm_is_still_being_imported(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A first event does not wait for litellm: the resident process listens at once, and
    its model process imports litellm apart. Here that import takes a minute; an event is
    handed over meanwhile."""
    from ..model.test_cold_start import _slow
    from ..model.test_worker import _workers

    monkeypatch.setenv("PROMPTHOOKS_WORKER", "1")
    proc = subprocess.Popen([SCRIPT, "serve", "--idle", "60"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL,
                            env={**os.environ, **_slow(tmp_path, "litellm", 60.0)})
    path = socket_name(os.environ)
    model = model_path(Path(path))
    out = tmp_path / "who"
    cfg = claude_config(tmp_path / "hooks.json", "PreToolUse", {"command": WHO.format(out=out)})
    try:
        assert _wait(lambda: os.path.exists(path)), "the resident process did not listen"
        done = _run(claude_bash("ls"), "--config", str(cfg))
        assert done.returncode == 0, done.stderr
        assert "serve" in out.read_text().splitlines()[0].split()  # handed over
        assert not model.exists()  # litellm is still being imported
    finally:
        proc.terminate()
        proc.wait(30)
        for pid in _workers():  # its model process, in its minute's import
            os.kill(pid, signal.SIGKILL)


def test_the_dispatcher_answers_an_event_it_cannot_judge_by_the_failure_policy(
        tmp_path: Path, dispatcher: subprocess.Popen[bytes]) -> None:
    cfg = claude_config(tmp_path / "hooks.json", "PreToolUse",
                        {"command": "exit 1", "failClosed": True})
    proc = _run(claude_bash("ls"), "--config", str(cfg))
    assert reply(proc)["hookSpecificOutput"]["permissionDecision"] == "deny"
    proc = subprocess.run([SCRIPT, "run", "--config", str(cfg)], input="not json",
                          text=True, capture_output=True, timeout=60)
    assert proc.returncode == 2, proc.stderr  # unreadable, and a fail-closed hook could apply
    assert "Traceback" not in proc.stderr


def test_a_managed_policy_is_judged_in_the_process_the_host_started(
        tmp_path: Path, dispatcher: subprocess.Popen[bytes]) -> None:
    out = tmp_path / "who"
    managed = tmp_path / "etc"
    claude_config(managed / "hooks.json", "PreToolUse", {"command": WHO.format(out=out)})
    proc = _run(claude_bash("ls"), "--managed-dir", str(managed))
    assert proc.returncode == 0, proc.stderr
    ancestry = out.read_text().splitlines()[0].split()
    assert "run" in ancestry and "serve" not in ancestry


def test_a_fake_dispatcher_that_allows_everything_cannot_open_a_managed_gate(
        tmp_path: Path, fake: Callable[..., FakeDispatcher]) -> None:
    impostor = fake(_allow)
    managed = tmp_path / "etc"
    claude_config(managed / "hooks.json", "PreToolUse",
                  {"command": "exit 1", "failClosed": True})
    proc = _run(claude_bash("rm -rf /"), "--managed-dir", str(managed))
    assert reply(proc)["hookSpecificOutput"]["permissionDecision"] == "deny", proc.stderr
    assert impostor.connections == 0  # never even asked


def test_the_fake_dispatcher_is_believed_where_no_managed_policy_is(
        tmp_path: Path, fake: Callable[..., FakeDispatcher]) -> None:
    """The other side of the test above, so that it cannot pass for want of a connection: a
    process on the user's socket answers for the user's own hooks (docs/security.md, "Threat model")."""
    impostor = fake(_allow)
    cfg = claude_config(tmp_path / "hooks.json", "PreToolUse", {"command": "exit 2"})
    proc = _run(claude_bash("ls"), "--config", str(cfg))
    assert (proc.returncode, proc.stdout) == (0, "")
    assert impostor.connections == 1


def _cut(conn: socket.socket, data: bytes) -> None:
    conn.sendall(data)
    conn.close()


GARBAGE: dict[str, Callable[[socket.socket], None]] = {
    "http": lambda c: c.sendall(b"HTTP/1.1 200 OK\r\n\r\n{\"ok\": true}"),
    "closes": lambda c: c.close(),
    "cut-frame": lambda c: _cut(c, exit_frame(b"", 0)[:6]),
    "bad-code": lambda c: c.sendall(b"X" + (999).to_bytes(4, "big") + bytes(8)),
    "huge-length": lambda c: c.sendall(b"X" + bytes(4) + (1 << 60).to_bytes(8, "big")),
    "json": lambda c: c.sendall(b'{"text": "{\\"ok\\": true}"}\n'),
}


@pytest.mark.parametrize("answer", GARBAGE.values(), ids=list(GARBAGE))
def test_garbage_on_the_socket_cannot_open_a_fail_closed_gate(
        tmp_path: Path, fake: Callable[..., FakeDispatcher],
        answer: Callable[[socket.socket], None]) -> None:
    impostor = fake(answer)
    cfg = claude_config(tmp_path / "hooks.json", "PreToolUse",
                        {"command": "exit 1", "failClosed": True})
    start = time.monotonic()
    proc = _run(claude_bash("rm -rf /"), "--config", str(cfg), "--budget", "20")
    assert reply(proc)["hookSpecificOutput"]["permissionDecision"] == "deny", proc.stderr
    assert time.monotonic() - start < 20
    assert impostor.connections == 1
    assert "Traceback" not in proc.stderr


def test_a_hanging_socket_cannot_open_a_fail_closed_gate_nor_outlast_the_budget(
        tmp_path: Path, fake: Callable[..., FakeDispatcher]) -> None:
    impostor = fake(lambda conn: None)  # reads the request, never answers
    cfg = claude_config(tmp_path / "hooks.json", "PreToolUse",
                        {"command": "exit 1", "failClosed": True})
    start = time.monotonic()
    proc = _run(claude_bash("rm -rf /"), "--config", str(cfg), "--budget", "20")
    took = time.monotonic() - start
    assert reply(proc)["hookSpecificOutput"]["permissionDecision"] == "deny", proc.stderr
    assert impostor.connections == 1
    # No sign of life: the client did the run itself after 2 s of silence, not at the
    # reserve before the budget (18 s in).
    assert took < 10


def test_a_run_whose_dispatcher_dies_midway_is_answered_in_process(
        tmp_path: Path, dispatcher: subprocess.Popen[bytes]) -> None:
    marker = tmp_path / "killed"
    # The first time, the hook kills the process that does the run for the client (its
    # parent's parent: the supervisor the resident process forked); then it blocks.
    body = (f"if [ ! -e {marker} ]; then touch {marker}; "
            "kill -9 $(cut -d' ' -f4 /proc/$PPID/stat); sleep 5; fi; "
            "echo 'blocked after all' >&2; exit 2")
    cfg = claude_config(tmp_path / "hooks.json", "PreToolUse", {"command": body})
    start = time.monotonic()
    proc = _run(claude_bash("rm -rf /"), "--config", str(cfg), "--budget", "30")
    assert marker.exists()
    output = reply(proc)["hookSpecificOutput"]
    assert output["permissionDecisionReason"] == "blocked after all", proc.stderr
    assert time.monotonic() - start < 20


def test_a_dispatcher_of_another_model_environment_is_not_used(
        tmp_path: Path, dispatcher: subprocess.Popen[bytes]) -> None:
    out = tmp_path / "who"
    cfg = claude_config(tmp_path / "hooks.json", "PreToolUse", {"command": WHO.format(out=out)})
    proc = _run(claude_bash("ls"), "--config", str(cfg), env={"PROMPTHOOKS_MODEL": "other"})
    assert proc.returncode == 0, proc.stderr
    assert "serve" not in out.read_text().splitlines()[0].split()


def test_the_thin_clients_copy_of_the_managed_folder_agrees_with_the_package() -> None:
    from prompthooks.config.discovery import MANAGED_DIR

    assert str(MANAGED_DIR) == client.MANAGED_DIR


def test_the_budget_is_told_from_the_command_line_or_the_shortest_the_event_could_have() -> None:
    def job(*args: str) -> Job:
        found = client._job(args)
        assert found is not None
        return found

    assert client._budget(job("--budget", "7")) == 7.0
    assert client._budget(job("--host", "cursor")) == 55.0
    assert client._budget(job()) is None
    assert client._sniff(json.dumps(claude_bash("ls")).encode()) == 590.0
    # A Claude Code event that mentions Cline's key gets Cline's (shorter) budget, never more.
    nested = claude_event("PreToolUse", tool_name="Bash", tool_input={"hookName": "x"})
    assert client._sniff(json.dumps(nested).encode()) == 28.0
    assert client._sniff(b"{}") == 28.0
    parsed = job("--budget", "5", "--host=cline", "--config", "a", "PreToolUse", "--config=b",
                 "--replay", "c.yaml")
    assert (parsed.budget, parsed.host, parsed.event, parsed.config, parsed.replay) == (
        5.0, "cline", "PreToolUse", ("a", "b"), "c.yaml")
    # Left to the full parser, which says what is wrong (or prints help):
    for args in (["--bud", "5"], ["--help"], ["--host", "vim"], ["--budget", "-1"],
                 ["--budget", "x"], ["--host", "claude", "--host", "cline"], ["a", "b"],
                 ["--record", "a", "--replay", "b"], ["--config"]):
        assert client._job(args) is None, args


def test_a_job_crosses_the_socket_whole() -> None:
    """What the resident process reads is the job the client sent: every field, a path that is
    not UTF-8, an event with NUL bytes."""
    from prompthooks.dispatcher.protocol import MAGIC, decode_job, job_head, length

    sent = Job(b'{"a": "\x00"}', 12.5, host="cursor", event="preToolUse",
               config=["/p/\udcff.json", "b"], budget=3.5, replay="r.yaml", limit=14.0,
               version="1", cwd=b"/w\xff", umask=0o027, env={b"A": b"=b", b"C": b""})
    head = job_head(sent)
    assert head.startswith(MAGIC)
    size = length(head[len(MAGIC):len(MAGIC) + 8])
    header = head[len(MAGIC) + 8:len(MAGIC) + 8 + size]
    got = decode_job(header, sent.data)
    for name in ("data", "started", "host", "event", "config", "budget", "record", "replay",
                 "limit", "version", "cwd", "umask", "env", "managed_dir"):
        assert getattr(got, name) == getattr(sent, name), name
    with pytest.raises(ValueError):
        decode_job(header.rsplit(b"\0", 3)[0], b"")


ALLOWED = {"prompthooks", "prompthooks._version", "prompthooks.dispatcher",
           "prompthooks.dispatcher.client", "prompthooks.address",
           "prompthooks.dispatcher.protocol", "prompthooks.hosts", "prompthooks.hosts.markers",
           "prompthooks.runner", "prompthooks.runner.job",
           "prompthooks.runner.stdin", "_socket", "select", "zlib",
           "time"}


def _imported(argv: list[str], data: bytes, env: dict[str, str]) -> set[str]:
    proc = subprocess.run([sys.executable, "-X", "importtime", *argv], input=data,
                          capture_output=True, env={**os.environ, **env}, timeout=60)
    return {line.rsplit("|", 1)[1].strip() for line in proc.stderr.decode().splitlines()
            if line.startswith("import time:") and "|" in line} - {"package"}


def test_a_handed_over_run_imports_nothing_but_the_thin_client(
        tmp_path: Path, dispatcher: subprocess.Popen[bytes]) -> None:
    cfg = claude_config(tmp_path / "hooks.json", "PreToolUse", {"command": "exit 0"})
    data = json.dumps(claude_bash("ls")).encode()
    bare = _imported(["-c", "pass"], b"", {})
    handed = _imported([SCRIPT, "run", "--config", str(cfg)], data, {})
    # Not `re` either: the installed command is a plain script, not pip's entry-point
    # launcher (which imports it first).
    assert handed - bare <= ALLOWED, handed - bare
    # In process (no hand-over), a command-only event still loads no model or table modules.
    # Nor the full parser: the client's job goes straight to the runner.
    here = _imported([SCRIPT, "run", "--config", str(cfg)], data, {"PROMPTHOOKS_RESIDENT": "0"})
    assert "prompthooks.runner.supervisor" in here  # the canary: the run was done here
    assert "prompthooks.executors.command" in here  # and its hook was run here
    assert "prompthooks.cli" not in here and "argparse" not in here
    # Nor what only a partial event (the stdin hint) or a failure (its traceback) needs.
    assert not here & {"prompthooks.commands.output", "traceback"}
    assert not {m.split(".")[0] for m in here} & {"litellm", "pydantic", "rich", "asyncio",
                                                   "openai", "httpx", "yaml", "re2"}
    # The model client's modules are made only for a run with a hook that may reach a model.
    assert not {m for m in here if m.startswith("prompthooks.model")}, sorted(
        m for m in here if m.startswith("prompthooks.model"))


def test_an_in_process_run_makes_no_dataclass(tmp_path: Path) -> None:
    """Making a dataclass costs some 0.6 ms, and importing ``dataclasses`` brings ``inspect``
    (with ``ast``, ``dis`` and ``tokenize``): the run path's records are named tuples and
    plain classes."""
    cfg = claude_config(tmp_path / "hooks.json", "PreToolUse", {"command": "exit 0"})
    data = json.dumps(claude_bash("ls")).encode()
    argv = [SCRIPT, "run", "--config", str(cfg)]
    _imported(argv, data, {"PROMPTHOOKS_RESIDENT": "0"})  # validates the config, and caches it
    here = _imported(argv, data, {"PROMPTHOOKS_RESIDENT": "0"})
    # The canaries (a miss fails the test, not the expected failure): the run and its hook
    # were done here, from the cached config.
    if not {"prompthooks.runner.supervisor", "prompthooks.executors.command"} <= here:
        pytest.fail(f"the run was not done in process: {sorted(here)}")
    if "prompthooks.loading.cache" not in here or "pydantic" in here:
        pytest.fail("the run did not read the cached config")
    assert not here & {"dataclasses", "inspect"}, sorted(here & {"dataclasses", "inspect"})


def test_a_run_in_process_hashes_without_openssl(tmp_path: Path) -> None:
    """``hashlib`` initialises OpenSSL (a third of an interpreter's start): a run done in
    process takes its sha256 from Python's own (prompthooks.digests), also where it hashes:
    an approved project's files, a hook file run from its approved copy, a stop's count."""
    cfg = claude_config(tmp_path / "hooks.json", "PreToolUse", {"command": "exit 0"})
    data = json.dumps(claude_bash("ls")).encode()
    argv, env = [SCRIPT, "run", "--config", str(cfg)], {"PROMPTHOOKS_RESIDENT": "0"}
    # The first run validates the config (pydantic, which imports hashlib); the next read it
    # from the cache.
    assert "pydantic" in _imported(argv, data, env)
    here = _imported(argv, data, env)
    assert "prompthooks.runner.supervisor" in here  # the canary: the run was done here
    assert not here & {"hashlib", "_hashlib", "pydantic"}
    project = tmp_path / "project"
    ran = tmp_path / "ran"
    claude_config(project / ".prompthooks" / "hooks.json", "Stop",
                  {"command": f"cat > /dev/null; echo stop >> {ran}"})
    write_script(project / ".prompthooks" / "hooks" / "PreToolUse",
                 f"cat > /dev/null; echo file >> {ran}; echo '{{}}'")
    approve(project / ".prompthooks")
    env = {"PROMPTHOOKS_RESIDENT": "0", "CLAUDE_PROJECT_DIR": str(project)}
    argv = [SCRIPT, "run", "--managed-dir", str(tmp_path / "none")]
    for event in (claude_bash("ls", cwd=str(project)), claude_event("Stop", str(project))):
        data = json.dumps(event).encode()
        _imported(argv, data, env)  # the config validated and cached
        here = _imported(argv, data, env)
        assert {"prompthooks.loading.approval_digest", "prompthooks.digests"} <= here
        assert ("prompthooks.executors.approved_copy" if event["hook_event_name"] != "Stop"
                else "prompthooks.core.stop_cap") in here
        assert not here & {"hashlib", "_hashlib", "pydantic"}
    # The canaries: the approved hook file ran (from its copy, checked by its sha256) and the
    # stop hook ran (a stop's count is named by a sha256), twice each.
    assert ran.read_text().split() == ["file", "file", "stop", "stop"]


def test_a_run_done_in_process_starts_the_resident_process_for_the_next(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A command-only config gets the fast path without ``serve`` by hand: the first run, done
    in process (nothing listens), replies, then starts the resident process in the background;
    the next event is handed to it."""
    from ..model.test_worker import _wait as _wait_long
    from ..model.test_worker import _workers

    monkeypatch.setenv("PROMPTHOOKS_WORKER", "1")  # the suite turns it off
    monkeypatch.setenv("PROMPTHOOKS_WORKER_IDLE", "30")
    out = tmp_path / "who"
    cfg = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": "echo 'said no' >&2; exit 2"},
        {"type": "command", "command": WHO.format(out=out)}]}]}})
    try:
        first = _run(claude_bash("ls"), "--config", str(cfg))
        assert reply(first)["hookSpecificOutput"]["permissionDecisionReason"] == "said no"
        assert "serve" not in out.read_text().split()  # done in process
        path = socket_name(os.environ)
        assert _wait_long(lambda: os.path.exists(path), 120), "no resident process started"
        second = _run(claude_bash("ls"), "--config", str(cfg))
        assert reply(second)["hookSpecificOutput"]["permissionDecisionReason"] == "said no"
        assert "serve" in out.read_text().split()  # handed over
        assert len(_workers()) == 1  # once
    finally:
        for pid in _workers():
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("switch", ["PROMPTHOOKS_RESIDENT", "PROMPTHOOKS_DISPATCH",
                                    "PROMPTHOOKS_WORKER"])
def test_the_resident_process_is_off_with_its_switch(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, switch: str) -> None:
    """``PROMPTHOOKS_RESIDENT=0`` (or an older spelling): the run is done in process and no
    resident process is started, before or after the reply."""
    from ..model.test_worker import _wait as _wait_long
    from ..model.test_worker import _workers

    monkeypatch.setenv("PROMPTHOOKS_WORKER", "1")
    monkeypatch.setenv("PROMPTHOOKS_WORKER_IDLE", "30")
    monkeypatch.setenv(switch, "0")
    cfg = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": "echo 'said no' >&2; exit 2"}]}]}})
    proc = _run(claude_bash("ls"), "--config", str(cfg))
    assert reply(proc)["hookSpecificOutput"]["permissionDecisionReason"] == "said no"
    # One is started by a process of its own once the run's has ended: the start's lock file
    # (made before it starts one) or the process would show within seconds.
    lock = Path(socket_name(os.environ) + ".lock")
    assert not _wait_long(lambda: _workers() or lock.exists(), 3)
    if switch == "PROMPTHOOKS_RESIDENT":
        # The canary: with the switch on, the same run in the same folders starts one.
        monkeypatch.delenv(switch)
        try:
            _run(claude_bash("ls"), "--config", str(cfg))
            assert _wait_long(lambda: bool(_workers()), 120), "no resident process started"
        finally:
            for pid in _workers():
                os.kill(pid, signal.SIGKILL)


def test_sigterm_to_the_client_stops_the_handed_over_run_at_once(
        tmp_path: Path, dispatcher: subprocess.Popen[bytes]) -> None:
    started = tmp_path / "started"
    cfg = claude_config(tmp_path / "hooks.json", "PreToolUse",
                        {"command": f"touch {started}; sleep 30", "failClosed": True})
    event = write_json(tmp_path / "event.json", claude_bash("rm -rf /"))
    with event.open("rb") as stdin:
        proc = subprocess.Popen([SCRIPT, "run", "--config", str(cfg)], stdin=stdin,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert _wait(started.exists, 30)
    start = time.monotonic()
    proc.send_signal(15)
    out, err = proc.communicate(timeout=30)
    assert time.monotonic() - start < 10  # not the hook's 30 s
    assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny", err
    assert "stopped before it finished" in err


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_bytes().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def _is_model_process(pid: int) -> bool:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/comm").read_text().strip() == "prompthooks-mdl"
    return False


def _forked_ahead(serve: int) -> int:
    """The spare, once it is waiting and the runs before it are over: the resident process's
    one child besides its model process."""
    found: list[int] = []

    def waiting() -> bool:
        children = _runs(serve)
        found[:] = sorted(children)
        return len(children) == 1

    assert _wait(waiting, 30), f"no spare waiting alone: {found}"
    return found[0]


def test_a_run_is_answered_when_its_process_forked_ahead_is_gone(
        tmp_path: Path, dispatcher: subprocess.Popen[bytes]) -> None:
    """The resident process forks each run's process before the run arrives (a spare).
    Killed, as anything running as the user could kill it, the next is forked: the run is
    answered the same, by the resident process."""
    out = tmp_path / "who"
    cfg = claude_config(tmp_path / "hooks.json", "PreToolUse",
                        {"command": WHO.format(out=out)},
                        {"command": "echo 'no rm here' >&2; exit 2"})
    first = _run(claude_bash("rm -rf /"), "--config", str(cfg), env={"FOO": "one"})
    assert reply(first)["hookSpecificOutput"]["permissionDecisionReason"] == "no rm here"
    os.kill(_forked_ahead(dispatcher.pid), signal.SIGKILL)
    time.sleep(0.2)
    proc = _run(claude_bash("rm -rf /"), "--config", str(cfg), env={"FOO": "two"})
    assert proc.returncode == 0, proc.stderr
    assert reply(proc)["hookSpecificOutput"]["permissionDecisionReason"] == "no rm here"
    ancestry, seen = out.read_text().splitlines()
    assert "serve" in ancestry.split() and seen == "two"  # done by the resident process


@pytest.mark.parametrize("argv", [["--host", "foo"], ["--budget", "soon"]])
def test_a_handed_over_command_line_that_does_not_parse_is_reported_once(
        dispatcher: subprocess.Popen[bytes], argv: list[str]) -> None:
    """A command line the client does not take is read by the full parser, once, in the
    process the host started (never handed over): one line says what is wrong with it. The
    client's stderr is read to its end, so a line written by any process holding it, however
    late, is counted."""
    _forked_ahead(dispatcher.pid)  # a spare is there to take a run
    proc = subprocess.run([sys.executable, "-X", "importtime", SCRIPT, "run", *argv],
                          input=json.dumps(claude_bash("ls")), text=True, capture_output=True,
                          timeout=60)
    lines = proc.stderr.splitlines()
    imported = {line.rsplit("|", 1)[1].strip() for line in lines
                if line.startswith("import time:") and "|" in line}
    assert "prompthooks.dispatcher.client" in imported
    assert "prompthooks.cli" in imported  # the full parser's
    said = [line for line in lines if not line.startswith("import time:")]
    assert proc.returncode == 64
    assert len(said) == 1 and said[0].startswith("prompthooks: argument "), said


def _live_children(pid: int) -> set[int]:
    """``pid``'s children that have not exited (zombies left out)."""
    found = set()
    with contextlib.suppress(OSError):
        for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
            with contextlib.suppress(OSError):
                if Path(f"/proc/{child}/stat").read_bytes().rsplit(b")", 1)[1].split()[0] != b"Z":
                    found.add(int(child))
    return found


def _runs(serve: int) -> set[int]:
    """The resident process's live children but its model process: spares and runs."""
    return {pid for pid in _live_children(serve) if not _is_model_process(pid)}


def test_the_next_spare_is_forked_off_the_path_of_the_run_that_took_the_last(
        tmp_path: Path, dispatcher: subprocess.Popen[bytes]) -> None:
    """Forking a spare copies the resident process's page tables: done while a run is
    starting, it takes a core from that run. The resident process forks the next spare once
    the run has ended, or SPARE_AFTER after the run came. Seen from outside: while a run holds
    its hook, within SPARE_AFTER of the run's start, the resident process has no child but the
    run's (and its model process); once the run is over, a spare waits again (and takes the
    next run)."""
    from prompthooks.dispatcher.resident import SPARE_AFTER

    held, go, ran = tmp_path / "held", tmp_path / "go", tmp_path / "ran"
    cfg = claude_config(tmp_path / "hooks.json", "PreToolUse", {
        "command": f"echo $PPID > {ran}; touch {held}; while [ ! -e {go} ]; do sleep 0.01; "
                   "done; cat > /dev/null"})
    serve = dispatcher.pid
    spare = _forked_ahead(serve)
    assert _parent(spare) == serve

    taken: set[int] = set()  # the children given a run so far: one may still write its audit

    def one_spare_waiting() -> bool:  # and the runs before it are over
        children = _runs(serve)
        return len(children) == 1 and not children & taken

    event = write_json(tmp_path / "event.json", claude_bash("ls"))
    observed = 0
    for _ in range(10):
        assert _wait(one_spare_waiting, 30), "no spare waiting"
        (spare,) = _runs(serve)
        taken.add(spare)
        held.unlink(missing_ok=True)
        go.unlink(missing_ok=True)
        start = time.monotonic()
        with event.open("rb") as stdin:
            proc = subprocess.Popen([SCRIPT, "run", "--config", str(cfg)], stdin=stdin,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            end = start + 30
            while not held.exists() and time.monotonic() < end:  # seen within a millisecond
                time.sleep(0.001)
            assert held.exists(), "the hook did not start"
            children = _runs(serve)
            assert int(ran.read_text()) == spare  # the run went to the spare
            if time.monotonic() - start < SPARE_AFTER:  # else the machine was too slow to tell
                observed += 1
                assert children == {spare}, "a spare was forked while the run was starting"
        finally:
            go.touch()
            out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0 and out == "", err
        if observed >= 3:
            break
    if not observed:
        pytest.skip("the machine was too busy to see a run start within SPARE_AFTER")


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[1])


def _cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def test_the_resident_process_idles_between_runs_that_outlast_spare_after(
        tmp_path: Path, dispatcher: subprocess.Popen[bytes]) -> None:
    """A run longer than SPARE_AFTER gets the next spare forked while it goes on; when it
    ends, the resident process has its spare and waits for the next run without using the
    CPU."""
    from prompthooks.dispatcher.resident import SPARE_AFTER

    cfg = claude_config(tmp_path / "hooks.json", "PreToolUse", {
        "command": f"sleep {SPARE_AFTER * 5}; cat > /dev/null"})
    serve = dispatcher.pid
    _forked_ahead(serve)
    for _ in range(2):
        proc = _run(claude_bash("ls"), "--config", str(cfg))
        assert proc.returncode == 0 and proc.stdout == "", proc.stderr
    _forked_ahead(serve)  # the runs are over
    before = _cpu_ticks(serve)
    time.sleep(2.0)
    used = _cpu_ticks(serve) - before
    assert used < 0.25 * os.sysconf("SC_CLK_TCK"), f"the resident process used {used} ticks idle"


def test_a_run_is_taken_only_with_the_resident_processs_model_environment() -> None:
    """The variables that change a model call are compared as the socket's name counts them
    (``str.upper``), also for a name that is not ASCII."""
    from prompthooks._version import __version__
    from prompthooks.address import model_environment
    from prompthooks.dispatcher.run_process import _acceptable

    odd = "opena\u0131_API_BASE"  # a dotless i: "OPENAI_API_BASE" once upper-cased
    own = model_environment({odd: "http://a", "OPENAI_API_KEY": "k", "HOME": "/h"})

    def request(env: dict[str, str]) -> Job:
        encoded = {k.encode(): v.encode() for k, v in env.items()}
        return Job(b"{}", 0.0, limit=1.0, version=__version__, cwd=b"/", env=encoded)

    assert odd in own
    assert _acceptable(request({odd: "http://a", "OPENAI_API_KEY": "k", "PATH": "/b"}), own)
    assert not _acceptable(request({"OPENAI_API_KEY": "k"}), own)
    assert not _acceptable(request({odd: "http://b", "OPENAI_API_KEY": "k"}), own)
    assert not _acceptable(request({odd: "http://a", "OPENAI_API_KEY": "other"}), own)
