"""File operations for install and uninstall: atomic writes that keep the file's mode, moves
and removals, each noted in the command's journal.

A host reads its config at any moment, so a config is never seen half-written: the new bytes
go to a temporary file in the same folder (same file system), are fsynced, and replace the old
file in one ``os.replace``. Every OS error becomes one line for the user.

Every change is noted in the :class:`Journal` of the command (``--json`` prints it, uninstall
learns from it which folders install created). Under ``--dry-run`` the journal keeps the
changes instead of making them, and the reads here see them, so the rest of install and
uninstall decide exactly as they would for real.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

from .. import paths
from ..errors import PromptHooksError

BACKUP_SUFFIX = ".prompthooks-backup"


@dataclass(frozen=True)
class Change:
    action: str  # "create folder", "write", "move", "remove", "remove folder", "approve"
    path: str
    to: str | None = None  # a move's target

    def as_dict(self) -> dict[str, str]:
        return {"action": self.action, "path": self.path,
                **({"to": self.to} if self.to is not None else {})}


@dataclass
class Journal:
    dry_run: bool = False
    changes: list[Change] = field(default_factory=list)
    # Under a dry run, what the files would be: path -> (bytes, mode), None once removed.
    overlay: dict[str, tuple[bytes, int | None] | None] = field(default_factory=dict)

    def note(self, action: str, path: Path, to: Path | None = None) -> None:
        self.changes.append(Change(action, str(path), None if to is None else str(to)))

    def created_folders(self) -> list[str]:
        return [c.path for c in self.changes if c.action == "create folder"]


_JOURNAL: ContextVar[Journal | None] = ContextVar("prompthooks_install_journal", default=None)


@contextlib.contextmanager
def journal(dry_run: bool = False) -> Iterator[Journal]:
    """Note every change made in this block (and only note them, under ``dry_run``)."""
    current = Journal(dry_run)
    token = _JOURNAL.set(current)
    try:
        yield current
    finally:
        _JOURNAL.reset(token)


def _dry() -> Journal | None:
    current = _JOURNAL.get()
    return current if current is not None and current.dry_run else None


def _note(action: str, path: Path, to: Path | None = None) -> None:
    current = _JOURNAL.get()
    if current is not None:
        current.note(action, path, to)


def _key(path: Path) -> str:
    return os.path.abspath(path)


def is_dry_run() -> bool:
    return _dry() is not None


def _planned(path: Path) -> tuple[bool, tuple[bytes, int | None] | None]:
    """Whether a dry run has planned ``path``, and what it would be: (bytes, mode), or None
    once removed. Unplanned, the file is as it is on disk."""
    dry = _dry()
    if dry is None or _key(path) not in dry.overlay:
        return False, None
    return True, dry.overlay[_key(path)]


def backup_path(path: Path) -> Path:
    return path.with_name(path.name + BACKUP_SUFFIX)


def _fail(action: str, path: Path, exc: OSError) -> PromptHooksError:
    return PromptHooksError(f"cannot {action} {path}: {exc.strerror or exc}")


def read_bytes(path: Path) -> bytes | None:
    """The file's bytes, or None when there is no such file."""
    known, planned = _planned(path)
    if known:
        return None if planned is None else planned[0]
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _fail("read", path, exc) from None


def read_state(path: Path, limit: int) -> bytes | None:
    """A file in prompthooks' own folders, read as ``paths.read_state`` reads it (no link,
    FIFO or oversized file); under a dry run, as it would be."""
    known, planned = _planned(path)
    if known:
        return None if planned is None else planned[0]
    return paths.read_state(path, limit)


def file_mode(path: Path) -> int | None:
    known, planned = _planned(path)
    if known:
        return None if planned is None else planned[1]
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
    missing = _missing_folders(target.parent)
    dry = _dry()
    if dry is not None:
        planned = dry.created_folders()
        for folder in missing:
            if str(folder) not in planned:
                dry.note("create folder", folder)
        dry.overlay[_key(path)] = (data, file_mode(path) if mode is None else mode)
        dry.note("write", path)
        return
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        for folder in missing:
            _note("create folder", folder)
        if mode is None:
            mode = file_mode(target)
        paths.atomic_write(target, data, _default_mode() if mode is None else mode,
                           durable=True)
    except OSError as exc:
        raise _fail("write", path, exc) from None
    _note("write", path)


def _missing_folders(folder: Path) -> list[Path]:
    """The folders a write into ``folder`` creates, outermost first."""
    missing: list[Path] = []
    while not os.path.lexists(folder) and folder.parent != folder:
        missing.append(folder)
        folder = folder.parent
    return missing[::-1]


def remove(path: Path) -> None:
    if not exists(path):
        return
    dry = _dry()
    if dry is not None:
        dry.overlay[_key(path)] = None
        dry.note("remove", path)
        return
    try:
        path.unlink()
    except FileNotFoundError:
        return
    except OSError as exc:
        raise _fail("remove", path, exc) from None
    _note("remove", path)


def exists(path: Path) -> bool:
    """Whether anything is there, a dangling symlink included."""
    known, planned = _planned(path)
    if known:
        return planned is not None
    return os.path.lexists(path)


def is_empty_folder(folder: Path) -> bool:
    """A real folder (not a link to one) with nothing in it, once planned removals are done."""
    try:
        if folder.is_symlink() or not folder.is_dir():
            return False
        names = os.listdir(folder)
    except OSError:
        return False
    return all(not exists(folder / name) for name in names)


def remove_folder(folder: Path) -> bool:
    """Remove an empty folder; False (and nothing done) if it is not one."""
    if not is_empty_folder(folder):
        return False
    dry = _dry()
    if dry is not None:
        dry.overlay[_key(folder)] = None
        dry.note("remove folder", folder)
        return True
    try:
        folder.rmdir()
    except OSError:
        return False  # something appeared in it, or it cannot be removed: it stays
    _note("remove folder", folder)
    return True


def note_approval(path: Path) -> None:
    _note("approve", path)


def move(source: Path, target: Path) -> None:
    """Rename ``source`` to ``target`` as it is (a symlink stays a symlink, the mode and times
    stay), replacing ``target``."""
    dry = _dry()
    if dry is not None:
        data = read_bytes(source)
        dry.overlay[_key(target)] = None if data is None else (data, file_mode(source))
        dry.overlay[_key(source)] = None
        dry.note("move", source, target)
        return
    try:
        os.replace(source, target)
    except OSError as exc:
        raise _fail("move", source, exc) from None
    _note("move", source, target)
