"""The audit database: SQLite in WAL mode, so many hook processes can write at once.

The schema is created and migrated here (``PRAGMA user_version`` counts the migrations
applied). A writer that cannot get the database (locked past the busy timeout, read-only)
appends its rows to ``<db>.pending`` instead, and the next writer that can moves them in:
a busy log delays records, it does not lose them.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sqlite3
import stat
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..paths import BadStateFile, open_state

# Every column of a decision row, in order (the table also has an integer ``id``).
COLUMNS: tuple[str, ...] = (
    "time", "run_id", "host", "event", "host_event", "tool", "session_id", "project",
    "hook", "hook_label", "source", "kind", "fail_closed", "status", "decision", "reason",
    "duration_ms", "model", "input_tokens", "output_tokens", "cost", "cached", "replayed",
    "error", "event_input", "url", "http_status", "tool_calls",
)
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE decisions (
        id INTEGER PRIMARY KEY,
        time TEXT NOT NULL,           -- UTC, ISO 8601 with milliseconds and a Z
        run_id TEXT NOT NULL,         -- one per event: the rows of one run share it
        host TEXT NOT NULL,
        event TEXT NOT NULL,          -- canonical event name
        host_event TEXT NOT NULL,     -- the host's own name for it
        tool TEXT,
        session_id TEXT,
        project TEXT,
        hook TEXT NOT NULL,           -- a short name: the command or the prompt file
        hook_label TEXT NOT NULL,     -- where it is configured: file and JSON path
        source TEXT NOT NULL,         -- managed, project, user, config
        kind TEXT NOT NULL,           -- command, prompt, http, config (a source that did not load)
        fail_closed INTEGER NOT NULL,
        status TEXT NOT NULL,         -- ok, error, timeout
        decision TEXT NOT NULL,       -- allow, ask, deny, none (after the failure policy)
        reason TEXT,
        duration_ms REAL,
        model TEXT,
        input_tokens INTEGER,
        output_tokens INTEGER,
        cost REAL,
        cached INTEGER NOT NULL,
        replayed INTEGER NOT NULL,
        error TEXT,
        event_input TEXT              -- only with store_events, redacted
    );
    CREATE INDEX decisions_time ON decisions (time);
    CREATE INDEX decisions_hook ON decisions (hook);
    """,
    # http hooks: the URL's origin and path only, and the status it answered. (No comment
    # after a column here: SQLite copies it into the table's text, past its closing bracket.)
    """
    ALTER TABLE decisions ADD COLUMN url TEXT;
    ALTER TABLE decisions ADD COLUMN http_status INTEGER
    """,
    # An agent hook's tool calls: a JSON list of {tool, arguments, result_chars}, redacted.
    "ALTER TABLE decisions ADD COLUMN tool_calls TEXT",
)
BUSY_TIMEOUT = 3.0  # seconds a writer waits for another one before spooling its rows


class AuditError(Exception):
    """The audit database cannot be opened, read or written; the message says which and why."""


def _create_private(path: Path) -> None:
    """The log holds reasons and, optionally, inputs: only its owner may read it."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


def _regular_or_absent(path: Path) -> None:
    """Refuse a database (or its journal) that is a FIFO, a device or a socket: opening or
    reading one can block forever, and the process must end by its deadline. Refuse a
    symbolic or hard link too: SQLite writes through it, so a link planted at ``audit.db``
    would have the log's tables written into another program's database, and one at
    ``audit.db-wal`` would have WAL frames written over the file it shares (a shell
    profile). SQLite opens the files itself, so this is checked just before; the spool is
    checked as it is opened (see :func:`_take_pending`)."""
    for name in (path.name, *(path.name + s for s in ("-wal", "-shm", "-journal"))):
        try:
            info = os.lstat(path.with_name(name))
        except FileNotFoundError:
            continue
        where = f"audit log {path}: {path.with_name(name)}"
        if stat.S_ISLNK(info.st_mode):
            raise AuditError(f"{where} is a symbolic link; refused (name the file itself)")
        if not stat.S_ISREG(info.st_mode):
            raise AuditError(f"{where} is not a regular file")
        if info.st_nlink != 1:
            raise AuditError(f"{where} is a file with other names (hard links); refused")


def connect(path: Path, create: bool = True, timeout: float = BUSY_TIMEOUT) -> sqlite3.Connection:
    """An open, migrated connection (autocommit; transactions are explicit)."""
    try:
        _regular_or_absent(path)
        if create:
            _create_private(path)
        elif not path.exists():
            raise AuditError(f"no audit log at {path}")
        conn = sqlite3.connect(path, timeout=timeout, isolation_level=None)
        try:
            if create:
                conn.execute("PRAGMA journal_mode=WAL")
            migrate(conn)
        except BaseException:
            conn.close()
            raise
    except (OSError, ValueError, sqlite3.Error) as exc:
        raise AuditError(f"audit log {path}: {_why(exc)}") from None
    return conn


def _why(exc: BaseException) -> str:
    if isinstance(exc, FileExistsError) and exc.filename:  # making a folder where a file is
        return f"{exc.filename} is a file, not a folder"
    if isinstance(exc, ValueError):
        return f"not a usable path ({exc})"
    return exc.strerror or str(exc) if isinstance(exc, OSError) else str(exc)


def migrate(conn: sqlite3.Connection) -> None:
    """Apply the migrations this database lacks, once, even with many processes starting."""
    if conn.execute("PRAGMA user_version").fetchone()[0] >= len(MIGRATIONS):
        _check_not_newer(conn)
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        for script in MIGRATIONS[version:]:
            for statement in script.split(";"):
                if statement.strip():
                    conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {max(version, len(MIGRATIONS))}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    _check_not_newer(conn)


def _check_not_newer(conn: sqlite3.Connection) -> None:
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > len(MIGRATIONS):
        raise sqlite3.DatabaseError(f"written by a newer prompthooks (schema {version}, this "
                                    f"one knows {len(MIGRATIONS)})")


def _cell(value: Any) -> Any:
    # A hook's reply can carry lone surrogates, which SQLite's UTF-8 cannot hold.
    return value.encode("utf-8", "replace").decode("utf-8") if isinstance(value, str) else value


def _insert(conn: sqlite3.Connection, rows: Sequence[Mapping[str, Any]]) -> None:
    placeholders = ", ".join("?" for _ in COLUMNS)
    conn.executemany(f"INSERT INTO decisions ({', '.join(COLUMNS)}) VALUES ({placeholders})",
                     [tuple(_cell(row.get(c)) for c in COLUMNS) for row in rows])


def _pending(path: Path) -> Path:
    return path.with_name(path.name + ".pending")


def _take_pending(path: Path) -> tuple[list[dict[str, Any]], Any, str | None]:
    """Rows spooled by writers that could not get in, the locked spool to empty, and why a
    spool that is there was left alone. A line that is not a row (anyone who can write the
    spool can append one) is left out. A spool that is not a file prompthooks wrote (a FIFO,
    a symbolic or hard link: emptying it would empty the file it links to) is neither read
    nor emptied, and does not keep this run's rows out of the database."""
    try:
        fd = open_state(_pending(path), os.O_RDWR)
    except FileNotFoundError:
        return [], None, None
    except BadStateFile as exc:
        return [], None, f"audit log {path}: {exc}"
    os.set_blocking(fd, True)
    handle = open(fd, "r+", encoding="utf-8", errors="replace")  # noqa: SIM115 - held until committed
    fcntl.flock(handle, fcntl.LOCK_EX)
    rows = []
    for line in handle:
        with contextlib.suppress(ValueError, RecursionError):
            row = json.loads(line)
            if isinstance(row, dict):
                rows.append(row)
    return rows, handle, None


def _insert_spooled(conn: sqlite3.Connection, rows: Sequence[Mapping[str, Any]]) -> None:
    """Spooled rows one by one: one that SQLite refuses (a wrong type, a missing column) is
    dropped, never left to block every later write."""
    for row in rows:
        conn.execute("SAVEPOINT spooled")
        try:
            _insert(conn, [row])
        except (sqlite3.Error, ValueError, TypeError, OverflowError):
            conn.execute("ROLLBACK TO spooled")
        conn.execute("RELEASE spooled")


def _spool(path: Path, rows: Iterable[Mapping[str, Any]]) -> None:
    # open_state: a FIFO put in the spool's place fails here instead of blocking the run, and
    # a link is not followed (rows appended to the file it names).
    fd = open_state(_pending(path), os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    os.set_blocking(fd, True)
    with os.fdopen(fd, "a", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.write("".join(json.dumps(dict(r), ensure_ascii=True) + "\n" for r in rows))


def write(path: Path, rows: Sequence[Mapping[str, Any]],
          timeout: float = BUSY_TIMEOUT) -> str | None:
    """Append ``rows`` in one transaction (with any spooled rows). If the database cannot be
    written, the rows are spooled; AuditError says why, and whether they were kept. Returns
    one line when the rows went in but a spool in place was left alone (see _take_pending)."""
    if not rows:
        return None
    try:
        conn = connect(path, timeout=timeout)
        try:
            spooled, spool, left_alone = _take_pending(path)
            try:
                conn.execute("BEGIN IMMEDIATE")
                _insert(conn, rows)
                _insert_spooled(conn, spooled)
                conn.execute("COMMIT")
                if spool is not None:
                    spool.truncate(0)
            finally:
                if spool is not None:
                    spool.close()
        finally:
            conn.close()
    except (AuditError, OSError, ValueError, sqlite3.Error) as exc:
        # ValueError: a path holding a NUL byte, say; nothing about the log may escape.
        why = str(exc) if isinstance(exc, AuditError) else f"audit log {path}: {_why(exc)}"
        try:
            _spool(path, rows)
        except (OSError, ValueError) as spool_exc:
            raise AuditError(f"{why}; {len(rows)} row(s) lost: cannot spool them either "
                             f"({_why(spool_exc)})") from None
        raise AuditError(f"{why}; {len(rows)} row(s) kept in {_pending(path)} for the next "
                         "write") from None
    return left_alone


def read(path: Path, where: str = "", params: Sequence[Any] = (),
         limit: int | None = None) -> list[dict[str, Any]]:
    """Decision rows, newest first, filtered by an SQL ``where`` clause over COLUMNS."""
    conn = connect(path, create=False)
    try:
        conn.row_factory = sqlite3.Row
        sql = f"SELECT * FROM decisions {('WHERE ' + where) if where else ''} ORDER BY id DESC"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [dict(row) for row in conn.execute(sql, tuple(params))]
    except sqlite3.Error as exc:
        raise AuditError(f"audit log {path}: {exc}") from None
    finally:
        conn.close()
