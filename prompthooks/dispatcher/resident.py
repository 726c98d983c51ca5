"""The resident process: ``prompthooks serve``, also called the warm worker.

One thread, every module of a run loaded, litellm never imported: it holds the socket's lock
(handed over by the client that started it, or taken here), listens on the run socket the
client side names (:func:`prompthooks.address.socket_name`) at once, and keeps one
run's process forked ahead (:func:`prompthooks.dispatcher.run_process.spare`), which accepts
the next connection itself: a handed-over event crosses the thin client and that process. It
forks the next spare once the run that took the last one has ended, or :data:`SPARE_AFTER`
after it was taken if runs are still going, and at once when a connection waits with no spare.

litellm lives in the model process, forked first (before any thread): it imports litellm, then
listens on the model socket beside the run socket
(:func:`prompthooks.model.model_process.model_path`) and answers each model request, a JSON
line, in a thread (:func:`answer_request`). The two end together. The system resident
process (``serve --system``) has none: it never calls a model.

The resident process exits after an idle period, and as soon as its socket path no longer
names its own socket (checked every second), so a removed or replaced socket never leaves it
listening where no client can reach it; the model process does the same for its own socket.
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import json
import os
import select
import socket
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

from .._version import __version__
from ..address import LOCK_FD_VAR, SYSTEM_SOCKET, model_environment, owned_closed_dir
from ..loading.managed import preload
from ..model.endpoint import Endpoint, ModelError, ModelRequest, ModelTimeout
from ..model.litellm_client import complete, prepare
from ..model.model_process import lock_path, model_path, private_dir, read_line, socket_path
from ..model.verdict import VerdictError, parse_verdict
from ..paths import open_state
from .run_process import FIRST_READ, SYSTEM, TOOK, spare, warm

IDLE_SECONDS = 600.0  # PROMPTHOOKS_WORKER_IDLE overrides it for workers started on demand
_POLL = 0.1  # seconds between tries for the lock of a worker on its way out
_CHECK_SOCKET = 1.0  # seconds between a worker's checks that its socket path is still its own
_LOCK_WAIT = 3.0  # seconds `serve` waits for the lock of a worker on its way out
# Seconds after a run came that the next spare is forked, if that run has not ended by then:
# forking copies the resident process's page tables, which on a machine with a core or two
# would slow the run under way.
SPARE_AFTER = 0.1


def _take_lock(path: Path, env: Mapping[str, str]) -> int | None:
    """The lock for serving on ``path``: the one the starting client handed over, else taken
    here (waiting a little for a worker on its way out). None when another worker holds it."""
    lock = lock_path(path)
    handed = env.get(LOCK_FD_VAR)
    if handed:
        with contextlib.suppress(ValueError, OSError):
            fd = int(handed)
            got, want = os.fstat(fd), os.stat(lock)
            if (got.st_dev, got.st_ino) == (want.st_dev, want.st_ino):
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held already: a no-op
                os.set_inheritable(fd, False)
                return fd
    fd = open_state(lock, os.O_RDWR | os.O_CREAT)  # a FIFO or link there is refused
    end = time.monotonic() + _LOCK_WAIT
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() >= end:
                os.close(fd)
                return None
            time.sleep(_POLL)


def _listen(path: Path, umask: int = 0o177) -> tuple[socket.socket, tuple[int, int]]:
    """A socket listening at ``path`` (0600, or as ``umask`` leaves it), and its identity
    (device, inode)."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_umask = os.umask(umask)
    try:
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        tmp.unlink(missing_ok=True)
        listener.bind(str(tmp))
        listener.listen(socket.SOMAXCONN)  # a burst of events queues, not refused
        os.replace(tmp, path)  # atomically take over from a dead worker's socket
        st = path.stat()
    except OSError:
        listener.close()
        raise
    finally:
        os.umask(old_umask)
    return listener, (st.st_dev, st.st_ino)


def _is_mine(path: Path, mine: tuple[int, int]) -> bool:
    try:
        st = path.stat()
    except OSError:
        return False
    return (st.st_dev, st.st_ino) == mine


def _system_path(env: Mapping[str, str]) -> Path | None:
    """The system resident process's socket, in a folder of this uid's that no one else can
    write (made 0755 if missing), or None (said why)."""
    path = Path(env.get("PROMPTHOOKS_SYSTEM_SOCKET") or SYSTEM_SOCKET)
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
    if not owned_closed_dir(str(path.parent), os.getuid()):
        print(f"prompthooks: {path.parent} must be a folder of this user's that no one else "
              "can write; not serving", file=sys.stderr)
        return None
    return path


def answer_request(data: Mapping[str, Any], own_env: Mapping[str, str]) -> dict[str, Any]:
    """The answer to a prompt hook's model request (one JSON line from
    :func:`prompthooks.model.model_process.remote_complete`): the call made here, with litellm
    imported already, or ``unavailable`` for a client of another version or environment."""
    if data.get("version") != __version__ or data.get("env") != model_environment(own_env):
        return {"unavailable": True}
    endpoint = Endpoint(data["model"], data.get("api_base"), data.get("api_key"))
    request = ModelRequest(endpoint=endpoint, messages=tuple(data["messages"]),
                           nonce=data.get("nonce", ""), temperature=data["temperature"],
                           max_tokens=data["max_tokens"], json_mode=data["json_mode"],
                           structured=bool(data.get("structured", True)),
                           impossible=bool(data.get("impossible", False)))
    try:
        reply = complete(request, time.monotonic() + float(data["remaining"]) - 0.05)
    except ModelTimeout as exc:
        return {"error": str(exc), "timeout": True}
    except ModelError as exc:
        return {"error": str(exc)}
    answer: dict[str, Any] = {"text": reply.text, "model": reply.model,
                              "attempts": reply.attempts, "input_tokens": reply.input_tokens,
                              "output_tokens": reply.output_tokens, "cost": reply.cost}
    # Parsed here, where pydantic is loaded already; the client re-parses on a failure.
    with contextlib.suppress(VerdictError):
        answer["verdict"] = asdict(parse_verdict(reply.text))
    return answer


def serve(idle: float = IDLE_SECONDS, environ: Mapping[str, str] | None = None,
          system: bool = False) -> int:
    """Serve until idle for ``idle`` seconds, or until the socket path no longer names the
    socket (removed, or replaced), or the model process ends. Returns an exit code.

    ``system``: the system resident process, for managed events (see docs/security.md): its
    socket is :data:`~.address.SYSTEM_SOCKET`, open to every user, each run drops to its
    caller's uid first, it has no model process and never exits for idleness."""
    env = dict(os.environ if environ is None else environ)
    os.environ.pop(LOCK_FD_VAR, None)
    # Runs enter their callers' folders (projects the agent writes): a relative entry on the
    # import path (``python -c`` puts ``''`` first) would import from each in turn.
    sys.path[:] = [entry for entry in sys.path if os.path.isabs(entry)]
    if system:
        found = _system_path(env)
        if found is None:
            return 1
        path, idle = found, float("inf")
        env.pop(LOCK_FD_VAR, None)
    else:
        path = socket_path(env)
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(path.parent, 0o700)
        if not private_dir(path.parent):
            print(f"prompthooks: {path.parent} is not a private folder; not serving",
                  file=sys.stderr)
            return 1
    try:
        lock_fd = _take_lock(path, env)
    except OSError as exc:
        print(f"prompthooks: cannot lock {lock_path(path)}: {exc}", file=sys.stderr)
        return 1
    if lock_fd is None:
        print(f"prompthooks: a worker already serves on {path}", file=sys.stderr)
        return 0
    warm()
    if system:  # read once here: the runs forked from now on find it in memory
        preload(env)
    SYSTEM[0] = system
    gc.freeze()  # the objects so far are never collected: a fork's pages stay shared
    model = None if system else _fork_model(model_path(path), env, lock_fd)
    try:
        listener, mine = _listen(path, 0o111 if system else 0o177)
    except OSError as exc:
        print(f"prompthooks: cannot listen on {path}: {exc}", file=sys.stderr)
        if model is not None:
            model.close()
        os.close(lock_fd)
        return 1
    listener.setblocking(False)  # a spare's accept after select never waits
    print(f"prompthooks serve: listening on {path} (exits after {idle:g} s without a request)",
          file=sys.stderr, flush=True)
    try:
        _serve_runs(listener, path, mine, model, model_environment(env), idle, lock_fd)
    finally:
        if model is not None:
            model.close()  # the model process sees the end and leaves
        if _is_mine(path, mine):  # not a newer worker's socket
            with contextlib.suppress(OSError):
                path.unlink()
        listener.close()
        os.close(lock_fd)  # another worker may start now
    return 0


def _serve_runs(listener: socket.socket, path: Path, mine: tuple[int, int],
                model: socket.socket | None, own_model_env: Mapping[str, str], idle: float,
                lock_fd: int) -> None:
    """The resident process's loop: a spare kept forked ahead, the runs under way watched by
    their sockets' ends, until idle, the socket path is no longer its own, or the model
    process ends. Runs under way go on after it."""
    closed = (lock_fd,) if model is None else (lock_fd, model.fileno())
    busy: list[socket.socket] = []  # the spares given a run: each one's end closes with it

    def fork() -> socket.socket | None:
        return _fork_spare(listener, own_model_env, (*closed, *(s.fileno() for s in busy)))

    idle_spare = fork()
    due: float | None = None if idle_spare else time.monotonic() + 1.0  # the next fork
    last = time.monotonic()
    # Idle time counts once the model process listens (it says so): a client may be waiting
    # for it meanwhile.
    loading = model is not None
    next_check = last + _CHECK_SOCKET
    while True:
        now = time.monotonic()
        if now >= next_check:  # also under a steady stream of runs
            if not _is_mine(path, mine):
                return
            next_check = now + _CHECK_SOCKET
        if idle_spare is None and due is not None and now >= due:
            idle_spare, due = fork(), None
            if idle_spare is None:
                due = now + 1.0
        if not busy and not loading and now - last > idle:
            return
        # The socket is watched only while no spare waits on it: then a connection that
        # comes gets a spare at once.
        watched = [*busy, idle_spare or listener, *([model] if model else [])]
        wake = min(next_check, next_check if due is None else due,
                   next_check if busy or loading else last + idle)
        ready, _, _ = select.select(watched, [], [], max(0.0, wake - now))
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        now = time.monotonic()
        if model is not None and model in ready:
            try:
                said = model.recv(64)
            except OSError:
                said = b""
            if not said:
                return  # the model process has ended: the two end together
            last, loading = now, False  # it listens, or answered a model request
        for ended in [s for s in busy if s in ready]:
            ended.close()
            busy.remove(ended)
            last = now
            if idle_spare is None:
                due = now  # its run is over: the next spare now
        if idle_spare is not None and idle_spare in ready:
            try:
                took = idle_spare.recv(1) == TOOK
            except OSError:
                took = False
            if took:
                busy.append(idle_spare)
                # Not pushed back by each run that comes: runs that keep overlapping still
                # get a spare SPARE_AFTER after the first of them.
                soon = now + SPARE_AFTER
                due = soon if due is None else min(due, soon)
            else:  # it died waiting
                idle_spare.close()
                due = now
            idle_spare, last = None, now
        elif listener in ready:  # a connection and no spare: one now
            idle_spare, due = fork(), None
            if idle_spare is None:  # cannot fork: the client does the run itself
                with contextlib.suppress(OSError):
                    listener.accept()[0].close()
                due = now + 1.0


def _fork_spare(listener: socket.socket, own_model_env: Mapping[str, str],
                close: tuple[int, ...]) -> socket.socket | None:
    """A spare (:func:`~.run_process.spare`) waiting on ``listener``, and the resident
    process's end of its socket pair; None when it cannot be forked. ``close``: what the
    spare must not hold (the lock, the model process's pair, the runs' pairs)."""
    try:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    except OSError:
        return None
    try:
        pid = os.fork()
    except OSError:
        ours.close()
        theirs.close()
        return None
    if pid == 0:
        ours.close()
        for fd in close:
            with contextlib.suppress(OSError):
                os.close(fd)
        spare(listener, theirs, own_model_env)
    theirs.close()
    return ours


def _fork_model(path: Path, env: Mapping[str, str], lock_fd: int) -> socket.socket:
    """The model process (forked before any thread), and the resident process's end of its
    socket pair: a byte on it for each model request answered, its end when it ends."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    if os.fork() == 0:
        ours.close()
        os.close(lock_fd)  # the resident process's alone: it goes when that one does
        try:
            _serve_models(theirs, path, env)
        finally:
            os._exit(0)
    theirs.close()
    return ours


def _serve_models(resident: socket.socket, path: Path, env: Mapping[str, str]) -> None:
    """The model process: litellm imported and warmed, then model requests answered on
    ``path``, a thread each, until the resident process ends or the path is no longer its
    socket; the requests in hand end by their own deadlines."""
    with contextlib.suppress(OSError):  # named for ps and top
        Path("/proc/self/comm").write_text("prompthooks-mdl")
    # Ready before listening: a client that finds no socket yet waits for it (time charged to
    # the run's budget, not to its hook's timeout). Meanwhile the resident process may end.
    loading = threading.Thread(target=prepare, daemon=True)
    loading.start()
    while loading.is_alive():
        if select.select([resident], [], [], 0.2)[0]:
            return
    listener, mine = _listen(path)
    listener.setblocking(False)
    with contextlib.suppress(OSError):
        resident.send(b".")  # listening: the resident process's idle time counts from now
    busy = [0]
    lock = threading.Lock()
    drained = threading.Condition(lock)

    def handle(conn: socket.socket) -> None:
        try:
            with conn:
                try:
                    line = read_line(conn, time.monotonic() + FIRST_READ)
                    answer = answer_request(json.loads(line), env)
                except (OSError, ValueError, KeyError, TypeError) as exc:
                    answer = {"error": f"bad request: {exc}"}
                with contextlib.suppress(OSError):
                    conn.settimeout(FIRST_READ)  # a client that stops reading holds no thread
                    conn.sendall(json.dumps(answer).encode() + b"\n")
        finally:
            # Not idle, the resident process is told; never waited for (a full pair says so
            # already, and a stopped resident process must not hold this thread).
            with contextlib.suppress(OSError):
                resident.send(b".", socket.MSG_DONTWAIT)
            with lock:
                busy[0] -= 1
                drained.notify_all()

    try:
        while _is_mine(path, mine):
            ready, _, _ = select.select([listener, resident], [], [], _CHECK_SOCKET)
            if resident in ready:
                break
            if listener in ready:
                try:
                    conn, _ = listener.accept()
                except (BlockingIOError, InterruptedError):
                    continue
                with lock:
                    busy[0] += 1
                threading.Thread(target=handle, args=(conn,), daemon=True).start()
    finally:
        if _is_mine(path, mine):
            with contextlib.suppress(OSError):
                path.unlink()
        listener.close()
    with lock:
        drained.wait_for(lambda: busy[0] == 0)


__all__ = ["IDLE_SECONDS", "SPARE_AFTER", "serve"]
