"""The warm path: a resident worker that keeps litellm imported and its connections open.

``prompthooks serve`` listens on a Unix socket in a user-only folder (0700; the socket 0600)
under ``$XDG_RUNTIME_DIR/prompthooks`` or ``~/.cache/prompthooks/run``. The socket's name
carries prompthooks' version and a hash of the environment that decides model calls
(``PROMPTHOOKS_*`` and provider variables such as ``OPENAI_API_KEY``), so an upgraded client
never talks to a stale worker and a worker always calls with the caller's settings. Each
request carries the model request, the caller's deadline, working directory and that
environment; the worker answers one JSON line and exits after an idle period.

The worker is never required: when it is not running, ``run`` starts one in the background for
later events and does this call in process; when it cannot answer, the call is made in process.
``PROMPTHOOKS_WORKER=0`` turns the warm path off.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

from .. import __version__
from ..verdicts import Verdict, VerdictError, parse_verdict
from .settings import Endpoint
from .types import ModelError, ModelReply, ModelRequest, ModelTimeout

IDLE_SECONDS = 600.0  # PROMPTHOOKS_WORKER_IDLE overrides it for workers started on demand
_RETRY_CONNECT = 0.05  # seconds between connects to a worker whose listen queue is full
_ENV_PREFIXES = ("PROMPTHOOKS_", "LITELLM_", "OPENAI_", "ANTHROPIC_", "AZURE_", "GEMINI_",
                 "GOOGLE_", "MISTRAL_", "GROQ_", "OLLAMA_", "AWS_", "VERTEX", "COHERE_",
                 "DEEPSEEK_", "XAI_", "OPENROUTER_", "TOGETHER", "FIREWORKS_", "HTTP_PROXY",
                 "HTTPS_PROXY", "NO_PROXY", "SSL_CERT")
# Not part of a worker's identity: ours that do not change a model call, and the two that
# prompthooks itself sets before importing litellm.
_SKIP = frozenset({"PROMPTHOOKS_CASSETTE", "PROMPTHOOKS_CASSETTE_MODE", "PROMPTHOOKS_DEBUG",
                   "PROMPTHOOKS_WORKER", "PROMPTHOOKS_WORKER_IDLE", "PROMPTHOOKS_NO_CACHE",
                   "LITELLM_LOCAL_MODEL_COST_MAP", "LITELLM_MODE"})


def model_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The variables that can change how a model is called."""
    return {k: v for k, v in sorted(environ.items())
            if k.upper().startswith(_ENV_PREFIXES) and k not in _SKIP}


def enabled(environ: Mapping[str, str]) -> bool:
    return environ.get("PROMPTHOOKS_WORKER", "1") != "0"


def runtime_dir(environ: Mapping[str, str]) -> Path:
    base = environ.get("XDG_RUNTIME_DIR")
    if base and os.path.isdir(base):
        return Path(base) / "prompthooks"
    cache = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "prompthooks" / "run"


def socket_path(environ: Mapping[str, str]) -> Path:
    env = json.dumps(model_environment(environ), sort_keys=True)
    return runtime_dir(environ) / f"worker-{__version__}-{zlib.crc32(env.encode()):08x}.sock"


def _private_dir(folder: Path) -> bool:
    """The folder exists, is ours and is closed to everyone else."""
    try:
        st = folder.lstat()
    except OSError:
        return False
    return (stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid()
            and stat.S_IMODE(st.st_mode) & 0o077 == 0)


def _request_data(request: ModelRequest, remaining: float) -> dict[str, Any]:
    return {
        "version": __version__, "remaining": remaining, "cwd": os.getcwd(),
        "env": model_environment(os.environ),
        "model": request.endpoint.model, "api_base": request.endpoint.api_base,
        "api_key": request.endpoint.api_key, "messages": [dict(m) for m in request.messages],
        "nonce": request.nonce, "temperature": request.temperature,
        "max_tokens": request.max_tokens, "json_mode": request.json_mode,
    }


class WorkerUnavailable(Exception):
    """No worker answered; the caller does the work itself."""


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


def remote_complete(request: ModelRequest, deadline: float,
                    environ: Mapping[str, str] | None = None) -> ModelReply:
    """Ask the worker; raises WorkerUnavailable when it cannot (then call in process)."""
    env = os.environ if environ is None else environ
    path = socket_path(env)
    remaining = deadline - time.monotonic()
    if remaining <= 0 or not _private_dir(path.parent) or not path.exists():
        raise WorkerUnavailable
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(remaining + 1.0)
            _connect(conn, path, deadline)
            conn.sendall(json.dumps(_request_data(request, remaining)).encode() + b"\n")
            answer = json.loads(conn.makefile("rb").readline())
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


def start_in_background(environ: Mapping[str, str] | None = None) -> None:
    """Start a worker for later events; never waits for it and never fails the caller.

    A marker file stops a burst of events from starting one worker each while the first is
    still importing litellm."""
    env = dict(os.environ if environ is None else environ)
    marker = socket_path(env).with_suffix(".starting")
    try:
        marker.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not _private_dir(marker.parent):
            return
        if marker.exists() and time.time() - marker.stat().st_mtime < 30:
            return
        marker.touch()
    except OSError:
        return
    with contextlib.suppress(OSError):
        subprocess.Popen([sys.executable, "-m", "prompthooks", "serve"], env=env,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)


def complete(request: ModelRequest, deadline: float) -> ModelReply:
    """The model call: through the warm worker when one answers, else in this process."""
    if enabled(os.environ):
        try:
            return remote_complete(request, deadline)
        except WorkerUnavailable:
            from .. import model

            if model.autostart:
                start_in_background()
    from .call import complete as complete_here

    return complete_here(request, deadline)


def _answer(data: Mapping[str, Any], own_env: Mapping[str, str]) -> dict[str, Any]:
    from .call import complete

    if data.get("version") != __version__ or data.get("env") != model_environment(own_env):
        return {"unavailable": True}
    endpoint = Endpoint(data["model"], data.get("api_base"), data.get("api_key"))
    request = ModelRequest(endpoint=endpoint, messages=tuple(data["messages"]),
                           nonce=data.get("nonce", ""), temperature=data["temperature"],
                           max_tokens=data["max_tokens"], json_mode=data["json_mode"])
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


def serve(idle: float = IDLE_SECONDS, environ: Mapping[str, str] | None = None) -> int:
    """Run the worker until it has been idle for ``idle`` seconds. Returns an exit code."""
    from .call import _import_litellm

    env = dict(os.environ if environ is None else environ)
    path = socket_path(env)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(path.parent, 0o700)
    if not _private_dir(path.parent):
        print(f"prompthooks: {path.parent} is not a private folder; not serving",
              file=sys.stderr)
        return 1
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_umask = os.umask(0o177)
    try:
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        tmp.unlink(missing_ok=True)
        listener.bind(str(tmp))
        listener.listen(socket.SOMAXCONN)  # a burst of events queues, not refused
        os.replace(tmp, path)  # atomically take over from a dead worker's socket
        mine = (path.stat().st_dev, path.stat().st_ino)
        path.with_suffix(".starting").unlink(missing_ok=True)
    except OSError as exc:
        print(f"prompthooks: cannot listen on {path}: {exc}", file=sys.stderr)
        return 1
    finally:
        os.umask(old_umask)
    _import_litellm()  # warm: pay the import once, before the first request
    last = [time.monotonic()]
    busy = [0]
    lock = threading.Lock()

    def handle(conn: socket.socket) -> None:
        with conn:
            try:
                data = json.loads(conn.makefile("rb").readline())
                answer = _answer(data, env)
            except (OSError, ValueError, KeyError, TypeError) as exc:
                answer = {"error": f"bad request: {exc}"}
            with contextlib.suppress(OSError):
                conn.sendall(json.dumps(answer).encode() + b"\n")
        with lock:
            busy[0] -= 1
            last[0] = time.monotonic()

    listener.settimeout(1.0)
    try:
        while True:
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                with lock:
                    if busy[0] == 0 and time.monotonic() - last[0] > idle:
                        break
                continue
            with lock:
                busy[0] += 1
            threading.Thread(target=handle, args=(conn,), daemon=True).start()
    finally:
        listener.close()
        try:
            st = path.stat()
            if (st.st_dev, st.st_ino) == mine:  # not a newer worker's socket
                path.unlink()
        except OSError:
            pass
    return 0
