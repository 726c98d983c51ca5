"""The glue command a host is told to run, and how an installed one is recognised.

A host runs hooks with its own PATH: an editor started from the desktop has the system's
folders on it, never an activated virtualenv's ``bin``. So in a file of one user's (user and
local scope) the glue is the bare ``prompthooks run`` only when the ``prompthooks`` this shell
finds is this installation *and* sits in one of those default folders; otherwise it names this
installation by absolute path. A project's file is committed and shared, so it never names one
machine's folders: its glue is the project launcher (``install.launcher``), or the bare
command when the user asks for it.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

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


def glue_command(on_path: str | None, executable: str, argv0: str,
                 defaults: Sequence[str] | None = None) -> str:
    """The command :func:`choose` picks by default."""
    return choose(on_path, executable, argv0, "auto", defaults).command


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
