"""The system resident process (``prompthooks serve --system``) for managed events: a real root
process, real hooks, and users simulated by forking this process and dropping its uid (an
interpreter cannot be started as another uid here); and the attacks a user, the agent, can
make on the way a managed event is handed over."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from prompthooks.dispatcher import client
from prompthooks.dispatcher.protocol import exit_frame

from ..helpers import claude_bash, claude_config, reply

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the system resident process and "
                                "the uid drop it makes need root")

SCRIPT = str(Path(sys.executable).parent / "prompthooks")
NOBODY = 65534
# The hook's parent is the run's process: forked from "serve --system" when handed over.
WHO = "{{ tr '\\0' ' ' < /proc/$PPID/cmdline; echo; }} > {out}; cat > /dev/null"


@pytest.fixture
def base(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder every user can enter (the test's own tmp_path is root's alone): the system
    socket's folder (root's, 0755), the managed policy, and a home for the simulated user."""
    folder = Path(tempfile.mkdtemp(prefix="ph-system-", dir="/tmp"))
    folder.chmod(0o755)
    (folder / "run").mkdir(mode=0o755)
    (folder / "etc").mkdir(mode=0o755)
    home = folder / "home"
    home.mkdir(mode=0o755)
    os.chown(home, NOBODY, NOBODY)
    monkeypatch.setenv("PROMPTHOOKS_WORKER", "1")
    monkeypatch.setenv("PROMPTHOOKS_SYSTEM_SOCKET", str(folder / "run" / "socket"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def system(base: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A real system resident process, run as root, in its own process group."""
    proc = subprocess.Popen([SCRIPT, "serve", "--system"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        end = time.monotonic() + 60
        while not (base / "run" / "socket").exists():
            assert time.monotonic() < end and proc.poll() is None, "it did not listen"
            time.sleep(0.05)
        assert (base / "run" / "socket").stat().st_mode & 0o777 == 0o666
        yield proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGCONT)
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)


def _run(event: dict[str, Any], managed: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SCRIPT, "run", "--host", "claude", "--managed-dir", str(managed)],
                          input=json.dumps(event), text=True, capture_output=True,
                          env={**os.environ, **env}, timeout=60)


def _handed_over(out: Path) -> bool:
    ancestry = out.read_text().splitlines()[0].split()
    assert "run" in ancestry or "serve" in ancestry, ancestry
    return "serve" in ancestry


def _decision(proc: subprocess.CompletedProcess[str]) -> str:
    return str(reply(proc)["hookSpecificOutput"]["permissionDecision"])


def test_a_managed_event_goes_to_the_system_process_and_gives_the_verdicts_it_would_here(
        base: Path, system: subprocess.Popen[bytes]) -> None:
    managed = base / "etc"
    out = base / "who"
    cases = {"allow": (f"{WHO.format(out=out)}", False),
             "deny": (f"{WHO.format(out=out)}; echo no >&2; exit 2", False),
             "broken": (f"{WHO.format(out=out)}; exit 1", True)}
    for name, (command, closed) in cases.items():
        claude_config(managed / "hooks.json", "PreToolUse",
                      {"command": command, "failClosed": closed})
        verdicts = []
        for env in ({}, {"PROMPTHOOKS_SYSTEM_SOCKET": str(base / "none" / "socket")}):
            out.unlink(missing_ok=True)
            proc = _run(claude_bash("rm -rf /tmp/x"), managed, **env)
            assert out.exists(), proc.stderr
            assert _handed_over(out) == (not env), (name, proc.stderr)  # the canary
            verdicts.append((proc.returncode, proc.stdout and _decision(proc)))
        assert verdicts[0] == verdicts[1], name
        assert (verdicts[0][1] or "allow") == ("allow" if name == "allow" else "deny"), name


def _as_user(uid: int, work: Callable[[], object]) -> object:
    """``work()`` in a child of this process dropped to ``uid`` (its own group, no others),
    whose result comes back as JSON."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(read)
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            os.write(write, json.dumps(work()).encode())
            code = 0
        except BaseException as exc:  # said to the test, which fails
            os.write(write, json.dumps({"raised": repr(exc)}).encode())
            code = 3
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        data = pipe.read()
    _, status = os.waitpid(pid, 0)
    result = json.loads(data)
    if os.waitstatus_to_exitcode(status) == 3:
        raise PermissionError(result["raised"])
    assert os.waitstatus_to_exitcode(status) == 0
    return result


def _ask_as_user(base: Path, event: dict[str, Any]) -> tuple[str, int] | None:
    """The client's hand-over of ``event`` under the managed policy in ``base``, made in the
    calling user's process: its reply and code, or None (the client would run it here)."""
    job = client._job(["--host", "claude", "--managed-dir", str(base / "etc")])
    assert job is not None
    home = base / "home"
    os.chdir(home)
    os.environ.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
                      XDG_CACHE_HOME=str(home / ".cache"),
                      XDG_DATA_HOME=str(home / ".data"), XDG_RUNTIME_DIR=str(home))
    to = client._hand_over_to(job)
    if to != 0:
        return None
    job.data = json.dumps(event).encode()
    job.started = time.monotonic()
    job.limit = job.started + 30
    answer = client._ask_resident(job, job.limit, client._HandOver(), to)
    return None if answer is None else (answer[0].decode(), answer[1])


def test_a_users_run_is_done_as_that_user(
        base: Path, system: subprocess.Popen[bytes]) -> None:
    secret = base / "etc" / "secret"  # root's alone, like /etc/shadow
    secret.write_text("CANARY-SECRET\n")
    secret.chmod(0o600)
    out, read = base / "home" / "uid", base / "home" / "read"
    trace = base / "home" / "trace"
    # The hook reads the transcript the event names, as a hook of the user's may, and tries
    # the run's memory as its tracer would (/proc/PID/environ: refused when not dumpable).
    claude_config(base / "etc" / "hooks.json", "PreToolUse",
                  {"command": f"id -u > {out}; id -G >> {out}; "
                              f"(cat {secret} || echo refused) > {read} 2>/dev/null; "
                              f"(cat /proc/$PPID/environ > /dev/null && echo traced "
                              f"|| echo refused) > {trace} 2>/dev/null; cat > /dev/null"})
    event = {**claude_bash("ls", cwd=str(base / "home")), "transcript_path": str(secret)}
    # The canary: root's own run, handed over too, reads it.
    assert _run(event, base / "etc").returncode == 0
    assert read.read_text() == "CANARY-SECRET\n"
    assert trace.read_text() == "traced\n"
    for made in (read, out, trace):
        made.unlink()
    answer = _as_user(NOBODY, lambda: _ask_as_user(base, event))
    assert answer is not None  # the system process answered: it was handed over
    uid, groups = out.read_text().split()
    assert (uid, groups) == (str(NOBODY), str(NOBODY))  # dropped: no root group left
    assert read.read_text() == "refused\n"
    assert trace.read_text() == "refused\n"  # the dropped run is not dumpable
    assert "CANARY-SECRET" not in json.dumps(answer)


def _listen_as(uid: int, path: Path, connected: Path) -> int:
    """A process that binds ``path`` (as root: the folder is root's), then drops to ``uid``
    before it listens (the peer the kernel reports) and answers "allow" to every run, noting
    each connection in ``connected``."""
    pid = os.fork()
    if pid == 0:
        try:
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            listener.bind(str(path))
            os.chmod(path, 0o666)
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            listener.listen(8)
            while True:
                conn, _ = listener.accept()
                with open(connected, "a") as note:
                    note.write("connected\n")
                with contextlib.suppress(OSError):
                    conn.recv(1 << 16)
                    conn.sendall(exit_frame(b"", 0))  # "allow", as the protocol says it
        finally:
            os._exit(0)
    return pid


def test_a_socket_at_the_system_path_served_by_a_user_is_never_trusted(base: Path) -> None:
    managed = base / "etc"
    claude_config(managed / "hooks.json", "PreToolUse",
                  {"command": "exit 1", "failClosed": True})
    connected = base / "home" / "connected"
    pid = _listen_as(NOBODY, base / "run" / "socket", connected)
    try:
        end = time.monotonic() + 30
        while not os.path.exists(base / "run" / "socket"):
            assert time.monotonic() < end
            time.sleep(0.02)
        time.sleep(0.2)  # listening: the bind came first
        proc = _run(claude_bash("rm -rf /"), managed)
        assert connected.read_text().count("connected") == 1  # the canary: it was asked
        assert _decision(proc) == "deny", proc.stderr
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


def test_a_system_socket_in_a_folder_others_can_write_is_refused(
        base: Path, system: subprocess.Popen[bytes]) -> None:
    managed = base / "etc"
    out = base / "who"
    claude_config(managed / "hooks.json", "PreToolUse", {"command": WHO.format(out=out)})
    assert _handed_over(out) if _run(claude_bash("ls"), managed).returncode == 0 else False
    for mode in (0o775, 0o757):
        (base / "run").chmod(mode)
        proc = _run(claude_bash("ls"), managed)
        assert proc.returncode == 0, proc.stderr
        assert not _handed_over(out), oct(mode)
    (base / "run").chmod(0o755)
    os.chown(base / "run", NOBODY, NOBODY)  # a user's folder, however closed
    _run(claude_bash("ls"), managed)
    assert not _handed_over(out)


def test_a_stopped_system_process_cannot_hold_a_managed_deny_past_the_budget(
        base: Path, system: subprocess.Popen[bytes]) -> None:
    managed = base / "etc"
    claude_config(managed / "hooks.json", "PreToolUse",
                  {"command": "exit 1", "failClosed": True})
    os.killpg(system.pid, signal.SIGSTOP)
    _denied_in_time(managed)


def _denied_in_time(managed: Path) -> None:
    """A managed event with a 30 s budget is denied, well before the budget."""
    started = time.monotonic()
    proc = subprocess.run([SCRIPT, "run", "--host", "claude", "--budget", "30",
                           "--managed-dir", str(managed)],
                          input=json.dumps(claude_bash("rm -rf /")), text=True,
                          capture_output=True, timeout=60)
    assert _decision(proc) == "deny", proc.stderr
    assert time.monotonic() - started < 20  # well before the 30 s budget
