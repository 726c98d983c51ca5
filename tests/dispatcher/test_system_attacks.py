"""Attacks a user (and so the agent) can make on the system resident process's spare: stalled,
garbage, half-sent and flooding connections, the spare's privileges while it waits on one, and
a model socket of the user's beside a managed prompt hook. A real root ``serve --system``;
users simulated by forked processes that drop to uid 65534 (see test_system.py)."""

from __future__ import annotations

import contextlib
import grp
import json
import os
import pwd
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from prompthooks.address import socket_name
from prompthooks.dispatcher import client
from prompthooks.dispatcher.protocol import MAGIC
from prompthooks.model.model_process import model_path

from ..fake_model import FakeModel, scripted, verdict
from ..helpers import claude_bash, claude_config, write_json
from ..helpers import wait_until as _until
from .test_system import (
    NOBODY,
    SCRIPT,
    WHO,
    _as_user,
    _decision,
    _denied_in_time,
    _handed_over,
    _run,
)
from .test_system import base as base  # a fixture
from .test_system import system as system  # a fixture

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(os.geteuid() != 0, reason="the system resident process and "
                                 "the uid drop it makes need root")]


def _status(pid: int) -> dict[str, str]:
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    return {k: v.strip() for k, _, v in (line.partition(":") for line in lines)}


def _children(pid: int) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            with contextlib.suppress(OSError):
                if _status(int(name)).get("PPid") == str(pid):
                    found.append(int(name))
    return found


def _runs_of(serve: int, uid: int) -> list[int]:
    """The system process's children running as ``uid``: each a spare that took a connection
    of that user's and dropped to it."""
    runs = []
    for pid in _children(serve):
        with contextlib.suppress(OSError):
            if _status(pid)["Uid"].split() == [str(uid)] * 4:
                runs.append(pid)
    return runs


def _listening_inodes() -> set[str]:
    """Every listening Unix socket's inode (``__SO_ACCEPTCON`` in /proc/net/unix)."""
    found = set()
    for line in Path("/proc/net/unix").read_text().splitlines()[1:]:
        fields = line.split()
        if int(fields[3], 16) & 0x10000:
            found.add(fields[6])
    return found


def _socket_inodes(pid: int) -> set[str]:
    found = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(OSError):
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
            if target.startswith("socket:["):
                found.add(target[len("socket:["):-1])
    return found


def _hold(uid: int, path: Path, sends: list[bytes], close: bool = False) -> int:
    """A process of ``uid`` that connects to ``path`` once per item of ``sends``, sends it,
    then (``close``) closes it or keeps every connection open until killed. Returns its pid
    once all are connected."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read)
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            held = []
            for data in sends:
                conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                conn.connect(str(path))
                if data:
                    conn.sendall(data)
                if close:
                    conn.close()
                else:
                    held.append(conn)
            os.write(write, b"c")
            time.sleep(600)
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        assert pipe.read(1) == b"c"
    return pid


def _end(pid: int) -> None:
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)



def test_a_stalled_connection_is_taken_by_a_spare_already_dropped_to_its_user(
        base: Path, system: subprocess.Popen[bytes]) -> None:
    """A user connects and sends nothing: the spare that took the connection is that user's
    (uid, gid, groups) before it has read a byte, holds no listening socket, and the managed
    policy is still served to others meanwhile."""
    managed = base / "etc"
    out = base / "who"
    claude_config(managed / "hooks.json", "PreToolUse",
                  {"command": f"{WHO.format(out=out)}; echo no >&2; exit 2"})
    listening = _listening_inodes() & _socket_inodes(system.pid)
    assert listening  # the system process's own listener, seen
    holder = _hold(NOBODY, base / "run" / "socket", [b"", b"", b""])
    try:
        # The canary: each stalled connection was taken, by a process of the user's.
        assert _until(lambda: len(_runs_of(system.pid, NOBODY)) == 3), \
            "the stalled connections were not taken"
        for pid in _runs_of(system.pid, NOBODY):
            status = _status(pid)
            assert status["Gid"].split() == [str(NOBODY)] * 4, status
            assert set(status["Groups"].split()) <= {str(NOBODY)}, status
            assert not _socket_inodes(pid) & listening, pid  # cannot accept another's run
        proc = _run(claude_bash("rm -rf /"), managed)
        assert _decision(proc) == "deny", proc.stderr
        assert _handed_over(out)  # still taken by the system process's next spare
    finally:
        _end(holder)


@pytest.mark.parametrize("sends", [
    pytest.param([b"GET / HTTP/1.0\r\n\r\n"], id="garbage"),
    pytest.param([MAGIC + (64).to_bytes(8, "big") + b'{"version": '], id="half-a-header"),
    pytest.param([MAGIC + (1 << 40).to_bytes(8, "big")], id="huge-length"),
    pytest.param([b""] * 8, id="connect-and-close"),
])
def test_garbage_and_closed_connections_leave_the_system_process_serving(
        base: Path, system: subprocess.Popen[bytes], sends: list[bytes]) -> None:
    managed = base / "etc"
    out = base / "who"
    claude_config(managed / "hooks.json", "PreToolUse",
                  {"command": f"{WHO.format(out=out)}; exit 1", "failClosed": True})
    assert _until(lambda: len(_children(system.pid)) == 1)
    spare = set(_children(system.pid))  # the one forked ahead, waiting
    holder = _hold(NOBODY, base / "run" / "socket", sends, close=True)
    try:
        # The canary: the spare took a connection (it ends with its run), and each run's
        # process is gone once it read what it was sent; then the next event is still handed
        # over and still blocked.
        assert _until(lambda: not spare & set(_children(system.pid))
                      and not _runs_of(system.pid, NOBODY))
        proc = _run(claude_bash("rm -rf /"), managed)
        assert _decision(proc) == "deny", proc.stderr
        assert _handed_over(out)
    finally:
        _end(holder)


def test_a_flood_of_stalled_connections_cannot_hold_a_managed_deny_past_the_budget(
        base: Path, system: subprocess.Popen[bytes]) -> None:
    managed = base / "etc"
    claude_config(managed / "hooks.json", "PreToolUse",
                  {"command": "exit 1", "failClosed": True})
    holder = _hold(NOBODY, base / "run" / "socket", [b""] * 64)
    try:
        assert _until(lambda: len(_runs_of(system.pid, NOBODY)) >= 2)  # the canary: taken
        _denied_in_time(managed)
    finally:
        _end(holder)


@pytest.fixture
def policy_model() -> Iterator[FakeModel]:
    yield from scripted(verdict(False, "managed model says no"))


class _FakeModelSocket:
    """A model socket at ``path`` (in a folder of the user's, as the user's own model
    process's would be) that answers "ok" to every request and keeps what it was sent."""

    def __init__(self, path: Path) -> None:
        self.received: list[bytes] = []
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(str(path))
        os.chmod(path, 0o666)
        self._listener.listen(8)
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                conn, _ = self._listener.accept()
                with conn:
                    conn.settimeout(10)
                    data = b""
                    while b"\n" not in data:
                        chunk = conn.recv(1 << 16)
                        if not chunk:
                            break
                        data += chunk
                    self.received.append(data)
                    text = json.dumps({"ok": True, "reason": "the fake socket says ok"})
                    conn.sendall(json.dumps({"text": text, "model": "x", "attempts": 1})
                                 .encode() + b"\n")

    def close(self) -> None:
        self._listener.close()


def test_a_fake_model_socket_of_the_users_never_answers_for_a_managed_prompt_hook(
        base: Path, policy_model: FakeModel, monkeypatch: pytest.MonkeyPatch) -> None:
    """The system process is started with a provider key in its environment. A user's run
    through it has a prompt hook of its own on the warm worker's path, answered by a model
    socket the user bound where their model process listens; the managed prompt hook is
    judged by its own endpoint, and no key of root's reaches the user's socket."""
    managed = base / "etc"
    write_json(managed / "hooks.json", {
        "prompthooks": {"model": "policy-model", "api_base": policy_model.url},
        "hooks": {"PreToolUse": [{"hooks": [
            {"type": "prompt", "prompt": "MANAGED-PROMPT judge it. $ARGUMENTS",
             "failClosed": True}]}]}})
    home = base / "home"
    user_config = write_json(home / "user.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "prompt", "prompt": "USER-PROMPT judge it. $ARGUMENTS"}]}]}})
    os.chown(user_config, NOBODY, NOBODY)
    secret = "sk-ant-ROOTS-OWN-CANARY-0123456789"
    proc = subprocess.Popen([SCRIPT, "serve", "--system"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True,
                            env={**os.environ, "ANTHROPIC_API_KEY": secret,
                                 "PROMPTHOOKS_API_KEY": secret})
    user_env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
                "XDG_CACHE_HOME": str(home / ".cache"), "XDG_DATA_HOME": str(home / ".data"),
                "XDG_STATE_HOME": str(home / ".state"), "XDG_RUNTIME_DIR": str(home),
                "PROMPTHOOKS_WORKER": "1", "PROMPTHOOKS_DIRECT": "0",
                "PROMPTHOOKS_API_BASE": policy_model.url, "PROMPTHOOKS_MODEL": "user-model"}
    for name in ("ANTHROPIC_API_KEY", "PROMPTHOOKS_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    folder = Path(socket_name({**os.environ, **user_env})).parent
    folder.mkdir(mode=0o700)
    os.chown(folder, NOBODY, NOBODY)
    fake = _FakeModelSocket(model_path(Path(socket_name({**os.environ, **user_env}))))
    try:
        assert _until(lambda: (base / "run" / "socket").exists()), "it did not listen"

        def ask() -> object:
            job = client._job(["--host", "claude", "--managed-dir", str(managed),
                               "--config", str(user_config)])
            assert job is not None
            os.chdir(home)
            os.environ.update(user_env)
            to = client._hand_over_to(job)
            assert to == 0
            job.data = json.dumps(claude_bash("rm -rf /", cwd=str(home))).encode()
            job.started = time.monotonic()
            job.limit = job.started + 30
            answer = client._ask_resident(job, job.limit, client._HandOver(), to)
            return None if answer is None else [answer[0].decode(), answer[1]]

        answer = _as_user(NOBODY, ask)
        assert answer is not None  # handed over to the system process
        # The canary: the user's own hook asked the user's socket, through the same run.
        assert any(b"USER-PROMPT" in data for data in fake.received), fake.received
        assert not any(b"MANAGED-PROMPT" in data for data in fake.received)
        assert any("MANAGED-PROMPT" in r.user for r in policy_model.requests)
        assert not any(secret.encode() in data for data in fake.received)
        assert isinstance(answer, list)
        decision = json.loads(answer[0])["hookSpecificOutput"]
        assert decision["permissionDecision"] == "deny", decision
        assert "managed model says no" in decision["permissionDecisionReason"]
    finally:
        fake.close()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)


def _with_groups(uid: int, gid: int, groups: list[int], work: Callable[[], object]) -> object:
    """``work()`` in a child of this process running as ``uid``, ``gid`` and exactly
    ``groups``; its result, through JSON."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read)
            os.setgroups(groups)
            os.setgid(gid)
            os.setuid(uid)
            os.write(write, json.dumps(work()).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    return json.loads(data)


def _member_with_a_group() -> tuple[int, int, int]:
    """A user of this machine listed as a member of a group other than their own (uid, their
    gid, that group's gid)."""
    for group in grp.getgrall():
        for name in group.gr_mem:
            with contextlib.suppress(KeyError):
                user = pwd.getpwnam(name)
                if user.pw_uid != 0 and group.gr_gid != user.pw_gid:
                    return user.pw_uid, user.pw_gid, group.gr_gid
    pytest.skip("no user here is a member of a group besides their own")


def test_a_peer_that_gave_up_its_groups_gets_none_of_them_back(
        base: Path, system: subprocess.Popen[bytes]) -> None:
    """A process of the user's that gave up a supplementary group (as a sandbox does) hands a
    run over: the run's hooks must not get the group back from the group database."""
    uid, gid, extra = _member_with_a_group()
    out = base / "out"
    out.mkdir(mode=0o777)
    out.chmod(0o777)
    claude_config(base / "etc" / "hooks.json", "PreToolUse",
                  {"command": f"id -G > {out}/groups; cat > /dev/null"})

    def ask() -> object:
        job = client._job(["--host", "claude", "--managed-dir", str(base / "etc")])
        assert job is not None
        os.chdir(out)
        os.environ.update(HOME=str(out), XDG_RUNTIME_DIR=str(out),
                          XDG_DATA_HOME=str(out / ".data"), XDG_STATE_HOME=str(out / ".state"),
                          XDG_CACHE_HOME=str(out / ".cache"))
        to = client._hand_over_to(job)
        job.data = json.dumps(claude_bash("ls", cwd=str(out))).encode()
        job.started = time.monotonic()
        job.limit = job.started + 30
        return client._ask_resident(job, job.limit, client._HandOver(), to) is not None

    # The canary: with the group kept, the handed-over run's hook has it.
    assert _with_groups(uid, gid, [gid, extra], ask) is True
    assert str(extra) in (out / "groups").read_text().split()
    (out / "groups").unlink()
    assert _with_groups(uid, gid, [], ask) is True  # handed over all the same
    assert (out / "groups").read_text().split() == [str(gid)]


def test_runs_of_two_users_at_once_are_each_done_as_their_own_user(
        base: Path, system: subprocess.Popen[bytes]) -> None:
    """Root's and a user's runs race for the spares: each answer is its own event's, and each
    run's hook ran as the user who sent that event, never the other."""
    out = base / "out"
    out.mkdir(mode=0o777)
    out.chmod(0o777)
    claude_config(base / "etc" / "hooks.json", "PreToolUse", {"command": (
        "c=$(python3 -c 'import json, sys; print(json.load(sys.stdin)[\"tool_input\"]"
        f"[\"command\"])'); id -u > {out}/$(echo \"$c\" | tr ' ' -); "
        "echo \"$c\" >&2; exit 2")})

    def ask(command: str) -> Callable[[], object]:
        def work() -> object:
            job = client._job(["--host", "claude", "--managed-dir", str(base / "etc")])
            assert job is not None
            os.chdir(out)
            os.environ.update(HOME=str(out), XDG_RUNTIME_DIR=str(out),
                              XDG_DATA_HOME=str(out / ".data"),
                              XDG_STATE_HOME=str(out / ".state"),
                              XDG_CACHE_HOME=str(out / ".cache"))
            job.data = json.dumps(claude_bash(command, cwd=str(out))).encode()
            job.started = time.monotonic()
            job.limit = job.started + 30
            answer = client._ask_resident(job, job.limit, client._HandOver(),
                                          client._hand_over_to(job))
            return None if answer is None else answer[0].decode()
        return work

    commands = {f"echo {n}": (0 if n % 2 else NOBODY) for n in range(8)}
    # Forked one by one from this thread (a fork from a thread could copy a lock held by
    # another), each waits for the word to go, then all ask at once.
    go_read, go_write = os.pipe()
    children = {}
    for command, uid in commands.items():
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(read)
                os.close(go_write)
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
                os.read(go_read, 1)
                os.write(write, json.dumps(ask(command)()).encode())
            finally:
                os._exit(0)
        os.close(write)
        children[command] = (pid, read)
    os.close(go_read)
    os.write(go_write, b"g" * len(commands))
    os.close(go_write)
    answers = {}
    for command, (pid, read) in children.items():
        with os.fdopen(read, "rb") as pipe:
            answers[command] = json.loads(pipe.read() or b"null")
        os.waitpid(pid, 0)
    handed = [c for c, a in answers.items() if a is not None]
    assert any(commands[c] == NOBODY for c in handed), answers  # the canary: both users'
    assert any(commands[c] == 0 for c in handed), answers  # runs went to the system process
    for command in handed:
        reason = json.loads(answers[command])["hookSpecificOutput"]["permissionDecisionReason"]
        assert reason == command
        ran_as = (out / command.replace(" ", "-")).read_text().strip()
        assert ran_as == str(commands[command]), command
