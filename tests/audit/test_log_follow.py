"""`prompthooks log --format jsonl` and `log --follow`: JSON Lines for scripts, and the log
followed as real concurrent `prompthooks run` processes write it; Ctrl-C and SIGTERM end it
cleanly."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from prompthooks.audit.records import FIELDS

from ..helpers import claude_bash, run_cli, write_json, write_script


def _config(tmp_path: Path) -> Path:
    """Two hooks per event: one denies, one has no opinion; the log is ``log.db``."""
    deny = write_script(tmp_path / "deny.sh", "cat >/dev/null; echo no >&2; exit 2")
    return write_json(tmp_path / "hooks.json", {
        "prompthooks": {"audit": {"path": str(tmp_path / "log.db")}},
        "hooks": {"PreToolUse": [{"hooks": [
            {"command": str(deny), "name": "denier"},
            {"command": "cat >/dev/null", "name": "quiet"}]}]}})


def _log(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "prompthooks", "log", *args],
                          capture_output=True, text=True, timeout=60)


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class _Follower:
    """`prompthooks log --follow` in a real process, its lines read as they come."""

    def __init__(self, *args: str) -> None:
        # Ctrl-C as at a terminal: a test run started in the background (``cmd &`` from a
        # script) has SIGINT ignored, and a child would inherit that.
        self.proc = subprocess.Popen([sys.executable, "-m", "prompthooks", "log", "--follow",
                                      *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, env=dict(os.environ),
                                     preexec_fn=_default_sigint)
        self.lines: queue.Queue[str] = queue.Queue()
        assert self.proc.stdout is not None
        stdout = self.proc.stdout

        def read() -> None:
            for line in stdout:
                self.lines.put(line)

        threading.Thread(target=read, daemon=True).start()

    def take(self, count: int, timeout: float = 120) -> list[str]:
        return [self.lines.get(timeout=timeout) for _ in range(count)]

    def stop(self, signum: int) -> tuple[int, str]:
        self.proc.send_signal(signum)
        _, err = self.proc.communicate(timeout=30)
        return self.proc.returncode, err


@pytest.mark.slow
def test_jsonl_prints_one_object_per_row_oldest_first(tmp_path: Path) -> None:
    cfg = _config(tmp_path)
    for command in ("first", "second", "third"):
        run_cli(claude_bash(command), "--config", str(cfg))
    db = str(tmp_path / "log.db")
    proc = _log("--db", db, "--format", "jsonl", "--limit", "0")
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(x) for x in proc.stdout.splitlines()]
    assert [r["id"] for r in rows] == list(range(1, 7))
    assert all(list(r) == ["id", *FIELDS] for r in rows)
    assert rows[0]["hook"] in ("denier", "quiet") and rows[-1]["run_id"] == rows[-2]["run_id"]
    newest = [json.loads(x) for x in _log("--db", db, "--format", "jsonl", "--limit", "2",
                                          "--decision", "deny").stdout.splitlines()]
    assert [r["id"] for r in newest] == [r["id"] for r in rows if r["decision"] == "deny"][-2:]
    # No log yet: no line at all (an empty stream for a script).
    empty = _log("--db", str(tmp_path / "none.db"), "--format", "jsonl")
    assert empty.returncode == 0 and empty.stdout == ""


@pytest.mark.parametrize("args, message", [
    (["--follow", "--json"], "--follow"), (["--follow", "stats"], "--follow"),
    (["--json", "--format", "jsonl"], "say different things"), (["--limit", "-1"], "--limit"),
    (["stats", "--format", "jsonl"], "log stats"),
])
def test_contradictory_options_are_usage_errors(tmp_path: Path, args: list[str],
                                                message: str) -> None:
    proc = _log("--db", str(tmp_path / "log.db"), *args)
    assert proc.returncode == 64 and message in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.slow
def test_follow_sees_every_row_of_concurrent_runs_once(tmp_path: Path) -> None:
    cfg = _config(tmp_path)
    # Started before the log exists: it waits for it, as tail -F does.
    follower = _Follower("--db", str(tmp_path / "log.db"), "--format", "jsonl")
    try:
        events = [claude_bash(f"echo {i}") for i in range(10)]
        with ThreadPoolExecutor(10) as pool:
            list(pool.map(lambda e: run_cli(e, "--config", str(cfg)), events))
        # A run after the burst comes through, and brings in any row of the burst that a busy
        # log made wait in the spool (a writer waits 3 s for the lock, then spools).
        run_cli(claude_bash("later"), "--config", str(cfg))
        rows = [json.loads(x) for x in follower.take(22)]
        keys = {(r["run_id"], r["hook"]) for r in rows}
        assert len(keys) == 22  # every row of 11 runs x 2 hooks, none twice
        assert {r["hook"] for r in rows} == {"denier", "quiet"}
        assert [r["id"] for r in rows] == sorted(r["id"] for r in rows)
        assert follower.lines.empty()
    finally:
        code, err = follower.stop(signal.SIGTERM)
    assert code == 0 and err == ""  # SIGTERM ends it cleanly: no traceback, no message


@pytest.mark.slow
def test_ctrl_c_ends_a_follow_cleanly_and_the_backlog_comes_first(tmp_path: Path) -> None:
    cfg = _config(tmp_path)
    for command in ("one", "two"):
        run_cli(claude_bash(command), "--config", str(cfg))
    follower = _Follower("--db", str(tmp_path / "log.db"), "--limit", "3",
                         "--decision", "deny")
    try:
        lines = follower.take(2)  # only two rows deny; a human line per row
        assert all("denier" in x and " deny " in x and "quiet" not in x for x in lines)
        assert follower.lines.empty()
    finally:
        code, err = follower.stop(signal.SIGINT)
    assert code == 0 and "Traceback" not in err and "KeyboardInterrupt" not in err


@pytest.mark.slow
def test_follow_with_a_filter_skips_rows_it_leaves_out_once(tmp_path: Path) -> None:
    cfg = _config(tmp_path)
    follower = _Follower("--db", str(tmp_path / "log.db"), "--format", "jsonl",
                         "--hook", "quiet")
    try:
        for command in ("a", "b", "c"):
            run_cli(claude_bash(command), "--config", str(cfg))
        rows: list[dict[str, Any]] = [json.loads(x) for x in follower.take(3)]
        assert [r["hook"] for r in rows] == ["quiet"] * 3
        assert len({r["run_id"] for r in rows}) == 3
    finally:
        code, _ = follower.stop(signal.SIGTERM)
    assert code == 0
