"""The three hosts' glue by name, and the folders a command line points at."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import EXIT_USAGE, PromptHooksError
from . import claude, cline, cursor
from .host import HostGlue, Scope

HOSTS: dict[str, HostGlue] = {glue.name: glue for glue in (claude.GLUE, cursor.GLUE, cline.GLUE)}
ROOT = Path("/")  # where managed locations live; tests point it elsewhere (--managed-root)


def project_dir(scope: Scope, given: str | None) -> Path:
    """The project folder (``--project`` or the current directory); it must exist for the
    project scope, since the glue goes inside it."""
    path = Path(os.path.abspath(given or os.getcwd()))
    if scope == "project" and not path.is_dir():
        raise PromptHooksError(f"no such project folder: {path}")
    return path


def location(host: HostGlue, scope: Scope, project: Path, root: Path = ROOT) -> Path:
    if scope == "managed":
        if host.managed is None:
            raise PromptHooksError(f"--scope managed: {host.title} has no managed hooks "
                                   f"location; {host.no_managed}", EXIT_USAGE)
        return host.managed(root)
    return host.location(scope, project, Path.home())


def others_installed(host: HostGlue, scope: Scope, project: Path,
                     root: Path = ROOT) -> list[str]:
    """The other hosts whose glue is in place for this scope."""
    found: list[str] = []
    for other in HOSTS.values():
        if other is host or (scope == "managed" and other.managed is None):
            continue
        try:
            used = other.installed(location(other, scope, project, root))
        except PromptHooksError:
            used = True  # a config we cannot read may hold glue: assume it does
        if used:
            found.append(other.title)
    return found
