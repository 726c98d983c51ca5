"""The resident process's starter (``runner.judge._start_resident``), attacked from what a
hostile agent controls: the descriptors and environment of the run that spawns it, and the
project folder the run is in. Real runs of the console script, real shells and interpreters,
watched through /proc."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from prompthooks.address import socket_name

from ..helpers import claude_bash, claude_config
from ..model.test_worker import (
    _no_worker_left,  # noqa: F401  (an autouse fixture)
    _wait,
    _workers,
)

SCRIPT = str(Path(sys.executable).parent / "prompthooks")
_STARTER_MARKS = (b"read -r _ <&3", b"start_in_background")


def _starter_processes(mark: str, after: int) -> Iterator[tuple[int, bytes, dict[str, str],
                                                                 dict[bytes, bytes]]]:
    """The starter's processes (its shell, then the interpreter it becomes) of the run whose
    environment holds ``mark``: pid, command line, descriptors (number: target), environment."""
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) <= after:
            continue
        with contextlib.suppress(OSError):
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
            if not any(m in cmdline for m in _STARTER_MARKS):
                continue
            raw = Path(f"/proc/{name}/environ").read_bytes()
            env = dict(item.partition(b"=")[::2] for item in raw.split(b"\0") if item)
            if env.get(b"PH_STARTER_MARK") != mark.encode():
                continue
            fds = {}
            for fd in os.listdir(f"/proc/{name}/fd"):
                with contextlib.suppress(OSError):
                    fds[fd] = os.readlink(f"/proc/{name}/fd/{fd}")
            yield int(name), cmdline, fds, env


def _run_watching_the_starter(tmp_path: Path, env: dict[str, str], pass_fds: tuple[int, ...] = ()
                              ) -> list[tuple[int, bytes, dict[str, str], dict[bytes, bytes]]]:
    """A run done in process (no resident process yet), which spawns the starter; every look
    at the starter's processes taken while they lived."""
    mark = uuid.uuid4().hex
    cfg = claude_config(tmp_path / "hooks.json", "PreToolUse", {"command": "cat > /dev/null"})
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    proc = subprocess.Popen([SCRIPT, "run", "--host", "claude", "--config", str(cfg)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=project, pass_fds=pass_fds,
                            env={**os.environ, **env, "PH_STARTER_MARK": mark,
                                 "PROMPTHOOKS_WORKER": "1", "PROMPTHOOKS_WORKER_IDLE": "5"})
    seen: list[tuple[int, bytes, dict[str, str], dict[bytes, bytes]]] = []
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(claude_bash("ls", cwd=str(project))).encode())
    proc.stdin.close()
    path = socket_name({**os.environ, **env})
    end = time.monotonic() + 60
    while time.monotonic() < end and not os.path.exists(path):
        seen.extend(_starter_processes(mark, proc.pid))
    proc.stdin = None  # closed above: communicate must not flush it
    proc.communicate(timeout=60)
    assert proc.returncode == 0
    assert os.path.exists(path), "no resident process started"
    return seen


def _nice(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[16])


@pytest.mark.slow
def test_the_resident_process_keeps_the_priority_of_the_run_that_started_it(
        tmp_path: Path) -> None:
    """The run lowers its own priority once its answer is out (its audit rows give way), but
    only after the starter is spawned: a resident process started at that priority would
    keep it for good (an unprivileged process cannot raise it again), and judge every later
    event of the session behind everything else on the machine."""
    seen = _run_watching_the_starter(tmp_path, {})
    assert seen, "the starter was never seen"  # the canary: this run started it
    assert _wait(lambda: _workers(), 30), "no resident process"
    assert {_nice(pid) for pid in _workers()} == {os.nice(0)}


@pytest.mark.slow
def test_the_starter_holds_no_descriptor_the_run_inherited(tmp_path: Path) -> None:
    """A host (or the agent's shell) that starts the run with another descriptor open across
    exec: the starter's shell and interpreter, which outlive the run, must not hold it, or a
    host reading that pipe to its end would wait for them."""
    read, write = os.pipe()
    try:
        seen = _run_watching_the_starter(tmp_path, {}, pass_fds=(write,))
    finally:
        os.close(write)
    try:
        inode = f"pipe:[{os.fstat(read).st_ino}]"
        # The canary: the starter was caught living, waiting on its own descriptor 3.
        assert seen, "the starter was never seen"
        assert any(fds.get("3", "").startswith("pipe:") for _, _, fds, _ in seen)
        for pid, cmdline, fds, _ in seen:
            assert inode not in fds.values(), (pid, cmdline, fds)
            # The host's streams are not its own (a look taken as it exits may find none).
            assert not fds or "/dev/null" in fds.values(), (pid, cmdline, fds)
    finally:
        os.close(read)


@pytest.mark.slow
def test_shell_and_interpreter_start_up_variables_run_nothing_of_the_agents(
        tmp_path: Path) -> None:
    """ENV and BASH_ENV (a shell's start-up file), PYTHONSTARTUP, IFS, and a relative
    PYTHONPATH naming the project, which holds a ``sitecustomize.py`` and a ``.pth``: the
    variables reach the starter (the canary), which runs none of the planted files and still
    starts the resident process."""
    ran = tmp_path / "ran"
    shell_file = tmp_path / "profile.sh"
    shell_file.write_text(f"echo shell >> {ran}\n")
    py_file = tmp_path / "startup.py"
    py_file.write_text(f"open({str(ran)!r}, 'a').write('python\\n')\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / "sitecustomize.py").write_text(
        "import os, sys\n"
        f"open({str(ran)!r}, 'a').write(f'sitecustomize {{os.getcwd()}} {{sys.argv}}\\n')\n")
    (project / "evil.pth").write_text(f"import os; open({str(ran)!r}, 'a').write('pth\\n')\n")
    # The planted files do run where they are read: an interactive shell reads ENV.
    subprocess.run(["/bin/sh", "-i", "-c", "true"], env={"ENV": str(shell_file)},
                   stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
    assert ran.read_text() == "shell\n"
    ran.unlink()
    env = {"ENV": str(shell_file), "BASH_ENV": str(shell_file),
           "PYTHONSTARTUP": str(py_file), "PYTHONPATH": ".", "IFS": "/ -Pc"}
    seen = _run_watching_the_starter(tmp_path, env)
    assert seen, "the starter was never seen"
    assert all(found.get(b"ENV") == str(shell_file).encode()  # the canary
               and found.get(b"PYTHONPATH") == b"." for _, _, _, found in seen)
    assert _wait(lambda: len(_workers()) == 1, 60)  # the resident process runs, started
    lines = ran.read_text().splitlines()
    # The canary, and a limit (docs/security.md): the run the host started in the project
    # with a relative entry on PYTHONPATH imports the planted sitecustomize.py, as any Python
    # program there would, before a line of prompthooks runs.
    assert lines and all(line.startswith(f"sitecustomize {project} ") for line in lines), lines
    assert all("'run'" in line for line in lines), lines  # neither the starter nor serve


@pytest.mark.slow
def test_a_run_killed_before_the_starter_reads_leaves_one_resident_process(
        tmp_path: Path) -> None:
    """The run's process killed while the starter's shell waits on it: the shell reads its
    end of file and starts the resident process once, and nothing is left waiting."""
    cfg = claude_config(tmp_path / "hooks.json", "PreToolUse", {"command": "cat > /dev/null"})
    mark = uuid.uuid4().hex
    env = {**os.environ, "PH_STARTER_MARK": mark, "PROMPTHOOKS_WORKER": "1",
           "PROMPTHOOKS_WORKER_IDLE": "5"}
    # The audit database locked: the run's process waits on it after the reply, holding the
    # shell's pipe, long enough to be killed there.
    audit = Path(os.environ["XDG_DATA_HOME"]) / "prompthooks"
    audit.mkdir(parents=True, exist_ok=True)
    locker = subprocess.Popen([sys.executable, "-c", (
        "import sqlite3, sys, time\n"
        f"db = sqlite3.connect({str(audit / 'audit.db')!r}, isolation_level=None)\n"
        "db.execute('BEGIN EXCLUSIVE')\nprint('locked', flush=True)\ntime.sleep(60)\n")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert locker.stdout is not None and locker.stdout.readline() == "locked\n"
        proc = subprocess.Popen([SCRIPT, "run", "--host", "claude", "--config", str(cfg)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, env=env)
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps(claude_bash("ls")).encode())
        proc.stdin.close()
        shells: list[int] = []

        def waiting() -> bool:
            shells.extend(pid for pid, cmd, _, _ in _starter_processes(mark, proc.pid)
                          if b"read -r _" in cmd)
            return bool(shells)

        assert _wait(waiting, 60), "the shell never waited"
        # The canary: the shell is waiting, on a run's process still alive after its reply.
        waiters = [p for p in _run_processes(mark) if p not in shells]
        assert waiters, "no run's process left to kill"
        for pid in waiters:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        proc.wait(60)
        assert _wait(lambda: os.path.exists(socket_name(os.environ)), 60)
        assert _wait(lambda: not any(True for _ in _starter_processes(mark, proc.pid)), 60)
        assert len(_workers()) == 1
    finally:
        locker.kill()
        locker.wait(30)


def _run_processes(mark: str) -> list[int]:
    """The processes of a run whose environment holds ``mark`` (the client's and its work)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        with contextlib.suppress(OSError):
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
            raw = Path(f"/proc/{name}/environ").read_bytes()
            if b"prompthooks\0run" in cmdline and f"PH_STARTER_MARK={mark}".encode() in raw:
                found.append(int(name))
    return found
