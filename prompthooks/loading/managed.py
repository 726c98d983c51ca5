"""The managed policy's load, served without validating it again where that is safe: from
this process's memory once it validated the same bytes, or from the compiled policy its
administrator wrote into the managed folder (``prompthooks managed compile``); never from
anything the user can write (the user's config cache is not used for it).

Both are keyed by the managed folder's files as the loader would read them (each one's path,
type, size, mtime, inode and a sha256 of its bytes), the folder's real path and prompthooks'
version, and by the project only when the managed folder lies inside it (a hook's working
folder can then depend on it). A compiled policy is read only when it is a regular file
(no link), owned by the managed folder's owner, neither it nor the folder writable by group
or others: so only the folder's owner, who can rewrite the policy itself, can have written
it. Anything else (absent, planted, stale) is ignored and the folder is validated as before:
such a file can cost time, never change a verdict. A policy that uses policy packs (whose
files live in the user's cache) is validated on every load, one whose audit path starts with
``~`` (each user's home) is never compiled, and a served load whose hooks name a template
that is no longer found is validated again (which reports it, and a broken managed policy
blocks).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .. import paths
from .._version import __version__
from ..config.discovery import MANAGED_DIR, discover
from ..config.load_result import Loaded
from ..core.hook import Source
from . import cache

COMPILED_NAME = "compiled-policy.json"  # in the managed folder; the loader never reads it
_FORMAT = 1
MAX_COMPILED_BYTES = 16 * 1024 * 1024
# A project no managed folder lies inside: what a compiled policy is made for.
_NO_PROJECT = os.devnull
_MEMO: dict[str, dict[str, Any]] = {}
_MEMO_ENTRIES = 16  # a long-lived process whose policy keeps changing starts afresh


class Ignored(Exception):
    """A compiled policy that is not served, and why."""


def key(source: Source, folder: Path, project_dir: str) -> str:
    """Everything the folder's load depends on, as one string."""
    real = Path(os.path.realpath(folder))
    project = Path(os.path.realpath(project_dir))
    inside = real == project or project in real.parents
    return json.dumps([_FORMAT, __version__, source._asdict(), str(real),
                       str(project) if inside else None, cache.seen(folder, strong=True)],
                      sort_keys=True)


def _memo_key(k: str) -> str:
    # An audit path may start with ~, the running user's home (a compiled policy is made only
    # when no such path is there: see compile_folder).
    return f"{os.path.expanduser('~')}\0{k}"


def _compiled_key(k: str) -> str:
    # A compiled policy is made only when its load does not depend on the home (see
    # compile_folder): one process serves it to every user, whoever's home the run has.
    return f"compiled\0{k}"


def preload(environ: Mapping[str, str]) -> None:
    """Keep ``/etc/prompthooks``'s compiled policy in this process's memo (the system resident
    process, before it forks runs: while the policy is unchanged they read it from memory, as
    whichever user they run as). Whatever goes wrong leaves the runs to load it themselves."""
    sources = [(s, p) for s, p in discover(_NO_PROJECT, environ, MANAGED_DIR)
               if s.name == "managed"]
    for source, folder in sources:
        k = key(source, folder, _NO_PROJECT)
        try:
            data = read_compiled(folder, k)
        except Exception:  # Ignored, or anything unforeseen: the runs load it
            continue
        if data is not None:
            _remember(_compiled_key(k), data)


def _templates_found(data: Mapping[str, Any]) -> bool:
    """Whether every template the hooks name by file is still found, as validating checks
    (one removed since makes the policy broken, and a broken managed policy blocks)."""
    named = [(h["prompt_file"], h.get("config_dir")) for h in data["hooks"]
             if h.get("prompt_file") and h.get("prompt") is None]
    if not named:
        return True
    from ..config.templates import TemplateError, resolve_prompt_file  # only for such hooks

    try:
        for name, config_dir in named:
            resolve_prompt_file(name, config_dir)
    except TemplateError:
        return False
    return True


def load(sources: Sequence[tuple[Source, Path]], project_dir: str,
         environ: Mapping[str, str]) -> Loaded:
    """The managed folders' hooks, highest priority first: each from this process's memo,
    else from its compiled policy, else validated (then remembered)."""
    out = Loaded()
    off = environ.get("PROMPTHOOKS_NO_CACHE") == "1"
    keys = []
    for source, folder in sources:
        k = key(source, folder, project_dir)
        keys.append(k)
        data = None if off else _served(folder, k)
        if data is None:
            loaded = validate(source, folder, project_dir)
            if not off and not loaded.uses_packs:
                _remember(_memo_key(k), cache.to_data(loaded))
        else:
            loaded = cache.from_data(data)
        merge(out, loaded)
    out.fingerprint = json.dumps(keys)
    return out


def _served(folder: Path, k: str) -> dict[str, Any] | None:
    """The folder's load from this process's memory or its compiled policy, or None (then it
    is validated: whatever goes wrong here can only cost that)."""
    try:
        data = _MEMO.get(_memo_key(k)) or _MEMO.get(_compiled_key(k))
        if data is None:
            data = read_compiled(folder, k)
            if data is not None:
                _remember(_compiled_key(k), data)
        return data if data is not None and _templates_found(data) else None
    except Exception:  # Ignored, or anything unforeseen: validate
        return None


def _remember(k: str, data: dict[str, Any]) -> None:
    if len(_MEMO) >= _MEMO_ENTRIES:
        _MEMO.clear()
    _MEMO[k] = data


def validate(source: Source, folder: Path, project_dir: str) -> Loaded:
    """The folder loaded from its files (pydantic's work)."""
    from .loader import load_path  # validation only: a served policy needs no loader

    loaded = Loaded()
    load_path(folder, source, project_dir, loaded)
    return loaded


def merge(into: Loaded, lower: Loaded) -> Loaded:
    """``lower`` added below what ``into`` holds: its hooks after, its run-wide settings only
    where ``into`` says nothing (a jsonl export target of each kind from the highest)."""
    into.hooks += lower.hooks
    into.warnings += lower.warnings
    into.failures += lower.failures
    into.unknown_events += lower.unknown_events
    into.sources += lower.sources
    for name, value in lower.audit.items():
        if name == "export":
            export = into.audit.setdefault("export", {})
            for kind, target in value.items():
                export.setdefault(kind, target)
        else:
            into.audit.setdefault(name, value)
    into.managed_only = into.managed_only or lower.managed_only
    into.uses_packs = into.uses_packs or lower.uses_packs
    into.pack_checks += lower.pack_checks
    return into


def compiled_path(folder: Path) -> Path:
    return folder / COMPILED_NAME


def read_compiled(folder: Path, k: str) -> dict[str, Any] | None:
    """The compiled policy's load for key ``k``, or None when there is none; raises
    :class:`Ignored` for one that is not served (planted, stale, damaged)."""
    path = compiled_path(folder)
    try:
        top = os.stat(folder)
        fd = paths.open_state(path)
    except FileNotFoundError:
        return None
    except (OSError, paths.BadStateFile) as exc:
        raise Ignored(f"{path}: {exc}") from None
    try:
        info = os.fstat(fd)
        # The folder's owner can rewrite the policy itself, so a file only they can have
        # written stands for it; one anybody else could have written (the running user, a
        # group) is never read. A file owned by the running user passes only when the
        # running user owns the folder too: then the policy is theirs anyway.
        if top.st_mode & 0o022:
            raise Ignored(f"{path}: ignored: the folder {folder} is writable by group or "
                          "others")
        if info.st_uid != top.st_uid:
            raise Ignored(f"{path}: ignored: owned by uid {info.st_uid}, not by the folder's "
                          f"owner (uid {top.st_uid})")
        if info.st_mode & 0o022:
            raise Ignored(f"{path}: ignored: writable by group or others")
        if info.st_size > MAX_COMPILED_BYTES:
            raise Ignored(f"{path}: ignored: larger than {MAX_COMPILED_BYTES} bytes")
        body = paths.read_upto(fd, MAX_COMPILED_BYTES + 1)
    except OSError as exc:
        raise Ignored(f"{path}: {exc}") from None
    finally:
        os.close(fd)
    try:
        data = json.loads(body)
        fresh = data["format"] == _FORMAT and data["key"] == k
        loaded = data["loaded"]
        if fresh:
            cache.from_data(loaded)  # a damaged body is refused here, not at serve time
    except Exception:
        raise Ignored(f"{path}: ignored: damaged") from None
    if not fresh:
        raise Ignored(f"{path}: ignored: stale (the managed policy or prompthooks changed "
                      "since it was compiled)")
    assert isinstance(loaded, dict)
    return loaded


def compiled_state(source: Source, folder: Path) -> str | None:
    """One line when a run cannot use the folder's compiled policy (and so validates it on
    every event), with how to rebuild it; None when it is served."""
    rebuild = f"run as its owner: prompthooks managed compile --managed-dir {folder}"
    try:
        if read_compiled(folder, key(source, folder, _NO_PROJECT)) is not None:
            return None
    except Ignored as exc:
        return f"{exc}; {rebuild}"
    return f"{folder}: no compiled policy ({COMPILED_NAME}), so every event validates it; " \
           f"{rebuild}"


def compiled_notes(sources: Sequence[Source]) -> list[str]:
    """:func:`compiled_state` of each managed source that has one (for doctor, validate)."""
    notes = (compiled_state(s, Path(s.path)) for s in sources if s.name == "managed")
    return [note for note in notes if note]


def _home_dependent(source: Source, folder: Path, loaded: Loaded) -> bool:
    """Whether the load changes with the running user's home (a ``~`` in an audit path)."""
    home = os.environ.get("HOME")
    os.environ["HOME"] = os.path.join(os.sep, "nonexistent", "another-home")
    try:
        other = validate(source, folder, _NO_PROJECT)
    finally:
        if home is None:
            os.environ.pop("HOME", None)
        else:
            os.environ["HOME"] = home
    return cache.to_data(other) != cache.to_data(loaded)


def compile_folder(source: Source, folder: Path) -> Path:
    """Validate the folder and write its compiled policy; raises ValueError (a policy that
    cannot be compiled) or OSError."""
    loaded = validate(source, folder, _NO_PROJECT)
    if loaded.uses_packs:
        raise ValueError(f"{folder}: uses policy packs, whose files live in the user's "
                         "cache: not compiled, it is validated on every event")
    broken = [f for f in loaded.failures if f.kind == "config"]
    if broken:
        raise ValueError(f"{folder}: not compiled: {broken[0].message} (see: prompthooks "
                         f"validate --managed-dir {folder})")
    if _home_dependent(source, folder, loaded):
        raise ValueError(f"{folder}: not compiled: an audit path starts with ~ (each running "
                         "user's home); write it as an absolute path")
    owner = os.stat(folder).st_uid
    if os.geteuid() not in (0, owner):
        raise ValueError(f"{folder}: not compiled: run it as the folder's owner (uid {owner})"
                         ": a file anybody else writes there is never read")
    k = key(source, folder, _NO_PROJECT)
    body = json.dumps({"format": _FORMAT, "key": k, "loaded": cache.to_data(loaded)},
                      sort_keys=True).encode()
    path = compiled_path(folder)
    paths.atomic_write(path, body, mode=0o644)
    if os.geteuid() != owner:  # root compiling another owner's folder: the file is theirs
        os.chown(path, owner, os.stat(folder).st_gid, follow_symlinks=False)
    return path
