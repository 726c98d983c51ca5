"""The audit log: one SQLite row per hook per event, written by ``prompthooks run``.

``record`` never raises: a log that cannot be written costs one line on stderr (and the rows
wait in a spool file when they can), never the host's reply. The same rows are mirrored to
the configured export targets (``export``), whether the database is on or not.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .rows import rows_for
from .settings import AuditSettings, resolve

if TYPE_CHECKING:
    from .rows import Judged

__all__ = ["AuditSettings", "record", "record_rows", "resolve"]


_MIN_WAIT = 0.05  # seconds a writer past the run's deadline still waits for the database


def record_rows(settings: AuditSettings, rows: list[dict[str, Any]],
                by: float | None = None, environ: Mapping[str, str] | None = None) -> str | None:
    """Write rows, waiting for a busy database until ``by`` (a ``time.monotonic()`` instant)
    at most, and mirror them to the export targets meanwhile; the problem as one line, or
    None. An export's problem is said only with ``PROMPTHOOKS_DEBUG=1``, except a refused
    JSON Lines file (see export.RefusedTarget)."""
    if not rows or not (settings.enabled or settings.exporting):
        return None
    env = os.environ if environ is None else environ
    exporting = None
    if settings.exporting:
        from .export import Exporting  # the export's modules: only when one is configured

        exporting = Exporting(settings, rows, by, env)
    trouble = _write(settings, rows, by) if settings.enabled else None
    said = [trouble] if trouble else []
    if exporting is not None:
        from .export import debugging  # as above

        always, debug = exporting.finish()
        said += always + (debug if debugging(env) else [])
    return "; ".join(said) or None


def _write(settings: AuditSettings, rows: list[dict[str, Any]], by: float | None) -> str | None:
    # sqlite3 (with datetime): only when the database is on, and after the reply.
    from .store import BUSY_TIMEOUT, AuditError, write

    wait = BUSY_TIMEOUT if by is None else min(BUSY_TIMEOUT,
                                               max(_MIN_WAIT, by - time.monotonic()))
    try:
        return write(settings.path, rows, timeout=wait)
    except AuditError as exc:
        return str(exc)
    except Exception as exc:  # the log never changes the answer, whatever is wrong with it
        return f"audit log {settings.path}: {len(rows)} row(s) lost: {exc!r}"


def record(outcome: Judged, environ: Mapping[str, str] | None = None) -> str | None:
    """Log one dispatched event as configured; the problem as one line, or None. A busy
    database is waited for only until the run's deadline (its supervisor kills the work
    then): past it the rows go to the spool."""
    env = os.environ if environ is None else environ
    settings = resolve(outcome.config.loaded.audit, env)
    if not (settings.enabled or settings.exporting) or not outcome.decision.results:
        return None
    return record_rows(settings, rows_for(outcome, settings.store_events, env),
                       by=outcome.deadline, environ=env)
