"""A cache of validated configs, so the hot path never imports pydantic.

Validating a config needs pydantic (about 0.2 s to import here). The result, plain hooks, is
cached as JSON under the user's cache folder, keyed by the sources' paths and, for every file
the loader would look at (``hooks.json``, the Cline-style names in the folder and in
``hooks/``), its type, size, modification time and inode, plus a checksum of the files the
loader reads (only regular files under the loader's size cap: a FIFO is never opened, a
sparse terabyte never read), the project folder and prompthooks' version. Any change to any
of them is a miss. The cache is JSON, never pickle: nothing in it is executed.
``PROMPTHOOKS_NO_CACHE=1`` turns it off.
"""

from __future__ import annotations

import json
import os
import stat
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from .. import paths
from .._version import __version__
from ..core.hook import Hook, PromptSettings, Source, Trigger
from ..core.matchers import Matcher
from . import files

_FORMAT = 11  # 11: agent hooks (an older cache skipped them)
MAX_CACHE_BYTES = 16 * 1024 * 1024  # a larger entry is not read: the config is loaded anew


def _entry(path: Path, content: bool) -> list[Any]:
    """What the loader would see at ``path``, without ever blocking or reading much."""
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return [str(path), None]
    except OSError as exc:
        return [str(path), "error", exc.errno]
    if stat.S_ISDIR(st.st_mode):
        return [str(path), "folder"]
    if not stat.S_ISREG(st.st_mode):
        return [str(path), "special", st.st_mode]
    entry: list[Any] = [str(path), "file", st.st_mtime_ns, st.st_size, st.st_ino]
    if content and st.st_size <= files.MAX_FILE_BYTES:
        try:  # two edits within one clock tick keep the mtime: the content decides
            entry.append(zlib.crc32(files.read_bytes(path)))
        except (OSError, files.UnsafeFile):
            entry.append(None)
    return entry


def _folder(path: Path) -> list[Any]:
    from ..hosts import FOLDER_DIALECT

    return [_entry(path / name, name.endswith(".md"))
            for name in files.hook_file_names(FOLDER_DIALECT.CONFIG_EVENTS)]


def _stat(path: Path) -> list[Any]:
    top = _entry(path, content=True)
    if top[1:] == ["folder"]:
        hooks = path / files.HOOKS_DIR
        top += [_entry(path / files.CONFIG_FILE, content=True), _folder(path),
                _entry(hooks, content=False), _folder(hooks)]
    return top


def fingerprint(sources: Sequence[tuple[Source, Path]], project_dir: str) -> str:
    """Everything the loaded config depends on, as one string (stored with the entry)."""
    data = [_FORMAT, __version__, project_dir,
            [[asdict(source), _safe_stat(path)] for source, path in sources]]
    return json.dumps(data, sort_keys=True)


def _safe_stat(path: Path) -> list[Any]:
    try:
        return _stat(path)
    except Exception as exc:  # never a reason not to load: then this is always a miss
        return [str(path), "error", type(exc).__name__, os.urandom(8).hex()]


def entry_path(fingerprint: str, environ: Mapping[str, str]) -> Path:
    name = f"config-{zlib.crc32(fingerprint.encode()):08x}-{len(fingerprint)}.json"
    return paths.cache_home(environ) / name


def hook_to_data(hook: Hook) -> dict[str, Any]:
    data = asdict(hook)
    data["halt_on_block"] = sorted(hook.halt_on_block)  # JSON has no sets
    return data


def hook_from_data(data: Mapping[str, Any]) -> Hook:
    fields = dict(data)
    fields["source"] = Source(**fields["source"])
    trigger = fields["trigger"]
    fields["trigger"] = Trigger(trigger["event"], tuple(trigger["tools"]), trigger["subject"])
    matcher = fields["matcher"]
    fields["matcher"] = Matcher(matcher["mode"], matcher["pattern"], tuple(matcher["names"]))
    fields["model_variables"] = tuple(fields.get("model_variables", ()))
    settings = fields.get("prompt_settings")
    fields["prompt_settings"] = PromptSettings(**settings) if settings else None
    fields["halt_on_block"] = frozenset(fields["halt_on_block"])
    return Hook(**fields)


def load(key: str, environ: Mapping[str, str]) -> dict[str, Any] | None:
    if environ.get("PROMPTHOOKS_NO_CACHE") == "1":
        return None
    try:
        # read_state: a FIFO, link or huge file planted in the entry's place is a miss,
        # never a wait
        data = json.loads(paths.read_state(entry_path(key, environ), MAX_CACHE_BYTES)
                          or b"null")
    except Exception:  # missing, damaged, or planted: a miss
        return None
    if isinstance(data, dict) and data.get("format") == _FORMAT and data.get("key") == key:
        return data
    return None


def store(key: str, data: dict[str, Any], environ: Mapping[str, str]) -> None:
    """Write atomically; a cache that cannot be written is simply not used."""
    if environ.get("PROMPTHOOKS_NO_CACHE") == "1":
        return
    try:
        paths.cache_home(environ).mkdir(parents=True, exist_ok=True, mode=0o700)
        body = json.dumps({"format": _FORMAT, "key": key, **data}).encode()
        paths.atomic_write(entry_path(key, environ), body)
    except Exception:
        pass
