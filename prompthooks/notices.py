"""What the person at the host is told when a prompt hook cannot judge for a reason of set-up.

A fail-open prompt hook with no key answers nothing, and the host goes on as if no hook
existed: a gate that looks on while off. Such a hook (HookResult.unjudged) is named in the
host's own message to the person (Claude Code's ``systemMessage``...; the verdict is not
changed), once per session, and again when the reason changes: the last reason shown to each
session is kept in ``notices.json`` in the state folder, once a reply carried it (a host with
no place for it in this reply is told in a later one). A fail-closed hook needs no notice: its
block says it.
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


def pending(notice: str | None, session: str | None,
            environ: Mapping[str, str]) -> str | None:
    """``notice`` if this session has not been shown it yet, else None."""
    if notice is None:
        return None
    told = _read(paths.state_home(environ) / FILE)
    return None if told.get(session or "") == notice else notice


def shown(notice: str, stdout: str) -> bool:
    """Whether the host's reply carries ``notice`` (the renderers write ASCII JSON). A host
    whose reply had no place for it this time (Cursor without a verdict) is told next time."""
    return json.dumps(notice, ensure_ascii=True)[1:-1] in stdout


def record(notice: str, session: str | None, environ: Mapping[str, str]) -> None:
    """Remember that this session was shown ``notice``."""
    folder = paths.state_home(environ)
    path = folder / FILE
    told = _read(path)
    key = session or ""
    told.pop(key, None)
    told[key] = notice  # newest last
    kept = dict(list(told.items())[-_KEPT:])
    with suppress(OSError):  # a notice shown twice is better than one never shown
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        paths.atomic_write(path, json.dumps(kept).encode())


__all__ = ["FILE", "line", "pending", "record", "shown"]
