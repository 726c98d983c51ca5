"""A FIFO, or a link, planted where prompthooks keeps its own state (the user's data, cache,
state and runtime folders, which an agent running as the user can write).

Each attack first shows that the file at that path is what the run reads (a regular file
there is honoured: the canary), then puts a FIFO in its place and runs a real `prompthooks
run`, with a managed deny and with a fail-closed hook: the answer is right and comes well
before the budget (a read of the FIFO would wait for a writer that never comes, until the
budget).
"""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path
from typing import Any

import pytest

from prompthooks.model import failures
from prompthooks.model import verdict as model_verdict

from ..fake_model import FakeModel, verdict
from ..helpers import claude_bash, claude_event, cline_event, reply, run_cli, write_json

BUDGET = 60  # seconds: the run's, which a blocked read would use up
IN_TIME = 30  # "well before the budget": a run takes about a second on an idle machine
MANAGED_REASON = "managed says no"
MODEL_REASON = "model says no"


def _managed(tmp_path: Path, event: str = "PreToolUse") -> Path:
    folder = tmp_path / "etc"
    write_json(folder / "hooks.json", {"hooks": {event: [{"hooks": [
        {"type": "command", "command": f"echo '{MANAGED_REASON}' >&2; exit 2"}]}]}})
    return folder


def _config(tmp_path: Path, event: str = "PreToolUse", settings: dict[str, Any] | None = None,
            **handler: Any) -> Path:
    data: dict[str, Any] = {"hooks": {event: [{"hooks": [
        {"type": "prompt", "prompt": "Block deletions. $ARGUMENTS", "failClosed": True,
         "timeout": 20, **handler}]}]}}
    if settings:
        data["prompthooks"] = settings
    return write_json(tmp_path / "conf" / "hooks.json", data)


def _run(tmp_path: Path, cfg: Path, managed: bool, event: dict[str, Any] | None = None,
         ) -> tuple[Any, float]:
    name = str(event["hook_event_name"]) if event else "PreToolUse"
    folder = _managed(tmp_path, name) if managed else tmp_path / "no-managed"
    started = time.monotonic()
    proc = run_cli(event or claude_bash("rm -rf /"), "--config", str(cfg), "--managed-dir",
                   str(folder), "--budget", str(BUDGET), cwd=tmp_path, timeout=BUDGET * 2)
    return proc, time.monotonic() - started


def _denied(proc: Any) -> str:
    """The deny's reason (a PreToolUse deny is the only answer these runs may give)."""
    output = reply(proc).get("hookSpecificOutput", {})
    assert output.get("permissionDecision") == "deny", (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    return str(output["permissionDecisionReason"])


def _fifo_in_place_of(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def _answered_in_time(proc: Any, took: float, managed: bool) -> None:
    assert took < IN_TIME, (took, proc.stderr)
    assert (MANAGED_REASON if managed else MODEL_REASON) in _denied(proc)


@pytest.mark.parametrize("managed", [False, True], ids=["fail-closed", "managed-deny"])
def test_a_fifo_at_the_dead_endpoint_memory(tmp_path: Path, model: FakeModel,
                                           isolated_home: Path, managed: bool) -> None:
    model.script(verdict(False, MODEL_REASON))
    cfg = _config(tmp_path)
    failures.remember_dead(failures.endpoint_name(model.url, "test-model"), "cannot connect (planted)",
                  dict(os.environ))
    (record,) = isolated_home.rglob("dead-*.json")
    # Canary: the record at that path is read. A regular one planted for a live endpoint makes
    # the fail-closed hook block at once (its own policy), never allow; the model is not asked.
    proc, _ = _run(tmp_path, cfg, managed=False)
    assert "planted" in _denied(proc)
    assert model.requests == []
    _fifo_in_place_of(record)
    proc, took = _run(tmp_path, cfg, managed)
    _answered_in_time(proc, took, managed)
    assert len(model.requests) == 1  # the FIFO is no memory: the endpoint was asked


@pytest.mark.parametrize("managed", [False, True], ids=["fail-closed", "managed-deny"])
def test_a_fifo_at_the_schema_refusal_memory(tmp_path: Path, model: FakeModel,
                                            isolated_home: Path, managed: bool) -> None:
    model.script(verdict(False, MODEL_REASON))
    cfg = _config(tmp_path)
    model_verdict.remember(failures.endpoint_name(model.url, "test-model"), "test-model", dict(os.environ))
    model_verdict._refused.clear()  # this process's own memory: the run reads only the file
    (record,) = isolated_home.rglob("schema-*.json")
    # Canary: the record at that path is read: the request goes in JSON mode.
    proc, _ = _run(tmp_path, cfg, managed=False)
    assert MODEL_REASON in _denied(proc)
    assert model.requests[-1].body["response_format"]["type"] == "json_object"
    _fifo_in_place_of(record)
    proc, took = _run(tmp_path, cfg, managed)
    _answered_in_time(proc, took, managed)
    # The FIFO is no memory: the schema was sent.
    assert model.requests[-1].body["response_format"]["type"] == "json_schema"


def test_a_fifo_at_the_dead_endpoint_memory_on_a_cline_event(
        tmp_path: Path, model: FakeModel, isolated_home: Path) -> None:
    """As it was found: a managed deny on a Cline event, under Cline's own budget (28 s of
    its 30), held by the FIFO until then."""
    model.script(verdict(True))
    cfg = _config(tmp_path)
    failures.remember_dead(failures.endpoint_name(model.url, "test-model"), "cannot connect (planted)",
                  dict(os.environ))
    (record,) = isolated_home.rglob("dead-*.json")
    _fifo_in_place_of(record)
    event = cline_event("PreToolUse", str(tmp_path), toolName="execute_command",
                        parameters={"command": "rm -rf /"})
    started = time.monotonic()
    proc = run_cli(event, "--config", str(cfg), "--managed-dir", str(_managed(tmp_path)),
                   cwd=tmp_path, timeout=120)
    # The FIFO held it until 27 s; a run takes a second or two, more on a loaded machine.
    assert time.monotonic() - started < 20, proc.stderr
    out = reply(proc)
    assert out["cancel"] is True and MANAGED_REASON in out["errorMessage"], proc.stderr
    assert len(model.requests) == 1  # the FIFO was no memory: the endpoint was asked


@pytest.mark.parametrize("managed", [False, True], ids=["fail-closed", "managed-deny"])
def test_a_fifo_at_a_verdict_cache_entry(tmp_path: Path, model: FakeModel,
                                         isolated_home: Path, managed: bool) -> None:
    model.script(verdict(False, MODEL_REASON))
    cfg = _config(tmp_path, cache_ttl=300)
    assert MODEL_REASON in _denied(_run(tmp_path, cfg, managed=False)[0])
    (entry,) = (isolated_home / ".cache" / "prompthooks" / "verdicts").iterdir()
    # Canary: the entry at that path is read: the next run's verdict comes from it.
    proc, _ = _run(tmp_path, cfg, managed=False)
    assert MODEL_REASON in _denied(proc)
    assert "verdict from the verdict cache" in proc.stderr
    assert len(model.requests) == 1
    _fifo_in_place_of(entry)
    proc, took = _run(tmp_path, cfg, managed)
    _answered_in_time(proc, took, managed)
    assert "verdict from the verdict cache" not in proc.stderr
    assert len(model.requests) == 2  # a miss: the model was asked again


@pytest.mark.parametrize("managed", [False, True], ids=["fail-closed", "managed-deny"])
def test_a_fifo_at_the_warn_once_record(tmp_path: Path, model: FakeModel,
                                       isolated_home: Path, managed: bool) -> None:
    model.script(verdict(False, MODEL_REASON))
    cfg = _config(tmp_path)
    data = json.loads(cfg.read_text())
    data["hooks"]["PreToolUSe"] = data["hooks"]["PreToolUse"]  # a typo: said once
    cfg.write_text(json.dumps(data))
    first, _ = _run(tmp_path, cfg, managed=False)
    assert "PreToolUSe" in first.stderr
    record = isolated_home / ".local" / "share" / "prompthooks" / "warned.json"
    assert record.is_file()
    # Canary: the record at that path is read: the warning is not said again.
    second, _ = _run(tmp_path, cfg, managed=False)
    assert MODEL_REASON in _denied(second)
    assert "PreToolUSe" not in second.stderr
    _fifo_in_place_of(record)
    proc, took = _run(tmp_path, cfg, managed)
    _answered_in_time(proc, took, managed)
    assert "PreToolUSe" in proc.stderr  # no record: said again, and remembered anew
    assert stat.S_ISREG(record.lstat().st_mode)


def _stop_blocked(proc: Any) -> str:
    out = reply(proc)
    assert out.get("decision") == "block", (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    return str(out["reason"])


@pytest.mark.parametrize("managed", [False, True], ids=["fail-closed", "managed-deny"])
def test_a_fifo_at_a_stop_count(tmp_path: Path, model: FakeModel, isolated_home: Path,
                                managed: bool) -> None:
    model.script(verdict(False, MODEL_REASON))
    cfg = _config(tmp_path, "Stop", {"stop_block_cap": 3})
    stop = claude_event("Stop", stop_hook_active=False)
    assert MODEL_REASON in _stop_blocked(_run(tmp_path, cfg, False, stop)[0])
    (count,) = (isolated_home / ".local" / "state" / "prompthooks" / "stop-blocks").iterdir()
    # Canary: the count at that path is read: at the cap, the stop is let through.
    count.write_text(json.dumps({"blocks": 3}))
    proc, _ = _run(tmp_path, cfg, False, stop)
    assert "let through" in proc.stdout and reply(proc).get("decision") != "block"
    model.requests.clear()
    count.write_text(json.dumps({"blocks": 1}))
    _fifo_in_place_of(count)
    proc, took = _run(tmp_path, cfg, managed, stop)
    assert took < IN_TIME, (took, proc.stderr)
    assert (MANAGED_REASON if managed else MODEL_REASON) in _stop_blocked(proc)
    assert len(model.requests) == 1  # no count: the project's hook ran


def test_a_fifo_at_the_config_cache_entry(tmp_path: Path, model: FakeModel,
                                          isolated_home: Path) -> None:
    """The cache is never read in a run with a managed policy (see loading/sources.py): the
    fail-closed hook is the gate here."""
    model.script(verdict(False, MODEL_REASON))
    cfg = _config(tmp_path)
    assert MODEL_REASON in _denied(_run(tmp_path, cfg, managed=False)[0])
    (entry,) = (isolated_home / ".cache" / "prompthooks").glob("config-*.json")
    # Canary: the entry at that path is read: a prompt changed in it is the one sent.
    entry.write_text(entry.read_text().replace("Block deletions.", "CANARY-PROMPT"))
    assert MODEL_REASON in _denied(_run(tmp_path, cfg, managed=False)[0])
    assert "CANARY-PROMPT" in model.requests[-1].user
    _fifo_in_place_of(entry)
    proc, took = _run(tmp_path, cfg, managed=False)
    _answered_in_time(proc, took, managed=False)
    assert "Block deletions." in model.requests[-1].user  # loaded from the config itself


@pytest.mark.parametrize("link", ["symlink", "hard link"])
def test_a_link_at_the_audit_spool_is_neither_read_nor_emptied(
        tmp_path: Path, isolated_home: Path, link: str) -> None:
    """The spool (``audit.db.pending``) is emptied once its rows are in the database: through
    a link planted there, that would empty the file it names (a shell profile, say)."""
    cfg = write_json(tmp_path / "conf" / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": f"echo '{MANAGED_REASON}' >&2; exit 2"}]}]}})
    db = isolated_home / ".local" / "share" / "prompthooks" / "audit.db"
    spool = db.with_name("audit.db.pending")
    row = {"time": "2026-01-01T00:00:00.000Z", "run_id": "spooled", "host": "claude",
           "event": "PreToolUse", "host_event": "PreToolUse", "hook": "h", "hook_label": "l",
           "source": "config", "kind": "command", "fail_closed": 0, "status": "ok",
           "decision": "deny", "cached": 0, "replayed": 0}
    profile = tmp_path / "profile"
    profile.write_text(json.dumps(row) + "\n")
    before = profile.read_bytes()

    def rows(where: str = "1") -> int:
        import sqlite3

        with sqlite3.connect(db) as conn:
            return int(conn.execute(f"SELECT count(*) FROM decisions WHERE {where}")
                       .fetchone()[0])

    def spooled_rows() -> int:
        return rows("run_id = 'spooled'")

    # Canary: a spool at that path is read, moved into the database and emptied.
    _denied(_run(tmp_path, cfg, managed=False)[0])
    spool.write_bytes(before)
    _denied(_run(tmp_path, cfg, managed=False)[0])
    assert spooled_rows() == 1 and spool.read_bytes() == b""
    spool.unlink()
    if link == "symlink":
        spool.symlink_to(profile)
    else:
        os.link(profile, spool)
    proc, took = _run(tmp_path, cfg, managed=False)
    assert took < IN_TIME
    assert MANAGED_REASON in _denied(proc)
    assert profile.read_bytes() == before  # neither emptied nor appended to
    assert spooled_rows() == 1  # its line was not taken in
    assert rows() == 4  # and this run's row went in all the same
    what = "a symbolic link" if link == "symlink" else "a hard link"
    assert proc.stderr.splitlines() == [
        f"prompthooks: audit log {db}: {spool}: {what}, not a file prompthooks wrote; ignored"]


@pytest.mark.parametrize("planted", ["symlink", "FIFO"])
def test_a_link_or_fifo_at_the_resident_process_lock_is_refused(
        tmp_path: Path, planted: str) -> None:
    """The lock beside the resident process's socket is opened to be locked: through a
    symlink, that open would create (or lock) a file elsewhere."""
    import fcntl

    from prompthooks.model import model_process

    folder = tmp_path / "run"
    folder.mkdir(mode=0o700)
    socket = folder / "worker.sock"
    lock = model_process.lock_path(socket)
    # Canary: the lock at that path is the one looked at: held here, the worker is "held".
    holder = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(holder, fcntl.LOCK_EX)
        assert model_process._start_unless_running(socket, {}, may_start=False) == "held"
    finally:
        os.close(holder)
    lock.unlink()
    elsewhere = tmp_path / "elsewhere"
    if planted == "symlink":
        lock.symlink_to(elsewhere)
    else:
        os.mkfifo(lock)
    with pytest.raises(model_process.WorkerUnavailable):
        model_process._start_unless_running(socket, {}, may_start=False)
    assert not elsewhere.exists()


@pytest.mark.parametrize("name, link, victim", [
    ("audit.db-wal", "hard link", "profile"),
    ("audit.db", "symlink", "database"),
    ("audit.db", "hard link", "database"),
])
def test_a_link_at_the_audit_database_or_its_journal_is_not_written_through(
        tmp_path: Path, isolated_home: Path, name: str, link: str, victim: str) -> None:
    """SQLite writes through a link: WAL frames over a shell profile, the log's tables into
    another program's database. The run refuses the database and spools its rows."""
    import sqlite3

    cfg = write_json(tmp_path / "conf" / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": f"echo '{MANAGED_REASON}' >&2; exit 2"}]}]}})
    db = isolated_home / ".local" / "share" / "prompthooks" / "audit.db"
    # Canary: the database at that path is the one written.
    _denied(_run(tmp_path, cfg, managed=False)[0])
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM decisions").fetchone() == (1,)
    target = tmp_path / "victim"
    if victim == "profile":
        target.write_text("export PATH=$PATH:~/bin\n" * 100)
    else:
        with sqlite3.connect(target) as other:
            other.execute("CREATE TABLE bookmarks (url TEXT)")
        db.unlink()
    before = target.read_bytes()
    planted = db.with_name(name)
    planted.unlink(missing_ok=True)  # a WAL may stay beside the database between runs
    if link == "symlink":
        planted.symlink_to(target)
    else:
        os.link(target, planted)
    proc, took = _run(tmp_path, cfg, managed=False)
    assert took < IN_TIME
    assert MANAGED_REASON in _denied(proc)
    assert target.read_bytes() == before
    what = "a symbolic link" if link == "symlink" else "a file with other names (hard links)"
    assert proc.stderr.splitlines() == [
        f"prompthooks: audit log {db}: {planted} is {what}; refused"
        + (" (name the file itself)" if link == "symlink" else "")
        + f"; 1 row(s) kept in {db}.pending for the next write"]


@pytest.mark.parametrize("planted", ["FIFO", "symlink"])
def test_a_fifo_or_link_at_the_install_record_is_no_record(
        tmp_path: Path, isolated_home: Path, planted: str) -> None:
    """The folders install created, which uninstall removes once empty: a planted record
    must neither hold uninstall nor name folders for it to remove."""
    from prompthooks.install import created_folders

    env = dict(os.environ)
    created_folders.remember([str(tmp_path / "made-by-install")], env)
    record = isolated_home / ".local" / "share" / "prompthooks" / created_folders.RECORD
    assert created_folders._read(env) == [str(tmp_path / "made-by-install")]  # canary: read from there
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"folders": [str(tmp_path / "someone-elses")]}))
    record.unlink()
    if planted == "FIFO":
        os.mkfifo(record)
    else:
        record.symlink_to(other)
    started = time.monotonic()
    assert created_folders._read(env) == []
    assert time.monotonic() - started < IN_TIME
