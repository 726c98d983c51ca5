"""The glue command a host is told to run, and how an installed one is recognised.

A host runs hooks with its own PATH (an editor started from the desktop rarely has a
virtualenv's ``bin`` on it), so the glue names this installation by absolute path unless the
``prompthooks`` on PATH already is this installation.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys

NAME = "prompthooks"


def _real(path: str) -> str:
    return os.path.realpath(path)


def glue_command(on_path: str | None, executable: str, argv0: str) -> str:
    """The command for the host's config.

    ``on_path``: what ``shutil.which("prompthooks")`` found; ``executable``: ``sys.executable``;
    ``argv0``: ``sys.argv[0]``. This installation's script sits beside its interpreter (a
    virtualenv's or the system's ``bin``), or is the script that is running now.
    """
    script = os.path.join(os.path.dirname(os.path.abspath(executable)), NAME)
    ours = [path for path in (script, argv0)
            if path and os.path.basename(path) == NAME and os.path.isfile(path)]
    if on_path and any(_real(on_path) == _real(path) for path in ours):
        return f"{NAME} run"
    if ours:
        return f"{shlex.quote(os.path.abspath(ours[0]))} run"
    # No script at all (run from a source tree): the interpreter can still run the package.
    return f"{shlex.quote(os.path.abspath(executable))} -m {NAME} run"


def current_glue_command() -> str:
    return glue_command(shutil.which(NAME), sys.executable, sys.argv[0])


def is_glue(command: object) -> bool:
    """Whether a host config's command is prompthooks' glue, whichever installation it names
    (``prompthooks run``, ``/path/to/prompthooks run``, ``/path/python -m prompthooks run``)."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if len(words) == 2:
        return os.path.basename(words[0]) == NAME and words[1] == "run"
    return len(words) == 4 and words[1:] == ["-m", NAME, "run"]
