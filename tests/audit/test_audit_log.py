"""The audit log: real `prompthooks run` processes writing a real SQLite database."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from prompthooks.audit import store
from prompthooks.audit.stats import percentile, summarise

from ..fake_model import FakeModel, verdict
from ..helpers import approve, claude_bash, reply, run_cli, write_json, write_script

SECRET = "sk-proj-Zx81abcdefghijklmnopqrstuvw"


def _rows(db: Path) -> list[dict[str, Any]]:
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute("SELECT * FROM decisions ORDER BY id")]
    finally:
        conn.close()


def _default_db(home: Path) -> Path:
    return home / ".local" / "share" / "prompthooks" / "audit.db"


def _project(tmp_path: Path, audit: dict[str, Any] | None = None) -> Path:
    """A project with a denying hook (its reason carries a secret) and a hook that errors."""
    project = tmp_path / "project"
    # Outside the project: a script inside it could not be approved (see docs/packs-and-trust.md, "Trust").
    deny = write_script(tmp_path / "deny.sh",
                        f"cat >/dev/null; echo 'no: token={SECRET}' >&2; exit 2")
    data: dict[str, Any] = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": str(deny)},
        {"type": "command", "command": "exit 1"}]}]}}
    if audit is not None:
        data["prompthooks"] = {"audit": audit}
    approve(write_json(project / ".prompthooks" / "hooks.json", data).parent)
    return project


@pytest.mark.slow
def test_one_row_per_hook_with_decision_reason_and_no_input(tmp_path: Path,
                                                             isolated_home: Path) -> None:
    project = _project(tmp_path)
    event = claude_bash(f"deploy --key {SECRET}", cwd=str(project))
    proc = run_cli(event, cwd=project)
    assert proc.returncode == 0
    assert reply(proc)["hookSpecificOutput"]["permissionDecision"] == "deny"
    db = _default_db(isolated_home)
    assert db.stat().st_mode & 0o777 == 0o600  # reasons may be sensitive: owner only
    deny, error = _rows(db)
    assert deny["run_id"] == error["run_id"] and len(deny["run_id"]) == 16
    assert (deny["host"], deny["event"], deny["host_event"], deny["tool"]) == (
        "claude", "PreToolUse", "PreToolUse", "Bash")
    assert (deny["session_id"], deny["project"]) == ("sess-1", str(project))
    assert (deny["kind"], deny["source"], deny["status"], deny["decision"]) == (
        "command", "project", "ok", "deny")
    assert deny["reason"] == "no: token=[redacted]"
    assert deny["hook_label"].endswith("hooks.json: hooks.PreToolUse[0].hooks[0]")
    assert (error["status"], error["decision"], error["error"]) == (
        "error", "none", "exited with status 1")
    assert deny["event_input"] is None and error["event_input"] is None
    assert deny["time"].endswith("Z") and deny["duration_ms"] > 0
    assert SECRET not in db.read_bytes().decode("latin-1")


@pytest.mark.slow
def test_store_events_keeps_the_input_redacted(tmp_path: Path, isolated_home: Path) -> None:
    project = _project(tmp_path, {"store_events": True})
    run_cli(claude_bash(f"export OPENAI_API_KEY={SECRET}", cwd=str(project)), cwd=project)
    row = _rows(_default_db(isolated_home))[0]
    stored = json.loads(row["event_input"])
    assert stored["tool_input"]["command"] == "export OPENAI_API_KEY=[redacted]"
    assert stored["session_id"] == "sess-1"


def test_disabled_by_config_writes_nothing(tmp_path: Path, isolated_home: Path) -> None:
    project = _project(tmp_path, {"enabled": False})
    proc = run_cli(claude_bash("ls", cwd=str(project)), cwd=project)
    assert reply(proc)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert not _default_db(isolated_home).exists()


@pytest.mark.slow
def test_path_is_relative_to_its_config_and_managed_settings_win(tmp_path: Path) -> None:
    project = _project(tmp_path, {"enabled": False})
    managed = write_json(tmp_path / "etc" / "hooks.json",
                         {"hooks": {}, "prompthooks": {"audit": {"enabled": True,
                                                                 "path": "logs/audit.db"}}})
    proc = run_cli(claude_bash("ls", cwd=str(project)), "--managed-dir", str(managed.parent),
                   cwd=project)
    assert proc.returncode == 0
    rows = _rows(tmp_path / "etc" / "logs" / "audit.db")  # the project could not turn it off
    assert [r["decision"] for r in rows] == ["deny", "none"]


def test_no_rows_when_no_hook_applies(tmp_path: Path, isolated_home: Path) -> None:
    project = _project(tmp_path)
    event = {**claude_bash("ls", cwd=str(project)), "tool_name": "Read",
             "tool_input": {"file_path": "x"}}
    assert run_cli(event, cwd=project).returncode == 0
    assert not _default_db(isolated_home).exists()


@pytest.mark.slow
def test_twenty_concurrent_runs_every_row_present(tmp_path: Path, isolated_home: Path) -> None:
    project = _project(tmp_path)

    def one(i: int) -> int:
        return run_cli(claude_bash(f"echo {i}", cwd=str(project)), cwd=project).returncode

    with ThreadPoolExecutor(20) as pool:
        codes = list(pool.map(one, range(20)))
    assert codes == [0] * 20
    rows = _rows(_default_db(isolated_home))
    assert len(rows) == 40
    assert len({r["run_id"] for r in rows}) == 20
    assert sorted(r["decision"] for r in rows) == ["deny"] * 20 + ["none"] * 20
    # Nothing waits in the spool: a writer held off by the others (a busy machine) spooled its
    # rows, and a later one moved them in, emptying the spool it keeps.
    spool = _default_db(isolated_home).parent / "audit.db.pending"
    assert not spool.exists() or spool.read_text() == ""


@pytest.mark.slow
def test_prompt_hook_row_has_model_tokens_and_replay_flag(tmp_path: Path, isolated_home: Path,
                                                          model: FakeModel) -> None:
    model.script(verdict(False, "not on main"))
    write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "prompt", "prompt": "Block pushes to main. $ARGUMENTS"}]}]}})
    tape = tmp_path / "tape.yaml"
    live = run_cli(claude_bash("git push origin main"), "--config", str(tmp_path / "hooks.json"),
                   "--record", str(tape))
    replayed = run_cli(claude_bash("git push origin main"), "--config",
                       str(tmp_path / "hooks.json"), "--replay", str(tape))
    assert reply(live) == reply(replayed)
    first, second = _rows(_default_db(isolated_home))
    assert (first["kind"], first["decision"], first["reason"]) == ("prompt", "deny", "not on main")
    assert (first["model"], first["input_tokens"], first["output_tokens"]) == ("test-model", 120, 12)
    assert (first["replayed"], second["replayed"]) == (0, 1)
    assert first["hook"] == second["hook"] == "inline prompt"


@pytest.mark.slow
def test_locked_database_spools_rows_and_the_next_run_moves_them_in(
        tmp_path: Path, isolated_home: Path) -> None:
    project = _project(tmp_path)
    db = _default_db(isolated_home)
    store.write(db, [])  # nothing to write: no file either
    assert not db.exists()
    run_cli(claude_bash("first", cwd=str(project)), cwd=project)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another writer holding the database
    try:
        locked = run_cli(claude_bash("second", cwd=str(project)), cwd=project)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert reply(locked)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert locked.returncode == 0
    lines = [line for line in locked.stderr.splitlines() if "audit log" in line]
    assert len(lines) == 1 and "database is locked" in lines[0]
    assert "2 row(s) kept in" in lines[0] and "Traceback" not in locked.stderr
    assert len(_rows(db)) == 2
    assert (db.parent / "audit.db.pending").read_text().count("\n") == 2
    run_cli(claude_bash("third", cwd=str(project)), cwd=project)
    assert len(_rows(db)) == 6
    assert (db.parent / "audit.db.pending").read_text() == ""


@pytest.mark.slow
def test_a_file_where_the_logs_folder_should_be(tmp_path: Path, isolated_home: Path) -> None:
    """Where the log cannot exist at all (its folder is a file), rows are reported lost."""
    project = _project(tmp_path)
    share = isolated_home / ".local" / "share"
    shutil.rmtree(share / "prompthooks")  # the approval went there: name the config instead
    (share / "prompthooks").write_text("not a folder")
    proc = run_cli(claude_bash("x", cwd=str(project)), "--config",
                   str(project / ".prompthooks"), cwd=project)
    assert reply(proc)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert proc.returncode == 0
    (line,) = [line for line in proc.stderr.splitlines() if "audit log" in line]
    assert line.startswith("prompthooks: audit log ") and "2 row(s) lost" in line


def test_schema_is_migrated_once_and_a_newer_one_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    conn = store.connect(db)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == len(store.MIGRATIONS)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    columns = [r[1] for r in conn.execute("PRAGMA table_info(decisions)")]
    assert columns == ["id", *store.COLUMNS]
    conn.execute(f"PRAGMA user_version = {len(store.MIGRATIONS) + 1}")
    conn.close()
    with pytest.raises(store.AuditError, match="written by a newer prompthooks"):
        store.connect(db)


def _log(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "prompthooks", "log", *args],
                          capture_output=True, text=True, timeout=60)


def _seed(db: Path) -> None:
    base = {c: None for c in store.COLUMNS} | {
        "run_id": "r", "host": "claude", "event": "PreToolUse", "host_event": "PreToolUse",
        "hook_label": "x", "source": "project", "kind": "command", "fail_closed": 0,
        "cached": 0, "replayed": 0, "status": "ok"}
    rows = [
        base | {"time": "2020-01-01T00:00:00.000Z", "run_id": "a", "hook": "old-hook",
                "decision": "allow", "duration_ms": 5.0},
        base | {"time": "2099-01-01T00:00:00.000Z", "run_id": "b", "hook": "guard.sh",
                "decision": "deny", "reason": "no rm", "duration_ms": 10.0},
        base | {"time": "2099-01-01T00:00:01.000Z", "run_id": "c", "hook": "guard.sh",
                "decision": "none", "duration_ms": 30.0},
        base | {"time": "2099-01-01T00:00:02.000Z", "run_id": "c", "hook": "prompt p.md",
                "kind": "prompt", "decision": "none", "status": "timeout",
                "error": "too slow", "duration_ms": 2000.0, "input_tokens": 100,
                "output_tokens": 10, "cost": 0.25},
    ]
    store.write(db, rows)


@pytest.mark.slow
def test_log_filters_and_json(tmp_path: Path) -> None:
    db = tmp_path / "audit.db"
    _seed(db)
    listed = json.loads(_log("--db", str(db), "--json").stdout)
    assert [r["hook"] for r in listed] == ["prompt p.md", "guard.sh", "guard.sh", "old-hook"]
    denied = json.loads(_log("--db", str(db), "--json", "--decision", "deny").stdout)
    assert [(r["hook"], r["reason"]) for r in denied] == [("guard.sh", "no rm")]
    errors = json.loads(_log("--db", str(db), "--json", "--decision", "error").stdout)
    assert [r["error"] for r in errors] == ["too slow"]
    recent = json.loads(_log("--db", str(db), "--json", "--since", "30d").stdout)
    assert "old-hook" not in {r["hook"] for r in recent} and len(recent) == 3
    dated = json.loads(_log("--db", str(db), "--json", "--since", "2099-01-01T00:00:01Z").stdout)
    assert len(dated) == 2
    hooked = json.loads(_log("--db", str(db), "--json", "--hook", "GUARD", "--limit", "1").stdout)
    assert [r["reason"] for r in hooked] == [None]  # the newest guard.sh row
    table = _log("--db", str(db), "--decision", "deny")
    assert table.returncode == 0
    assert "guard.sh" in table.stdout and "no rm" in table.stdout
    assert "old-hook" not in table.stdout and "\x1b[" not in table.stdout  # not a TTY: no colour


@pytest.mark.slow
def test_log_stats(tmp_path: Path) -> None:
    db = tmp_path / "audit.db"
    _seed(db)
    stats = json.loads(_log("stats", "--db", str(db), "--json").stdout)
    assert (stats["runs"], stats["events"]) == (4, 3)
    guard = next(h for h in stats["hooks"] if h["hook"] == "guard.sh")
    assert (guard["runs"], guard["deny"], guard["none"], guard["block_rate"]) == (2, 1, 1, 0.5)
    assert (guard["p50_ms"], guard["max_ms"]) == (10.0, 30.0)
    prompt = next(h for h in stats["hooks"] if h["hook"] == "prompt p.md")
    assert (prompt["errors"], prompt["tokens"], prompt["cost"]) == (1, 110, 0.25)
    text = _log("stats", "--db", str(db)).stdout
    assert "guard.sh" in text and "50.0%" in text


@pytest.mark.slow
def test_log_without_a_database_and_with_a_bad_since(tmp_path: Path) -> None:
    missing = _log("--db", str(tmp_path / "none.db"))
    assert missing.returncode == 0
    assert "no audit log at" in missing.stdout and not (tmp_path / "none.db").exists()
    assert json.loads(_log("--db", str(tmp_path / "none.db"), "--json").stdout) == []
    _seed(tmp_path / "a.db")
    bad = _log("--db", str(tmp_path / "a.db"), "--since", "last tuesday")
    assert bad.returncode == 64
    assert bad.stderr.strip().splitlines() == [
        "prompthooks: --since 'last tuesday': expected a duration like 30m, 12h or 7d, "
        "or an ISO date such as 2026-11-01"]


@pytest.mark.slow
def test_log_finds_the_database_the_config_names(tmp_path: Path) -> None:
    project = _project(tmp_path, {"path": "../audit/custom.db"})
    run_cli(claude_bash("ls", cwd=str(project)), cwd=project)
    listed = subprocess.run([sys.executable, "-m", "prompthooks", "log", "--json"],
                            capture_output=True, text=True, cwd=project, timeout=60)
    assert [r["decision"] for r in json.loads(listed.stdout)] == ["none", "deny"]
    assert (project / "audit" / "custom.db").exists()


def test_percentile_nearest_rank() -> None:
    assert percentile([], 0.5) == 0.0
    assert percentile([1.0], 0.95) == 1.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.0
    assert percentile([float(i) for i in range(1, 101)], 0.95) == 95.0
    assert summarise([]) == {"runs": 0, "events": 0, "hooks": []}


@pytest.mark.slow
def test_a_fail_closed_block_of_an_unreadable_event_is_logged(tmp_path: Path,
                                                              isolated_home: Path) -> None:
    cfg = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": "exit 0", "failClosed": True}]}]}})
    proc = run_cli(b'{"hook_event_name": "PreToolUse", "tool_input": ', "--host", "claude",
                   "--config", str(cfg))
    assert proc.returncode == 2
    (row,) = _rows(_default_db(isolated_home))
    assert (row["host"], row["event"], row["hook"], row["kind"], row["decision"]) == (
        "claude", "?", "(unreadable event)", "input", "deny")
    assert row["error"].startswith("the event on stdin is not valid JSON")
    assert row["reason"].startswith("Blocked by prompthooks: a managed or fail-closed hook could not judge")


def test_text_sqlite_cannot_hold_is_replaced_not_fatal(tmp_path: Path) -> None:
    row = {c: None for c in store.COLUMNS} | {
        "time": "2026-01-01T00:00:00.000Z", "run_id": "r", "host": "claude",
        "event": "PreToolUse", "host_event": "PreToolUse", "hook": "h", "hook_label": "x",
        "source": "project", "kind": "command", "fail_closed": 0, "status": "ok",
        "decision": "deny", "reason": "bad \ud800 char", "cached": 0, "replayed": 0}
    store.write(tmp_path / "a.db", [row])
    assert _rows(tmp_path / "a.db")[0]["reason"] == "bad ? char"


@pytest.mark.slow
def test_a_priced_model_records_its_cost(tmp_path: Path, isolated_home: Path,
                                         model: FakeModel) -> None:
    model.script(verdict(True))
    write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "prompt", "prompt": "Judge. $ARGUMENTS", "model": "gpt-4o-mini"}]}]}})
    run_cli(claude_bash("ls"), "--config", str(tmp_path / "hooks.json"))
    (row,) = _rows(_default_db(isolated_home))
    assert (row["model"], row["input_tokens"], row["output_tokens"]) == ("gpt-4o-mini", 120, 12)
    # litellm's price map: 0.15 $ per million input tokens, 0.60 $ per million output tokens.
    assert row["cost"] == pytest.approx(120 * 0.15e-6 + 12 * 0.60e-6)
