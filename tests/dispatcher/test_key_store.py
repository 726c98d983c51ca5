"""A stored key reaches a run handed to the resident process, and a key store changed since
that process started is never served by it (a real `prompthooks serve`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from prompthooks.address import socket_name

from ..fake_model import FakeModel, serve
from ..helpers import claude_bash, write_json

SCRIPT = str(Path(sys.executable).parent / "prompthooks")
KEY = "sk-resident-0123456789"  # made up
# The hook's ancestors: the resident process is one of them when the run was handed to it.
WHO = ("p=$PPID; while [ \"$p\" -gt 1 ]; do echo $p; p=$(cut -d' ' -f4 /proc/$p/stat); "
       "done > {out}; cat > /dev/null")


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeModel]:
    for var in ("OPENAI_API_KEY", "PROMPTHOOKS_DIRECT"):
        monkeypatch.delenv(var, raising=False)
    gen = serve()
    state = next(gen)
    monkeypatch.setenv("OPENAI_BASE_URL", state.url)
    monkeypatch.setenv("PROMPTHOOKS_WORKER", "1")
    yield state
    next(gen, None)


def _keys_set(key: str) -> None:
    proc = subprocess.run([SCRIPT, "keys", "set", "openai"], input=key, text=True,
                          capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def _auth(server: FakeModel, index: int) -> str | None:
    return {k.lower(): v for k, v in server.requests[index].headers.items()}.get(
        "authorization")


def test_a_handed_over_run_uses_the_stored_key_and_a_new_store_is_not_served_by_it(
        tmp_path: Path, server: FakeModel) -> None:
    _keys_set(KEY)
    out = tmp_path / "who"
    cfg = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": WHO.format(out=out)},
        {"type": "prompt", "prompt": "Judge. $ARGUMENTS", "model": "openai/test-model"}]}]}})
    resident = subprocess.Popen([SCRIPT, "serve", "--idle", "60"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
    old_socket = socket_name(os.environ)
    try:
        end = time.monotonic() + 60
        while not os.path.exists(old_socket) and time.monotonic() < end:
            time.sleep(0.05)
        assert os.path.exists(old_socket), "the resident process did not listen"
        first = subprocess.run([SCRIPT, "run", "--config", str(cfg)], text=True,
                               input=json.dumps(claude_bash("ls")), capture_output=True,
                               timeout=60)
        assert first.returncode == 0, first.stderr
        assert str(resident.pid) in out.read_text().split()  # the canary: handed over
        assert _auth(server, 0) == f"Bearer {KEY}"

        _keys_set(KEY + "-new")
        assert socket_name(os.environ) != old_socket
        out.unlink()
        second = subprocess.run([SCRIPT, "run", "--config", str(cfg)], text=True,
                                input=json.dumps(claude_bash("ls")), capture_output=True,
                                timeout=60)
        assert second.returncode == 0, second.stderr
        assert _auth(server, 1) == f"Bearer {KEY}-new"
        assert out.read_text().split()  # the hook ran, and not under the old process
        assert str(resident.pid) not in out.read_text().split()
        assert resident.poll() is None  # which is still there
    finally:
        resident.terminate()
        resident.wait(30)
