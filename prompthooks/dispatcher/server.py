"""The resident process's zygote: a small process with every module of a run loaded, which
forks each handed-over run's process (:mod:`prompthooks.dispatcher.run_process`), one forked
ahead of its run (a spare: the next one is forked once the run is over, off its path). The
resident process (``prompthooks serve``) has litellm loaded and its connections open; the
zygote is forked before litellm is imported. A process per run keeps runs apart from each other
and from the resident process: one that hangs or is killed takes nothing else with it.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from typing import NoReturn

from ..model import direct
from .address import model_environment
from .protocol import MAGIC, passed_fds
from .run_process import FIRST_READ, recv, run

# Seconds after a run came that the next spare is forked, if that run has not ended by then.
SPARE_AFTER = 0.1


def warm() -> None:
    """Import what a run uses, once, before the first fork (children share the pages)."""
    import encodings.utf_8_sig  # noqa: F401  (config files are read with it: a BOM is fine)
    import importlib
    import sqlite3  # noqa: F401

    from .. import api, audit, hosts, redaction  # noqa: F401
    from ..audit import rows, store  # noqa: F401
    from ..commands import output  # noqa: F401
    from ..config import (  # noqa: F401  # noqa: F401
        approved_copy,
        covered,
        discovery,
        loader,
        schema,
        shell_words,
        trust,
        unread,
    )
    from ..core import stop_cap  # noqa: F401
    from ..executors import agent, command, http, project_tools, prompt  # noqa: F401
    from ..model import cassette, chain, direct, prices, verdict_models, worker  # noqa: F401
    from ..runner import config_warnings  # noqa: F401

    direct.preload()  # a prompt hook's direct path: httpx and the TLS contexts, shared
    prices.preload()  # the audit's price table (read after every prompt hook's reply)
    http.preload()  # an http hook's TLS contexts
    for name in hosts.NAMES:  # what reading a changed config takes (a cache miss)
        for part in ("config", "matchers", "schema"):
            with contextlib.suppress(ImportError):
                importlib.import_module(f"{hosts.__name__}.{name}.{part}")
    redaction.redact("-")  # its patterns, compiled once (for what a prompt hook sends, audit)


def first_bytes(conn: socket.socket) -> tuple[bytes, list[int]]:
    """What a connection starts with (enough to tell a run from a model request), and the
    file descriptors that came with it."""
    by = time.monotonic() + FIRST_READ
    data = b""
    fds: list[int] = []
    while len(data) < len(MAGIC) and not data.startswith(b"{"):
        left = by - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request did not come in time")
        conn.settimeout(left)
        chunk, ancillary, _, _ = conn.recvmsg(1 << 16, socket.CMSG_SPACE(4 * 4))
        fds += passed_fds(ancillary)
        if not chunk:
            break
        data += chunk
    conn.settimeout(None)
    return data, fds


def first_line(conn: socket.socket, first: bytes) -> bytes:
    """A model request's one line, of which ``first`` was read, within :data:`FIRST_READ`."""
    by = time.monotonic() + FIRST_READ
    data = bytearray(first)
    while b"\n" not in data:
        chunk = recv(conn, 1 << 16, by)
        if not chunk:
            break
        data += chunk
    conn.settimeout(None)
    return bytes(data)


def is_run(first: bytes) -> bool:
    return first.startswith(MAGIC)


class Zygote:
    """A small process forked from the resident one before litellm is imported, with the run's
    modules loaded and one thread: it forks a child per run. Forking the resident process
    itself would copy the page tables of a few hundred MB (litellm) twice per run and fork a
    process with threads; this one forks in a millisecond or two."""

    def __init__(self, own_env: Mapping[str, str], close: tuple[int, ...]) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.pid = os.fork()
        if self.pid == 0:
            ours.close()
            for fd in close:
                with contextlib.suppress(OSError):
                    os.close(fd)
            try:  # its runs compare their model environment with this one
                _zygote(theirs, model_environment(own_env))
            finally:
                os._exit(0)
        theirs.close()
        self._sock = ours
        self._lock = threading.Lock()

    def hand(self, conn: socket.socket, first: bytes) -> bool:
        """Give the zygote a run's connection and what was read of it (the client's stderr
        comes later, to the run's own process); False if the zygote is gone."""
        passed = [conn.fileno()]
        payload = b"".join(fd.to_bytes(4, sys.byteorder) for fd in passed)
        try:
            with self._lock:
                self._sock.sendmsg([first], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, payload)])
        except OSError:
            return False
        return True

    def stop(self) -> None:
        self._sock.close()  # the zygote sees the end and exits; runs under way go on
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(self.pid, 0)


def _zygote(sock: socket.socket, own_env: Mapping[str, str]) -> None:
    """The zygote's loop: each run handed to it goes to a child forked ahead of time (the
    spare); until the resident process closes its end. The next spare is forked off the runs'
    path: once the run that took the last one has ended, or :data:`SPARE_AFTER` after it was
    taken if runs are still going. Forking copies the zygote's page tables, and on a machine
    with a core or two that would slow the run under way; a run that finds no spare gets a
    child forked on the spot."""
    import gc
    import select

    gc.freeze()  # the objects so far are never collected: a fork's pages stay shared
    spare = _Spare.fork(sock, own_env)
    busy: list[_Spare] = []  # spares given a run: each one's end of the socket closes with it
    due: float | None = None  # when to fork the next spare
    while True:
        if spare is not None:
            due = None  # nothing to fork until it is taken
        elif due is not None and time.monotonic() >= due:
            spare, due = _Spare.fork(sock, own_env, busy), None
        wait = 1.0 if due is None else min(1.0, max(0.0, due - time.monotonic()))
        watched: list[socket.socket | _Spare] = [sock, *busy]
        ready, _, _ = select.select(watched, [], [], wait)
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        for ended in [s for s in busy if s in ready]:
            ended.close()
            busy.remove(ended)
            if spare is None:
                due = time.monotonic()  # its run is over: the next spare now
        if sock not in ready:
            continue
        first, ancillary, _, _ = sock.recvmsg(1 << 17, socket.CMSG_SPACE(2 * 4))
        fds = passed_fds(ancillary)
        if not first and not fds:
            return
        if fds:
            handed = spare is not None and spare.give(first, fds)
            if handed and spare is not None:
                busy.append(spare)
            elif os.fork() == 0:  # no spare to take it: a child for it now
                sock.close()
                for other in busy:
                    other.close()
                run(fds[0], first, own_env)
            # Not pushed back by each run that comes: runs that keep overlapping still get
            # a spare SPARE_AFTER after the first of them.
            soon = time.monotonic() + SPARE_AFTER
            spare, due = None, soon if due is None else min(due, soon)
        for fd in fds:  # before the next spare is forked: it must not hold the client's
            with contextlib.suppress(OSError):
                os.close(fd)


class _Spare:
    """A child of the zygote forked before its run arrives: forking costs a few
    milliseconds (the zygote has every module of a run loaded), paid between runs rather
    than during one. It waits for one run on a socket pair and exits when the zygote's end
    closes."""

    def __init__(self, pid: int, sock: socket.socket) -> None:
        self.pid = pid
        self._sock = sock

    @classmethod
    def fork(cls, zygote: socket.socket, own_env: Mapping[str, str],
             busy: Sequence[_Spare] = ()) -> _Spare | None:
        """A spare waiting for its run; ``busy``: the spares given a run so far, whose
        sockets it must not hold (the zygote sees each run's end by its socket's)."""
        try:
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        except OSError:
            return None
        try:
            pid = os.fork()
        except OSError:
            ours.close()
            theirs.close()
            return None
        if pid == 0:
            zygote.close()
            ours.close()
            for other in busy:
                other.close()
            _wait_for_run(theirs, own_env)
        theirs.close()
        return cls(pid, ours)

    def give(self, first: bytes, fds: list[int]) -> bool:
        """Hand the spare its run (False: it is gone, and its socket closed); it is used
        once. The socket stays open until the spare's run ends (its end closes with it)."""
        payload = fds[0].to_bytes(4, sys.byteorder)
        try:
            self._sock.sendmsg([first], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, payload)])
        except OSError:
            self.close()
            return False
        return True

    def fileno(self) -> int:
        return self._sock.fileno()

    def close(self) -> None:
        self._sock.close()


def _wait_for_run(sock: socket.socket, own_env: Mapping[str, str]) -> NoReturn:
    """A spare's life: its run, or nothing if the zygote went first. ``sock`` stays open until
    this process ends: the zygote forks the next spare when it closes. Never returns."""
    try:
        direct.warm()  # a prompt hook's first call: its loop and client, made now
        first, ancillary, _, _ = sock.recvmsg(1 << 17, socket.CMSG_SPACE(2 * 4))
        fds = passed_fds(ancillary)
        if fds:
            run(fds[0], first, own_env)
    finally:
        os._exit(0)


