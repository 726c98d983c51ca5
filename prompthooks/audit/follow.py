"""Following the audit log as it is written, as ``tail -f`` follows a file.

Rows get their ``id`` inside the writer's transaction, and SQLite lets one writer in at a
time, so a row committed later always has a larger ``id`` than every row committed before it:
"rows after the last id seen" never skips or repeats one, however many runs write at once.
WAL mode lets this reader poll without ever blocking a writer.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Generator, Sequence
from pathlib import Path
from typing import Any

from .store import AuditError, connect

POLL = 0.5  # seconds between looks at the database
BATCH = 1000  # rows read per look at most (a backlog is read in several looks)


def _select(conn: sqlite3.Connection, where: str, params: Sequence[Any], after: int,
            upto: int, limit: int | None, newest: bool) -> list[dict[str, Any]]:
    clause = " AND ".join(filter(None, ["id > ? AND id <= ?", where]))
    order = "DESC" if newest else "ASC"
    sql = f"SELECT * FROM decisions WHERE {clause} ORDER BY id {order}"
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return [dict(row) for row in conn.execute(sql, (after, upto, *params))]


def _top(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT coalesce(max(id), 0) FROM decisions").fetchone()[0])


def follow(path: Path, where: str = "", params: Sequence[Any] = (),
           backlog: int | None = 10, poll: float = POLL,
           sleep: Callable[[float], None] = time.sleep) -> Generator[dict[str, Any], None, None]:
    """The last ``backlog`` rows that match (None: all of them), oldest first, then every
    matching row as it is written. Waits for a log that does not exist yet. Runs until the
    caller stops iterating (or a signal interrupts ``sleep``)."""
    if not path.exists():
        # Every row of a log that appears while waiting is new: all of them are shown, as
        # `tail -F` shows a file that appears, not the last few of a burst that made it.
        backlog = None
        while not path.exists():
            sleep(poll)
    conn = connect(path, create=False)
    try:
        conn.row_factory = sqlite3.Row
        # Each look reads up to the newest id it saw first: a row committed while it reads
        # has a larger id, and is read by the next look, filtered out or not.
        while True:
            try:
                last = _top(conn)
                rows = _select(conn, where, params, 0, last, backlog, newest=True)
                break
            except sqlite3.OperationalError as exc:
                if "no such table" not in str(exc) and "locked" not in str(exc):
                    raise AuditError(f"audit log {path}: {exc}") from None
                sleep(poll)  # the file is there, its first writer is still making the table
            except sqlite3.Error as exc:
                raise AuditError(f"audit log {path}: {exc}") from None
        yield from reversed(rows)
        while True:
            try:
                top = _top(conn)
                rows = _select(conn, where, params, last, top, BATCH, newest=False)
            except sqlite3.OperationalError:
                top, rows = last, []  # locked for a moment (a checkpoint): look again
            except sqlite3.Error as exc:
                raise AuditError(f"audit log {path}: {exc}") from None
            yield from rows
            if len(rows) == BATCH:
                last = rows[-1]["id"]  # more to read: no pause
                continue
            last = top
            sleep(poll)
    finally:
        conn.close()
