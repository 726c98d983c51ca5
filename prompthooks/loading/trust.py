"""Approval of project and user configs, as direnv approves an ``.envrc``: a discovered
project (``<project>/.prompthooks/``) or user (``$XDG_CONFIG_HOME/prompthooks/``) source runs
only while what prompthooks loads from it is exactly what the user approved.

What is approved is every file whose content decides what runs (loading.approval_digest):
``hooks.json`` and the Cline-style hook files (executables named after a Cline hook,
``<Hook>.md``) in the folder and in its ``hooks/`` folder, by name, mode and content
(sha256), and the templates ``hooks.json`` names; a ``hooks.json`` that runs a script inside
the project by its path cannot be approved. Each pinned pack's commit and the digest of its
files are recorded too. What runs is the bytes that were checked, never the file opened again
by name.

Approvals live in the user's data folder (``$XDG_DATA_HOME/prompthooks/trust.json``), never in
the project, keyed by the source folder's resolved path. No environment variable grants or
skips an approval. A store that cannot be read means nothing is approved. Beside the store, a
copy of what each approval covered is kept, to show what changed since (never loaded or run).

The managed policy (written by an administrator) and ``--config`` paths (written into the
host's own config, which is as trusted as the command line) need no approval.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

from .. import digests, paths
from ..config import files, packs
from ..config.discovery import PROJECT_DIR_NAME
from ..config.load_result import State as State
from ..config.load_result import TrustState as TrustState
from ..config.load_result import approve_command as approve_command
from ..config.packs import (
    FETCH_COMMAND,
    PackError,
    folder_key,
    folders,
    normalize,
    open_folder,
    open_pinned,
    references,
    resolutions,
)
from ..core.hook import Source
from . import approval_digest
from .approval_digest import MAX_FILE as MAX_FILE
from .approval_digest import Digest as Digest
from .approval_digest import Unapprovable as Unapprovable

CHECKED = ("project", "user")  # the discovered sources that need an approval
STORE_NAME = "trust.json"
MAX_STORE = 4 * 1024 * 1024
_FORMAT = 1
_CONFIG_FILE = files.CONFIG_FILE


# --- hashing --------------------------------------------------------------------------------

def digest(folder: Path) -> Digest:
    """What an approval of ``folder`` covers, now (loading.approval_digest); its project is
    the folder's parent for a project's ``.prompthooks``. Raises :class:`Unapprovable`."""
    project = folder.parent if folder.name == PROJECT_DIR_NAME else None
    return approval_digest.digest(folder, project)


# --- the store ------------------------------------------------------------------------------

def store_path(environ: Mapping[str, str]) -> Path:
    return paths.data_home(environ) / STORE_NAME


class Store:
    """The approvals, by resolved folder path; ``problem`` says why the file was not read."""

    __slots__ = ("path", "problem", "records")

    def __init__(self, path: Path, records: dict[str, dict[str, Any]] | None = None,
                 problem: str | None = None) -> None:
        self.path = path
        self.records: dict[str, dict[str, Any]] = {} if records is None else records
        self.problem = problem


def _valid(records: Any) -> bool:
    return isinstance(records, dict) and all(
        isinstance(k, str) and isinstance(v, dict) and isinstance(v.get("sha256"), str)
        for k, v in records.items())


def read_store(environ: Mapping[str, str]) -> Store:
    """The approvals; a missing store is empty, a corrupt or unreadable one is empty with a
    ``problem`` (never an exception)."""
    path = store_path(environ)
    try:
        raw = paths.read_state(path, MAX_STORE)
        info = os.lstat(path) if raw is not None else None
    except OSError as exc:  # BadStateFile says what it is in one line
        why = (str(exc).removeprefix(f"{path}: ").removesuffix("; ignored")
               if isinstance(exc, paths.BadStateFile) else exc.strerror)
        return Store(path, problem=f"trust store {path} cannot be used ({why}): "
                                   "nothing is approved")
    if raw is None or info is None:
        return Store(path)
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
    folder = paths.data_home(environ)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    # open_state: a link planted there is never followed (trust would create and lock the
    # file it names), nor a FIFO opened
    try:
        fd = paths.open_state(folder / f"{STORE_NAME}.lock", os.O_RDWR | os.O_CREAT)
    except paths.BadStateFile as exc:  # the approval is refused, not the file ignored
        raise paths.BadStateFile(str(exc).removesuffix("; ignored") + "; refused") from None
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

    return resolutions(folder / _CONFIG_FILE, environ)


def _moved_pack(record: Mapping[str, Any], pins: Mapping[str, str]) -> str | None:
    """Why a pack the approval recorded now resolves to another commit (None: none did). Its
    files are checked by the load, against the digest the approval recorded: a pack that is
    not what was approved fails its config file, as a pack that is not fetched does."""
    approved = record.get("packs")
    approved = approved if isinstance(approved, dict) else {}
    for ref, commit in sorted(pins.items()):
        if approved.get(ref) != commit:
            was = approved.get(ref)
            repo, _, rev = ref.rpartition(" ")
            return (f"pack {repo} at {rev} is now {commit[:12]}, approved "
                    f"{was[:12] if isinstance(was, str) else 'unfetched'}")
    return None


def pack_drift(state: TrustState, store: Store, environ: Mapping[str, str]) -> str | None:
    """For an approved source: a pinned pack whose cached files are not the bytes approved
    (a load fails its config file then), in words; None when each is (or none is pinned)."""
    record = store.records.get(state.key) or {}
    contents = record.get("pack_files")
    contents = contents if isinstance(contents, dict) else {}
    for ref, commit in state.packs:
        repo, _, rev = ref.rpartition(" ")
        content = contents.get(ref)
        try:
            same = (isinstance(content, dict) and isinstance(content.get("files"), list)
                    and packs.digest_files(packs.pack_dir(repo, commit, environ),
                                           [str(n) for n in content["files"]])
                    == content.get("digest"))
        except packs.PackError:
            same = False
        if not same:
            return (f"pack {repo} at {rev} in the cache is not what was approved: its config "
                    f"fails to load; run: {packs.FETCH_COMMAND}, then review and approve")
    return None


def _changed_folder_pack(record: Mapping[str, Any]) -> str | None:
    """Which ``path`` pack's files differ from what the approval recorded (None: none). Such
    a pack is part of the config, as a template is: a change to it is a change to review."""
    contents = record.get("pack_files")
    for key, content in sorted(contents.items() if isinstance(contents, dict) else []):
        if not key.startswith("path "):
            continue
        root = Path(key.removeprefix("path "))
        files = content.get("files") if isinstance(content, dict) else None
        try:
            same = (isinstance(files, list) and all(isinstance(n, str) for n in files)
                    and packs.digest_files(root, files) == content.get("digest"))
        except packs.PackError:
            same = False
        if not same:
            return f"pack folder {os.path.normpath(root)} changed"
    return None


def _changed_files(record: Mapping[str, Any], current: Digest) -> str | None:
    """Which covered files differ from the approval's, in words (None: it cannot tell)."""
    approved = record.get("file_sha256")
    if not isinstance(approved, dict):
        return None
    said = [f"{name} changed" for name, sha in current.file_sha256.items()
            if name in approved and approved[name] != sha]
    said += [f"{name} is new" for name in current.file_sha256 if name not in approved]
    said += [f"{name} is gone" for name in approved if name not in current.file_sha256]
    return ", ".join(said) or None


def _approved_packs(record: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    contents = record.get("pack_files")
    if not isinstance(contents, dict):
        return ()
    return tuple(sorted((ref, c["digest"]) for ref, c in contents.items()
                        if isinstance(c, dict) and isinstance(c.get("digest"), str)))


def state_of(source: Source, folder: Path, store: Store,
             environ: Mapping[str, str] | None = None) -> TrustState:
    """The state of one source, from its real files, now."""
    env = os.environ if environ is None else environ
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
    with files.served(current.view):  # the hooks.json that was hashed, not read again
        pins = pack_pins(folder, env)
    packs = tuple(sorted(pins.items()))
    record = store.records.get(key)
    if record is None:
        return TrustState(source, key, "new", current.sha256, current.files,
                          reason=store.problem, packs=packs)
    approved_at = str(record.get("approved_at"))
    if record.get("sha256") != current.sha256:
        return TrustState(source, key, "changed", current.sha256, current.files,
                          approved_at=approved_at,
                          reason=_changed_files(record, current) or store.problem,
                          packs=packs)
    moved_pack = _moved_pack(record, pins) or _changed_folder_pack(record)
    if moved_pack:
        return TrustState(source, key, "changed", current.sha256, current.files,
                          approved_at=approved_at, reason=moved_pack, packs=packs)
    return TrustState(source, key, "approved", current.sha256, current.files,
                      approved_at=approved_at, packs=packs, covered=current,
                      pack_digests=_approved_packs(record))


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
            expected: Digest | None = None, hooks: Sequence[Sequence[str]] | None = None,
            expected_packs: Mapping[str, str] | None = None,
            kept: Mapping[str, bytes] | None = None) -> tuple[TrustState, str | None]:
    """Approve the folder's current content (only if it is still ``expected``, when given),
    and its packs still ``expected_packs`` (:func:`check_packs`), keeping a copy of ``kept``
    (default: the covered files) and of ``hooks`` (the rows shown, if any) for the next
    approval's diff.
    Returns the new state and the store's problem (a corrupt store is replaced), or raises
    :class:`Unapprovable`."""
    with _locked(environ):
        current = digest(folder)
        if not current.files:
            raise Unapprovable("it holds no hooks.json and no hook files: nothing to approve")
        if expected is not None and current.sha256 != expected.sha256:
            raise Unapprovable("it changed while being approved")
        with files.served(current.view):  # the hooks.json that was hashed, not read again
            pins, contents = _fetched_pins(folder, environ)
        if expected_packs is not None and expected_packs != {
                key: content["digest"] for key, content in contents.items()}:
            raise Unapprovable("a pack it uses changed while being approved")
        store = read_store(environ)
        stamp = now()
        key = key_of(folder)
        body = encode_copy(current.contents if kept is None else kept, hooks)
        copy = write_copy(key, body, environ)
        store.records[key] = {"source": source.name, "sha256": current.sha256,
                              "files": list(current.files),
                              "file_sha256": dict(current.file_sha256),
                              "approved_at": stamp, "packs": pins, "pack_files": contents,
                              "copy_sha256": copy}
        _write_store(store)
    return (TrustState(source, key_of(folder), "approved", current.sha256, current.files,
                       approved_at=stamp, packs=tuple(sorted(pins.items()))), store.problem)


def check_packs(folder: Path, current: Digest, environ: Mapping[str, str]) -> dict[str, str]:
    """The digest of each pack the folder's ``hooks.json`` uses, by its key in an approval
    ("<repo> <rev>", "path <folder>"): what a review shows and :func:`approve` must find
    again. Raises :class:`Unapprovable` when a pinned pack is not fetched or not intact."""
    with files.served(current.view):
        _, contents = _fetched_pins(folder, environ)
    return {key: str(content["digest"]) for key, content in contents.items()}


def _fetched_pins(folder: Path, environ: Mapping[str, str]
                  ) -> tuple[dict[str, str], dict[str, dict[str, Any]]]:
    """The pack pins to record, and the digest and files of each pinned pack's content as
    fetched; every pinned pack must be fetched and intact, or what the approval covers would
    be decided later by whatever the rev names then."""
    pins = pack_pins(folder, environ)
    try:
        data = json.loads(files.read_bytes(folder / _CONFIG_FILE))
    except (OSError, ValueError, RecursionError, files.UnsafeFile):
        return pins, {}
    contents: dict[str, dict[str, Any]] = {}
    for root in folders(data, folder.resolve()):
        try:
            pack = open_folder(root)
        except PackError:  # the load says what is wrong with it; nothing of it runs
            continue
        contents[folder_key(root)] = {"digest": pack.digest, "files": list(pack.texts)}
    for repo, rev in references(data):
        full = normalize(repo, str(folder))
        if f"{full} {rev}" not in pins:
            raise Unapprovable(f"pack {repo} at {rev} is not fetched; run {FETCH_COMMAND} "
                               "first, so that the approval covers the commit it names")
        try:
            pack = open_pinned(full, rev, environ)
        except PackError as exc:
            raise Unapprovable(str(exc)) from None
        contents[f"{full} {rev}"] = {"digest": pack.digest, "files": list(pack.texts)}
    return pins, contents


def revoke(folder: Path, environ: Mapping[str, str]) -> bool:
    """Remove the folder's approval; whether there was one."""
    with _locked(environ):
        store = read_store(environ)
        if store.records.pop(key_of(folder), None) is None:
            return False
        _write_store(store)
        remove_copy(key_of(folder), environ)
    return True

# The approved copy --------------------------------------------------------------------------
# The copy of what an approval covered, kept so that the next ``prompthooks trust`` can show
# what changed since: the text of each covered file and the hooks the approval listed.
#
# It lives in the data folder beside the trust store (``approved/<sha256 of the folder's
# key>.json``), is written only by ``prompthooks trust`` under the store's lock, and its sha256
# is recorded with the approval: a copy rewritten afterwards (the agent can write the data
# folder too) is not shown as what was approved. It is only ever shown, never loaded or run.

MAX_COPY = 1024 * 1024  # bytes of one copy: files past it are named but not kept
_COPY_FOLDER = "approved"
_COPY_FORMAT = 1


class ApprovedCopy(NamedTuple):
    """The approved text of each covered file (None: not kept, being binary or past
    :data:`MAX_COPY`) and the approval's hook rows (commands.review; None when the approval
    listed none, as ``install``'s of its starter)."""

    files: Mapping[str, str | None] = MappingProxyType({})
    hooks: Sequence[Sequence[str]] | None = None


def copy_path(key: str, environ: Mapping[str, str]) -> Path:
    name = digests.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return paths.data_home(environ) / _COPY_FOLDER / f"{name}.json"


def encode_copy(contents: Mapping[str, bytes], hooks: Sequence[Sequence[str]] | None) -> bytes:
    """The copy's bytes: each file's text while the whole stays within :data:`MAX_COPY`."""
    rows = None if hooks is None else [list(row) for row in hooks]
    if rows is not None and len(json.dumps(rows)) > MAX_COPY // 2:
        rows = None  # thousands of hooks, or huge commands: the files' diff says it all
    kept: dict[str, str | None] = {}
    room = MAX_COPY - len(json.dumps(rows)) - 4096  # the rows and the JSON framing
    for name, data in sorted(contents.items()):
        try:
            text: str | None = data.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if text is not None and len(json.dumps(text)) > room:
            text = None
        room -= len(json.dumps(text)) + len(json.dumps(name)) + 4
        kept[name] = text
    return json.dumps({"format": _COPY_FORMAT, "files": kept, "hooks": rows},
                      sort_keys=True).encode()


def write_copy(key: str, body: bytes, environ: Mapping[str, str]) -> str:
    """Write the copy (owner-only) and return its sha256, to record with the approval."""
    path = copy_path(key, environ)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    paths.atomic_write(path, body)
    return digests.sha256(body).hexdigest()


def remove_copy(key: str, environ: Mapping[str, str]) -> None:
    # None kept, or not removable: either way it is never read without its recorded hash.
    with contextlib.suppress(OSError):
        copy_path(key, environ).unlink()


def read_copy(key: str, sha256: object, environ: Mapping[str, str]) -> ApprovedCopy | str:
    """The copy kept with the approval whose record says ``sha256``, or why there is none."""
    if not isinstance(sha256, str):
        return "no copy of the approved files was kept (approved by an older prompthooks)"
    path = copy_path(key, environ)
    try:
        body = paths.read_state(path, MAX_COPY)
    except OSError as exc:
        return f"the copy of the approved files cannot be read: {exc}"
    if body is None:
        return f"the copy of the approved files is gone ({path})"
    if digests.sha256(body).hexdigest() != sha256:
        return f"the copy of the approved files ({path}) is not the one kept at approval"
    try:
        data = json.loads(body)
        files = {str(k): v if isinstance(v, str) else None for k, v in data["files"].items()}
        hooks = (None if data["hooks"] is None
                 else [[str(c) for c in row] for row in data["hooks"]])
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return f"the copy of the approved files ({path}) cannot be read"
    return ApprovedCopy(files, hooks)
