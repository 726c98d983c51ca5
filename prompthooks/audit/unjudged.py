"""The recent events a prompt hook could not judge for a reason of set-up (no key, a key
refused, no such model, nothing listening), read back from the audit log for ``log`` and
``doctor`` to show first: such a hook lets everything through, and a person should hear of it
before any other row."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from ..model.failures import set_up_fault
from .store import AuditError, read

WINDOW = 86400.0  # seconds looked back: the last day


@dataclass(frozen=True, slots=True)
class Unjudged:
    hook: str
    fault: str  # in a few words: "no key for anthropic"
    events: int
    last: str  # the newest one's time (UTC, as the log writes it)
    error: str  # the newest one's full line


def recent(path: Path, now: float | None = None) -> list[Unjudged]:
    """Per hook and fault, the events of the last day left unjudged, newest first ([] with no
    log, or one that cannot be read: the log's own command says why)."""
    if not path.exists():
        return []
    since = time.strftime("%Y-%m-%dT%H:%M:%S",
                          time.gmtime((time.time() if now is None else now) - WINDOW))
    try:
        rows = read(path, "time >= ? AND status != 'ok' AND kind = 'prompt'", [since])
    except AuditError:
        return []
    found: dict[tuple[str, str], Unjudged] = {}
    for row in rows:  # newest first
        fault = set_up_fault(str(row.get("error") or ""))
        if fault is None:
            continue
        key = (str(row["hook"]), fault)
        seen = found.get(key)
        found[key] = Unjudged(key[0], fault, 1, str(row["time"]), str(row["error"])) \
            if seen is None else Unjudged(seen.hook, fault, seen.events + 1, seen.last,
                                          seen.error)
    return list(found.values())


def summary(item: Unjudged) -> str:
    """One line: ``'destructive-shell': no key for anthropic: 3 events not judged (last
    2026-11-25 19:30:02)``."""
    plural = "s" * (item.events != 1)
    return (f"'{item.hook}': {item.fault}: {item.events} event{plural} not judged (last "
            f"{item.last.replace('T', ' ')[:19]})")


__all__ = ["WINDOW", "Unjudged", "recent", "summary"]
