"""What install and uninstall need to know about one host: its event names, its default
events, where its glue goes for each scope, and the three operations on that place."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..errors import EXIT_USAGE, PromptHooksError
from .glue import Glue

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
