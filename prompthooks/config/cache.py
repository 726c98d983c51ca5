"""A cache of validated configs, so the hot path never imports pydantic.

Validating a config needs pydantic (about 0.2 s to import here). The result, plain hooks, is
cached as JSON under the user's cache folder, keyed by the sources' paths and, for every file
that makes them up, its path, size and modification time (and each folder's listing), plus the
project folder and prompthooks' version. Any change to any of them is a miss. The cache is
JSON, never pickle: nothing in it is executed. ``PROMPTHOOKS_NO_CACHE=1`` turns it off.
"""

from __future__ import annotations

import json
import os
import tempfile
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from .. import __version__
from ..hook import Hook, PromptSettings, Source, Trigger
from ..matchers import Matcher

_FORMAT = 5


def cache_dir(environ: Mapping[str, str]) -> Path:
    base = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "prompthooks"


def _stat(path: Path) -> list[Any]:
    try:
        st = path.stat()
    except OSError:
        return [str(path), None]
    entry: list[Any] = [str(path), st.st_mtime_ns, st.st_size]
    if path.is_file():
        try:  # two edits within one clock tick keep the mtime: the content decides
            entry.append(zlib.crc32(path.read_bytes()))
        except OSError:
            entry.append(None)
    elif path.is_dir():
        try:
            names = sorted(os.listdir(path))
        except OSError:
            names = []
        entry.append([_stat(path / n) for n in names if not (path / n).is_dir()
                      or n == "hooks"])
    return entry


def fingerprint(sources: Sequence[tuple[Source, Path]], project_dir: str) -> str:
    """Everything the loaded config depends on, as one string (stored with the entry)."""
    data = [_FORMAT, __version__, project_dir,
            [[asdict(source), _stat(path)] for source, path in sources]]
    return json.dumps(data, sort_keys=True)


def _file(fingerprint: str, environ: Mapping[str, str]) -> Path:
    name = f"config-{zlib.crc32(fingerprint.encode()):08x}-{len(fingerprint)}.json"
    return cache_dir(environ) / name


def hook_to_data(hook: Hook) -> dict[str, Any]:
    return asdict(hook)


def hook_from_data(data: Mapping[str, Any]) -> Hook:
    fields = dict(data)
    fields["source"] = Source(**fields["source"])
    trigger = fields["trigger"]
    fields["trigger"] = Trigger(trigger["event"], tuple(trigger["tools"]), trigger["subject"])
    matcher = fields["matcher"]
    fields["matcher"] = Matcher(matcher["mode"], matcher["pattern"], tuple(matcher["names"]))
    settings = fields.get("prompt_settings")
    fields["prompt_settings"] = PromptSettings(**settings) if settings else None
    return Hook(**fields)


def load(key: str, environ: Mapping[str, str]) -> dict[str, Any] | None:
    if environ.get("PROMPTHOOKS_NO_CACHE") == "1":
        return None
    try:
        data = json.loads(_file(key, environ).read_text())
    except (OSError, ValueError):
        return None
    if isinstance(data, dict) and data.get("format") == _FORMAT and data.get("key") == key:
        return data
    return None


def store(key: str, data: dict[str, Any], environ: Mapping[str, str]) -> None:
    """Write atomically; a cache that cannot be written is simply not used."""
    if environ.get("PROMPTHOOKS_NO_CACHE") == "1":
        return
    folder = cache_dir(environ)
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".config-")
        with os.fdopen(fd, "w") as out:
            json.dump({"format": _FORMAT, "key": key, **data}, out)
        os.replace(tmp, _file(key, environ))
    except OSError:
        pass
