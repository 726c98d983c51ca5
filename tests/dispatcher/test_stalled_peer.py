"""One deadline per exchange with the resident process, whatever it does: a peer at its
socket's path that trickles bytes (anything running as the user can listen there), a real one
stopped with SIGSTOP, and the host's SIGTERM while the client waits on either.

Each test first shows the attack reached the client (the fake was connected to and sent its
bytes, the real process is stopped and holds the client's connection), then that the answer
is the one the failure policy gives, well before the budget."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from prompthooks.address import socket_name
from prompthooks.dispatcher.protocol import ALIVE, MAGIC, TERMINATE, exit_frame
from prompthooks.model.model_process import model_path

from ..fake_model import FakeModel
from ..helpers import claude_bash, claude_config, reply, write_json
from ..helpers import wait_until as _wait
from .test_dispatcher import SCRIPT, _forked_ahead

TRICKLE = 0.2  # seconds between the fake's bytes


class Trickler:
    """A peer at the resident process's socket path that reads what it is sent and answers
    one byte every :data:`TRICKLE` seconds, from ``answer``, until the client goes."""

    def __init__(self, answer: bytes, model: bool = False) -> None:
        path = socket_name(os.environ)  # found the way the client finds it
        if model:  # the model process's socket, where a prompt hook's model request goes
            path = str(model_path(Path(path)))
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(8)
        self.answer = answer
        self.received = bytearray()
        self.sent = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._read, args=(conn,), daemon=True).start()
            threading.Thread(target=self._trickle, args=(conn,), daemon=True).start()

    def _trickle(self, conn: socket.socket) -> None:
        with contextlib.suppress(OSError), conn:
            for byte in self.answer:
                time.sleep(TRICKLE)
                conn.sendall(bytes([byte]))
                self.sent += 1

    def _read(self, conn: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while chunk := conn.recv(1 << 16):
                self.received += chunk

    def close(self) -> None:
        self.listener.close()


@pytest.fixture
def trickler(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Trickler]]:
    monkeypatch.setenv("PROMPTHOOKS_WORKER", "1")
    made: list[Trickler] = []

    def make(answer: bytes, model: bool = False) -> Trickler:
        made.append(Trickler(answer, model))
        return made[-1]

    yield make
    for one in made:
        one.close()


def _fail_closed(tmp_path: Path, command: str = "exit 1") -> Path:
    return claude_config(tmp_path / "hooks.json", "PreToolUse",
                         {"command": command, "failClosed": True})


def _run(*args: str, env: dict[str, str] | None = None, padding: int = 0
         ) -> tuple[subprocess.CompletedProcess[str], float]:
    start = time.monotonic()
    event = claude_bash("rm -rf /" + (" #" + "x" * padding if padding else ""))
    proc = subprocess.run([SCRIPT, "run", *args], input=json.dumps(event),
                          text=True, capture_output=True, env={**os.environ, **(env or {})},
                          timeout=120)
    return proc, time.monotonic() - start


# What the supervisor says when it blocks on its own (the run did not answer by the budget).
_SUPERVISOR_BLOCK = ("Blocked by prompthooks: a managed or fail-closed hook could not judge "
                     "this event")

# What a trickling peer may send: signs of life for ever, or an "allow" that never ends.
TRICKLES = {"signs-of-life": ALIVE * 1000, "slow-allow": exit_frame(b" " * 1000, 0)}


@pytest.mark.parametrize("answer", TRICKLES.values(), ids=list(TRICKLES))
def test_a_trickling_peer_cannot_stretch_the_run_past_its_budget(
        tmp_path: Path, trickler: Callable[..., Trickler], answer: bytes) -> None:
    fake = trickler(answer)
    proc, took = _run("--config", str(_fail_closed(tmp_path)), "--budget", "10")
    assert fake.received.startswith(MAGIC)  # the run was handed to it
    assert fake.sent >= 10  # and it kept the client reading for a while
    # The run done here in the time left denies; on a machine too busy for it to finish by
    # the budget, its supervisor blocks on its own (exit 2). Either is a block.
    if proc.stdout.strip():
        assert reply(proc)["hookSpecificOutput"]["permissionDecision"] == "deny", proc.stderr
    else:
        assert proc.returncode == 2 and _SUPERVISOR_BLOCK in proc.stderr, proc.stderr
    assert took < 10 + 3  # by the budget (a socket timeout per read would be 200 s)
    assert "Traceback" not in proc.stderr


def test_a_trickling_peer_cannot_stretch_a_prompt_hooks_timeout(
        tmp_path: Path, trickler: Callable[..., Trickler], model: FakeModel,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A prompt hook's call through the warm worker, in a run done in process: the peer
    trickles an answer line that never ends. The hook times out by its own timeout."""
    monkeypatch.setenv("PROMPTHOOKS_DIRECT", "0")  # the warm worker serves litellm's path
    fake = trickler(b" " * 1000, model=True)
    cfg = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "prompt", "prompt": "Block deletions. $ARGUMENTS", "timeout": 2,
         "failClosed": True}]}]}})
    # A managed folder (empty) keeps the run in process; its model call still goes to the
    # socket.
    proc, took = _run("--config", str(cfg), "--budget", "30", "--managed-dir",
                      str(tmp_path / "managed"))
    assert fake.received.startswith(b"{")  # the model request reached it
    assert fake.sent >= 5
    assert reply(proc)["hookSpecificOutput"]["permissionDecision"] == "deny", proc.stderr
    assert "did not answer in time" in proc.stderr
    assert took < 15  # the hook's 2 s and start-up, not the run's 30
    assert model.requests == []


def _state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def _queued(path: str) -> int:
    """Connections waiting in the accept queue of the resident process's socket at ``path``
    (/proc/net/unix lists the listener and each connection made to it that it has not
    accepted, under the name it was bound to: ``.<name>.<pid>`` beside it, renamed since)."""
    folder, name = os.path.split(path)
    bound = os.path.join(folder, f".{name}.")
    lines = Path("/proc/net/unix").read_text().splitlines()[1:]
    return sum(1 for line in lines if line.split()[-1].startswith(bound)) - 1


@pytest.fixture
def stopped(monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    """A real resident process with its run's process forked ahead, then its whole process
    group stopped (SIGSTOP), as anything running as the user could stop it; its pid."""
    monkeypatch.setenv("PROMPTHOOKS_WORKER", "1")
    proc = subprocess.Popen([SCRIPT, "serve", "--idle", "60"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        assert _wait(lambda: os.path.exists(socket_name(os.environ))), "it did not listen"
        spare = _forked_ahead(proc.pid)
        os.killpg(proc.pid, signal.SIGSTOP)
        assert _wait(lambda: all(_state(p) == "T" for p in (proc.pid, spare)), 10)
        yield proc.pid
    finally:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)


# A large event fills the socket's queue of the stopped process before it is all sent.
@pytest.mark.parametrize("padding", [0, 8 << 20], ids=["small-event", "large-event"])
def test_a_stopped_resident_process_costs_a_fail_closed_deny_seconds_not_its_budget(
        tmp_path: Path, stopped: int, padding: int) -> None:
    path = socket_name(os.environ)
    assert _queued(path) == 0
    proc, took = _run("--config", str(_fail_closed(tmp_path)), "--budget", "30",
                      padding=padding)
    assert _queued(path) == 1  # the client connected and handed the run over
    assert _state(stopped) == "T"
    assert reply(proc)["hookSpecificOutput"]["permissionDecision"] == "deny", proc.stderr
    assert took < 15  # not the 28 s the reserve before the budget would leave


def _sigterm_when(proc: subprocess.Popen[str], ready: Callable[[], bool]
                  ) -> tuple[bool, str, float]:
    """SIGTERM once ``ready`` holds: (whether the event was blocked as a run told to stop,
    stderr, seconds from the signal to the exit)."""
    assert _wait(ready, 60), "the client did not get that far"
    start = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    return _blocked_when_stopped(out, err, proc.returncode), err, time.monotonic() - start


def _blocked_when_stopped(out: str, err: str, code: int) -> bool:
    """The run told to stop answers with its hooks counted as stopped, and the fail-closed one
    blocks; on a machine so busy that the work does not answer within the supervisor's grace
    after the signal, the supervisor blocks on its own (Claude Code's block: exit 2, the
    reason on stderr). Either is a block; nothing else is."""
    if out.strip():
        answer = json.loads(out)
        return (answer["hookSpecificOutput"]["permissionDecision"] == "deny"
                and "stopped before it finished" in err)
    return code == 2 and _SUPERVISOR_BLOCK in err


def test_sigterm_while_a_peer_holds_the_client_answers_at_once(
        tmp_path: Path, trickler: Callable[..., Trickler]) -> None:
    """The peer sends signs of life and nothing else; the host gives up (SIGTERM). The
    client passes it on, gives the peer a moment, then answers as a run told to stop: the
    fail-closed hook, never started, counts as stopped and blocks."""
    fake = trickler(ALIVE * 1000)
    started = tmp_path / "started"
    cfg = _fail_closed(tmp_path, f"touch {started}; sleep 30")
    event = write_json(tmp_path / "event.json", claude_bash("rm -rf /"))
    with event.open("rb") as stdin:
        proc = subprocess.Popen([SCRIPT, "run", "--config", str(cfg), "--budget", "30"],
                                stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
    blocked, err, took = _sigterm_when(proc, lambda: fake.received.startswith(MAGIC)
                                       and fake.sent >= 2)
    assert fake.received.endswith(TERMINATE)  # the signal was passed on
    assert blocked, err
    assert not started.exists()
    assert took < 10  # not the 28 s the reserve before the budget would leave


def test_sigterm_while_the_resident_process_is_stopped_answers_at_once(
        tmp_path: Path, stopped: int) -> None:
    """The client hands the run to the stopped process, hears nothing, does the run itself;
    SIGTERM reaches it there or while it still waits, and the answer comes at once."""
    path = socket_name(os.environ)
    started = tmp_path / "started"
    cfg = _fail_closed(tmp_path, f"touch {started}; sleep 30")
    event = write_json(tmp_path / "event.json", claude_bash("rm -rf /"))
    with event.open("rb") as stdin:
        proc = subprocess.Popen([SCRIPT, "run", "--config", str(cfg), "--budget", "30"],
                                stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
    blocked, err, took = _sigterm_when(proc, lambda: _queued(path) == 1)
    assert blocked, err
    assert took < 10
