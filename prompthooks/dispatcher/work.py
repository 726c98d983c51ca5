"""A handed-over run's work process, forked ahead of time.

The process that takes a run from the resident process (the spare, see server.py) is its
supervisor; the hooks run in a child of it, as in a run the host starts
(:mod:`prompthooks.runner.supervisor`). Forking that child costs a few milliseconds once the
run has arrived, so the spare forks it beforehand: the child waits on a socket pair for the
run's request and the client's stderr, takes the caller's folder, environment and umask as the
supervisor does, and does the work, reporting on the pipe the supervisor reads. If the spare
goes away first, the child sees the end of the socket and exits.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import sys
from typing import NoReturn

from .protocol import Request, passed_fds


def take_caller(request: Request, stderr: int | None) -> bool:
    """Become the caller of ``request``: its folder, environment, umask, arguments and stderr
    (stdin: nothing). False when its folder cannot be entered."""
    try:
        os.chdir(request.cwd)
    except OSError:
        return False
    os.environb.clear()
    os.environb.update(request.env)
    os.umask(request.umask)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(stderr if stderr is not None else null, 2)
    sys.argv = ["prompthooks", *(os.fsdecode(a) for a in request.argv)]
    return True


class Work:
    """The supervisor's end of a work process forked ahead of its run."""

    def __init__(self, pid: int, sock: socket.socket, read_fd: int) -> None:
        self.pid = pid
        self._sock = sock
        self._read_fd = read_fd

    @classmethod
    def fork(cls, parser: argparse.ArgumentParser, close: tuple[socket.socket, ...]
             ) -> Work | None:
        """A work process waiting for its run (None if one cannot be made: the supervisor
        then forks one when the run comes). ``close``: what the child must not hold."""
        try:
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        except OSError:
            return None
        read_fd, write_fd = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            for fd in (read_fd, write_fd):
                os.close(fd)
            ours.close()
            theirs.close()
            return None
        if pid == 0:
            ours.close()
            os.close(read_fd)
            for sock in close:
                sock.close()
            _wait(theirs, write_fd, parser)
        theirs.close()
        os.close(write_fd)
        return cls(pid, ours, read_fd)

    def give(self, request: Request, stderr: int | None) -> tuple[int, int] | None:
        """Send the work process its run; (its pid, the pipe to read its reports from), or
        None when it is gone (the supervisor then forks one itself)."""
        rights = [] if stderr is None else [
            (socket.SOL_SOCKET, socket.SCM_RIGHTS, stderr.to_bytes(4, sys.byteorder))]
        data = memoryview(request.encode())
        try:
            sent = self._sock.sendmsg([data], rights)
            self._sock.sendall(data[sent:])
        except OSError:
            self.discard()
            return None
        self._sock.close()  # the end of the request
        return self.pid, self._read_fd

    def discard(self) -> None:
        """No run for it: the work process sees the end of the socket and exits."""
        self._sock.close()
        with contextlib.suppress(OSError):
            os.close(self._read_fd)


def _wait(sock: socket.socket, write_fd: int, parser: argparse.ArgumentParser) -> NoReturn:
    """The work process until its run comes, then the run. Never returns."""
    try:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # as its supervisor, until the work's own
        from ..model import direct

        direct.warm()  # a prompt hook's first call: its loop, client and code, touched now
        data, stderr = _receive(sock)
        request = Request.parse(data)
        if request is None or not take_caller(request, stderr):
            os._exit(0)
        from ..cli import main
        from ..runner.handed import Handed

        main([os.fsdecode(a) for a in request.argv],
             Handed(request.data, None, request.started, request.limit, channel_fd=write_fd),
             parser)
    finally:
        os._exit(0)


def _receive(sock: socket.socket) -> tuple[bytes, int | None]:
    """Everything the supervisor sends, until it closes its end, and the stderr that came
    with it."""
    chunks: list[bytes] = []
    stderr: int | None = None
    while True:
        chunk, ancillary, _, _ = sock.recvmsg(1 << 20, socket.CMSG_SPACE(4))
        stderr = next(iter(passed_fds(ancillary)), stderr)
        if not chunk:
            return b"".join(chunks), stderr
        chunks.append(chunk)
