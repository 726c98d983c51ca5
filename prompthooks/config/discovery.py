"""Where prompthooks looks for its own config, highest priority first.

managed ``/etc/prompthooks/`` > project ``<project>/.prompthooks/`` > user
``$XDG_CONFIG_HOME/prompthooks/``. Each location may hold ``hooks.json`` (Claude Code or
Cursor style) and a ``hooks/`` folder of Cline-style executables. ``--config PATH`` replaces
discovery; the paths keep the order given, the first being the highest priority.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..hook import Source

MANAGED_DIR = Path("/etc/prompthooks")
PROJECT_DIR_NAME = ".prompthooks"


def user_dir(environ: Mapping[str, str]) -> Path:
    base = environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "prompthooks"


def discover(project_dir: str, environ: Mapping[str, str],
             managed_dir: Path = MANAGED_DIR) -> list[tuple[Source, Path]]:
    """The discovered locations that exist, highest priority first (each folder once)."""
    candidates = [("managed", managed_dir), ("project", Path(project_dir) / PROJECT_DIR_NAME),
                  ("user", user_dir(environ))]
    found: list[tuple[Source, Path]] = []
    seen: set[Path] = set()
    for priority, (name, folder) in enumerate(candidates):
        real = folder.resolve()
        if real in seen or not folder.is_dir():
            continue
        seen.add(real)
        found.append((Source(name, str(folder), priority), folder))
    return found


def explicit(paths: Sequence[str]) -> list[tuple[Source, Path]]:
    """Sources for ``--config`` paths, in the order given."""
    return [(Source("config", path, priority), Path(path)) for priority, path in enumerate(paths)]
