"""The folders install created (``.claude``, ``.prompthooks``, ``~/.config/prompthooks``...),
remembered in the user's data folder so that uninstall removes them once they are empty
again, and never a folder that was there before install."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from ..paths import atomic_write, data_home, read_state
from . import files
from .glue import Say

RECORD = "installed-folders.json"


def _record(environ: Mapping[str, str]) -> Path:
    return data_home(environ) / RECORD


def _read(environ: Mapping[str, str]) -> list[str]:
    try:
        raw = read_state(_record(environ))
        data = json.loads(raw.decode("utf-8")) if raw is not None else None
    except (OSError, ValueError):
        return []  # none yet, or unreadable: no folder is known to be install's
    folders = data.get("folders") if isinstance(data, dict) else None
    return [f for f in folders if isinstance(f, str)] if isinstance(folders, list) else []


def _write(folders: list[str], environ: Mapping[str, str]) -> None:
    path = _record(environ)
    body = json.dumps({"folders": sorted(set(folders))}, indent=1)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, body.encode("utf-8"))
    except OSError:
        # Not remembered: uninstall will then leave those folders in place, which is only
        # untidy.
        pass


def remember(folders: Iterable[str], environ: Mapping[str, str]) -> None:
    new = [os.path.abspath(f) for f in folders]
    if new:
        _write([*_read(environ), *new], environ)


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def prune(places: Iterable[Path], environ: Mapping[str, str], say: Say) -> None:
    """Remove the folders install created that hold ``places`` (or are them) and are empty
    now, innermost first; forget the ones that are gone."""
    known = _read(environ)
    targets = [Path(os.path.abspath(p)) for p in places]
    mine = sorted((Path(f) for f in set(known) if any(_inside(t, Path(f)) for t in targets)),
                  key=lambda f: (-len(f.parts), str(f)))
    for folder in mine:
        if files.remove_folder(folder):
            say(f"removed {folder} (an empty folder install created)")
    if files.is_dry_run():
        return
    left = [f for f in known if os.path.isdir(f)]
    if left != known:
        _write(left, environ)
