"""The resident process's serving loop: ``prompthooks serve``, also called the warm worker.

It listens on the socket the client side names (:mod:`prompthooks.model.chain`). A connection
that starts with a run request (the thin ``prompthooks run`` client,
:mod:`prompthooks.dispatcher.client`) is handed to a zygote forked before litellm was imported,
which forks the whole run (:mod:`prompthooks.dispatcher.server`); one that starts with ``{`` is
a model request, answered by :func:`answer_request`.

A worker serves while it holds the socket's lock (handed over by the client that started it,
or taken here), listens only once litellm is imported, and exits after an idle period. It
stops serving, and lets the lock go, as soon as its socket path no longer names its own socket
(checked every second), so a removed or replaced socket never leaves a worker listening where
no client can reach it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
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
from ..model.chain import lock_path, private_dir, socket_path
from ..model.endpoint import Endpoint, ModelError, ModelRequest, ModelTimeout
from ..model.litellm_client import complete
from ..model.verdict import VerdictError, parse_verdict
from ..paths import open_state
from .protocol import UNAVAILABLE
from .run_process import SYSTEM
from .server import Zygote, first_bytes, first_line, is_run, warm

IDLE_SECONDS = 600.0  # PROMPTHOOKS_WORKER_IDLE overrides it for workers started on demand
_POLL = 0.1  # seconds between tries for the lock of a worker on its way out
_CHECK_SOCKET = 1.0  # seconds between a worker's checks that its socket path is still its own
_LOCK_WAIT = 3.0  # seconds `serve` waits for the lock of a worker on its way out


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


def serve(idle: float = IDLE_SECONDS, environ: Mapping[str, str] | None = None,
          system: bool = False) -> int:
    """Run the worker until it has been idle for ``idle`` seconds, or until its socket path no
    longer names its socket (removed, or replaced). Returns an exit code.

    ``system``: the system resident process, for managed events (see
    :mod:`prompthooks.dispatcher.server`): its socket is
    :data:`prompthooks.address.SYSTEM_SOCKET`, open to every user, it serves runs only (no model
    request: it never calls a model for anyone) and never exits for idleness."""
    from ..model.litellm_client import prepare

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
    # Runs are forked from a zygote with the run's modules, started before litellm is loaded
    # (forking the process that holds litellm would copy its page tables on every run).
    warm()
    if system:  # read once here: the runs forked from now on find it in memory
        from ..loading.managed import preload

        preload(env)
    SYSTEM[0] = system
    zygote = Zygote(env, (lock_fd,))
    try:
        # Ready before listening: a client that finds no socket yet waits for it (time charged
        # to the run's budget, not to its hook's timeout), so nothing listens that cannot
        # answer; runs meanwhile are done in process by their clients.
        if not system:
            prepare()
        listener, mine = _listen(path, 0o111 if system else 0o177)
    except BaseException as exc:
        zygote.stop()
        os.close(lock_fd)
        if not isinstance(exc, OSError):
            raise
        print(f"prompthooks: cannot listen on {path}: {exc}", file=sys.stderr)
        return 1
    print(f"prompthooks serve: listening on {path} (exits after {idle:g} s without a request)",
          file=sys.stderr, flush=True)
    last = [time.monotonic()]
    busy = [0]
    lock = threading.Lock()
    drained = threading.Condition(lock)

    def handle(conn: socket.socket) -> None:
        with conn:
            try:
                first, fds = first_bytes(conn)
                if is_run(first):  # a whole run: the zygote forks a child for it
                    try:
                        if not zygote.hand(conn, first):
                            conn.sendall(UNAVAILABLE)
                    finally:
                        for fd in fds:
                            with contextlib.suppress(OSError):
                                os.close(fd)
                    return
                for fd in fds:
                    os.close(fd)
                if system:  # runs only: no model call as root for whoever connects
                    return
                answer = answer_request(json.loads(first_line(conn, first)), env)
            except (OSError, ValueError, KeyError, TypeError) as exc:
                answer = {"error": f"bad request: {exc}"}
            with contextlib.suppress(OSError):
                conn.sendall(json.dumps(answer).encode() + b"\n")

    def handled(conn: socket.socket) -> None:
        try:
            handle(conn)
        finally:
            with lock:
                busy[0] -= 1
                last[0] = time.monotonic()
                drained.notify_all()

    try:
        listener.settimeout(_CHECK_SOCKET)
        next_check = time.monotonic() + _CHECK_SOCKET
        while True:
            if time.monotonic() >= next_check:  # also under a steady stream of requests
                if not _is_mine(path, mine):
                    break
                next_check = time.monotonic() + _CHECK_SOCKET
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                if not _is_mine(path, mine):
                    break
                with lock:
                    if busy[0] == 0 and time.monotonic() - last[0] > idle:
                        break
                continue
            with lock:
                busy[0] += 1
            threading.Thread(target=handled, args=(conn,), daemon=True).start()
    finally:
        zygote.stop()
        listener.close()
        if _is_mine(path, mine):  # not a newer worker's socket
            with contextlib.suppress(OSError):
                path.unlink()
        os.close(lock_fd)  # another worker may start now
    with lock:  # the requests in hand end by their own deadlines
        drained.wait_for(lambda: busy[0] == 0)
    return 0


__all__ = ["IDLE_SECONDS", "serve"]


def answer_request(data: Mapping[str, Any], own_env: Mapping[str, str]) -> dict[str, Any]:
    """The answer to a prompt hook's model request (one JSON line from
    :func:`prompthooks.model.chain.remote_complete`): the call made here, with litellm
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
