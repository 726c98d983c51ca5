"""The audit log: one SQLite row per hook per event, written by ``prompthooks run``.

``record`` never raises: a log that cannot be written costs one line on stderr (and the rows
wait in a spool file when they can), never the host's reply.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .settings import AuditSettings, resolve

if TYPE_CHECKING:
    from ..api import Outcome

__all__ = ["AuditSettings", "record", "record_rows", "resolve"]


def record_rows(settings: AuditSettings, rows: list[dict[str, Any]]) -> str | None:
    """Write rows; the problem as one line, or None."""
    if not settings.enabled or not rows:
        return None
    from .store import AuditError, write

    try:
        write(settings.path, rows)
    except AuditError as exc:
        return str(exc)
    return None


def record(outcome: Outcome, environ: Mapping[str, str] | None = None) -> str | None:
    """Log one dispatched event as configured; the problem as one line, or None."""
    env = os.environ if environ is None else environ
    settings = resolve(outcome.config.loaded.audit, env)
    if not settings.enabled or not outcome.decision.results:
        return None
    from .rows import rows_for

    return record_rows(settings, rows_for(outcome, settings.store_events, env))
