"""Loading config sources into hooks: a JSON file in a host's dialect (told apart by its
shape, read by that host's ``config`` module) or a Cline-style folder of executables named
after events.

A source that cannot be loaded does not stop the others: it becomes a :class:`LoadFailure`
that the engine turns into a failed hook, fail-closed when the source is the managed policy
or the file marks any of its hooks ``failClosed``. That holds whatever goes wrong: a hostile
file (a 5000-digit number, JSON nested 100,000 deep, a FIFO, a terabyte) or a folder that
cannot be read is one failure of its source, never an exception out of a load. Which sources
are loaded at all (trust, the cache) is ``loading.sources``.
"""

from __future__ import annotations

import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..config import files
from ..config.files import CONFIG_FILE as CONFIG_FILE
from ..config.files import HOOKS_DIR as HOOKS_DIR
from ..config.files import file_type as file_type
from ..config.handlers import json_path as json_path
from ..config.handlers import lenient_json, parse_json, read_text
from ..config.load_result import Loaded as Loaded
from ..config.load_result import LoadFailure as LoadFailure
from ..config.pack_hooks import fail_closed_events
from ..core.events import EVENTS
from ..core.hook import Source
from ..errors import ConfigError
from ..hosts import CANONICAL, file_dialect, folder_dialect


def _marks_fail_closed(value: Any) -> bool:
    if isinstance(value, Mapping):
        return value.get("failClosed") is True or any(map(_marks_fail_closed, value.values()))
    return isinstance(value, list) and any(map(_marks_fail_closed, value))


def _fail_closed_events(data: Any) -> frozenset[str]:
    """Canonical events of the handlers a (broken) file marks failClosed."""
    events: set[str] = set()
    hooks = data.get("hooks") if isinstance(data, Mapping) else None
    if not isinstance(hooks, Mapping):
        return frozenset()
    table = file_dialect(data).wire.CONFIG_EVENTS
    for key, entries in hooks.items():
        if key in table and _marks_fail_closed(entries):
            events.add(table[key].trigger.event)
    return frozenset(events)


def load_file(path: Path, source: Source, project_dir: str, loaded: Loaded,
              data: Any = None) -> None:
    """Add the hooks of one JSON config file to ``loaded`` (or a failure if it is broken).

    ``data`` is the file's content when it was read already (a config inlined in a test
    case file); ``path`` then names where it came from."""
    text = None
    try:
        if data is None:
            text = read_text(path)
            data = parse_json(text, path)
        if not isinstance(data, dict):
            raise ConfigError(str(path), "the top level must be a JSON object")
        hooks = file_dialect(data).config.load_file(data, path, source, loaded,
                                                    project_dir, CANONICAL)
    except Exception as exc:  # whatever it is, it is this file's failure alone
        error = (exc if isinstance(exc, ConfigError)
                 else ConfigError(str(path), files.describe(exc)))
        managed = source.name == "managed"
        events = None if managed else _told_events(data, text)
        loaded.failures.append(LoadFailure(source, error.message, managed or bool(events),
                                           events,
                                           error.details if len(error.details) > 1 else ()))
        return
    loaded.hooks += hooks


def _told_events(data: Any, text: str | None) -> frozenset[str]:
    """The events a broken file marks failClosed, as far as that can still be told."""
    try:
        if data is None and text is not None:
            data = lenient_json(text)
        if not isinstance(data, dict):
            return frozenset()
        events = _fail_closed_events(data)
        if not (isinstance(data.get("prompthooks"), dict) and "packs" in data["prompthooks"]):
            return events
        pack_events, every = fail_closed_events(data, CANONICAL.wire.CONFIG_EVENTS)
        if every:  # a failClosed pack policy whose events cannot be told: every event
            return frozenset(EVENTS)
        return events | pack_events
    except Exception:  # the file cannot even be read that far: nothing to tell
        return frozenset()


def load_dir(path: Path, source: Source, loaded: Loaded) -> None:
    """A folder of executables named after events (the folder dialect's reader)."""
    folder_dialect().load_folder(path, source, loaded)


def _load_path(path: Path, source: Source, project_dir: str, loaded: Loaded) -> None:
    if path.is_dir():
        mode = file_type(path / CONFIG_FILE)
        if mode is not None and not stat.S_ISDIR(mode):  # a FIFO there fails, unread
            load_file(path / CONFIG_FILE, source, project_dir, loaded)
        if (path / HOOKS_DIR).is_dir():
            load_dir(path / HOOKS_DIR, source, loaded)
        load_dir(path, source, loaded)
    elif path.exists():
        load_file(path, source, project_dir, loaded)
    else:
        loaded.failures.append(LoadFailure(source, f"{path}: no such file or folder",
                                           source.name == "managed"))


def load_path(path: Path, source: Source, project_dir: str, loaded: Loaded) -> None:
    """A file, or a folder holding Cline-style hooks and/or ``hooks.json`` and ``hooks/``.

    Nothing raises out of here: whatever fails (a folder that cannot be read, say) is one
    failure of this source, fail-closed when it is the managed policy."""
    loaded.sources.append(source)
    try:
        _load_path(path, source, project_dir, loaded)
    except Exception as exc:
        loaded.failures.append(LoadFailure(source, f"{path}: {files.describe(exc)}",
                                           source.name == "managed"))
