"""Each host's glue by name (from the one host registry), and the folders a command line
points at."""

from __future__ import annotations

import os
from pathlib import Path

from .. import hosts
from ..errors import EXIT_USAGE, PromptHooksError
from ..install.glue import HostGlue, Scope

HOSTS: dict[str, HostGlue] = {name: host.glue for name, host in hosts.HOSTS.items()}
ROOT = Path("/")  # where managed locations live; tests point it elsewhere (--managed-root)


def project_dir(scope: Scope, given: str | None) -> Path:
    """The project folder (``--project`` or the current directory); it must exist for the
    project and local scopes, since the glue goes inside it."""
    path = Path(os.path.abspath(given or os.getcwd()))
    if scope in ("project", "local") and not path.is_dir():
        raise PromptHooksError(f"no such project folder: {path}")
    return path


def location(host: HostGlue, scope: Scope, project: Path, root: Path = ROOT) -> Path:
    if scope == "managed":
        if host.managed is None:
            raise PromptHooksError(f"--scope managed: {host.title} has no managed hooks "
                                   f"location; {host.no_managed}", EXIT_USAGE)
        return host.managed(root)
    if scope == "local":
        if host.local is None:
            raise PromptHooksError(f"--scope local: {host.title} has no uncommitted personal "
                                   f"settings; {host.no_local}", EXIT_USAGE)
        return host.local(project)
    return host.location(scope, project, Path.home())


def others_installed(host: HostGlue, scope: Scope, project: Path,
                     root: Path = ROOT) -> list[str]:
    """The other glue that uses this scope's starter config: the other hosts' of the same
    scope; for the user's starter, which local glue shares, the user and this project's local
    glue too."""
    shared: tuple[Scope, ...] = ("user", "local") if scope in ("user", "local") else (scope,)
    found: list[str] = []
    for other in HOSTS.values():
        for each in shared:
            if (other is host and each == scope) or (each == "managed" and other.managed is None) \
                    or (each == "local" and other.local is None):
                continue
            try:
                used = other.installed(location(other, each, project, root))
            except PromptHooksError:
                used = True  # a config we cannot read may hold glue: assume it does
            title = other.title if each == scope else f"{other.title} ({each} scope)"
            if used:
                found.append(title)
    return found
