"""Cursor's glue: one handler per event in ``.cursor/hooks.json`` (project) or
``~/.cursor/hooks.json`` (user), ``{"command": GLUE, "timeout": 60}``.

Several Cursor events are the same canonical event for some tools (``preToolUse`` and
``beforeShellExecution`` are both PreToolUse for Bash; ``postToolUse`` and
``afterShellExecution`` both PostToolUse for Bash...). Glue on two of them would run every
hook twice, so install refuses to put it on both.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...errors import EXIT_ERROR, EXIT_USAGE, PromptHooksError
from ...install import jsonconfig
from ...install.glue import is_glue
from ...install.host import HostGlue, Say, Scope
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
)


def overlap(a: str, b: str) -> bool:
    """Whether two Cursor events fire for the same canonical event and tool."""
    if a == b:
        return True
    if a not in cursor.CONFIG_EVENTS or b not in cursor.CONFIG_EVENTS:
        return False
    first, second = cursor.CONFIG_EVENTS[a].trigger, cursor.CONFIG_EVENTS[b].trigger
    if first.event != second.event or first.subject != second.subject:
        return False
    return not first.tools or not second.tools or bool(set(first.tools) & set(second.tools))


def _clash(events: Sequence[str], others: Sequence[str]) -> tuple[str, str] | None:
    for event in events:
        for other in others:
            if other != event and overlap(event, other):
                return event, other
    return None


def _shared(a: str, b: str) -> str:
    """What two overlapping events both stand for, e.g. ``PreToolUse for Bash``."""
    first, second = cursor.CONFIG_EVENTS[a].trigger, cursor.CONFIG_EVENTS[b].trigger
    tools = first.tools or second.tools
    names = ["MCP tools" if tool == "mcp__" else tool for tool in tools
             if not first.tools or not second.tools or tool in second.tools]
    return first.event + (f" for {', '.join(names)}" if names else "")


def install(path: Path, events: Sequence[str], glue: str, force: bool, say: Say) -> None:
    both = _clash(events, events)
    if both:
        raise PromptHooksError(f"choose one of {both[0]} and {both[1]}: both are "
                               f"{_shared(*both)}, so hooks would run twice", EXIT_USAGE)
    present = jsonconfig.glue_events(path, LAYOUT)
    clash = _clash([e for e in events if e not in present], present)
    if clash:
        wanted, there = clash
        raise PromptHooksError(
            f"prompthooks is installed on {there} in {path} already; {wanted} is "
            f"{_shared(wanted, there)} too, so hooks would run twice: leave {wanted} out "
            "(--events), or uninstall first; nothing was changed", EXIT_ERROR)
    jsonconfig.install(path, LAYOUT, events, glue, say)


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


GLUE = HostGlue(
    name=cursor.NAME, title=cursor.TITLE, events=cursor.HOST_EVENTS,
    # preToolUse, not beforeShellExecution: it covers every tool, the shell included.
    default_events=("preToolUse", "postToolUse", "beforeSubmitPrompt", "stop"),
    location=location, install=install, uninstall=uninstall, installed=installed,
    managed=managed_location,
    no_local="it has no personal settings layer for a project: use --scope user",
)
