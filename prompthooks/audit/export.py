"""Mirroring audit rows out of the machine: a JSON Lines file and/or an OTLP collector.

Exports run after the reply, beside the database write, each in a daemon thread that the run
waits for only until the export's own timeout or the run's deadline, whichever comes first:
a collector that does not answer costs at most that wait, never the reply, and the process
ends on time whatever the thread is doing. A failure is one line, shown with
``PROMPTHOOKS_DEBUG=1`` (the hosts log stderr on every event; an unreachable collector must
not fill their logs), except for a JSON Lines file whose place holds something else (a link,
a FIFO...): that was put there, often by an agent that can write the folder, to stop the
export (a managed one included) or to write elsewhere. It is moved aside, a new file is begun
in its place, and a line says so whether debugging or not; if it cannot be, every run says
that its rows were not exported.

The rows are the audit rows as stored, so what is exported has passed the same redaction pass.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .records import ExportError, line
from .settings import EXPORT_TIMEOUT, AuditSettings, JsonlTarget

_APPEND = os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY | os.O_NOFOLLOW


class RefusedTarget(ExportError):
    """An export file's place holds what prompthooks will not append to: a FIFO, device,
    socket or folder, a symbolic link, or a file with other names. ``seen`` is that entry's
    (device, inode). Said on every run, never only when debugging."""

    def __init__(self, message: str, seen: tuple[int, int] | None) -> None:
        super().__init__(message)
        self.seen = seen


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a device"),
                       (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISDIR, "a folder")):
        if test(mode):
            return name
    return "not a regular file"


def _open_append(path: Path) -> int:
    """The file, opened to append: a regular file with no other name, created owner-only.

    Refused: a FIFO, a device or a socket in its place (checked before the open; O_NONBLOCK
    makes one swapped in between fail), and a symlink or a hard link: the folder is often in
    the project, where an agent can write, and a link to ``~/.bashrc`` would have JSON lines
    holding agent-written text appended to a file the user's shell runs."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        before: os.stat_result | None = os.lstat(path)
    except FileNotFoundError:
        before = None
    if before is not None:
        seen = (before.st_dev, before.st_ino)
        if stat.S_ISLNK(before.st_mode):
            raise RefusedTarget(f"{path} is a symlink; refused (name the file itself)", seen)
        if not stat.S_ISREG(before.st_mode):
            raise RefusedTarget(f"{path} is {_kind(before.st_mode)}, not a regular file", seen)
    try:
        fd = os.open(path, _APPEND | os.O_CREAT, 0o600)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENXIO):  # swapped in since the lstat
            raise RefusedTarget(f"{path} is not a regular file; refused", None) from None
        raise
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:
        os.close(fd)
        what = _kind(info.st_mode) if not stat.S_ISREG(info.st_mode) else (
            "a file with other names (hard links)")
        raise RefusedTarget(f"{path} is {what}; refused", (info.st_dev, info.st_ino))
    os.set_blocking(fd, True)
    return fd


def _begin_anew(path: Path, refused: RefusedTarget) -> tuple[int, str]:
    """A new file in the place of a refused entry, which is moved aside (the entry itself:
    a rename never follows a link, nor writes to what a hard link shares); the descriptor,
    and the line that says so. Another run may have done it meanwhile: its new file is
    used. Raises RefusedTarget when no new file can be had."""
    when = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    aside = path.with_name(f"{path.name}.refused-{when}-{os.getpid()}")
    try:
        now = os.lstat(path)
        if stat.S_ISDIR(now.st_mode):
            # A folder is a path written wrong ("." or the project), not a planted entry:
            # it is never moved.
            raise RefusedTarget(f"{refused}; a folder is not moved aside: these rows are not "
                                "exported", refused.seen)
        if refused.seen is None or (now.st_dev, now.st_ino) == refused.seen:
            os.rename(path, aside)
            said = f"{refused}; moved to {aside.name} and a new file begun"
        else:
            said = ""  # another run moved it aside already
        try:
            fd = os.open(path, _APPEND | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            fd = _open_append(path)  # the new file another run has just begun
        else:
            os.set_blocking(fd, True)
    except RefusedTarget:
        raise
    except OSError as exc:
        raise RefusedTarget(f"{refused}; cannot begin a new file in its place "
                            f"({exc.strerror or exc}): these rows are not exported",
                            refused.seen) from None
    return fd, said


def _rotate(path: Path, fd: int) -> int:
    """Move a full file to ``<file>.1`` (replacing the one before) and open a new one. Only
    the writer holding the old file's lock renames it, and only while the name is still that
    file: two writers finding it full never rotate twice."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return fd  # someone else is rotating it: this row goes to the old file
    try:
        if os.stat(path).st_ino == os.fstat(fd).st_ino:
            os.replace(path, path.with_name(path.name + ".1"))
    finally:
        os.close(fd)
    return _open_append(path)


def append_jsonl(target: JsonlTarget, rows: Sequence[Mapping[str, Any]]) -> str:
    """Append one line per row, each in one ``write`` on an O_APPEND descriptor: lines of
    concurrent runs never interleave. The file is rotated once it reaches its size. Returns
    the line to say when a refused entry was moved aside (else ``""``)."""
    data = [line(row).encode("ascii") for row in rows]
    said = ""
    try:
        fd = _open_append(target.path)
    except RefusedTarget as refused:
        fd, said = _begin_anew(target.path, refused)
    try:
        if os.fstat(fd).st_size >= target.max_bytes:
            fd = _rotate(target.path, fd)
        for chunk in data:
            written = os.write(fd, chunk)
            if written != len(chunk):
                raise ExportError(f"{target.path}: short write ({written} of {len(chunk)} "
                                  "bytes)")
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)
    return said


def _why(exc: BaseException) -> str:
    if isinstance(exc, ExportError):
        return str(exc)
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return str(exc) or type(exc).__name__


class Exporting:
    """The exports of one batch of rows, started at once; :meth:`finish` waits for them
    until their timeout or ``by`` and says what failed."""

    def __init__(self, settings: AuditSettings, rows: Sequence[Mapping[str, Any]],
                 by: float | None, environ: Mapping[str, str]) -> None:
        # per job: what it is, its thread, its end, and what it said (line, said always)
        self._jobs: list[tuple[str, threading.Thread, float, list[tuple[str, bool]]]] = []
        now = time.monotonic()
        limit = float("inf") if by is None else by
        if settings.jsonl is not None:
            target = settings.jsonl
            self._start(f"audit export to {target.path}",
                        lambda: append_jsonl(target, rows), min(limit, now + EXPORT_TIMEOUT))
        if settings.otlp is not None:
            otlp = settings.otlp
            end = min(limit, now + otlp.timeout)

            def send() -> str:
                from .otlp import send as send_otlp  # the optional otel extra's modules

                send_otlp(otlp, rows, max(0.05, end - time.monotonic()), environ)
                return ""

            self._start(f"audit export to {otlp.endpoint}", send, end)

    def _start(self, what: str, work: Callable[[], str], end: float) -> None:
        said: list[tuple[str, bool]] = []

        def run() -> None:
            try:
                note = work()
            except BaseException as exc:  # nothing about an export may reach the run
                said.append((f"{what}: {_why(exc)}", isinstance(exc, RefusedTarget)))
            else:
                said.append((f"{what}: {note}" if note else "", True))

        thread = threading.Thread(target=run, name="prompthooks-export", daemon=True)
        thread.start()
        self._jobs.append((what, thread, end, said))

    def finish(self) -> tuple[list[str], list[str]]:
        """One line per export that failed or was not done in time: those to say on every
        run (a refused file, see RefusedTarget), and those to say when debugging."""
        always: list[str] = []
        debug: list[str] = []
        for what, thread, end, said in self._jobs:
            thread.join(max(0.0, end - time.monotonic()))
            if not said:
                debug.append(f"{what}: not done in time; left behind")
            elif said[0][0]:
                (always if said[0][1] else debug).append(said[0][0])
        return always, debug


def debugging(environ: Mapping[str, str] | None = None) -> bool:
    return (os.environ if environ is None else environ).get("PROMPTHOOKS_DEBUG") == "1"
