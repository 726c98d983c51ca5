"""pytest-recording's record modes mapped onto the cassette's modes, decided once per run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from prompthooks.devtools.pytest_plugin import RECORD_MODES, Recorder, RecordMode

# (record mode, cassette exists) -> cassette mode
TABLE: list[tuple[RecordMode, bool, str]] = [
    ("none", False, "replay"), ("none", True, "replay"),
    ("once", False, "auto"), ("once", True, "replay"),
    ("new_episodes", False, "auto"), ("new_episodes", True, "auto"),
    ("all", False, "record"), ("all", True, "record"),
    ("rewrite", False, "auto"), ("rewrite", True, "auto"),
]


def test_the_table_covers_every_mode() -> None:
    assert {row[0] for row in TABLE} == set(RECORD_MODES)


@pytest.mark.parametrize(("record_mode", "exists", "mode"), TABLE)
def test_modes(tmp_path: Path, record_mode: RecordMode, exists: bool, mode: str) -> None:
    tape = tmp_path / "tape.yaml"
    if exists:
        tape.write_text("version: 1\nentries: []\n")
    assert Recorder(record_mode).cassette(tape).mode == mode
    assert tape.exists() == (exists and record_mode != "rewrite")


def test_mode_is_decided_at_first_use_in_the_run(tmp_path: Path) -> None:
    tape = tmp_path / "tape.yaml"
    once = Recorder("once")
    assert once.cassette(tape).mode == "auto"
    tape.write_text("version: 1\nentries: []\n")  # recorded by the first test
    assert once.cassette(tape).mode == "auto"  # a later test sharing it records too
    rewrite = Recorder("rewrite")
    rewrite.cassette(tape)
    assert not tape.exists()
    tape.write_text("version: 1\nentries: []\n")
    rewrite.cassette(tape)
    assert tape.exists()  # deleted once per run, not once per test


def test_a_miss_says_which_mode_records_it(tmp_path: Path) -> None:
    tape = tmp_path / "tape.yaml"
    assert Recorder("none").cassette(tape).hint == \
        "record it with --prompthooks-record-mode=once (or new_episodes)"
    tape.write_text("version: 1\nentries: []\n")
    assert Recorder("once").cassette(tape).hint.startswith(
        "record it with --prompthooks-record-mode=new_episodes")


def test_loading_the_plugin_imports_only_pytest_and_itself() -> None:
    # The plugin loads in every pytest run of any project that has prompthooks installed.
    code = ("import sys, prompthooks.devtools.pytest_plugin; print(' '.join(sorted(m for m in "
            "sys.modules if m.split('.')[0] in ('prompthooks', 'litellm', 'pydantic', 'yaml', "
            "'rich'))))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    # Besides the plugin (its stash key and record modes too): the package holding it and the
    # version, none of which imports anything.
    assert proc.stdout.split() == ["prompthooks", "prompthooks._version", "prompthooks.devtools",
                                   "prompthooks.devtools.pytest_plugin"]
