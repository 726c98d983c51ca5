"""Reading the files a config is made of, safely: regular files only, and small ones.

Anyone who can write the project can put a FIFO where a config file is expected (opening it
for reading would wait for a writer forever), a device, or a sparse file of a terabyte
(reading it whole exhausts memory). So a config or prompt file is opened without blocking,
checked with ``fstat`` to be a regular file, and read only up to a cap.

While an approved source loads, its files are served from the bytes its approval was checked
on (:func:`served`), never opened again by name: a file renamed over an approved one between
the check and the load is not what gets parsed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
from collections.abc import Iterable, Iterator, Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import NamedTuple

from ..paths import read_upto

# Far above any real hooks.json or prompt (a few KB); small enough to read and parse at once.
MAX_FILE_BYTES = 1024 * 1024
# Of one file an approval covers (configs, templates and hook files are small); a hook file runs
# from a copy of at most this many bytes too.
MAX_COVERED_FILE = 1024 * 1024
CONFIG_FILE = "hooks.json"
HOOKS_DIR = "hooks"


class UnsafeFile(Exception):
    """A file prompthooks will not read; the message says why, without the path."""


class View(NamedTuple):
    """Files read once, by absolute path: (mode, bytes). In ``folders`` (absolute paths) a
    file named one of ``names`` that is not in ``files`` is not there, whatever appeared on
    disk since; other names there are read from disk."""

    files: Mapping[str, tuple[int, bytes]]
    folders: frozenset[str]
    names: frozenset[str]

    def lookup(self, path: Path | str) -> tuple[int, bytes] | None:
        """The served (mode, bytes), None when the path is not served; FileNotFoundError
        for a name in a served folder that was not there when it was read."""
        name = os.path.abspath(path)
        if name in self.files:
            return self.files[name]
        if os.path.dirname(name) in self.folders and os.path.basename(name) in self.names:
            raise FileNotFoundError(errno.ENOENT, "not there when it was checked", name)
        return None


_view: ContextVar[View | None] = ContextVar("prompthooks_served_files", default=None)


@contextlib.contextmanager
def served(view: View | None) -> Iterator[None]:
    """Within the block, :func:`read_bytes` and :func:`file_type` answer from ``view``."""
    token = _view.set(view)
    try:
        yield
    finally:
        _view.reset(token)


def _served(path: Path | str) -> tuple[int, bytes] | None:
    view = _view.get()
    return None if view is None else view.lookup(path)


def hook_file_names(events: Iterable[str]) -> list[str]:
    """The names a folder of hooks named after ``events`` (the folder dialect's) may hold, in
    the order its hooks load."""
    events = list(events)
    return sorted([*events, *(f"{name}.md" for name in events)])


def kind(mode: int) -> str:
    """What a non-regular file is, in words."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a file"


def _check(st: os.stat_result, cap: int) -> None:
    if not stat.S_ISREG(st.st_mode):
        raise UnsafeFile(f"is not a regular file ({kind(st.st_mode)})")
    if st.st_size > cap:
        raise UnsafeFile(f"is larger than {cap // 1024} KiB ({st.st_size} bytes)")


def read_regular(path: Path | str, cap: int) -> tuple[os.stat_result, bytes | None]:
    """The status of the file at ``path`` (links followed) and, when it is a regular file of
    at most ``cap`` bytes, up to ``cap + 1`` of its bytes (a byte more: a file that grew since
    ``fstat`` is caught), read through the one descriptor that status is of; None for anything
    else. Opened without blocking: opening a FIFO waits for a writer otherwise. Raises
    OSError."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > cap:
            return info, None
        return info, read_upto(fd, cap + 1)
    finally:
        os.close(fd)


def read_bytes(path: Path | str, cap: int = MAX_FILE_BYTES, *, head: bool = False) -> bytes:
    """The content of a regular file of at most ``cap`` bytes (``head``: its first ``cap``
    bytes, whatever its size).

    Raises :class:`UnsafeFile` for anything else, and OSError when it cannot be read."""
    entry = _served(path)
    if entry is not None:
        return _from_view(entry, cap, head)
    # stat first, so that a device is never even opened; fstat after, for a file swapped in
    # between. O_NONBLOCK: opening a FIFO waits for a writer otherwise.
    before = os.stat(path)
    if not head or not stat.S_ISREG(before.st_mode):
        _check(before, cap)
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not head or not stat.S_ISREG(st.st_mode):
            _check(st, cap)
        data = read_upto(fd, cap + 1)  # a byte more: a file that grew since fstat is caught
    finally:
        os.close(fd)
    if len(data) > cap:
        if head:
            return data[:cap]
        raise UnsafeFile(f"is larger than {cap // 1024} KiB")
    return data


def _from_view(entry: tuple[int, bytes], cap: int, head: bool) -> bytes:
    mode, data = entry
    if not stat.S_ISREG(mode):
        raise UnsafeFile(f"is not a regular file ({kind(mode)})")
    if len(data) > cap:
        if head:
            return data[:cap]
        raise UnsafeFile(f"is larger than {cap // 1024} KiB")
    return data


def read_text(path: Path | str, cap: int = MAX_FILE_BYTES) -> str:
    """A small regular file as UTF-8 text (a BOM is dropped); UnicodeDecodeError if it is not
    UTF-8."""
    return read_bytes(path, cap).decode("utf-8-sig")


def describe(exc: BaseException) -> str:
    """One line for anything that went wrong while loading a source."""
    if isinstance(exc, UnsafeFile):
        return str(exc)
    if isinstance(exc, RecursionError):
        return "nested too deeply to load"
    if isinstance(exc, MemoryError):
        return "too large to load (out of memory)"
    if isinstance(exc, UnicodeError):
        return "is not UTF-8 text"
    if isinstance(exc, OSError):
        where = f" {exc.filename}" if exc.filename else ""
        return f"cannot read{where}: {exc.strerror or exc}"
    if isinstance(exc, ValueError) and "integer string conversion" in str(exc):
        return f"holds a number of more than {sys.get_int_max_str_digits()} digits"
    text = " ".join(str(exc).split())
    text = text if len(text) <= 200 else text[:197] + "..."
    return f"cannot be loaded: {type(exc).__name__}: {text}" if text else (
        f"cannot be loaded: {type(exc).__name__}")


def file_type(path: Path) -> int | None:
    """The mode of what ``path`` names (a symlink followed), None if nothing is there; a
    symlink to nothing is a file (it fails when run, as it would in Cline)."""
    try:
        entry = _served(path)
    except FileNotFoundError:
        return None
    if entry is not None:
        return entry[0]
    try:
        return os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        try:
            os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        return stat.S_IFREG
