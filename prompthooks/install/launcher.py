"""The project launcher: the glue a team commits. A project's host config is shared by
everyone who clones it, so it cannot name one machine's prompthooks; it names a small shell
script inside the project instead, which finds prompthooks on the machine it runs on, at run
time, and blocks loudly when there is none (a hook the host cannot start is a non-blocking
error for Claude Code and Cursor, which would let every action through unjudged).

Where it looks, in this order: the host's PATH, ``$PIPX_BIN_DIR`` and ``~/.local/bin``
(pipx, ``pip install --user``), then the project's ``.venv/bin`` last (the folder the agent
installs packages into); only absolute paths, so a relative PATH entry cannot pick a file
planted in the project. It runs what it finds by its script, never as ``python -m`` from the
project folder, where a planted ``prompthooks/`` package would be imported instead.

The launcher is a file in the project, which the agent can rewrite (docs/security.md, "Threat
model"): install rewrites a launcher that is not byte for byte its own, doctor says so, and a
gate that must hold is the managed install, which names prompthooks by absolute path outside
the project.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import PromptHooksError
from . import files
from .glue import Say

MARKER = ("# prompthooks launcher: written by 'prompthooks install', removed by "
          "'prompthooks uninstall'")
# No quote or backslash: it goes into shell and JSON strings as it is.
NOT_FOUND = ("prompthooks: not found on PATH, in ~/.local/bin or in the .venv of this project, "
             "so this action is blocked; install prompthooks where this host can run it "
             "(pipx install, or the .venv of the project)")
# Claude Code and Cursor: exit 2 blocks on every event that can be blocked, stderr the reason.
EXIT_BLOCK = f"printf '%s\\n' \"{NOT_FOUND}\" >&2\nexit 2\n"
MODE = 0o755


def text(depth: int, refusal: str = EXIT_BLOCK, arguments: str = '"$@"') -> str:
    """The launcher: ``depth`` folders below the project, it runs the prompthooks it finds
    with ``arguments`` (the launcher's own by default), or answers ``refusal`` (shell lines
    that block in the host's terms). A found script whose ``#!`` interpreter is missing (a
    removed virtualenv) is passed over, so it cannot end the run as "command not found"."""
    up = "/".join([".."] * depth)
    return (
        "#!/bin/sh\n"
        f"{MARKER}\n"
        "# Runs the prompthooks of the machine it runs on: on PATH, where pipx and pip --user\n"
        "# put it, or in this project's .venv; blocks when there is none.\n"
        'here=$(cd -P -- "$(dirname -- "$0")" 2>/dev/null && pwd) || here=.\n'
        'for found in "$(command -v prompthooks 2>/dev/null)" '
        '"${PIPX_BIN_DIR:-$HOME/.local/bin}/prompthooks" "$HOME/.local/bin/prompthooks" '
        f'"$here/{up}/.venv/bin/prompthooks"; do\n'
        # A relative PATH entry ("." or empty) would find a prompthooks planted in the
        # project folder the host runs from.
        '    case $found in /*) ;; *) continue ;; esac\n'
        '    [ -f "$found" ] && [ -x "$found" ] || continue\n'
        '    [ "$found" -ef "$0" ] && continue\n'
        "    first=\n"
        "    IFS= read -r first < \"$found\" 2>/dev/null\n"
        '    case $first in\n'
        "        '#!'*) interpreter=${first#??}; interpreter=${interpreter# }; "
        "interpreter=${interpreter%% *}\n"
        '              [ -x "$interpreter" ] || continue ;;\n'
        "    esac\n"
        f'    exec "$found" {arguments}\n'
        "done\n"
        f"{refusal}"
    )


def is_launcher(data: bytes) -> bool:
    lines = data.decode("utf-8", "replace").splitlines()
    return len(lines) > 1 and lines[1] == MARKER


def check(path: Path) -> None:
    """Refuse (before anything is written) to replace a file of that name install did not
    write."""
    data = files.read_bytes(path) if files.exists(path) and not path.is_dir() else None
    if files.exists(path) and (data is None or not is_launcher(data)):
        raise PromptHooksError(f"not replacing {path}: not a launcher written by prompthooks; "
                               "nothing was changed")


def write(path: Path, content: str, say: Say) -> None:
    data = content.encode()
    current = files.read_bytes(path)
    if current == data and files.file_mode(path) == MODE:
        say(f"already installed: launcher {path}")
        return
    files.atomic_write(path, data, MODE)
    if current is None:
        say(f"wrote {path} (launcher: finds prompthooks at run time)")
    else:
        say(f"rewrote {path}: it was not the launcher install writes")


def remove(path: Path, say: Say) -> None:
    """Remove the launcher if install wrote it (whatever was done to it since: it is ours,
    and glue gone, it only could run something)."""
    if not files.exists(path) or path.is_dir():
        return
    data = files.read_bytes(path)
    if data is not None and is_launcher(data):
        files.remove(path)
        say(f"removed {path}")
    else:
        say(f"kept {path}: not a launcher written by prompthooks")


def intact(path: Path, content: str) -> bool | None:
    """Whether the launcher at ``path`` is byte for byte what install writes (None: none)."""
    if not files.exists(path):
        return None
    return files.read_bytes(path) == content.encode()
