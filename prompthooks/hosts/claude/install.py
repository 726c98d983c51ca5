"""Claude Code's glue: one matcher-less group per event in ``.claude/settings.json`` (project),
``.claude/settings.local.json`` (local: the project's uncommitted personal layer) or
``~/.claude/settings.json`` (user), ``{"hooks": [{"type": "command", "command": GLUE}]}``.
prompthooks does its own matching, so the group has no matcher."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...install import jsonconfig
from ...install.glue import Glue, HostGlue, Say, Scope, is_glue
from . import wire as claude


def _is_glue_handler(handler: Any) -> bool:
    return (isinstance(handler, dict) and handler.get("type", "command") == "command"
            and is_glue(handler.get("command")))


def _handlers(group: Any) -> list[Any]:
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return hooks if isinstance(hooks, list) else []


def _has_glue(groups: list[Any]) -> bool:
    return any(_is_glue_handler(h) for group in groups for h in _handlers(group))


def _without_glue(groups: list[Any]) -> list[Any]:
    """Our handlers taken out; a group is dropped only when that left it empty."""
    out: list[Any] = []
    for group in groups:
        handlers = _handlers(group)
        rest = [h for h in handlers if not _is_glue_handler(h)]
        if len(rest) == len(handlers):
            out.append(group)
        elif rest:
            out.append({**group, "hooks": rest})
    return out


def _retarget(groups: list[Any], glue: str) -> list[Any]:
    return [{**group, "hooks": [{**h, "command": glue} if _is_glue_handler(h) else h
                                for h in _handlers(group)]}
            if any(map(_is_glue_handler, _handlers(group))) else group for group in groups]


LAYOUT = jsonconfig.JsonLayout(
    skeleton=dict,
    entry=lambda glue: {"hooks": [{"type": "command", "command": glue}]},
    has_glue=_has_glue,
    without_glue=_without_glue,
    retarget=_retarget,
    glue_commands=lambda groups: [str(h["command"]) for group in groups
                                  for h in _handlers(group) if _is_glue_handler(h)],
)


def managed_location(root: Path) -> Path:
    """Claude Code's managed settings file (its highest-priority settings source)."""
    folder = ("Library/Application Support/ClaudeCode" if sys.platform == "darwin"
              else "etc/claude-code")
    return root / folder / "managed-settings.json"


def local_location(project: Path) -> Path:
    """The project's personal settings, which Claude Code keeps out of git."""
    return project / ".claude" / "settings.local.json"


def location(scope: Scope, project: Path, home: Path) -> Path:
    return (project if scope == "project" else home) / ".claude" / "settings.json"


def install(path: Path, events: Sequence[str], glue: Glue, force: bool, say: Say) -> None:
    jsonconfig.install(path, LAYOUT, events, glue.command, say)


def uninstall(path: Path, say: Say) -> None:
    jsonconfig.uninstall(path, LAYOUT, say)


def installed(path: Path) -> bool:
    return bool(jsonconfig.glue_events(path, LAYOUT))


def glued(path: Path) -> list[str]:
    return jsonconfig.glue_events(path, LAYOUT)


GLUE = HostGlue(
    name=claude.NAME, title=claude.TITLE, events=claude.HOST_EVENTS,
    default_events=("PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop"),
    location=location, install=install, uninstall=uninstall, installed=installed,
    glued=glued,
    # Claude Code runs a hook in the session's current folder, which moves with the agent's
    # cd: its own variable names the project, as its docs show for project scripts (Cursor
    # sets it too when it runs Claude Code's hooks; without it, the current folder).
    launcher=".claude/hooks/prompthooks",
    launcher_glue='"${CLAUDE_PROJECT_DIR:-.}"/.claude/hooks/prompthooks run',
    launcher_note="the launcher .claude/hooks/prompthooks",
    managed=managed_location, local=local_location,
)
