"""The glue command a host is told to run, and how an installed one is recognised.

A host runs hooks with its own PATH: an editor started from the desktop has the system's
folders on it, never an activated virtualenv's ``bin``. So in a file of one user's (user and
local scope) the glue is the bare ``prompthooks run`` only when the ``prompthooks`` this shell
finds is this installation *and* sits in one of those default folders; otherwise it names this
installation by absolute path. A project's file is committed and shared, so it never names one
machine's folders: its glue is the project launcher (``install.launcher``), or the bare
command when the user asks for it.

Each host's glue (``HostGlue``, below) is what install and uninstall know of one host: where
its glue goes for each scope and the operations on that place.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..errors import EXIT_USAGE, PromptHooksError

NAME = "prompthooks"
Choice = Literal["auto", "absolute", "bare", "launcher"]


def default_path() -> tuple[str, ...]:
    """Folders on the PATH of a host started from the desktop or a login session: the
    system's, Homebrew's, and ``~/.local/bin`` (pipx, ``pip install --user``), which login
    profiles add. Not a virtualenv's or conda's ``bin``."""
    home = os.path.expanduser("~")
    return ("/usr/local/bin", "/usr/bin", "/bin", "/usr/local/sbin", "/usr/sbin", "/sbin",
            "/opt/homebrew/bin", "/snap/bin", os.path.join(home, ".local", "bin"))


@dataclass(frozen=True)
class Glue:
    command: str
    note: str | None = None  # a line for the user: why the glue looks the way it does
    warning: str | None = None  # a line for stderr: the glue may not be found by the host
    portable: bool = False  # the project launcher: nothing in it names this machine


def _real(path: str) -> str:
    return os.path.realpath(path)


def _absolute(ours: Sequence[str], executable: str) -> str:
    if ours:
        return f"{shlex.quote(os.path.abspath(ours[0]))} run"
    # No script at all (run from a source tree): the interpreter can still run the package.
    # `-P`: the host runs the glue in the project, and a plain `-m` would put that folder
    # first on the import path, so a `prompthooks/` the agent wrote there would run instead.
    return f"{shlex.quote(os.path.abspath(executable))} -P -m {NAME} run"


def choose(on_path: str | None, executable: str, argv0: str, choice: Choice = "auto",
           defaults: Sequence[str] | None = None) -> Glue:
    """The glue for the host's config, and what to tell the user about it.

    ``on_path``: what ``shutil.which("prompthooks")`` found; ``executable``: ``sys.executable``;
    ``argv0``: ``sys.argv[0]``; ``defaults``: the folders a desktop-started host has on its
    PATH (:func:`default_path`). This installation's script sits beside its interpreter (a
    virtualenv's or the system's ``bin``), or is the script that is running now.
    ``choice``: ``auto`` (the rule above), ``absolute`` (always the path), ``bare`` (always
    ``prompthooks run``, with a warning when the host may not find it); a ``launcher`` is
    chosen by the caller.
    """
    script = os.path.join(os.path.dirname(os.path.abspath(executable)), NAME)
    ours = [path for path in (script, argv0)
            if path and os.path.basename(path) == NAME and os.path.isfile(path)]
    found = bool(on_path) and any(_real(str(on_path)) == _real(path) for path in ours)
    folders = {os.path.normpath(f) for f in (default_path() if defaults is None else defaults)}
    where = os.path.dirname(os.path.abspath(on_path)) if on_path else ""
    on_default = found and os.path.normpath(where) in folders
    if choice == "bare":
        if on_default:
            return Glue(f"{NAME} run")
        why = (f"the prompthooks on this shell's PATH is in {where}, which a host started from "
               "the desktop does not have on its PATH" if found
               else "this installation is not the prompthooks on this shell's PATH, so the "
                    "host may run another one, or none")
        return Glue(f"{NAME} run",
                    warning=f"warning: the glue 'prompthooks run' relies on the host's PATH: {why}")
    if choice == "auto" and on_default:
        return Glue(f"{NAME} run")
    command = _absolute(ours, executable)
    if choice == "auto" and found:
        return Glue(command, note=f"glue names this installation by absolute path: {where} "
                    "is on this shell's PATH, not on that of a host started from the desktop "
                    "(--glue bare writes 'prompthooks run')")
    return Glue(command)


def current_glue(choice: Choice = "auto") -> Glue:
    return choose(shutil.which(NAME), sys.executable, sys.argv[0], choice)


def is_glue(command: object) -> bool:
    """Whether a host config's command is prompthooks' glue, whichever installation it names
    (``prompthooks run``, ``/path/to/prompthooks run``, ``/path/python -P -m prompthooks run``,
    the ``-m`` form without ``-P`` that earlier versions wrote, the project launcher
    ``"${CLAUDE_PROJECT_DIR:-.}"/.claude/hooks/prompthooks run``)."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if len(words) == 2:
        return os.path.basename(words[0]) == NAME and words[1] == "run"
    return words[1:] in (["-m", NAME, "run"], ["-P", "-m", NAME, "run"])

# Each host's glue --------------------------------------------------------------------------
# What install and uninstall need to know about one host: its event names, its default
# events, where its glue goes for each scope, and the three operations on that place.

Scope = Literal["project", "local", "user", "managed"]
Say = Callable[[str], None]  # one line of output per action


@dataclass(frozen=True)
class HostGlue:
    name: str
    title: str
    # The host's own event names (the keys of the host module's HOST_EVENTS).
    events: Mapping[str, str]
    # Before a tool runs, after it, user prompt submit, stop: in the host's own names.
    default_events: tuple[str, ...]
    # (scope, project folder, home folder) -> the host config file or hook folder.
    location: Callable[[Scope, Path, Path], Path]
    # (location, events, glue, force, say); every check comes before the first write.
    install: Callable[[Path, Sequence[str], Glue, bool, Say], None]
    uninstall: Callable[[Path, Say], None]
    installed: Callable[[Path], bool]  # whether any glue of ours is in that place
    # The host's events whose glue is in that place (what it calls prompthooks for).
    glued: Callable[[Path], Sequence[str]] = lambda place: ()
    # The host's own managed config under a root ("/" outside tests), which only an
    # administrator can write and no project or user config can remove; None: it has none,
    # and ``no_managed`` says what it offers instead.
    managed: Callable[[Path], Path] | None = None
    no_managed: str = ""
    # The host's uncommitted personal layer of a project (Claude Code's settings.local.json)
    # under the project folder; None: it has none, and ``no_local`` says what to use instead.
    local: Callable[[Path], Path] | None = None
    no_local: str = ""
    # The project scope's glue, which the team commits: ``launcher`` is the launcher's path
    # in the project and ``launcher_glue`` the command that runs it as the host runs a
    # project's hooks; None: the host's hook files are launchers themselves. ``launcher_note``
    # names what finds prompthooks at run time, for the line install says.
    launcher: str | None = None
    launcher_glue: str = ""
    launcher_note: str = ""
    # The host's hook files in that place that carry our marker but are not what install
    # writes (rewritten since): where the hook file is itself the glue.
    altered: Callable[[Path], Sequence[Path]] = lambda place: ()
    # Whether a hook file's bytes are glue install wrote (where the hook file is the glue).
    file_is_glue: Callable[[bytes], bool] = lambda data: False


def with_session_start(host: HostGlue, events: Sequence[str]) -> list[str]:
    """``events`` and the host's session-start events (``--warm-start``): a run for one of
    them starts the warm worker in the background, so the first tool call finds it ready."""
    starts = [name for name, canonical in host.events.items() if canonical == "SessionStart"]
    return list(dict.fromkeys([*events, *starts]))


def choose_events(host: HostGlue, names: Sequence[str] | None) -> list[str]:
    """``--events`` (in the host's names, duplicates dropped) or the host's defaults."""
    if not names:
        return list(host.default_events)
    unknown = [name for name in names if name not in host.events]
    if unknown:
        raise PromptHooksError(
            f"unknown {host.title} event{'s' * (len(unknown) > 1)} {', '.join(unknown)} "
            f"(valid: {', '.join(host.events)})", EXIT_USAGE)
    return list(dict.fromkeys(names))
