"""Glue in a host's JSON config (Claude Code's ``settings.json``, Cursor's ``hooks.json``):
append one entry per event, and take exactly those entries out again.

Install only ever appends to ``hooks.<event>`` (creating the list, ``hooks`` or the file when
missing), so uninstall can undo it: take our entries out, drop what that left empty, and if
the rest equals the file as it was (``originals``), put those bytes back.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import PromptHooksError
from . import files, originals
from .glue import Say


@dataclass(frozen=True)
class JsonLayout:
    skeleton: Callable[[], dict[str, Any]]  # a new file before any entry is added
    entry: Callable[[str], dict[str, Any]]  # the glue entry for one event
    has_glue: Callable[[list[Any]], bool]  # whether an event's list holds our glue
    without_glue: Callable[[list[Any]], list[Any]]  # the list less our glue
    # The list with every glue entry's command set to this one (its other fields kept), and
    # the glue commands it holds: glue of another form (an earlier install's absolute path in
    # a project's file) is brought to the form chosen now.
    retarget: Callable[[list[Any], str], list[Any]]
    glue_commands: Callable[[list[Any]], list[str]]


def parse(raw: bytes, path: Path) -> dict[str, Any]:
    """A host config's content, or one error line naming the file (nothing is written)."""
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise PromptHooksError(f"{path}: not UTF-8 text; nothing was changed") from None
    except json.JSONDecodeError as exc:
        raise PromptHooksError(f"{path}: not valid JSON: line {exc.lineno} column {exc.colno}: "
                               f"{exc.msg}; nothing was changed") from None
    if not isinstance(data, dict):
        raise PromptHooksError(f"{path}: the top level is not a JSON object; nothing was changed")
    if not isinstance(data.get("hooks", {}), dict):
        raise PromptHooksError(f"{path}: 'hooks' is not a JSON object; nothing was changed")
    return data


def dump(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode()


def glue_events(path: Path, layout: JsonLayout) -> list[str]:
    """The events whose lists hold our glue in the file (none when there is no file)."""
    raw = files.read_bytes(path)
    if raw is None:
        return []
    hooks = parse(raw, path).get("hooks", {})
    return [key for key, entries in hooks.items()
            if isinstance(entries, list) and layout.has_glue(entries)]


def install(path: Path, layout: JsonLayout, events: Sequence[str], glue: str, say: Say) -> None:
    raw = files.read_bytes(path)
    data = layout.skeleton() if raw is None else parse(raw, path)
    hooks = data.setdefault("hooks", {})
    present: list[str] = []
    added: list[str] = []
    for event in events:
        entries = hooks.get(event, [])
        if not isinstance(entries, list):
            raise PromptHooksError(f"{path}: hooks.{event} is not a list; nothing was changed")
        (present if layout.has_glue(entries) else added).append(event)
    stale = [event for event in present
             if any(command != glue for command in layout.glue_commands(hooks[event]))]
    present = [event for event in present if event not in stale]
    if present:
        say(f"already installed: {', '.join(present)} in {path}")
    if not added and not stale:
        return
    for event in stale:
        hooks[event] = layout.retarget(hooks[event], glue)
    for event in added:
        hooks.setdefault(event, []).append(layout.entry(glue))
    if raw is not None:
        kept = originals.keep(path, raw)
        if kept is not None:
            say(f"backed up {path} to {kept}")
    files.atomic_write(path, dump(data))
    if added:
        say(f"wrote {path} ({', '.join(added)})")
    if stale:
        say(f"rewrote the glue of {', '.join(stale)} in {path}: it named prompthooks another "
            f"way; now {glue}")


def _normal(data: dict[str, Any]) -> dict[str, Any]:
    """The content with empty event lists and an empty ``hooks`` left out: what a host reads
    the same whether they are there or not."""
    out = dict(data)
    hooks = out.pop("hooks", None)
    if isinstance(hooks, dict):
        hooks = {key: value for key, value in hooks.items() if value != []}
    if hooks:
        out["hooks"] = hooks
    return out


def _original_data(original: originals.Original | None) -> dict[str, Any] | None:
    if original is None:
        return None
    try:
        return parse(original.data, original.where)
    except PromptHooksError:
        return None  # a copy we cannot read is never restored over newer content


def uninstall(path: Path, layout: JsonLayout, say: Say) -> None:
    raw = files.read_bytes(path)
    if raw is None:
        say(f"not installed: {path} does not exist")
        return
    data = parse(raw, path)
    hooks: dict[str, Any] = data.get("hooks", {})
    removed: list[str] = []
    for key, entries in list(hooks.items()):
        if isinstance(entries, list) and layout.has_glue(entries):
            removed.append(key)
            rest = layout.without_glue(entries)
            if rest:
                hooks[key] = rest
            else:
                del hooks[key]
    if not removed:
        say(f"not installed: no prompthooks entries in {path}")
        return
    if not hooks:
        data.pop("hooks", None)
    kept = originals.read(path)
    original = _original_data(kept)
    if kept is not None and original is not None and _normal(original) == _normal(data):
        originals.restore(path, kept)
        say(f"restored {path} from {kept.where}")
    elif not originals.exists(path) and _normal(data) == _normal(layout.skeleton()):
        files.remove(path)  # install created it and nothing else was added since
        say(f"removed {path}")
    else:
        files.atomic_write(path, dump(data))
        say(f"removed prompthooks from {path} ({', '.join(removed)})")
        if originals.exists(path):
            # Its other changes since install are the user's: the copy from before them is
            # not put back, and is not left behind either.
            say(f"kept the other changes in {path} since install; its copy from before "
                "install was dropped")
            originals.drop(path)
