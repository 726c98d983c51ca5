"""The warm worker: a real `prompthooks serve` on a Unix socket, and the fallbacks."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

import prompthooks
from prompthooks.model import worker

from .fake_model import FakeModel, verdict
from .helpers import claude_bash, write_json

PROBE = """
import sys
from prompthooks.cli import main
code = main(["run", "--config", sys.argv[1]])
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("litellm", "openai"))
print("HEAVY=" + ",".join(heavy), file=sys.stderr)
sys.exit(code)
"""


@pytest.fixture
def warm_env(monkeypatch: pytest.MonkeyPatch, model: FakeModel) -> dict[str, str]:
    monkeypatch.setenv("PROMPTHOOKS_WORKER", "1")
    monkeypatch.setenv("PROMPTHOOKS_WORKER_IDLE", "5")
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
    path = worker.socket_path(warm_env)
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


def test_no_worker_means_in_process_and_one_is_started_for_later(
        tmp_path: Path, model: FakeModel, warm_env: dict[str, str]) -> None:
    path = worker.socket_path(warm_env)
    path.parent.mkdir(parents=True, mode=0o700, exist_ok=True)
    path.write_text("a stale file, not a socket")
    model.script(verdict(False, "done in process"))
    proc = _probe(tmp_path)
    assert '"permissionDecisionReason": "done in process"' in proc.stdout
    assert "litellm" in proc.stderr  # the fallback imported it here
    assert _wait(lambda: path.exists() and stat.S_ISSOCK(path.stat().st_mode))
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
    # only add to that load.
    path = worker.socket_path(warm_env)
    path.parent.mkdir(parents=True, mode=0o700, exist_ok=True)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as busy:
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
    assert not path.with_suffix(".starting").exists()  # and no other worker was started
    assert model.requests == []


def test_worker_refuses_another_version_or_environment(warm_env: dict[str, str]) -> None:
    base = {"env": worker.model_environment(warm_env), "version": "0.0.0"}
    assert worker._answer(base, warm_env) == {"unavailable": True}
    other = {"env": {"PROMPTHOOKS_MODEL": "other"}, "version": prompthooks.__version__}
    assert worker._answer(other, warm_env) == {"unavailable": True}


def test_socket_name_follows_version_and_model_environment() -> None:
    a = worker.socket_path({"PROMPTHOOKS_MODEL": "a", "HOME": "/h"})
    b = worker.socket_path({"PROMPTHOOKS_MODEL": "b", "HOME": "/h"})
    same = worker.socket_path({"PROMPTHOOKS_MODEL": "a", "HOME": "/h", "PWD": "/elsewhere"})
    assert a != b and a == same and prompthooks.__version__ in a.name


def test_idle_worker_exits(warm_env: dict[str, str]) -> None:
    server = _serve(warm_env, idle=1)
    try:
        assert server.wait(60) == 0
    finally:
        if server.poll() is None:
            server.kill()
    assert not worker.socket_path(warm_env).exists()


def test_an_open_folder_is_not_trusted(tmp_path: Path, warm_env: dict[str, str]) -> None:
    env = {**warm_env, "XDG_RUNTIME_DIR": str(tmp_path)}
    folder = worker.socket_path(env).parent
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    assert not worker._private_dir(folder)
    with pytest.raises(worker.WorkerUnavailable):
        from prompthooks.model.call import ModelRequest
        from prompthooks.model.settings import Endpoint

        worker.remote_complete(ModelRequest(Endpoint("m"), ()), time.monotonic() + 5, env)
