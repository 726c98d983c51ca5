"""`install --warm-start` covers the host's session start, and a run for a session-start event
starts the warm worker in the background (after its reply) when a prompt hook would use it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from prompthooks.model import model_process

from ..fake_model import FakeModel
from ..helpers import claude_event, run_cli, write_json

# _no_worker_left: the worker tests' autouse fixture (every worker started is gone at the end).
from .test_worker import _lock_held, _no_worker_left, _wait, _workers  # noqa: F401


def _config(tmp_path: Path) -> Path:
    return write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "prompt", "prompt": "Block deletions. $ARGUMENTS"}]}]}})


@pytest.fixture
def litellm_env(monkeypatch: pytest.MonkeyPatch, model: FakeModel) -> dict[str, str]:
    monkeypatch.setenv("PROMPTHOOKS_WORKER", "1")
    monkeypatch.setenv("PROMPTHOOKS_WORKER_IDLE", "5")
    monkeypatch.setenv("PROMPTHOOKS_DIRECT", "0")
    return dict(os.environ)


def test_a_session_start_starts_the_worker_for_a_later_prompt_event(
        tmp_path: Path, litellm_env: dict[str, str]) -> None:
    proc = run_cli(claude_event("SessionStart", source="startup"), "--config",
                   str(_config(tmp_path)), cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout == "", proc.stderr
    path = model_process.socket_path(litellm_env)
    assert _wait(lambda: path.exists() and _lock_held(path), 120)


def test_the_direct_path_gets_the_resident_process_too(
        tmp_path: Path, model: FakeModel, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its model calls need no litellm, but its session's next events are handed over all
    the same: the run done in process starts the resident process after its reply, once."""
    monkeypatch.setenv("PROMPTHOOKS_WORKER", "1")
    proc = run_cli(claude_event("SessionStart", source="startup"), "--config",
                   str(_config(tmp_path)), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    path = model_process.socket_path(dict(os.environ))
    # Started by a process of its own once the run's process has ended.
    assert _wait(lambda: _lock_held(path), 120)
    assert len(_workers()) == 1


@pytest.mark.parametrize("host, starts", [("claude", ["SessionStart"]),
                                          ("cursor", ["sessionStart"]),
                                          ("cline", ["TaskStart", "TaskResume"])])
def test_install_warm_start_adds_the_hosts_session_start(
        tmp_path: Path, isolated_home: Path, host: str, starts: list[str]) -> None:
    proc = subprocess.run([sys.executable, "-m", "prompthooks", "install", "--host", host,
                           "--warm-start", "--dry-run", "--json"], capture_output=True,
                          text=True, cwd=tmp_path, timeout=60)
    assert proc.returncode == 0, proc.stderr
    events = json.loads(proc.stdout)["events"]
    assert events[-len(starts):] == starts and len(events) == 4 + len(starts)
