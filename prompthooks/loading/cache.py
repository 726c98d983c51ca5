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
from pathlib import Path
from typing import Any

from .. import digests, paths
from .._version import __version__
from ..config import files
from ..config.load_result import Loaded, LoadFailure
from ..core.hook import Hook, PromptSettings, Source, Trigger
from ..core.matchers import Matcher
from ..hosts import FOLDER_DIALECT

_FORMAT = 12  # 12: agent and http hooks (an older cache skipped them)
MAX_CACHE_BYTES = 16 * 1024 * 1024  # a larger entry is not read: the config is loaded anew


def _entry(path: Path, content: bool, strong: bool = False) -> list[Any]:
    """What the loader would see at ``path``, without ever blocking or reading much
    (``strong``: a sha256 of the content, not a checksum)."""
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
            data = files.read_bytes(path)
            entry.append(digests.sha256(data).hexdigest() if strong else zlib.crc32(data))
        except (OSError, files.UnsafeFile):
            entry.append(None)
    return entry


def _folder(path: Path, strong: bool) -> list[Any]:
    return [_entry(path / name, name.endswith(".md"), strong)
            for name in files.hook_file_names(FOLDER_DIALECT.hook_files)]


def _stat(path: Path, strong: bool = False) -> list[Any]:
    top = _entry(path, True, strong)
    if top[1:] == ["folder"]:
        hooks = path / files.HOOKS_DIR
        top += [_entry(path / files.CONFIG_FILE, True, strong), _folder(path, strong),
                _entry(hooks, False), _folder(hooks, strong)]
    return top


def fingerprint(sources: Sequence[tuple[Source, Path]], project_dir: str) -> str:
    """Everything the loaded config depends on, as one string (stored with the entry)."""
    data = [_FORMAT, __version__, project_dir,
            [[source._asdict(), seen(path)] for source, path in sources]]
    return json.dumps(data, sort_keys=True)


def seen(path: Path, strong: bool = False) -> list[Any]:
    """What the loader would see under ``path`` (``strong``: sha256 digests of the content)."""
    try:
        return _stat(path, strong)
    except Exception as exc:  # never a reason not to load: then this is always a miss
        return [str(path), "error", type(exc).__name__, os.urandom(8).hex()]


def entry_path(fingerprint: str, environ: Mapping[str, str]) -> Path:
    name = f"config-{zlib.crc32(fingerprint.encode()):08x}-{len(fingerprint)}.json"
    return paths.cache_home(environ) / name


def hook_to_data(hook: Hook) -> dict[str, Any]:
    # ``_asdict`` leaves the records inside a hook as tuples (JSON lists): each is written as
    # an object of its own, in its field's place (tests/core/test_records.py holds the bytes).
    data = hook._asdict()
    data["source"] = hook.source._asdict()
    data["trigger"] = hook.trigger._asdict()
    data["matcher"] = hook.matcher._asdict()
    settings = hook.prompt_settings
    data["prompt_settings"] = None if settings is None else settings._asdict()
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
    fields["headers"] = tuple(tuple(pair) for pair in fields.get("headers", ()))
    fields["allowed_env_vars"] = tuple(fields.get("allowed_env_vars", ()))
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


def to_data(loaded: Loaded) -> dict[str, Any]:
    """A load as plain JSON data (what an entry, the managed memo and a compiled managed
    policy hold)."""
    return {
        "hooks": [hook_to_data(h) for h in loaded.hooks],
        "warnings": loaded.warnings,
        "unknown_events": loaded.unknown_events,
        "failures": [{"source": f.source._asdict(), "message": f.message,
                      "fail_closed": f.fail_closed,
                      "events": None if f.events is None else sorted(f.events),
                      "details": list(f.details), "kind": f.kind}
                     for f in loaded.failures],
        "sources": [s._asdict() for s in loaded.sources],
        "audit": loaded.audit,
        "pack_checks": loaded.pack_checks,
        "managed_only": loaded.managed_only,
    }


def from_data(data: Mapping[str, Any]) -> Loaded:
    """A fresh :class:`Loaded` from :func:`to_data`'s data (raises on a damaged one)."""
    failures = [LoadFailure(Source(**f["source"]), f["message"], f["fail_closed"],
                            None if f["events"] is None else frozenset(f["events"]),
                            tuple(f["details"]), f.get("kind", "config"))
                for f in data["failures"]]
    return Loaded(hooks=[hook_from_data(h) for h in data["hooks"]],
                  warnings=list(data["warnings"]), failures=failures,
                  unknown_events=list(data["unknown_events"]),
                  sources=[Source(**s) for s in data["sources"]],
                  audit=json.loads(json.dumps(data["audit"])),
                  pack_checks=list(data.get("pack_checks", [])),
                  managed_only=bool(data.get("managed_only", False)))
