"""A handed-over run's own process. The resident process (resident.py), with every module of
a run loaded (:func:`warm`), forks it before its run comes (:func:`spare`): it accepts the next
connection on the listening socket it inherited, tells the resident process it took one (which
then forks the next, off this run's path), reads the run's :class:`~prompthooks.runner.job.Job`,
takes the caller's environment, working directory, umask and stderr (under ``serve --system``,
first the caller's uid, gid and groups), and judges it in itself
(:func:`prompthooks.runner.judge.judge`: threads, the engine's deadlines), with no supervisor of
its own: the client is that, and does the run itself if no whole answer comes by its limit. The
reply and exit code go back to the client the moment they are known; the audit rows follow here.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import struct
import sys
import threading
import time
from collections.abc import Mapping
from typing import NoReturn

from .._version import __version__
from ..address import model_environment_of
from ..config.discovery import MANAGED_DIR
from ..errors import EXIT_ERROR, EXIT_INTERNAL
from ..model import direct
from ..runner.channel import AFTER_REPLY_NICE, Channel, open_channel
from ..runner.fallback import answer_unjudged, guess_event
from ..runner.job import Job
from ..runner.judge import case_of, judge
from ..runner.stdin import MAX_EVENT_BYTES
from ..runner.supervisor import SWITCH_INTERVAL, fallback_reserve, reply_bytes
from .protocol import (
    ALIVE,
    ALIVE_EVERY,
    MAGIC,
    STDERR,
    TERMINATE,
    UNAVAILABLE,
    decode_job,
    exit_frame,
    length,
    passed_fds,
)

FIRST_READ = 10.0  # seconds a connection may take to say what it is, in all
_KILL_AFTER = 30.0  # seconds past its limit a run's child waits on its client at most
_MAX_HEADER = 1 << 24
# Whether this is the system resident process (``serve --system``): set before the first
# spare is forked, read by each run's process.
SYSTEM = [False]
TOOK = b"T"  # a spare to the resident process: it took a run
# Linux's option for a Unix socket peer's supplementary groups (4.13 on); the socket module
# names it only on some builds.
_SO_PEERGROUPS = getattr(socket, "SO_PEERGROUPS", 59)


def warm() -> None:
    """Import what a run uses, once, before the first fork (children share the pages)."""
    # Here, not at the top: only once this process serves (a second ``serve`` for the same
    # socket exits without them).
    import encodings.utf_8_sig  # noqa: F401  (config files are read with it: a BOM is fine)
    import importlib
    import sqlite3  # noqa: F401

    from .. import api, audit, hosts, redaction  # noqa: F401
    from ..audit import rows, store  # noqa: F401
    from ..config import discovery, schema, shell_words  # noqa: F401
    from ..core import stop_cap  # noqa: F401
    from ..executors import agent, command, http, project_tools, prompt  # noqa: F401
    from ..loading import approval_digest, ignored_files, loader, trust  # noqa: F401
    from ..model import chain, cost, direct, recording, verdict  # noqa: F401
    from ..runner import config_warnings  # noqa: F401

    direct.preload()  # a prompt hook's direct path: httpx and the TLS contexts, shared
    verdict.reply_models()  # pydantic and the verdict's reply models
    cost.preload()  # the audit's price table (read after every prompt hook's reply)
    http.preload()  # an http hook's TLS contexts
    for name in hosts.NAMES:  # every host's wire, and what reading a changed config takes
        for part in ("wire", "config"):
            with contextlib.suppress(ImportError):
                importlib.import_module(f"{hosts.__name__}.{name}.{part}")
    redaction.redact("-")  # its patterns, compiled once (for what a prompt hook sends, audit)


def spare(listener: socket.socket, resident: socket.socket,
          own_model_env: Mapping[str, str]) -> NoReturn:
    """A run's process forked ahead of its run: forking costs a few milliseconds, paid
    between runs rather than during one. It takes the next connection on ``listener`` (only
    one spare waits at a time, and the resident process watches the socket only while none
    does), says so on ``resident`` and does the run; it leaves if the resident process's end
    closes first. ``resident`` stays open until this process ends: the resident process sees
    the run's end by it. Never returns."""
    try:
        direct.warm()  # a prompt hook's first call: its loop and client, made now
        while True:
            ready, _, _ = select.select([listener, resident], [], [])
            if listener in ready:
                try:
                    conn, _ = listener.accept()
                    break
                except (BlockingIOError, InterruptedError):
                    continue
            if resident in ready:
                os._exit(0)  # the resident process has ended
        listener.close()
        with contextlib.suppress(OSError):
            resident.send(TOOK)
        run(conn, own_model_env)
    finally:
        os._exit(0)


def recv(conn: socket.socket, size: int, by: float) -> bytes:
    """One read from a client, by the instant ``by``: a client that trickles its bytes cannot
    stretch it (a socket's timeout starts again on every read). TimeoutError when late."""
    left = by - time.monotonic()
    if left <= 0:
        raise TimeoutError("the request did not come in time")
    conn.settimeout(left)
    return conn.recv(size)


def _exactly(conn: socket.socket, size: int, have: bytearray, by: float) -> bytes:
    while len(have) < size:
        chunk = recv(conn, min(1 << 20, size - len(have)), by)
        if not chunk:
            raise ValueError("the request ended early")
        have += chunk
    data = bytes(have[:size])
    del have[:size]
    return data


def read_job(conn: socket.socket) -> Job:
    """The whole job (ValueError or OSError if it is not one, or does not come in time)."""
    by = time.monotonic() + FIRST_READ
    buffer = bytearray()
    if _exactly(conn, len(MAGIC), buffer, by) != MAGIC:
        raise ValueError("not a run request")
    size = length(_exactly(conn, 8, buffer, by))
    if size > _MAX_HEADER:
        raise ValueError("header too large")
    header = _exactly(conn, size, buffer, by)
    size = length(_exactly(conn, 8, buffer, by))
    if size > MAX_EVENT_BYTES:
        raise ValueError("event too large")
    job = decode_job(header, _exactly(conn, size, buffer, by))
    conn.settimeout(None)
    return job


def _acceptable(job: Job, own_model_env: Mapping[str, str]) -> bool:
    """Whether this process may do the run: same version and model environment (prompt hooks
    are called with this process's settings), and no managed policy (a managed hook is judged
    only by the process the host started: see docs/security.md, "Threat model")."""
    if SYSTEM[0]:  # the run is the caller's, under its uid: managed or not, as in process
        return job.version == __version__
    return (job.version == __version__
            and model_environment_of(job.env) == own_model_env
            and job.managed_dir is None and not os.path.lexists(MANAGED_DIR))


def run(conn: socket.socket, own_model_env: Mapping[str, str]) -> NoReturn:
    """One handed-over run, in its own process; ``own_model_env``: the resident process's
    model environment. Never returns."""
    try:
        if SYSTEM[0]:
            drop_to_peer(conn)  # before anything the caller sent is read
        alive = _Alive(conn)
        try:
            job = read_job(conn)
        except (OSError, ValueError):
            os._exit(0)  # not a client of ours, or one that went away: nothing to answer
        if not _acceptable(job, own_model_env):
            alive.answer(UNAVAILABLE)
            os._exit(0)
        try:
            stderr = caller_stderr(conn)
        except (OSError, ValueError):
            os._exit(0)  # the client went away, or is not ours
        _child(conn, alive, job, stderr)
    finally:
        os._exit(0)


def drop_to_peer(conn: socket.socket) -> None:
    """Become the process at the other end of ``conn``: its uid and gid (``SO_PEERCRED``) and
    its own supplementary groups (``SO_PEERGROUPS``), never the uid's groups from the group
    database, which a process that gave some up (a sandbox) would get back; root stays root.
    Exits when they cannot be known or the change does not hold (the client then does the
    run itself). After it Linux marks the process non-dumpable: the user cannot trace it."""
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _, uid, gid = struct.unpack("3i", creds)
    if uid == os.getuid():  # root's own client (or a test's system process not run as root)
        return
    try:  # at most 256 groups: Python reads at most 1024 bytes of an option
        raw = conn.getsockopt(socket.SOL_SOCKET, _SO_PEERGROUPS, 1024)
    except OSError:
        os._exit(0)
    groups = list(struct.unpack(f"{len(raw) // 4}I", raw[:len(raw) // 4 * 4]))
    try:
        os.setgroups(groups)
        os.setgid(gid)
        os.setuid(uid)
    except OSError:
        os._exit(0)  # the client does the run itself
    if (os.getuid(), os.geteuid(), os.getgid(), os.getegid()) != (uid, uid, gid, gid):
        os._exit(0)


def take_caller(job: Job, stderr: int) -> bool:
    """Become the caller of ``job``: its folder, environment, umask and stderr (stdin:
    nothing). False when its folder cannot be entered."""
    try:
        os.chdir(job.cwd)
    except OSError:
        return False
    os.environb.clear()
    os.environb.update(job.env)
    os.umask(job.umask)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(stderr, 2)
    os.close(null)
    return True


def caller_stderr(conn: socket.socket) -> int:
    """The client's stderr, which it sends once it has heard from this process (a stopped or
    absent resident process never holds it: a host reads a hook's stderr to its end)."""
    conn.settimeout(FIRST_READ)
    data, ancillary, _, _ = conn.recvmsg(len(STDERR), socket.CMSG_SPACE(4))
    fds = passed_fds(ancillary)
    for extra in fds[1:]:
        os.close(extra)
    if data != STDERR or not fds:
        raise ValueError("no stderr from the client")
    return fds[0]


class _Alive:
    """The run's signs of life to its client (:data:`ALIVE`, every :data:`ALIVE_EVERY`
    seconds, from a thread) until its answer, which goes through :meth:`answer` so that no sign
    lands inside the answer's frame. A client that hears none for a while takes this process
    for stopped and does the run itself."""

    def __init__(self, conn: socket.socket) -> None:
        self._conn = conn
        self._lock = threading.Lock()
        self._done = threading.Event()
        threading.Thread(target=self._beat, daemon=True).start()

    def _beat(self) -> None:
        while True:
            with self._lock:
                if self._done.is_set():
                    return
                try:
                    self._conn.sendall(ALIVE)
                except OSError:  # the client has gone
                    return
            if self._done.wait(ALIVE_EVERY):
                return

    def answer(self, data: bytes) -> None:
        """Send the answer, the last thing the client is sent."""
        with self._lock:
            self._done.set()
            with contextlib.suppress(OSError):
                self._conn.sendall(data)


def _child(conn: socket.socket, alive: _Alive, job: Job, stderr: int) -> NoReturn:
    """The run, judged in this process. Never returns."""
    replied = threading.Event()
    cancel = threading.Event()
    try:
        assert job.limit is not None  # decode_job always sets it
        # The client is told by the limit; a child never outlives it by far (a client that
        # stopped reading cannot hold it, nor a hook that ignores the engine's deadlines).
        conn.settimeout(max(0.0, job.limit - time.monotonic()) + _KILL_AFTER)
        signal.signal(signal.SIGTERM, lambda signum, frame: cancel.set())
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        if not take_caller(job, stderr):
            alive.answer(UNAVAILABLE)  # the client runs it where it is
            os._exit(0)
        # Only the answer frame carries the reply: a fallback answer written to stdout lands
        # here, anything else the run prints goes nowhere the host reads as the reply.
        out = os.memfd_create("prompthooks-reply")
        os.dup2(out, 1)
        sys.setswitchinterval(SWITCH_INTERVAL)

        def on_reply(stdout: str, code: int) -> None:
            alive.answer(exit_frame(reply_bytes(stdout), code))
            replied.set()

        # The engine answers a reserve before the client's limit, as the work does before its
        # supervisor's deadline: the reply's way back is not raced against the client.
        by = job.limit - fallback_reserve(job.limit, time.monotonic())
        case = case_of(job)._replace(budget=by - job.started)
        channel = Channel(nice_after_reply=AFTER_REPLY_NICE, on_reply=on_reply)
        open_channel(channel)
        threading.Thread(target=_watch, args=(conn, replied, cancel), daemon=True).start()
        threading.Thread(target=_end_by, args=(job.limit + _KILL_AFTER, channel.report.groups),
                         daemon=True).start()
        judge(case, channel, cancel)
        if not replied.is_set():
            problem, kind = channel.report.failed or (
                "internal error: the run ended before it answered", "internal")
            code = answer_unjudged(problem, kind, guess_event(case.data, case.host, case.event),
                                   channel.report, case.managed,
                                   EXIT_ERROR if kind == "input" else EXIT_INTERNAL,
                                   job.limit)
            with contextlib.suppress(OSError, ValueError):
                sys.stdout.flush()
            alive.answer(exit_frame(os.pread(out, MAX_EVENT_BYTES, 0), code))
    except BaseException:  # whatever it was, the client answers on its own
        if os.environ.get("PROMPTHOOKS_DEBUG") == "1":
            import traceback  # (and textwrap): only to show a failure's traceback

            traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        os._exit(0)


def _end_by(instant: float, groups: set[int]) -> None:
    """The run's last instant: what is left of its hooks is killed, and the run ends."""
    time.sleep(max(0.0, instant - time.monotonic()))
    for pgid in list(groups):
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGKILL)
    os._exit(0)


def _watch(conn: socket.socket, replied: threading.Event, cancel: threading.Event) -> None:
    """The client's SIGTERM or SIGINT, or its end before the reply: the engine answers now with
    what it has, and the audit rows are written."""
    while True:
        try:
            chunk = conn.recv(1)
        except OSError:  # its end, or the child's own limit
            chunk = b""
        if chunk == TERMINATE or (not chunk and not replied.is_set()):
            cancel.set()
        if not chunk:
            return
