"""Where prompthooks looks for its own config, highest priority first.

managed ``/etc/prompthooks/`` > project ``<project>/.prompthooks/`` > user
``$XDG_CONFIG_HOME/prompthooks/``. Each location may hold ``hooks.json`` (Claude Code or
Cursor style) and a ``hooks/`` folder of Cline-style executables. ``--config PATH`` replaces
the project and user configs; the paths keep the order given, the first being the highest
priority. The managed policy stays in force above them: a command line (which a project's own
host config can set) cannot switch it off. A command line may add a managed folder (for
tests: ``run --managed-dir``), never remove or replace ``/etc/prompthooks``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TypeAlias

from ..core.hook import Source
from ..paths import config_home

MANAGED_DIR = Path("/etc/prompthooks")
PROJECT_DIR_NAME = ".prompthooks"
# One managed folder, or several (highest priority first).
Managed: TypeAlias = Path | Sequence[Path]


def managed_dirs(extra: str | None) -> tuple[Path, ...]:
    """The managed folders of a command line: ``/etc/prompthooks``, then ``extra`` if given."""
    return (MANAGED_DIR, Path(extra)) if extra else (MANAGED_DIR,)


def _managed(managed: Managed | None) -> list[tuple[str, Path]]:
    folders = [] if managed is None else [managed] if isinstance(managed, Path) else managed
    return [("managed", folder) for folder in folders]


def discover(project_dir: str, environ: Mapping[str, str],
             managed_dir: Managed = MANAGED_DIR) -> list[tuple[Source, Path]]:
    """The discovered locations that exist, highest priority first (each folder once)."""
    candidates = [*_managed(managed_dir), ("project", Path(project_dir) / PROJECT_DIR_NAME),
                  ("user", config_home(environ))]
    found: list[tuple[Source, Path]] = []
    seen: set[Path] = set()
    # Every managed folder shares the highest priority; project and user come after them.
    for name, folder in candidates:
        priority = {"managed": 0, "project": 1, "user": 2}[name]
        try:
            real = folder.resolve()
            if real in seen or not folder.is_dir():
                continue
        except (OSError, RuntimeError):
            # A folder that cannot even be looked at (a symlink loop, no permission) is still
            # a source: loading it fails, and for the managed one that blocks.
            real = folder
        seen.add(real)
        found.append((Source(name, str(folder), priority), folder))
    return found


def explicit(paths: Sequence[str],
             managed_dir: Managed | None = MANAGED_DIR) -> list[tuple[Source, Path]]:
    """Sources for ``--config`` paths, in the order given, below the managed policy when one
    exists (``managed_dir=None``: the paths alone, for testing policies)."""
    found: list[tuple[Source, Path]] = []
    for _, folder in _managed(managed_dir):
        if folder.is_dir():
            found.append((Source("managed", str(folder), 0), folder))
    first = 1 if found else 0
    return found + [(Source("config", path, first + i), Path(path))
                    for i, path in enumerate(paths)]
