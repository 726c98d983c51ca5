"""The three hosts prompthooks speaks to, one module each, in one registry."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import InputError
from . import claude, cline, cursor
from ._common import Host, Reply

__all__ = ["HOSTS", "Host", "Reply", "detect", "get"]

HOSTS: dict[str, Host] = {"claude": claude, "cursor": cursor, "cline": cline}


def detect(raw: Mapping[str, Any]) -> Host:
    """The host that sent ``raw``: Cline, Cursor, then Claude Code by their marker fields."""
    for host in (HOSTS["cline"], HOSTS["cursor"], HOSTS["claude"]):
        if host.looks_like(raw):
            return host
    name = raw.get("hook_event_name")
    if isinstance(name, str) and name:
        return HOSTS["cursor"] if name[0].islower() else HOSTS["claude"]
    raise InputError("cannot tell which host sent this event; pass --host claude|cursor|cline")


def get(name: str) -> Host:
    try:
        return HOSTS[name]
    except KeyError:
        raise InputError(f"unknown host {name!r}; use claude, cursor or cline") from None
