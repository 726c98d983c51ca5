"""Terminal output: colour and boxed tables on a terminal wide enough for them; an unboxed
table that fits on a narrower one or with NO_COLOR; plain aligned text, one row per line, for
a pipe. Real processes, a real pseudo-terminal."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ..helpers import on_a_pty, write_json

pytestmark = pytest.mark.slow

ESCAPE = "\x1b["
BOX = "┃"


def _config(tmp_path: Path) -> Path:
    """A sound config with two ignored keys: `validate` prints a table of two warnings."""
    return write_json(tmp_path / "settings.json", {"permissions": {}, "hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": "true", "shiny": 1}]}]}})


def _validate_on_a_terminal(cfg: Path, columns: int, no_color: bool = False) -> str:
    """`prompthooks validate` with a pseudo-terminal as stdout, ``columns`` wide."""
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env["COLUMNS"] = str(columns)
    env["TERM"] = "xterm-256color"
    if no_color:
        env["NO_COLOR"] = "1"
    return on_a_pty(["validate", "--config", str(cfg)], env)


def _plain(text: str, cfg: Path) -> None:
    """The plain layout: no escapes, no rules; a header, one line per row, the summary."""
    assert ESCAPE not in text and BOX not in text
    assert text.splitlines() == [
        "level    problem",
        f"warning  {cfg}: unknown key 'permissions' ignored",
        f"warning  {cfg}: hooks.PreToolUse[0].hooks[0]: unknown key 'shiny' ignored",
        f"1 hook from {cfg}; 0 errors, 2 warnings",
    ]


def test_a_wide_terminal_gets_colour_and_a_boxed_table(tmp_path: Path) -> None:
    cfg = _config(tmp_path)
    text = _validate_on_a_terminal(cfg, columns=200)
    assert ESCAPE in text and BOX in text
    rows = [line for line in text.splitlines() if "unknown key" in line]
    assert len(rows) == 2  # each row on one line: wide enough, nothing folded
    assert all("\x1b[33mwarning" in row for row in rows)  # a warning is yellow


def test_no_color_gets_the_plain_layout_on_a_terminal(tmp_path: Path) -> None:
    cfg = _config(tmp_path)
    _plain(_validate_on_a_terminal(cfg, columns=200, no_color=True), cfg)


def test_a_terminal_too_narrow_for_the_box_gets_a_table_that_fits(tmp_path: Path) -> None:
    # The box needs 38 columns here: at 37 the table goes unboxed and fits, the problems
    # wrapped at words (a path, a word with no space in it, folds).
    cfg = _config(tmp_path)
    text = _validate_on_a_terminal(cfg, columns=37)
    assert BOX not in text
    visible = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in text.splitlines()]
    assert visible[0].split() == ["level", "problem"]
    assert [line for line in visible if len(line.rstrip()) > 37] == []
    words = " ".join(visible).split()
    assert words.count("warning") == 2 and words.count("ignored") == 2
    assert {"unknown", "key", "'permissions'", "'shiny'"} <= set(words)


def test_a_pipe_gets_the_plain_layout(tmp_path: Path) -> None:
    cfg = _config(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "prompthooks", "validate", "--config",
                           str(cfg)], capture_output=True, text=True, timeout=60,
                          env={k: v for k, v in os.environ.items() if k != "NO_COLOR"})
    assert proc.returncode == 0 and proc.stderr == ""
    _plain(proc.stdout, cfg)
