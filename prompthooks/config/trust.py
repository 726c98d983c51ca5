"""Approval of project and user configs, as direnv approves an ``.envrc``: a discovered
project (``<project>/.prompthooks/``) or user (``$XDG_CONFIG_HOME/prompthooks/``) source runs
only while what prompthooks loads from it is exactly what the user approved.

What is approved is the content prompthooks itself loads from the folder: ``hooks.json`` and
the Cline-style hook files (executables named after a Cline hook, ``<Hook>.md``) in the folder
and in its ``hooks/`` folder, by name, mode and content (sha256). Not the scripts those hooks
call: as direnv approves only ``.envrc``, the approved file says what runs.

Approvals live in the user's data folder (``$XDG_DATA_HOME/prompthooks/trust.json``), never in
the project, keyed by the source folder's resolved path. No environment variable grants or
skips an approval. A store that cannot be read means nothing is approved.

The managed policy (written by an administrator) and ``--config`` paths (written into the
host's own config, which is as trusted as the command line) need no approval.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import paths
from ..core.hook import Source
from .trust_state import State as State
from .trust_state import TrustState as TrustState
from .trust_state import approve_command as approve_command

CHECKED = ("project", "user")  # the discovered sources that need an approval
STORE_NAME = "trust.json"
MAX_FILE = 1024 * 1024  # bytes of one approved file: configs and hook scripts are small
MAX_STORE = 4 * 1024 * 1024
_FORMAT = 1
# Names prompthooks loads from a folder (config.loader); kept here so a hash never depends on
# anything the loader does not read.
_CONFIG_FILE = "hooks.json"
_HOOKS_DIR = "hooks"


class Unapprovable(Exception):
    """The folder holds something that cannot be hashed safely (not a regular file, too big,
    unreadable): it cannot be approved, so it never runs."""


@dataclass(frozen=True, slots=True)
class Digest:
    """The sha256 of what prompthooks loads from a folder, and the files it covers."""

    sha256: str
    files: tuple[str, ...]  # relative to the folder


# --- hashing --------------------------------------------------------------------------------

def _is_hook_name(name: str, events: Mapping[str, Any]) -> bool:
    return name in events or (name.endswith(".md") and name[:-3] in events)


def _read_bounded(path: Path, cap: int = MAX_FILE) -> tuple[os.stat_result, bytes]:
    """(status, bytes) of a regular file, read without ever blocking (a FIFO) or reading more
    than ``cap`` bytes. Symlinks are followed; their targets are hashed by the caller."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise Unapprovable(f"{path.name}: cannot read: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Unapprovable(f"{path.name} is not a regular file")
        if info.st_size > cap:
            raise Unapprovable(f"{path.name} is larger than {cap // 1024} KB")
        chunks: list[bytes] = []
        size = 0
        while size <= cap:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > cap:  # it grew while being read
            raise Unapprovable(f"{path.name} is larger than {cap // 1024} KB")
        return info, b"".join(chunks)
    except OSError as exc:
        raise Unapprovable(f"{path.name}: cannot read: {exc.strerror}") from None
    finally:
        os.close(fd)


def _entries(folder: Path, events: Mapping[str, Any]) -> Iterator[tuple[str, Path]]:
    """(relative name, path) of every file the loader would load from ``folder``."""
    found = [(_CONFIG_FILE, folder / _CONFIG_FILE)] if os.path.lexists(folder / _CONFIG_FILE) \
        else []
    for prefix, where in (("", folder), (f"{_HOOKS_DIR}/", folder / _HOOKS_DIR)):
        if prefix and not where.is_dir():
            continue
        try:
            names = sorted(os.listdir(where))
        except OSError as exc:
            raise Unapprovable(f"{prefix or where.name}: cannot list: {exc.strerror}") from None
        for name in names:
            path = where / name
            if _is_hook_name(name, events) and not path.is_dir():  # the loader skips folders
                found.append((prefix + name, path))
    yield from found


def digest(folder: Path) -> Digest:
    """The sha256 over every loaded file's name, link target (when a symlink), mode and bytes,
    and over the ``hooks/`` folder's own link target. Raises :class:`Unapprovable`."""
    from ..hosts import FOLDER_DIALECT as cline

    sha = hashlib.sha256(b"prompthooks trust 1\0")
    files: list[str] = []

    def add(*parts: bytes) -> None:
        for part in parts:
            sha.update(len(part).to_bytes(8, "big") + part)

    hooks = folder / _HOOKS_DIR
    try:
        if hooks.is_symlink():  # a swapped link to another folder is another config
            add(b"link", _HOOKS_DIR.encode(), os.fsencode(os.readlink(hooks)))
        for name, path in _entries(folder, cline.CONFIG_EVENTS):
            target = os.readlink(path) if path.is_symlink() else ""
            info, data = _read_bounded(path)
            add(b"file", os.fsencode(name), os.fsencode(target),
                f"{stat.S_IMODE(info.st_mode):o}".encode(), data)
            files.append(name)
    except OSError as exc:  # a link replaced while being read
        raise Unapprovable(f"{exc.filename or folder}: cannot read: {exc.strerror}") from None
    return Digest(sha.hexdigest(), tuple(files))


# --- the store ------------------------------------------------------------------------------

def store_path(environ: Mapping[str, str]) -> Path:
    return paths.data_home(environ) / STORE_NAME


@dataclass
class Store:
    """The approvals, by resolved folder path; ``problem`` says why the file was not read."""

    path: Path
    records: dict[str, dict[str, Any]] = field(default_factory=dict)
    problem: str | None = None


def _valid(records: Any) -> bool:
    return isinstance(records, dict) and all(
        isinstance(k, str) and isinstance(v, dict) and isinstance(v.get("sha256"), str)
        for k, v in records.items())


def read_store(environ: Mapping[str, str]) -> Store:
    """The approvals; a missing store is empty, a corrupt or unreadable one is empty with a
    ``problem`` (never an exception)."""
    path = store_path(environ)
    try:
        info, raw = _read_bounded(path, MAX_STORE)
    except Unapprovable as exc:
        if not os.path.lexists(path):
            return Store(path)
        return Store(path, problem=f"trust store {path} cannot be used ({exc}): "
                                   "nothing is approved")
    # Approvals someone else could have written approve nothing (as ssh treats its keys).
    if info.st_uid != os.geteuid() or info.st_mode & 0o022:
        return Store(path, problem=f"trust store {path} is writable by others or not yours: "
                                   "nothing is approved")
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):
        return Store(path, problem=f"trust store {path} is not valid JSON: nothing is approved")
    records = data.get("sources") if isinstance(data, dict) else None
    if not (isinstance(records, dict) and data.get("format") == _FORMAT and _valid(records)):
        return Store(path, problem=f"trust store {path} is not a prompthooks trust store: "
                                   "nothing is approved")
    return Store(path, dict(records))


def _write_store(store: Store) -> None:
    """Atomically, owner-only: the folder 0700 when created, the file 0600."""
    store.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    body = json.dumps({"format": _FORMAT, "sources": store.records}, indent=2, sort_keys=True)
    paths.atomic_write(store.path, (body + "\n").encode("utf-8"), durable=True)


@contextlib.contextmanager
def _locked(environ: Mapping[str, str]) -> Iterator[None]:
    """Serialise read-modify-write of the store between two ``prompthooks trust`` runs."""
    import fcntl

    folder = paths.data_home(environ)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(folder / f"{STORE_NAME}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


# --- states ---------------------------------------------------------------------------------

def key_of(folder: Path) -> str:
    return str(folder.resolve())


def pack_pins(folder: Path, environ: Mapping[str, str]) -> dict[str, str]:
    """What the pinned packs of the folder's ``hooks.json`` resolve to in the pack cache now
    (config.packs): an approval records it, so a tag that moves is a change to review."""
    if not os.path.lexists(folder / _CONFIG_FILE):
        return {}
    from .packs import resolutions

    return resolutions(folder / _CONFIG_FILE, environ)


def _moved_pack(record: Mapping[str, Any], pins: Mapping[str, str]) -> str | None:
    """Why a pack the approval recorded now resolves to another commit (None: none did)."""
    approved = record.get("packs")
    approved = approved if isinstance(approved, dict) else {}
    for ref, commit in sorted(pins.items()):
        if approved.get(ref) != commit:
            was = approved.get(ref)
            repo, _, rev = ref.rpartition(" ")
            return (f"pack {repo} at {rev} is now {commit[:12]}, approved "
                    f"{was[:12] if isinstance(was, str) else 'unfetched'}")
    return None


def state_of(source: Source, folder: Path, store: Store,
             environ: Mapping[str, str] | None = None) -> TrustState:
    """The state of one source, from its real files, now."""
    try:
        key = key_of(folder)
    except (OSError, RuntimeError) as exc:  # a symlink loop: nothing there can be approved
        return TrustState(source, str(folder), "unapprovable", reason=f"cannot resolve: {exc}")
    try:
        current = digest(folder)
    except Unapprovable as exc:
        return TrustState(source, key, "unapprovable", reason=str(exc))
    if not current.files:
        return TrustState(source, key, "empty", current.sha256)
    pins = pack_pins(folder, os.environ if environ is None else environ)
    packs = tuple(sorted(pins.items()))
    record = store.records.get(key)
    if record is None:
        return TrustState(source, key, "new", current.sha256, current.files,
                          reason=store.problem, packs=packs)
    if record.get("sha256") != current.sha256:
        return TrustState(source, key, "changed", current.sha256, current.files,
                          approved_at=str(record.get("approved_at")), reason=store.problem,
                          packs=packs)
    moved_pack = _moved_pack(record, pins)
    if moved_pack:
        return TrustState(source, key, "changed", current.sha256, current.files,
                          approved_at=str(record.get("approved_at")), reason=moved_pack,
                          packs=packs)
    return TrustState(source, key, "approved", current.sha256, current.files,
                      approved_at=str(record.get("approved_at")), packs=packs)


def states(sources: list[tuple[Source, Path]],
           environ: Mapping[str, str]) -> list[TrustState]:
    """The state of every source that needs an approval (the store is read only if one
    does)."""
    checked = [(s, p) for s, p in sources if s.name in CHECKED]
    if not checked:
        return []
    store = read_store(environ)
    return [state_of(source, path, store, environ) for source, path in checked]


def now() -> str:
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def approve(source: Source, folder: Path, environ: Mapping[str, str],
            expected: Digest | None = None) -> tuple[TrustState, str | None]:
    """Approve the folder's current content (only if it is still ``expected``, when given).
    Returns the new state and the store's problem (a corrupt store is replaced), or raises
    :class:`Unapprovable`."""
    with _locked(environ):
        current = digest(folder)
        if not current.files:
            raise Unapprovable("it holds no hooks.json and no hook files: nothing to approve")
        if expected is not None and current != expected:
            raise Unapprovable("it changed while being approved")
        pins = _fetched_pins(folder, environ)
        store = read_store(environ)
        stamp = now()
        store.records[key_of(folder)] = {"source": source.name, "sha256": current.sha256,
                                         "files": list(current.files), "approved_at": stamp,
                                         "packs": pins}
        _write_store(store)
    return (TrustState(source, key_of(folder), "approved", current.sha256, current.files,
                       approved_at=stamp, packs=tuple(sorted(pins.items()))), store.problem)


def _fetched_pins(folder: Path, environ: Mapping[str, str]) -> dict[str, str]:
    """The pack pins to record; every pinned pack must be fetched, or what the approval
    covers would be decided later by whatever the rev names then."""
    import json

    from . import files
    from .packs import FETCH_COMMAND, normalize, references

    pins = pack_pins(folder, environ)
    try:
        data = json.loads(files.read_bytes(folder / _CONFIG_FILE))
    except (OSError, ValueError, RecursionError, files.UnsafeFile):
        return pins
    for repo, rev in references(data):
        if f"{normalize(repo, str(folder))} {rev}" not in pins:
            raise Unapprovable(f"pack {repo} at {rev} is not fetched; run {FETCH_COMMAND} "
                               "first, so that the approval covers the commit it names")
    return pins


def revoke(folder: Path, environ: Mapping[str, str]) -> bool:
    """Remove the folder's approval; whether there was one."""
    with _locked(environ):
        store = read_store(environ)
        if store.records.pop(key_of(folder), None) is None:
            return False
        _write_store(store)
    return True


def moved(checked: list[TrustState], environ: Mapping[str, str]) -> list[TrustState]:
    """The sources among ``checked`` (trusted a moment ago) whose content differs now: a file
    written between the check and the load. They count as changed."""
    out = []
    for state in checked:
        try:
            same = digest(Path(state.source.path)).sha256 == state.sha256
        except Unapprovable:
            same = False
        if not same:
            out.append(TrustState(state.source, state.key, "changed", reason="it changed while "
                                  "being loaded"))
    return out
