"""The hosts prompthooks speaks to, one package each, in one registry.

Each host (``hosts/<name>/``) is also a config dialect: the registry is where the rest of
prompthooks finds a host by name, by the event it sent, or by the shape of a config file.
Importing it loads each host's wire format only, never its config reader or install glue.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import InputError
from . import claude, cline, cursor
from ._common import Reply
from .protocol import Host

__all__ = ["CANONICAL", "FOLDER_DIALECT", "HOSTS", "NAMES", "Host", "Reply", "budget", "detect",
           "file_dialect", "get", "host_tool"]

HOSTS: dict[str, Host] = {host.NAME: host for host in (claude, cursor, cline)}
NAMES: tuple[str, ...] = tuple(HOSTS)
# The host whose vocabulary is canonical (events, tools): policy packs are written in it, and
# it answers when nothing else can be told.
CANONICAL: Host = claude
# The host whose hooks are a folder of executables named after its events.
FOLDER_DIALECT = cline
# Told apart by their marker fields, most specific first.
_DETECT_ORDER: tuple[Host, ...] = (cline, cursor, claude)


def detect(raw: Mapping[str, Any]) -> Host:
    """The host that sent ``raw``: Cline, Cursor, then Claude Code by their marker fields."""
    for host in _DETECT_ORDER:
        if host.looks_like(raw):
            return host
    name = raw.get("hook_event_name")
    if isinstance(name, str) and name:
        # camelCase event names are Cursor's, PascalCase Claude Code's.
        return cursor if name[0].islower() else claude
    raise InputError(f"cannot tell which host sent this event; pass --host {'|'.join(NAMES)}")


def budget(host: Host, event: str | None) -> float:
    """The run's whole budget (seconds) when ``host`` sends ``event`` (its own name)."""
    return host.EVENT_BUDGETS.get(event or "", host.BUDGET)


def get(name: str) -> Host:
    try:
        return HOSTS[name]
    except KeyError:
        raise InputError(f"unknown host {name!r}; use {', '.join(NAMES[:-1])} or "
                         f"{NAMES[-1]}") from None


def host_tool(dialect: str, tool: str) -> str:
    """A canonical tool's name in ``dialect``'s own words (what its tool matchers see)."""
    return get(dialect).host_tool(tool)


def file_dialect(data: Mapping[str, Any]) -> Host:
    """The dialect a JSON config file is written in: the first host that claims its shape,
    else the canonical one."""
    for host in HOSTS.values():
        if host is not CANONICAL and host.claims_file(data):
            return host
    return CANONICAL
