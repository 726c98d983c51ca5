"""What the person at the host is told when a prompt hook cannot judge for a reason of set-up.

A fail-open prompt hook with no key answers nothing, and the host goes on as if no hook
existed: a gate that looks on while off. Such a hook (HookResult.unjudged) is named in the
host's own message to the person (Claude Code's ``systemMessage``...; the verdict is not
changed), once per session, and again when the reason changes: the last reason told to each
session is kept in ``notices.json`` in the state folder. A fail-closed hook needs no notice:
its block says it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from contextlib import suppress

from . import paths
from .core.result import HookResult

FILE = "notices.json"
_KEPT = 200  # sessions remembered; the oldest are forgotten first


def line(results: tuple[HookResult, ...]) -> str | None:
    """The notice for a run's results, or None when every prompt hook could judge."""
    told = [f"prompthooks: '{r.hook.name}' cannot judge: {r.unjudged}; it lets everything "
            "through until then" for r in results if r.unjudged and not r.hook.fail_closed]
    return "\n".join(told) if told else None


def _read(path: os.PathLike[str]) -> dict[str, str]:
    try:
        raw = paths.read_state(path)
        data = json.loads(raw) if raw else {}
    except (OSError, ValueError):
        return {}  # a store that is not ours: told again, and written anew
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def once(notice: str | None, session: str | None, environ: Mapping[str, str]) -> str | None:
    """``notice`` if this session has not been told it yet (None otherwise), remembering it."""
    if notice is None:
        return None
    folder = paths.state_home(environ)
    path = folder / FILE
    told = _read(path)
    key = session or ""
    if told.get(key) == notice:
        return None
    told.pop(key, None)
    told[key] = notice  # newest last
    kept = dict(list(told.items())[-_KEPT:])
    with suppress(OSError):  # a notice shown twice is better than one never shown
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        paths.atomic_write(path, json.dumps(kept).encode())
    return notice


__all__ = ["FILE", "line", "once"]
