"""The world a command hook runs in: its environment and working folder say the same host as
its stdin.

A hook written for one host and run under another gets the event in its own dialect, so it
must not find the sending host's variables beside it: a Claude Code script under Cursor that
saw ``CURSOR_VERSION`` would take itself for a Cursor hook and answer in Cursor's words (as
third-party hooks that pick their adapter from that variable do). So the sending host's
variables are taken away and the hook's own host's are set. A hook that asked for the sending
host's bytes (``raw_event``) keeps the sending host's world whole.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from . import get

if TYPE_CHECKING:
    from ..core.events import Event
    from ..core.hook import Hook
    from .protocol import Host


def home(hook: Hook, event: Event) -> Host:
    """The host whose world ``hook`` runs in: the sending host's when the hook gets its
    bytes, else the host the hook was written for."""
    return get(event.host if hook.raw_event else hook.dialect)


def names(patterns: Iterable[str], name: str) -> bool:
    """Whether ``name`` is one of ``patterns`` (a trailing ``*`` matches any rest)."""
    return any(name.startswith(p[:-1]) if p.endswith("*") else name == p for p in patterns)


def hook_variables(hook: Hook, event: Event, base: Mapping[str, str]) -> dict[str, str]:
    """``base`` (the environment prompthooks was started with) as the hook's own host would
    have given it: under that host, with the variables prompthooks read from its event;
    under another, without the sending host's variables and with its own host's."""
    world = home(hook, event)
    if event.host == world.NAME:
        return {**base, **event.env}
    sender = get(event.host).HOOK_VARIABLES
    env = {name: value for name, value in base.items() if not names(sender, name)}
    env.update(world.dialect_env(event))
    return env
