"""Tables that fit the terminal: columns left out by priority and long cells wrapped at words,
never mid-word, at 200, 80 and 60 columns; verdicts coloured only where colour is on; a pipe
gets one row per line whatever COLUMNS says. Real processes on a real pseudo-terminal."""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from prompthooks.audit import store

from ..helpers import claude_bash, on_a_pty, write_json

pytestmark = pytest.mark.slow

ANSI = re.compile(r"\x1b\[[0-9;]*m")
RED, GREEN, YELLOW = "\x1b[31m", "\x1b[32m", "\x1b[33m"

ROWS = [  # (time, host, event, tool, hook, decision, reason)
    ("00:00:00", "claude", "PreToolUse", "Bash", "command: ./scripts/guard.sh --strict",
     "deny", "rm -rf on the project root would delete every file in the workspace"),
    ("00:00:01", "cursor", "beforeShellExecution", "Shell", "prompt no-secrets.md", "allow",
     None),
    ("00:00:02", "cline", "PreToolUse", "execute_command", "prompt ask-first.md", "ask",
     "installs a package from a registry nobody here has vetted"),
]


def _seed(db: Path) -> None:
    base = {c: None for c in store.COLUMNS} | {
        "run_id": "r", "host_event": "x", "hook_label": "x", "source": "project",
        "kind": "command", "fail_closed": 0, "cached": 0, "replayed": 0, "status": "ok"}
    store.write(db, [base | {"time": f"2099-01-01T{t}.000Z", "run_id": t, "host": host,
                             "event": event, "tool": tool, "hook": hook, "decision": decision,
                             "reason": reason, "duration_ms": 1234.0}
                     for t, host, event, tool, hook, decision, reason in ROWS])


def _env(columns: int | None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS")}
    if columns is not None:
        env["COLUMNS"] = str(columns)
    env["TERM"] = "xterm-256color"
    return env | extra


def on_a_terminal(argv: list[str], columns: int, **extra: str) -> str:
    """What ``prompthooks ARGV`` writes to a pseudo-terminal ``columns`` wide."""
    return on_a_pty(argv, _env(columns, **extra), codes=(0, 1))


def on_a_pipe(argv: list[str], columns: int | None, **extra: str
              ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "prompthooks", *argv], capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=60,
                          env=_env(columns, **extra))


def _visible(text: str) -> list[str]:
    return [ANSI.sub("", line) for line in text.splitlines()]


def _fits(text: str, columns: int) -> None:
    too_wide = [line for line in _visible(text) if len(line.rstrip()) > columns]
    assert too_wide == []


def _words_whole(text: str, cells: list[Any]) -> None:
    """Every word of these cells is in the output as a whole word: nothing broken mid-word."""
    shown = set(" ".join(_visible(text)).split())
    for cell in cells:
        for word in str(cell or "").split():
            assert word in shown, word


@pytest.mark.parametrize("columns, left_out", [
    (200, None),
    (80, "host, event, tool, ms"),
    (60, "time (UTC), host, event, tool, ms"),
])
def test_the_log_fits_the_terminal(tmp_path: Path, columns: int, left_out: str | None) -> None:
    db = tmp_path / "audit.db"
    _seed(db)
    text = on_a_terminal(["log", "--db", str(db)], columns)
    visible = "\n".join(_visible(text))
    assert "3 decisions from" in visible  # the canary: the rows were read and shown
    _fits(text, columns)
    _words_whole(text, [cell for row in ROWS for cell in row[4:]])
    if left_out is None:
        assert "not shown" not in visible
        for row in ROWS:  # a wide terminal shows every column and every row whole
            assert any(all(str(cell) in line for cell in row if cell) for line in
                       _visible(text)), row
    else:
        assert f"not shown at {columns} columns: {left_out}" in visible
    # Verdicts coloured: deny red, allow green, ask yellow.
    assert RED + "deny" in text and GREEN + "allow" in text and YELLOW + "ask" in text


def test_log_stats_fits_a_narrow_terminal(tmp_path: Path) -> None:
    db = tmp_path / "audit.db"
    _seed(db)
    text = on_a_terminal(["log", "stats", "--db", str(db)], 60)
    visible = "\n".join(_visible(text))
    assert "3 hook runs" in visible and "block rate" in visible
    _fits(text, 60)
    _words_whole(text, [row[4] for row in ROWS])
    assert "not shown at 60 columns: " in visible


def test_a_pipe_gets_one_row_per_line_whatever_columns_says(tmp_path: Path) -> None:
    db = tmp_path / "audit.db"
    _seed(db)
    proc = on_a_pipe(["log", "--db", str(db)], 60)
    assert proc.returncode == 0 and "\x1b[" not in proc.stdout
    for _, host, event, tool, hook, decision, reason in ROWS:
        line = next(text for text in proc.stdout.splitlines() if hook in text)
        assert all(cell in line for cell in (host, event, tool, decision, reason or ""))
    assert "not shown" not in proc.stdout


def test_force_color_fits_columns_and_no_color_wins(tmp_path: Path) -> None:
    db = tmp_path / "audit.db"
    _seed(db)
    forced = on_a_pipe(["log", "--db", str(db)], 80, FORCE_COLOR="1")
    assert RED + "deny" in forced.stdout
    _fits(forced.stdout, 80)
    _words_whole(forced.stdout, [cell for row in ROWS for cell in row[4:]])
    both = on_a_pipe(["log", "--db", str(db)], 80, FORCE_COLOR="1", NO_COLOR="1")
    assert "\x1b[" not in both.stdout  # NO_COLOR wins: plain, one row per line
    assert any(str(ROWS[0][6]) in line for line in both.stdout.splitlines())


def test_no_color_on_a_narrow_terminal_fits_without_colour(tmp_path: Path) -> None:
    db = tmp_path / "audit.db"
    _seed(db)
    text = on_a_terminal(["log", "--db", str(db)], 60, NO_COLOR="1")
    assert "\x1b[" not in text and "3 decisions from" in text
    _fits(text, 60)
    _words_whole(text, [cell for row in ROWS for cell in row[4:]])


def _suite(tmp_path: Path) -> Path:
    """A case file with one case that passes and one that fails (its events written as JSON,
    which is YAML's flow style)."""
    guard = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command":
                                       "grep -q 'rm -rf' && { echo 'no rm here' >&2; exit 2; }; "
                                       "exit 0"}]}]}})
    cases = tmp_path / "cases.yaml"
    cases.write_text(
        f"config: {guard}\n"
        "cases:\n"
        "  - name: deleting everything under the project root is blocked\n"
        f"    event: {json.dumps(claude_bash('rm -rf /'))}\n"
        "    expect: {decision: deny}\n"
        "  - name: listing the folder is mistakenly expected to be blocked\n"
        f"    event: {json.dumps(claude_bash('ls'))}\n"
        "    expect: {decision: deny}\n")
    return cases


@pytest.mark.parametrize("columns", [200, 80, 60])
def test_the_test_table_fits_and_colours_pass_and_fail(tmp_path: Path, columns: int) -> None:
    cases = _suite(tmp_path)
    text = on_a_terminal(["test", str(cases)], columns)
    visible = "\n".join(_visible(text))
    assert "1 passed, 1 failed, 0 errors" in visible  # the canary: both cases ran
    _fits(text, columns)
    _words_whole(text, ["deleting everything under the project root is blocked",
                        "listing the folder is mistakenly expected to be blocked"])
    assert GREEN + "PASS" in text and RED + "FAIL" in text
    piped = on_a_pipe(["test", str(cases)], columns)
    assert "\x1b[" not in piped.stdout
    assert re.search(r"^PASS\s+deleting everything under the project root is blocked\s+deny",
                     piped.stdout, re.M)


@pytest.mark.parametrize("columns", [200, 80, 60])
def test_the_eval_table_fits(tmp_path: Path, columns: int) -> None:
    cfg = write_json(tmp_path / "h.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": "cat >/dev/null"}]}]}})
    dataset = tmp_path / "d.jsonl"
    dataset.write_text("".join(json.dumps({"id": f"r{i}", "event": claude_bash(cmd),
                                           "expected": label}) + "\n"
                               for i, (cmd, label) in enumerate([("rm -rf /", "deny"),
                                                                 ("ls", "allow")])))
    text = on_a_terminal(["eval", str(dataset), "--config", str(cfg)], columns)
    visible = "\n".join(_visible(text))
    assert "model: (as configured)" in visible and "overall" in visible
    _fits(text, columns)
    assert ("not shown" in visible) is (columns < 100)
    assert "recall" in visible and "err" in visible  # kept at every width


def _follow_lines(db: Path, count: int, **extra: str) -> list[str]:
    """The first ``count`` lines `log --follow` prints (the backlog), then SIGTERM ends it."""
    proc = subprocess.Popen([sys.executable, "-m", "prompthooks", "log", "--follow", "--db",
                             str(db)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=_env(80, **extra))
    assert proc.stdout is not None
    data = b""
    try:
        while data.count(b"\n") < count:
            ready, _, _ = select.select([proc.stdout], [], [], 60)
            assert ready, f"no rows within 60 s; got {data!r}"
            chunk = os.read(proc.stdout.fileno(), 65536)
            assert chunk, f"ended early; got {data!r}"
            data += chunk
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    assert proc.returncode == 0
    return data.decode().splitlines()[:count]


def test_followed_rows_colour_their_decision_only_where_colour_is_on(tmp_path: Path) -> None:
    db = tmp_path / "audit.db"
    _seed(db)
    coloured = _follow_lines(db, 3, FORCE_COLOR="1")
    assert [row[4] in line for row, line in zip(ROWS, coloured, strict=True)] == [True] * 3
    assert RED + "deny\x1b[0m" in coloured[0] and GREEN + "allow\x1b[0m" in coloured[1]
    assert YELLOW + "ask\x1b[0m" in coloured[2]
    plain = _follow_lines(db, 3)
    assert all("\x1b" not in line for line in plain)
    assert [ANSI.sub("", line) for line in coloured] == plain


def test_a_terminal_too_narrow_for_any_table_gets_whole_rows(tmp_path: Path) -> None:
    """At 20 columns even the columns never left out do not fit: rather than cells cut into
    fragments, each row is one line (the terminal wraps it as a whole), as on a pipe."""
    db = tmp_path / "audit.db"
    _seed(db)
    text = on_a_terminal(["log", "--db", str(db)], 20)
    visible = _visible(text)
    assert "not shown" not in text
    for _, host, event, tool, hook, _decision, reason in ROWS:
        line = next(line for line in visible if hook in line)
        assert all(cell in line for cell in (host, event, tool, reason or ""))
    assert all(line == line.rstrip() for line in visible)  # no padding to the title's end
