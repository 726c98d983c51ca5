"""Fault matrix, the audit database: a log that cannot be written costs one line on stderr,
never the reply (see rows.py for how a row runs)."""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

from prompthooks.audit import store

from ..helpers import (
    claude_bash,
    file_modes_bind_root,
    reply,
    run_cli,
    write_json,
)
from .rows import (
    HEALTHY,
    POLICIES,
    Run,
    claude_reply,
    expected_failure,
    stderr_lines,
)


def _audit_row(tmp_path: Path, fail_closed: bool, db: Path) -> tuple[Run, list[str]]:
    """A Claude Code row whose faulty hook exits 1, logging to ``db``: the run, and its
    stderr lines about the audit log."""
    cfg = write_json(tmp_path / "hooks.json", {
        "hooks": {"PreToolUse": [{"hooks": [
            {"type": "command", "command": "exit 1", "failClosed": fail_closed},
            {"type": "command", "command": HEALTHY}]}]},
        "prompthooks": {"audit": {"path": str(db)}}})
    proc = run_cli(claude_bash("ls", cwd=str(tmp_path)), "--config", str(cfg), "--managed-dir",
                   str(tmp_path / "no-managed"), preexec_fn=file_modes_bind_root)
    assert proc.returncode == 0, proc.stderr
    lines = stderr_lines(proc)
    audit = [line for line in lines if line.startswith("audit log ")]
    label = f"{cfg}: hooks.PreToolUse[0].hooks[0]"
    failure = expected_failure([line for line in lines if line not in audit], "exit 1", label,
                       re.escape("exited with status 1"))
    assert reply(proc) == claude_reply(failure, fail_closed)  # the log changed nothing
    return (proc, label), audit


def _logged(db: Path) -> int:
    with contextlib.closing(store.connect(db, create=False)) as conn:
        return int(conn.execute("SELECT count(*) FROM decisions").fetchone()[0])


@POLICIES
def test_audit_database_locked_by_another_writer(tmp_path: Path, fail_closed: bool) -> None:
    db = tmp_path / "log" / "audit.db"
    holder = store.connect(db)
    holder.execute("BEGIN EXCLUSIVE")  # past the busy timeout: the run cannot wait for it
    try:
        _, audit = _audit_row(tmp_path, fail_closed, db)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert audit == [f"audit log {db}: database is locked; 2 row(s) kept in {db}.pending for "
                     "the next write"]
    assert _logged(db) == 0
    _, audit = _audit_row(tmp_path, fail_closed, db)  # the next writer moves them in
    assert audit == [] and _logged(db) == 4
    assert (tmp_path / "log" / "audit.db.pending").read_text() == ""


@POLICIES
def test_audit_database_file_is_read_only(tmp_path: Path, fail_closed: bool) -> None:
    db = tmp_path / "log" / "audit.db"
    store.connect(db).close()
    db.chmod(0o400)
    _, audit = _audit_row(tmp_path, fail_closed, db)
    assert audit == [f"audit log {db}: attempt to write a readonly database; 2 row(s) kept in "
                     f"{db}.pending for the next write"]
    for path in db.parent.glob("audit.db*"):  # mended (SQLite gave -wal and -shm its mode)
        path.chmod(0o600)
    _, audit = _audit_row(tmp_path, fail_closed, db)  # the next writer moves the rows in
    assert audit == [] and _logged(db) == 4


@POLICIES
def test_audit_database_and_its_folder_are_read_only(tmp_path: Path, fail_closed: bool) -> None:
    db = tmp_path / "log" / "audit.db"
    store.connect(db).close()
    db.chmod(0o400)
    db.parent.chmod(0o500)
    try:
        _, audit = _audit_row(tmp_path, fail_closed, db)
    finally:
        db.parent.chmod(0o700)
    (line,) = audit
    assert line.startswith(f"audit log {db}: ")
    assert line.endswith("; 2 row(s) lost: cannot spool them either (Permission denied)")
    assert _logged(db) == 0 and not (tmp_path / "log" / "audit.db.pending").exists()
