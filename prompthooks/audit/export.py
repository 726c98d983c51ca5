"""Mirroring audit rows out of the machine: a JSON Lines file and/or an OTLP collector.

Exports run after the reply, beside the database write, each in a daemon thread that the run
waits for only until the export's own timeout or the run's deadline, whichever comes first:
a collector that does not answer costs at most that wait, never the reply, and the process
ends on time whatever the thread is doing. A failure is one line, shown with
``PROMPTHOOKS_DEBUG=1`` (the hosts log stderr on every event; an unreachable collector must
not fill their logs).

The rows are the audit rows as stored, so what is exported has passed the same redaction pass.
"""

from __future__ import annotations

import contextlib
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
        mode: int | None = os.lstat(path).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and stat.S_ISLNK(mode):
        raise ExportError(f"{path} is a symlink; refused (name the file itself)")
    if mode is not None and not stat.S_ISREG(mode):
        raise ExportError(f"{path} is {_kind(mode)}, not a regular file")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | os.O_CLOEXEC
                 | os.O_NOCTTY | os.O_NOFOLLOW, 0o600)
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_nlink > 1:
        os.close(fd)
        what = _kind(info.st_mode) if not stat.S_ISREG(info.st_mode) else (
            "a file with other names (hard links)")
        raise ExportError(f"{path} is {what}; refused")
    os.set_blocking(fd, True)
    return fd


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


def append_jsonl(target: JsonlTarget, rows: Sequence[Mapping[str, Any]]) -> None:
    """Append one line per row, each in one ``write`` on an O_APPEND descriptor: lines of
    concurrent runs never interleave. The file is rotated once it reaches its size."""
    data = [line(row).encode("ascii") for row in rows]
    fd = _open_append(target.path)
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
        self._jobs: list[tuple[str, threading.Thread, float, list[str]]] = []
        now = time.monotonic()
        limit = float("inf") if by is None else by
        if settings.jsonl is not None:
            target = settings.jsonl
            self._start(f"audit export to {target.path}",
                        lambda: append_jsonl(target, rows), min(limit, now + EXPORT_TIMEOUT))
        if settings.otlp is not None:
            otlp = settings.otlp
            end = min(limit, now + otlp.timeout)

            def send() -> None:
                from .otlp import send as send_otlp

                send_otlp(otlp, rows, max(0.05, end - time.monotonic()), environ)

            self._start(f"audit export to {otlp.endpoint}", send, end)

    def _start(self, what: str, work: Callable[[], None], end: float) -> None:
        said: list[str] = []

        def run() -> None:
            try:
                work()
            except BaseException as exc:  # nothing about an export may reach the run
                said.append(f"{what}: {_why(exc)}")
            else:
                said.append("")

        thread = threading.Thread(target=run, name="prompthooks-export", daemon=True)
        thread.start()
        self._jobs.append((what, thread, end, said))

    def finish(self) -> list[str]:
        """One line per export that failed or was not done in time."""
        problems = []
        for what, thread, end, said in self._jobs:
            thread.join(max(0.0, end - time.monotonic()))
            if not said:
                problems.append(f"{what}: not done in time; left behind")
            elif said[0]:
                problems.append(said[0])
        return problems


def debugging(environ: Mapping[str, str] | None = None) -> bool:
    return (os.environ if environ is None else environ).get("PROMPTHOOKS_DEBUG") == "1"
