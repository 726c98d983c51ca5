"""File operations for install and uninstall: atomic writes that keep the file's mode, and
the ``<name>.prompthooks-backup`` copy kept beside a file before it is first changed.

A host reads its config at any moment, so a config is never seen half-written: the new bytes
go to a temporary file in the same folder (same file system), are fsynced, and replace the old
file in one ``os.replace``. Every OS error becomes one line for the user.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .. import paths
from ..errors import PromptHooksError

BACKUP_SUFFIX = ".prompthooks-backup"


def backup_path(path: Path) -> Path:
    return path.with_name(path.name + BACKUP_SUFFIX)


def _fail(action: str, path: Path, exc: OSError) -> PromptHooksError:
    return PromptHooksError(f"cannot {action} {path}: {exc.strerror or exc}")


def read_bytes(path: Path) -> bytes | None:
    """The file's bytes, or None when there is no such file."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _fail("read", path, exc) from None


def file_mode(path: Path) -> int | None:
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _fail("read", path, exc) from None


def _default_mode() -> int:
    # What a plain open() would give a new file; mkstemp alone would make it 0600.
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


def atomic_write(path: Path, data: bytes, mode: int | None = None) -> None:
    """Replace ``path`` with ``data`` atomically. ``mode`` defaults to the file's current mode
    (a new file gets the umask's). A symlink is followed, so a linked dotfile stays linked."""
    target = Path(os.path.realpath(path))
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if mode is None:
            mode = file_mode(target)
        paths.atomic_write(target, data, _default_mode() if mode is None else mode,
                           durable=True)
    except OSError as exc:
        raise _fail("write", path, exc) from None


def make_backup(path: Path, data: bytes) -> bool:
    """Keep ``data`` (the file's bytes before our change) beside it, with the file's mode.
    An existing backup is never overwritten: it holds the older original. True if written."""
    backup = backup_path(path)
    if exists(backup):
        return False
    atomic_write(backup, data, file_mode(path))
    return True


def restore_backup(path: Path) -> None:
    """Put the backup's bytes and mode back at ``path`` and delete the backup."""
    backup = backup_path(path)
    data = read_bytes(backup)
    if data is None:
        raise PromptHooksError(f"cannot restore {path}: {backup} is gone")
    atomic_write(path, data, file_mode(backup))
    remove(backup)


def remove(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise _fail("remove", path, exc) from None


def exists(path: Path) -> bool:
    """Whether anything is there, a dangling symlink included."""
    return os.path.lexists(path)


def move(source: Path, target: Path) -> None:
    """Rename ``source`` to ``target`` as it is (a symlink stays a symlink, the mode and times
    stay), replacing ``target``."""
    try:
        os.replace(source, target)
    except OSError as exc:
        raise _fail("move", source, exc) from None
