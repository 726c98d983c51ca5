"""Cursor's glue: one handler per event in ``.cursor/hooks.json`` (project) or
``~/.cursor/hooks.json`` (user), ``{"command": GLUE, "timeout": 60}``.

Glue may sit on two events Cursor sends for one action (``preToolUse`` and
``beforeShellExecution`` for a shell command): each runs only the hooks Cursor itself would
run for it (see ``Event.own_key``), so no hook runs twice.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...install import jsonconfig
from ...install.glue import Glue, HostGlue, Say, Scope, is_glue
from . import wire as cursor

# Cursor documents no default timeout; the run's Cursor budget (55 s) fits inside this.
TIMEOUT = 60


def _is_glue_handler(handler: Any) -> bool:
    return (isinstance(handler, dict) and handler.get("type", "command") == "command"
            and is_glue(handler.get("command")))


LAYOUT = jsonconfig.JsonLayout(
    skeleton=lambda: {"version": 1},
    entry=lambda glue: {"command": glue, "timeout": TIMEOUT},
    has_glue=lambda handlers: any(map(_is_glue_handler, handlers)),
    without_glue=lambda handlers: [h for h in handlers if not _is_glue_handler(h)],
    retarget=lambda handlers, glue: [{**h, "command": glue} if _is_glue_handler(h) else h
                                     for h in handlers],
    glue_commands=lambda handlers: [str(h["command"]) for h in handlers
                                    if _is_glue_handler(h)],
)


def install(path: Path, events: Sequence[str], glue: Glue, force: bool, say: Say) -> None:
    jsonconfig.install(path, LAYOUT, events, glue.command, say)


def managed_location(root: Path) -> Path:
    """Cursor's enterprise hooks file (the highest of its hook levels)."""
    folder = "Library/Application Support/Cursor" if sys.platform == "darwin" else "etc/cursor"
    return root / folder / "hooks.json"


def location(scope: Scope, project: Path, home: Path) -> Path:
    return (project if scope == "project" else home) / ".cursor" / "hooks.json"


def uninstall(path: Path, say: Say) -> None:
    jsonconfig.uninstall(path, LAYOUT, say)


def installed(path: Path) -> bool:
    return bool(jsonconfig.glue_events(path, LAYOUT))


def glued(path: Path) -> list[str]:
    return jsonconfig.glue_events(path, LAYOUT)


GLUE = HostGlue(
    name=cursor.NAME, title=cursor.TITLE, events=cursor.HOST_EVENTS,
    # preToolUse, not beforeShellExecution: it covers every tool, the shell included.
    default_events=("preToolUse", "postToolUse", "beforeSubmitPrompt", "stop"),
    location=location, install=install, uninstall=uninstall, installed=installed,
    glued=glued,
    # Cursor runs a project's hooks from the project's root, so the path is relative to it.
    launcher=".cursor/hooks/prompthooks", launcher_glue=".cursor/hooks/prompthooks run",
    launcher_note="the launcher .cursor/hooks/prompthooks",
    managed=managed_location,
    no_local="it has no personal settings layer for a project: use --scope user",
)
