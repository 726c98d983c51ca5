"""The resident process imports, before it forks, everything a run it forks will use: a module
first imported in the forked run is paid on every event (httpx's connection modules and
pydantic's verdict models cost a few hundred milliseconds). Each run below is forked from a
process that called ``warm()``, as the resident process does, with an audit hook that notes
every module imported after the fork (in the run, by the resident process's own code for it)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ..fake_model import FakeModel, verdict
from ..helpers import claude_bash, write_json

FORKED = r"""
import os, socket, sys, time
from prompthooks._version import __version__
from prompthooks.dispatcher.run_process import _Alive, _child, warm
from prompthooks.runner.job import Job

warm()
cfg, event, log = sys.argv[1], sys.argv[2], sys.argv[3]
data = open(event, "rb").read()
ours, theirs = socket.socketpair()
pid = os.fork()
if pid == 0:
    ours.close()
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)

    def noted(name, args):
        if name == "import":
            os.write(fd, (args[0] + "\n").encode())

    sys.addaudithook(noted)
    now = time.monotonic()
    job = Job(data, now, config=[cfg], limit=now + 60, version=__version__, cwd=os.getcwdb(),
              env=dict(os.environb))
    _child(theirs, _Alive(theirs), job, os.dup(2))
theirs.close()
answer = b""
while chunk := ours.recv(1 << 16):
    answer += chunk
    if answer.lstrip(b"K")[:1] == b"X" and len(answer.lstrip(b"K")) >= 13:
        frame = answer.lstrip(b"K")
        if len(frame) >= 13 + int.from_bytes(frame[5:13], "big"):
            break
sys.stdout.buffer.write(frame[13:])
os.waitpid(pid, 0)
"""


def _forked_run(tmp_path: Path, handler: dict[str, object]) -> tuple[str, set[str]]:
    """(the reply, the modules the forked run imported), for a config read for the first time
    (nothing cached)."""
    cfg = write_json(tmp_path / "hooks.json",
                     {"hooks": {"PreToolUse": [{"hooks": [handler]}]}})
    event = write_json(tmp_path / "event.json", claude_bash("rm -rf /"))
    log = tmp_path / "imports.log"
    script = tmp_path / "forked.py"
    script.write_text(FORKED)
    proc = subprocess.run([sys.executable, str(script), str(cfg), str(event), str(log)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    imported = set(log.read_text().split()) if log.exists() else set()
    return proc.stdout, imported


def test_a_forked_prompt_hook_run_imports_nothing(tmp_path: Path, model: FakeModel) -> None:
    model.script(verdict(False, "deletes the disk"))
    out, imported = _forked_run(tmp_path, {"type": "prompt", "prompt": "Judge: $ARGUMENTS"})
    assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert len(model.requests) == 1  # the model was called: its client code ran in the run
    assert imported == set()


@pytest.mark.parametrize("command", ["exit 0", "echo 'no' >&2; exit 2"])
def test_a_forked_command_hook_run_imports_nothing(tmp_path: Path, command: str) -> None:
    out, imported = _forked_run(tmp_path, {"type": "command", "command": command})
    assert ("deny" in out) == ("exit 2" in command)
    assert imported == set()
