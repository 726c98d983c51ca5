"""The warm worker: a real `prompthooks serve` on a Unix socket, and the fallbacks."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import prompthooks
from prompthooks.address import model_environment
from prompthooks.dispatcher.resident import answer_request
from prompthooks.model import model_process

from ..fake_model import FakeModel, verdict
from ..helpers import (
    claude_bash,
    claude_config,
    reply,
    run_cli,
    write_json,
)

PROBE = """
import sys
from prompthooks.cli import main
code = main(["run", "--config", sys.argv[1]])
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("litellm", "openai"))
print("HEAVY=" + ",".join(heavy), file=sys.stderr)
sys.exit(code)
"""


def _workers() -> list[int]:
    """The pids of the live `prompthooks serve` processes of this test (their runtime folder is
    this test's), found in /proc."""
    mark = f"XDG_RUNTIME_DIR={os.environ['XDG_RUNTIME_DIR']}".encode()
    found: list[tuple[int, int]] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            if b"serve" not in argv or not any(b"prompthooks" in a for a in argv):
                continue
            if mark in (entry / "environ").read_bytes().split(b"\0"):
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                found.append((int(entry.name), parent))
        except OSError:
            continue  # gone meanwhile, or not ours
    # A worker's model process and the runs it forks carry the worker's command line: not
    # workers.
    pids = {pid for pid, _ in found}
    return sorted(pid for pid, parent in found if parent not in pids)


def _lock_held(path: Path) -> bool:
    """Whether a worker holds the lock for the socket ``path``."""
    lock = model_process.lock_path(path)
    if not lock.exists():
        return False
    with open(lock, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
        return False


@pytest.fixture(autouse=True)
def _no_worker_left(isolated_home: Path) -> Iterator[None]:
    """Every worker a test started is gone at its end (killed if the test left one)."""
    yield

    def gone() -> bool:
        # Killed at each look: a run's starter still waiting for its run to end starts one
        # once the worker it found is gone.
        left = _workers()
        for pid in left:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        return not left

    assert _wait(gone, 30)


@pytest.fixture
def warm_env(monkeypatch: pytest.MonkeyPatch, model: FakeModel) -> dict[str, str]:
    monkeypatch.setenv("PROMPTHOOKS_WORKER", "1")
    monkeypatch.setenv("PROMPTHOOKS_WORKER_IDLE", "5")
    # The fake server speaks the OpenAI API, which the direct client would call itself: the
    # warm worker serves litellm's path.
    monkeypatch.setenv("PROMPTHOOKS_DIRECT", "0")
    return dict(os.environ)


def _probe(tmp_path: Path) -> subprocess.CompletedProcess[str]:
    cfg = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "prompt", "prompt": "Block deletions. $ARGUMENTS"}]}]}})
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE)
    return subprocess.run([sys.executable, str(probe), str(cfg)], capture_output=True,
                          text=True, input=json.dumps(claude_bash("rm -rf /")), timeout=120)


def _wait(condition: object, seconds: float = 60) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.1)
    return False


def _serve(env: dict[str, str], idle: float) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "prompthooks", "serve", "--idle", str(idle)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def test_run_uses_a_running_worker_and_never_imports_litellm(
        tmp_path: Path, model: FakeModel, warm_env: dict[str, str]) -> None:
    server = _serve(warm_env, idle=60)
    path = model_process.socket_path(warm_env)
    try:
        assert _wait(path.exists)
        model.script(verdict(False, "served warm"))
        proc = _probe(tmp_path)
        assert '"permissionDecisionReason": "served warm"' in proc.stdout, proc.stderr
        assert "HEAVY=\n" in proc.stderr  # the worker made the call
        assert len(model.requests) == 1
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    finally:
        server.terminate()
        server.wait(10)


def test_no_worker_means_one_is_started_and_this_call_goes_through_it(
        tmp_path: Path, model: FakeModel, warm_env: dict[str, str]) -> None:
    path = model_process.socket_path(warm_env)
    path.parent.mkdir(parents=True, mode=0o700, exist_ok=True)
    path.write_text("a stale file, not a socket")
    model.script(verdict(False, "done by the new worker"))
    proc = _probe(tmp_path)
    assert '"permissionDecisionReason": "done by the new worker"' in proc.stdout, proc.stderr
    assert "HEAVY=\n" in proc.stderr  # litellm was imported by the worker, not here
    assert path.exists() and stat.S_ISSOCK(path.stat().st_mode)
    assert len(_workers()) == 1
    model.script(verdict(False, "now warm"))
    again = _probe(tmp_path)
    assert '"permissionDecisionReason": "now warm"' in again.stdout
    assert "HEAVY=\n" in again.stderr
    assert _wait(lambda: not path.exists(), 30)  # idle for 5 s: the worker left


def _fill_queue(path: Path) -> list[socket.socket]:
    """Connections that fill the listen queue at ``path``, as a burst of events does."""
    waiting: list[socket.socket] = []
    while True:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.setblocking(False)
        try:
            conn.connect(str(path))
        except BlockingIOError:
            conn.close()
            return waiting
        waiting.append(conn)


@pytest.mark.parametrize("queue", ["room", "full"])
def test_a_worker_too_busy_to_answer_is_a_timeout_not_a_missing_worker(
        tmp_path: Path, model: FakeModel, warm_env: dict[str, str], queue: str) -> None:
    # A worker that never answers (on a machine too busy for it), its listen queue with room
    # or full: the hook times out. Starting another worker, or importing litellm here, would
    # only add to that load. It is at the model process's socket, where model requests go.
    path = model_process.socket_path(warm_env)
    path.parent.mkdir(parents=True, mode=0o700, exist_ok=True)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as busy:
        path = model_process.model_path(path)
        busy.bind(str(path))
        busy.listen(8)
        waiting = _fill_queue(path) if queue == "full" else []
        assert len(waiting) == (9 if queue == "full" else 0)  # the queue holds backlog + 1
        cfg = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
            {"type": "prompt", "prompt": "Block deletions. $ARGUMENTS", "timeout": 2}]}]}})
        probe = tmp_path / "probe.py"
        probe.write_text(PROBE)
        proc = subprocess.run([sys.executable, str(probe), str(cfg)], capture_output=True,
                              text=True, input=json.dumps(claude_bash("rm -rf /")), timeout=120)
        for conn in waiting:
            conn.close()
    assert proc.returncode == 0 and proc.stdout == ""
    assert proc.stderr.splitlines() == [
        f"prompthooks: hook 'inline prompt' ({cfg}: hooks.PreToolUse[0].hooks[0]): the model "
        "did not answer in time (test-model, through the warm worker)",
        "HEAVY="]  # litellm was not imported here
    # and no other worker was started
    assert _workers() == [] and not _lock_held(model_process.socket_path(warm_env))
    assert model.requests == []


def test_worker_refuses_another_version_or_environment(warm_env: dict[str, str]) -> None:
    base = {"env": model_environment(warm_env), "version": "0.0.0"}
    assert answer_request(base, warm_env) == {"unavailable": True}
    other = {"env": {"PROMPTHOOKS_MODEL": "other"}, "version": prompthooks.__version__}
    assert answer_request(other, warm_env) == {"unavailable": True}


def test_socket_name_follows_version_and_model_environment() -> None:
    a = model_process.socket_path({"PROMPTHOOKS_MODEL": "a", "HOME": "/h"})
    b = model_process.socket_path({"PROMPTHOOKS_MODEL": "b", "HOME": "/h"})
    same = model_process.socket_path({"PROMPTHOOKS_MODEL": "a", "HOME": "/h", "PWD": "/elsewhere"})
    assert a != b and a == same and prompthooks.__version__ in a.name


def test_idle_worker_exits(warm_env: dict[str, str]) -> None:
    server = _serve(warm_env, idle=1)
    try:
        assert server.wait(60) == 0
    finally:
        if server.poll() is None:
            server.kill()
    assert not model_process.socket_path(warm_env).exists()


def test_an_open_folder_is_not_trusted(tmp_path: Path, warm_env: dict[str, str]) -> None:
    env = {**warm_env, "XDG_RUNTIME_DIR": str(tmp_path)}
    folder = model_process.socket_path(env).parent
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    assert not model_process.private_dir(folder)
    with pytest.raises(model_process.WorkerUnavailable):
        from prompthooks.model.endpoint import Endpoint
        from prompthooks.model.litellm_client import ModelRequest

        model_process.remote_complete(ModelRequest(Endpoint("m"), ()), time.monotonic() + 5, env)


class _Watcher:
    """Samples the live workers of this test while a burst runs: every pid seen, and the most
    alive at once."""

    def __init__(self) -> None:
        self.seen: set[int] = set()
        self.most = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            alive = _workers()
            self.seen.update(alive)
            self.most = max(self.most, len(alive))
            self._stop.wait(0.05)

    def __enter__(self) -> _Watcher:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)
        alive = _workers()
        self.seen.update(alive)
        self.most = max(self.most, len(alive))


def _burst(tmp_path: Path, count: int, timeout: float = 240) -> list[tuple[int, str, str]]:
    """``count`` probe runs started at once; (exit code, stdout, stderr) of each."""
    cfg = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "prompt", "prompt": "Block deletions. $ARGUMENTS", "timeout": 200}]}]}})
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE)
    event = json.dumps(claude_bash("rm -rf /")).encode()
    procs = [subprocess.Popen([sys.executable, str(probe), str(cfg)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) for _ in range(count)]
    results = []
    for proc in procs:
        out, err = proc.communicate(event, timeout=timeout)
        results.append((proc.returncode, out.decode(), err.decode()))
    return results


def _all_denied_through_the_worker(results: list[tuple[int, str, str]], reason: str) -> None:
    for code, out, err in results:
        assert code == 0 and f'"permissionDecisionReason": "{reason}"' in out, err
        assert err == "HEAVY=\n", err  # no client imported litellm


@pytest.mark.parametrize("count", [10])
def test_clients_started_at_once_start_exactly_one_worker(
        tmp_path: Path, model: FakeModel, warm_env: dict[str, str], count: int) -> None:
    """A burst of cold runs: one of them starts the worker, the others wait for it; none
    imports litellm itself. Then the worker is killed and a second burst starts one again."""
    path = model_process.socket_path(warm_env)
    model.script(verdict(False, "one worker"))
    with _Watcher() as first:
        _all_denied_through_the_worker(_burst(tmp_path, count), "one worker")
    assert len(first.seen) == 1 and first.most == 1
    assert _lock_held(path) and len(model.requests) == count
    (old,) = first.seen
    os.kill(old, signal.SIGKILL)  # its socket stays behind, with nobody listening
    assert _wait(lambda: _workers() == [])  # its model process, orphaned, leaves too
    assert path.exists()
    with _Watcher() as second:
        _all_denied_through_the_worker(_burst(tmp_path, count), "one worker")
    assert len(second.seen - {old}) == 1 and second.most == 1


def _model_process(serve: int) -> int:
    """The resident process's model process (named for ps), once it listens."""
    found: list[int] = []

    def listening() -> bool:
        with contextlib.suppress(OSError):
            for child in Path(f"/proc/{serve}/task/{serve}/children").read_text().split():
                if Path(f"/proc/{child}/comm").read_text().strip() == "prompthooks-mdl":
                    found.append(int(child))
        return bool(found)

    assert _wait(listening, 60), "no model process"
    return found[0]


@pytest.mark.parametrize("which", ["run", "model"])
@pytest.mark.parametrize("how", ["removed", "replaced"])
def test_a_worker_whose_socket_is_gone_exits(tmp_path: Path, warm_env: dict[str, str],
                                             how: str, which: str) -> None:
    """A worker no client can reach any more (its run socket's path, or its model process's,
    removed or taken over by another socket) stops, lets the lock go, and leaves the new
    socket alone: its resident process and model process end together."""
    server = _serve(warm_env, idle=600)
    run_path = model_process.socket_path(warm_env)
    path = run_path if which == "run" else model_process.model_path(run_path)
    try:
        assert _wait(lambda: path.exists() and _lock_held(run_path), 120)
        model_pid = _model_process(server.pid)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as other:
            if how == "removed":
                path.unlink()
            else:
                spare = path.with_name("spare.sock")
                other.bind(str(spare))
                os.replace(spare, path)
            assert server.wait(60) == 0  # it checks every second; 60 s for a loaded machine
            assert not _lock_held(run_path)
            assert path.exists() == (how == "replaced")
            assert _wait(lambda: not Path(f"/proc/{model_pid}").exists(), 60)
    finally:
        if server.poll() is None:
            server.kill()


def test_a_killed_model_process_ends_its_resident_process(warm_env: dict[str, str]) -> None:
    """Anything running as the user can kill the model process: the resident process then
    lets the lock go and leaves, so that clients call in process (or start a new worker)
    rather than wait for a model socket that will never come."""
    server = _serve(warm_env, idle=600)
    run_path = model_process.socket_path(warm_env)
    try:
        assert _wait(lambda: run_path.exists() and _lock_held(run_path), 60)
        os.kill(_model_process(server.pid), signal.SIGKILL)
        assert server.wait(60) == 0
        assert not _lock_held(run_path) and not run_path.exists()
    finally:
        if server.poll() is None:
            server.kill()


def test_model_requests_are_answered_by_the_model_process_never_the_resident_process(
        tmp_path: Path, model: FakeModel, warm_env: dict[str, str]) -> None:
    """litellm lives in the model process alone: the process on the model socket (as the
    kernel reports the peer) is it, and litellm's compiled tokenizer is mapped in it, never
    in the resident process that forks the runs."""
    import struct

    server = _serve(warm_env, idle=60)
    path = model_process.model_path(model_process.socket_path(warm_env))
    try:
        assert _wait(path.exists, 120)
        model.script(verdict(False, "from the model process"))
        proc = _probe(tmp_path)
        assert "from the model process" in proc.stdout, proc.stderr
        assert "HEAVY=\n" in proc.stderr
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.connect(str(path))
            creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                    struct.calcsize("3i"))
        peer = struct.unpack("3i", creds)[0]
        assert peer == _model_process(server.pid)

        def mapped(pid: int) -> bool:
            return "tiktoken" in Path(f"/proc/{pid}/maps").read_text()

        assert mapped(peer)  # the canary: litellm's import is seen this way
        assert not mapped(server.pid)
    finally:
        server.terminate()
        server.wait(30)


def test_a_second_serve_leaves_the_running_worker_alone(
        tmp_path: Path, model: FakeModel, warm_env: dict[str, str]) -> None:
    first = _serve(warm_env, idle=600)
    path = model_process.socket_path(warm_env)
    try:
        assert _wait(lambda: path.exists() and _lock_held(path))
        inode = path.stat().st_ino
        second = _serve(warm_env, idle=600)
        assert second.wait(60) == 0
        assert second.stderr is not None
        assert second.stderr.read().decode() == f"prompthooks: a worker already serves on " \
                                                f"{path}\n"
        assert path.stat().st_ino == inode and first.poll() is None
        model.script(verdict(False, "the first worker"))
        proc = _probe(tmp_path)
        assert '"permissionDecisionReason": "the first worker"' in proc.stdout, proc.stderr
    finally:
        first.terminate()
        first.wait(30)


def test_a_socket_path_too_long_for_unix_sockets_means_in_process(
        tmp_path: Path, model: FakeModel, warm_env: dict[str, str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """No worker could bind there: the call is made in process at once, none is started."""
    runtime = tmp_path / ("r" * 80)
    runtime.mkdir()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    assert len(str(model_process.socket_path(dict(os.environ)))) > 107
    model.script(verdict(False, "in process"))
    proc = _probe(tmp_path)
    assert '"permissionDecisionReason": "in process"' in proc.stdout, proc.stderr
    assert "litellm" in proc.stderr  # imported here
    assert _workers() == []


def test_a_bad_worker_idle_setting_does_not_break_run(tmp_path: Path) -> None:
    cfg = claude_config(tmp_path / "h.json", "PreToolUse", {"command": "exit 2"})
    proc = run_cli(claude_bash("ls"), "--config", str(cfg),
                   env={"PROMPTHOOKS_WORKER_IDLE": "10m"})
    assert reply(proc)["hookSpecificOutput"]["permissionDecision"] == "deny"
