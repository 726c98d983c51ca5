"""Cline's glue: one small executable per event, named after it, in ``.clinerules/hooks/``
(project) or ``~/Documents/Cline/Hooks/`` (user): ``#!/bin/sh``, the marker line, then
``exec GLUE`` (``exec`` hands the event on stdin straight to prompthooks). The project's
files are committed, so each is a launcher itself (``install.launcher``): it finds
prompthooks on the machine it runs on, and cancels the action when there is none.

A file of that name that lacks the marker is the user's own hook: install leaves it alone
unless ``--force``, which first moves it to ``<Event>.prompthooks-backup`` (a name Cline does
not run); uninstall moves it back.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ...errors import PromptHooksError
from ...install import files, launcher
from ...install.glue import Glue, HostGlue, Say, Scope, is_glue
from . import wire as cline

MARKER = "# prompthooks glue: written by 'prompthooks install', removed by 'prompthooks uninstall'"
MODE = 0o755


# Cline takes a hook's reply from the last JSON object on stdout; exit 2 is only an error
# there, which lets the action through.
CANCEL = (f"printf '%s\\n' '{{\"cancel\": true, \"errorMessage\": \"{launcher.NOT_FOUND}\"}}'\n"
          f"printf '%s\\n' \"{launcher.NOT_FOUND}\" >&2\nexit 0\n")


def script(glue: Glue) -> str:
    if glue.portable:
        # Our marker, not the launcher's: it is what tells our hook files from the user's.
        return launcher.text(2, CANCEL, "run").replace(launcher.MARKER, MARKER, 1)
    return f"#!/bin/sh\n{MARKER}\nexec {glue.command}\n"


def is_ours(data: bytes) -> bool:
    lines = data.decode("utf-8", "replace").splitlines()
    return len(lines) > 1 and lines[1] == MARKER


def _ours(path: Path) -> bool:
    if path.is_dir():
        return False
    data = files.read_bytes(path)
    return data is not None and is_ours(data)


def location(scope: Scope, project: Path, home: Path) -> Path:
    if scope == "project":
        return project / ".clinerules" / "hooks"
    return home / "Documents" / "Cline" / "Hooks"


def install(folder: Path, events: Sequence[str], glue: Glue, force: bool, say: Say) -> None:
    present = [event for event in events if _ours(folder / event)]
    foreign = [folder / event for event in events
               if event not in present and files.exists(folder / event)]
    if foreign and not force:
        raise PromptHooksError(
            f"not replacing {', '.join(map(str, foreign))}: not written by prompthooks "
            "(--force moves it to a backup that uninstall puts back); nothing was changed")
    taken = [files.backup_path(path) for path in foreign if files.exists(files.backup_path(path))]
    if taken:
        raise PromptHooksError(f"cannot back up into {', '.join(map(str, taken))}: it exists "
                               "already; nothing was changed")
    content = script(glue).encode()
    stale = [event for event in present if files.read_bytes(folder / event) != content]
    present = [event for event in present if event not in stale]
    if present:
        say(f"already installed: {', '.join(present)} in {folder}")
    for event in events:
        path = folder / event
        if event in present:
            continue
        if path in foreign:
            files.move(path, files.backup_path(path))
            say(f"backed up {path} to {files.backup_path(path)}")
        files.atomic_write(path, content, MODE)
        say(f"rewrote {path}: it was not the glue install writes" if event in stale
            else f"wrote {path}")


def uninstall(folder: Path, say: Say) -> None:
    said = False
    for event in cline.CONFIG_EVENTS:
        path, backup = folder / event, files.backup_path(folder / event)
        ours, had_backup = _ours(path), files.exists(backup)
        if ours:
            files.remove(path)
        if had_backup and not files.exists(path):
            files.move(backup, path)
            say(f"restored {path} from {backup}")
        elif had_backup:
            say(f"kept {backup}: {path} was not written by prompthooks, so it was not replaced")
        elif ours:
            say(f"removed {path}")
        said = said or ours or had_backup
    if not said:
        say(f"not installed: no prompthooks hooks in {folder}")


def installed(folder: Path) -> bool:
    return any(_ours(folder / event) for event in cline.CONFIG_EVENTS)


def altered(folder: Path) -> list[Path]:
    """Our hook files that are neither form install writes (an ``exec`` line, the launcher):
    rewritten since, perhaps to skip prompthooks."""
    portable = script(Glue("", portable=True)).encode()
    out: list[Path] = []
    for event in glued(folder):
        data = files.read_bytes(folder / event) or b""
        lines = data.decode("utf-8", "replace").splitlines()
        plain = (len(lines) == 3 and data.endswith(b"\n") and lines[2].startswith("exec ")
                 and is_glue(lines[2].removeprefix("exec ")))
        if data != portable and not plain:
            out.append(folder / event)
    return out


def glued(folder: Path) -> list[str]:
    return [event for event in cline.CONFIG_EVENTS if _ours(folder / event)]


GLUE = HostGlue(
    name=cline.NAME, title=cline.TITLE, events=cline.FILE_EVENTS,
    # TaskComplete is Cline's stop.
    default_events=("PreToolUse", "PostToolUse", "UserPromptSubmit", "TaskComplete"),
    location=location, install=install, uninstall=uninstall, installed=installed,
    glued=glued, altered=altered, file_is_glue=is_ours,
    launcher_glue="a launcher in each hook file",
    launcher_note="each hook file in .clinerules/hooks",
    no_managed="it reads hooks only from the project's .clinerules/hooks and the user's "
               "~/Documents/Cline/Hooks, both writable by the user: install with --scope user "
               "and keep the policy in /etc/prompthooks",
    no_local="it has no personal settings layer for a project: use --scope user",
)
