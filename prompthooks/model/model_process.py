"""The warm path's client side: a prompt hook's model call through the resident process's
model process, which keeps litellm imported and its connections open.

The resident process (``prompthooks serve``, :mod:`prompthooks.dispatcher.resident`) listens
on a Unix socket in a user-only folder (0700; the sockets 0600) under
``$XDG_RUNTIME_DIR/prompthooks`` or ``~/.cache/prompthooks/run``; its model process on the
model socket beside it (:func:`model_path`), once litellm is imported. The sockets' names
carry prompthooks' version and a hash of the environment that decides model calls
(``PROMPTHOOKS_*`` and provider variables such as ``OPENAI_API_KEY``), so an upgraded client
never talks to a stale worker and a worker always calls with the caller's settings. Each
request carries the model request, the caller's deadline, working directory and that
environment; the model process answers one JSON line
(:func:`prompthooks.dispatcher.resident.answer_request`).

One worker per socket, however many clients start at once: the resident process holds an
exclusive lock (``flock`` on ``<socket>.lock`` in the same private folder) for as long as it
serves, and its model process ends with it. A client that finds no worker takes that lock and
hands it to the worker it starts, so only one starts; every other client, seeing the lock
held, waits for the model socket instead of importing litellm itself. The model process
listens only once litellm is imported, so all of its start-up is that wait, which is not
charged to a hook's timeout, only to the run's budget.

The worker is never required: when none can be had (the folder is not private, a worker cannot
be started, or the one started died), the call is made in process. ``PROMPTHOOKS_RESIDENT=0``
(or its older spellings ``PROMPTHOOKS_DISPATCH=0``, ``PROMPTHOOKS_WORKER=0``) turns the
resident process off.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from .._version import __version__
from ..address import (
    LOCK_FD_VAR,
    MAX_SOCKET_PATH,
    model_environment,
    resident_enabled,
    socket_name,
)
from ..address import private_dir as is_private
from ..paths import open_state
from .endpoint import (
    ModelError,
    ModelReply,
    ModelRequest,
    ModelTimeout,
    Verdict,
)

_RETRY_CONNECT = 0.05  # seconds between connects to a worker whose listen queue is full
_POLL = 0.1  # seconds between looks at a worker that is starting
_MAX_SOCKET_PATH = MAX_SOCKET_PATH


def worker_enabled(environ: Mapping[str, str]) -> bool:
    return resident_enabled(environ)


def socket_path(environ: Mapping[str, str]) -> Path:
    return Path(socket_name(environ))


def lock_path(socket: Path) -> Path:
    """The lock a worker holds while it serves on ``socket``."""
    return socket.with_name(socket.name + ".lock")


def model_path(socket: Path) -> Path:
    """The model process's socket beside the resident process's ``socket`` (no longer: a
    path that fits a Unix socket fits both)."""
    return socket.with_name("model" + socket.name.removeprefix("worker"))


def private_dir(folder: Path) -> bool:
    """The folder exists, is ours and is closed to everyone else."""
    return is_private(str(folder))


def _request_data(request: ModelRequest, remaining: float) -> dict[str, Any]:
    return {
        "version": __version__, "remaining": remaining, "cwd": os.getcwd(),
        "env": model_environment(os.environ),
        "model": request.endpoint.model, "api_base": request.endpoint.api_base,
        "api_key": request.endpoint.api_key, "messages": [dict(m) for m in request.messages],
        "nonce": request.nonce, "temperature": request.temperature,
        "max_tokens": request.max_tokens, "json_mode": request.json_mode,
        "structured": request.structured, "impossible": request.impossible,
    }


class WorkerUnavailable(Exception):
    """No worker answered; the caller does the work itself."""


class NotListening(WorkerUnavailable):
    """Nothing listens on the socket path (yet): no socket, or a dead worker's."""


def _connect(conn: socket.socket, path: Path, deadline: float) -> None:
    """Connect to the worker. A full listen queue (a burst of events) fails a Unix socket's
    connect at once with EAGAIN: that is a busy worker, tried again until the deadline."""
    while True:
        try:
            conn.connect(str(path))
            return
        except BlockingIOError:
            if time.monotonic() + _RETRY_CONNECT >= deadline:
                raise TimeoutError from None
            time.sleep(_RETRY_CONNECT)


def read_line(conn: socket.socket, give_up: float) -> bytes:
    """One line from the other end (a request, or the answer), by ``give_up`` whatever comes:
    a socket's timeout starts again on every read, so a peer that trickles bytes (anything
    running as the user can listen at the socket's path) would hold a plain ``readline`` as
    long as it likes."""
    data = bytearray()
    while b"\n" not in data:
        left = give_up - time.monotonic()
        if left <= 0:
            raise TimeoutError
        conn.settimeout(left)
        chunk = conn.recv(1 << 16)
        if not chunk:
            break
        data += chunk
    return bytes(data)


def remote_complete(request: ModelRequest, deadline: float,
                    environ: Mapping[str, str] | None = None) -> ModelReply:
    """Ask the worker; raises WorkerUnavailable when it cannot (then call in process)."""
    env = os.environ if environ is None else environ
    path = model_path(socket_path(env))
    remaining = deadline - time.monotonic()
    if remaining <= 0 or not private_dir(path.parent):
        raise WorkerUnavailable
    if not path.exists():
        raise NotListening
    # The worker answers by the deadline; a second more for its answer to come back.
    give_up = deadline + 1.0
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(remaining + 1.0)
            try:
                _connect(conn, path, deadline)
            except (FileNotFoundError, ConnectionRefusedError) as exc:
                raise NotListening from exc
            conn.sendall(json.dumps(_request_data(request, remaining)).encode() + b"\n")
            answer = json.loads(read_line(conn, give_up))
    except TimeoutError:
        # A worker is there but did not answer in time (a busy machine): another worker, or
        # litellm imported here, would only add to the load that made it late.
        raise ModelTimeout(f"the model did not answer in time ({request.endpoint.model}, "
                           "through the warm worker)") from None
    except (OSError, ValueError) as exc:
        raise WorkerUnavailable from exc
    if answer.get("unavailable"):
        raise WorkerUnavailable
    if "error" in answer:
        error = ModelTimeout if answer.get("timeout") else ModelError
        raise error(str(answer["error"]))
    verdict = answer.get("verdict")
    return ModelReply(text=answer["text"], model=answer["model"], attempts=answer["attempts"],
                      input_tokens=answer.get("input_tokens"),
                      output_tokens=answer.get("output_tokens"), cost=answer.get("cost"),
                      verdict=Verdict(**verdict) if isinstance(verdict, dict) else None)


def _spawn(env: Mapping[str, str], lock_fd: int) -> None:
    """Start a worker and hand it the lock this client holds (the worker's copy of the file
    descriptor keeps the lock once this one is closed).

    It runs this installation's code and nothing the project holds: this process runs in the
    project, which the agent writes, and a plain ``-m`` puts the working folder first on the
    import path (a ``prompthooks/`` written there would be the worker). ``-P`` leaves it off,
    and the worker starts in ``/``, so that a relative or empty ``PYTHONPATH`` entry names
    that folder, not the project, for as long as it serves; its runs enter their callers'
    folders later with an import path made of absolute folders only. Not ``-I``: that would
    leave out the user's site folder (``pip install --user``) and ``PYTHONPATH``, where an
    installation may be."""
    try:
        subprocess.Popen([sys.executable, "-P", "-m", "prompthooks", "serve"], cwd="/",
                         env={**env, LOCK_FD_VAR: str(lock_fd)}, pass_fds=(lock_fd,),
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)
    except OSError as exc:
        raise WorkerUnavailable from exc


def _start_unless_running(path: Path, env: Mapping[str, str],
                          may_start: bool = True) -> Literal["held", "started", "free"]:
    """Whether a worker for ``path`` holds its lock (it serves, or is starting), or one was
    started here (when ``may_start``: the lock is taken here and handed to it), or neither."""
    try:
        # open_state: a FIFO or link planted at the lock is refused, never followed
        fd = open_state(lock_path(path), os.O_RDWR | os.O_CREAT)
    except OSError as exc:
        raise WorkerUnavailable from exc
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return "held"
        except OSError as exc:
            raise WorkerUnavailable from exc
        if not may_start:
            return "free"
        _spawn(env, fd)
        return "started"
    finally:
        os.close(fd)


def _through_started_worker(request: ModelRequest, deadline: float, cap: float) -> ModelReply:
    """The call through the one worker for this environment, started here if nobody runs or
    starts it, waited for until ``cap`` (the run's limit: a worker's start-up is not the
    hook's time, which counts from when the worker reads the request). Raises
    WorkerUnavailable when no worker can be had (then the caller calls in process): a client
    starts one only when it finds none running or starting, so a worker that dies at start is
    not started again and again."""
    env = dict(os.environ)
    path = socket_path(env)
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        raise WorkerUnavailable from exc
    if not private_dir(path.parent) or len(os.fsencode(path)) >= _MAX_SOCKET_PATH:
        raise WorkerUnavailable
    begun = time.monotonic()
    first = True
    while True:
        # Started here only at the first look: a worker that was there (or was started here)
        # and is gone now died, or left; another would likely do the same, so call in process.
        if _start_unless_running(path, env, may_start=first) == "free":
            raise WorkerUnavailable
        first = False
        try:
            waited = time.monotonic() - begun
            return remote_complete(request, min(deadline + waited, cap), env)
        except NotListening:
            if time.monotonic() + _POLL >= cap:
                raise ModelTimeout(f"the model did not answer in time ({request.endpoint.model},"
                                   " waiting for the warm worker to start)") from None
            time.sleep(_POLL)


def start_in_background(environ: Mapping[str, str]) -> bool:
    """Start the worker for ``environ`` unless one runs or is starting; never waits for it.
    Whether one was started."""
    env = dict(environ)
    path = socket_path(env)
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not private_dir(path.parent) or len(os.fsencode(path)) >= _MAX_SOCKET_PATH:
            return False
        return _start_unless_running(path, env) == "started"
    except WorkerUnavailable:
        return False
    except OSError:
        return False


def ask_worker(request: ModelRequest, deadline: float, cap: float, start: bool) -> ModelReply:
    """The call through the warm worker (the client side). ``deadline`` is the hook's own,
    ``cap`` the run's limit, which bounds a worker's start-up; ``start``: start a missing
    worker (one client only) and wait for it rather than import litellm in every process of
    a burst of events. Raises WorkerUnavailable when no worker can be had."""
    try:
        return remote_complete(request, deadline)
    except WorkerUnavailable:
        if not start:
            raise
    return _through_started_worker(request, deadline, cap)
