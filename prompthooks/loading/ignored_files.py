"""Files that look like a config but that prompthooks does not read: ``hooks.yaml``,
``hooks.toml``, ``hooks.jsonc`` beside (or instead of) ``hooks.json``, or a Cline-style hook
with an extension (``PreToolUse.sh``). Without a word they would be "0 hooks, 0 errors".

Only a fixed list of names is looked up (no folder is listed), so a folder of a million other
files costs nothing here either.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..config.files import CONFIG_FILE, HOOKS_DIR
from ..core.hook import Source
from ..hosts import FOLDER_DIALECT

_FORMATS = {"yaml": "YAML", "yml": "YAML", "toml": "TOML", "jsonc": "JSON with comments",
            "json5": "JSON5", "hjson": "Hjson", "ini": "INI", "js": "JavaScript",
            "ts": "TypeScript"}
_STEMS = ("hooks", "hook", "prompthooks")
_MISNAMED = ("Hooks.json", "HOOKS.json", "hook.json", "prompthooks.json", "settings.json")
# Extensions people give a Cline-style hook, which Cline (and prompthooks) look up by its
# bare name.
_SCRIPT_SUFFIXES = (".sh", ".bash", ".zsh", ".py", ".js", ".mjs", ".ts", ".rb", ".pl", ".txt",
                    ".prompt", ".markdown")


def _config_names() -> Iterator[tuple[str, str]]:
    for stem in _STEMS:
        for ext, title in _FORMATS.items():
            yield f"{stem}.{ext}", (f"{title} is not read: prompthooks reads {CONFIG_FILE} "
                                    "(plain JSON) here")
    for name in _MISNAMED:
        yield name, f"not read: prompthooks reads {CONFIG_FILE} here (the name is exact)"


def _hook_names() -> Iterator[tuple[str, str]]:
    for hook in FOLDER_DIALECT.hook_files:
        for suffix in _SCRIPT_SUFFIXES:
            yield f"{hook}{suffix}", (f"not run: a Cline-style hook is named exactly {hook} "
                                      f"(an executable, no extension), or {hook}.md for a "
                                      "prompt")


def _found(folder: Path, names: Iterable[tuple[str, str]]) -> Iterator[str]:
    for name, why in names:
        if os.path.lexists(folder / name):
            yield f"{folder / name}: {why}"


def unread_files(folders: Iterable[Path]) -> list[str]:
    """One warning per unread config-like file in each folder and its ``hooks/``."""
    out: list[str] = []
    for folder in folders:
        try:
            if not folder.is_dir():
                continue
            out += _found(folder, _config_names())
            out += _found(folder, _hook_names())
            if (folder / HOOKS_DIR).is_dir():
                out += _found(folder / HOOKS_DIR, _hook_names())
        except OSError:
            continue  # a folder that cannot be looked at is reported by the loader
    return out


def unread_in_sources(sources: Iterable[Source]) -> list[str]:
    """:func:`unread_files` for every folder source (``--config FILE`` is read as given)."""
    return unread_files(Path(source.path) for source in sources)
