"""A host config as it was before install first changed it, kept so that uninstall can put
its exact bytes and mode back.

The copy lives in the user's data folder (``$XDG_DATA_HOME/prompthooks/originals/``, one
file per config, named by a digest of its path), never beside the config: a project's
``.claude/`` and ``.cursor/`` are committed, and a copy there would be shared, and left behind
in every clone. An earlier copy is never replaced (it holds the older original). A copy
``<file>.prompthooks-backup`` beside the config, as earlier versions kept it, is read as the
original and removed with it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from .. import paths
from . import files

FOLDER = "originals"
LIMIT = 8 << 20  # bytes: a host config's copy, base64 in JSON; none is near this


@dataclass(frozen=True)
class Original:
    data: bytes
    mode: int | None
    where: Path  # the copy's file


def folder() -> Path:
    return paths.data_home(os.environ) / FOLDER


def record(path: Path) -> Path:
    """Where the copy of the config at ``path`` is kept."""
    key = hashlib.sha256(os.path.abspath(path).encode("utf-8", "surrogateescape")).hexdigest()
    return folder() / f"{key[:32]}.json"


def read(path: Path) -> Original | None:
    """The config's bytes and mode before install, or None: install created it, or the copy
    is unreadable or is not the copy of this file (then it is never written back)."""
    legacy = files.backup_path(path)
    raw = files.read_bytes(legacy)
    if raw is not None:
        return Original(raw, files.file_mode(legacy), legacy)
    where = record(path)
    try:
        text = files.read_state(where, LIMIT)
        if text is None:
            return None
        item = json.loads(text)
        if not isinstance(item, dict) or item.get("path") != os.path.abspath(path):
            return None
        mode = item.get("mode")
        return Original(base64.b64decode(str(item["data"]), validate=True),
                        mode if isinstance(mode, int) else None, where)
    except (OSError, ValueError, KeyError, binascii.Error):
        return None


def exists(path: Path) -> bool:
    return files.exists(files.backup_path(path)) or files.exists(record(path))


def keep(path: Path, data: bytes) -> Path | None:
    """Keep ``data`` (the config's bytes before our change) with its mode, unless a copy is
    kept already; where it went, or None."""
    if exists(path):
        return None
    where = record(path)
    item = {"path": os.path.abspath(path), "mode": files.file_mode(path),
            "data": base64.b64encode(data).decode("ascii")}
    files.atomic_write(where, (json.dumps(item) + "\n").encode(), 0o600)
    return where


def drop(path: Path) -> None:
    """Forget the copy (it is restored, or the config changed since and keeps its changes)."""
    files.remove(files.backup_path(path))
    files.remove(record(path))


def restore(path: Path, original: Original) -> None:
    files.atomic_write(path, original.data, original.mode)
    drop(path)
