"""Where prompthooks keeps its files, and how it writes them.

Each folder is the XDG base folder's ``prompthooks`` (one override each: the XDG variable);
the project folder is the host's (``CLAUDE_PROJECT_DIR``, ``CURSOR_PROJECT_DIR``), else the
working directory. Every file replaced in place is written by :func:`atomic_write`, so a
reader sees the old file or the new one, never half of one (and a link or FIFO planted at the
name is replaced, never written through). Every file read back from these folders (which the
agent, running as the user, can write too) is read by :func:`read_state`, and one appended
to or locked is opened by :func:`open_state`: a FIFO, device, link or huge file put in its
place cannot hold or steer a run, nor have it write to another file.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Mapping
from pathlib import Path

from .address import APP as APP
from .address import runtime_dir

STATE_LIMIT = 1 << 20  # bytes: larger than any state file prompthooks writes


class BadStateFile(OSError):
    """A state file that is there but is not one prompthooks could have written: a symbolic
    or hard link, a FIFO, a device, a folder, or larger than its limit. Its message is one
    line that names the file; callers ignore the file and say that line."""


def open_state(path: str | os.PathLike[str], flags: int = os.O_RDONLY, mode: int = 0o600) -> int:
    """A descriptor on a file in one of prompthooks' own folders, to read, append to or lock.

    Opened without following a final symbolic link and without blocking (a FIFO cannot stall
    the run; ``flags`` adds the access mode and ``O_CREAT``, ``O_APPEND``...), then checked to
    be a regular file with one link: a link planted there would have prompthooks write to,
    truncate or lock another file. Raises FileNotFoundError when there is none (without
    ``O_CREAT``), :class:`BadStateFile` for a file that fails a check, OSError for others."""
    name = os.fspath(path)
    try:  # a device is never even opened (opening some has effects); fstat below sees a swap
        before = os.lstat(path)
    except FileNotFoundError:
        if not flags & os.O_CREAT:
            raise
    else:
        if stat.S_ISLNK(before.st_mode):
            raise BadStateFile(f"{name}: a symbolic link, not a file prompthooks wrote; "
                               "ignored")
        if not stat.S_ISREG(before.st_mode):
            raise BadStateFile(f"{name}: not a regular file; ignored")
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY,
                     mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise BadStateFile(f"{name}: a symbolic link, not a file prompthooks wrote; "
                               "ignored") from None
        if exc.errno in (errno.ENXIO, errno.EISDIR):
            # a socket (or a FIFO opened to write with no reader), a folder
            raise BadStateFile(f"{name}: not a regular file; ignored") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise BadStateFile(f"{name}: not a regular file; ignored")
        if info.st_nlink != 1:
            raise BadStateFile(f"{name}: a hard link, not a file prompthooks wrote; ignored")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_upto(fd: int, count: int) -> bytes:
    """At most ``count`` bytes from ``fd``'s position, fewer where the file ends (a file still
    growing is never read past ``count``)."""
    chunks: list[bytes] = []
    left = count
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 16))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_state(path: str | os.PathLike[str], limit: int = STATE_LIMIT) -> bytes | None:
    """The bytes of a file in one of prompthooks' own folders, or None when there is none.

    Read through one descriptor from :func:`open_state` (no link followed, no blocking open,
    a regular file with one link), of at most ``limit`` bytes, read to its end (at most
    ``limit`` bytes, whatever it grows to meanwhile). Raises :class:`BadStateFile` for a file
    that fails a check, OSError for a file that cannot be read."""
    try:
        fd = open_state(path)
    except FileNotFoundError:
        return None
    try:
        if os.fstat(fd).st_size > limit:
            raise BadStateFile(f"{os.fspath(path)}: larger than {limit} bytes; ignored")
        data = read_upto(fd, limit + 1)  # a byte more: a file that grew since fstat is caught
        if len(data) > limit:
            raise BadStateFile(f"{os.fspath(path)}: larger than {limit} bytes; ignored")
        return data
    finally:
        os.close(fd)


def _base(environ: Mapping[str, str], variable: str, *default: str) -> Path:
    return Path(environ.get(variable) or os.path.join(os.path.expanduser("~"), *default))


def config_home(environ: Mapping[str, str]) -> Path:
    """The user's config folder: ``$XDG_CONFIG_HOME/prompthooks`` (``~/.config/...``)."""
    return _base(environ, "XDG_CONFIG_HOME", ".config") / APP


def cache_home(environ: Mapping[str, str]) -> Path:
    """The cache folder: ``$XDG_CACHE_HOME/prompthooks`` (``~/.cache/...``)."""
    return _base(environ, "XDG_CACHE_HOME", ".cache") / APP


def data_home(environ: Mapping[str, str]) -> Path:
    """The data folder: ``$XDG_DATA_HOME/prompthooks`` (``~/.local/share/...``)."""
    return _base(environ, "XDG_DATA_HOME", ".local", "share") / APP


def state_home(environ: Mapping[str, str]) -> Path:
    """State kept between runs (a session's stop blocks): ``$XDG_STATE_HOME/prompthooks``
    (``~/.local/state/...``)."""
    return _base(environ, "XDG_STATE_HOME", ".local", "state") / APP


def runtime_home(environ: Mapping[str, str]) -> Path:
    """Sockets and locks: ``$XDG_RUNTIME_DIR/prompthooks`` when that folder exists, else
    ``run`` in the cache folder."""
    return Path(runtime_dir(environ))


def project_dir(environ: Mapping[str, str] | None = None) -> str:
    """The project the host runs in: its variable, else the working directory."""
    env = os.environ if environ is None else environ
    return env.get("CLAUDE_PROJECT_DIR") or env.get("CURSOR_PROJECT_DIR") or os.getcwd()


def atomic_write(path: Path, data: bytes, mode: int = 0o600, durable: bool = False) -> None:
    """Replace ``path`` with ``data`` through a temporary file beside it and a rename.
    ``durable`` also flushes the file and its folder to disk (a file the user edits or keeps,
    not a cache). Raises OSError; the temporary file never stays behind."""
    import tempfile  # only a write needs it, and the run path writes nothing

    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if mode != 0o600:  # what mkstemp gives
                os.fchmod(handle.fileno(), mode)
            if durable:
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    if durable:
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)
