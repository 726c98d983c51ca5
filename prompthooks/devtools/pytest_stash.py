"""The pytest plugin's recorder: the record modes, in pytest-recording's words, mapped onto the
cassette's own modes, and the stash key where the session's recorder is kept (read by the
fixtures and by the case-file items alike). It imports nothing of prompthooks at load: the plugin
loads in every pytest run of every project that has prompthooks installed.

``none`` (the default) replays and never asks the model; ``once`` records the cassettes that do
not exist yet when the run starts and replays the rest; ``new_episodes`` replays what a cassette
has and records what it lacks; ``all`` asks the model for every call and replaces the entries it
gets (keeping the others); ``rewrite`` deletes each cassette at its first use in the run and
records it afresh.

A cassette's mode is decided once per run, at its first use: tests that share one cassette all
record under ``once`` when it was missing, and ``rewrite`` never deletes what an earlier test of
the same run recorded.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import pytest

if TYPE_CHECKING:
    from ..model.recording import Cassette, Mode

RecordMode = Literal["none", "once", "new_episodes", "all", "rewrite"]
RECORD_MODES: tuple[RecordMode, ...] = ("none", "once", "new_episodes", "all", "rewrite")
OPTION = "--prompthooks-record-mode"
# How a test picks a prompt hook's model: the marker, prompthooks_run, or a case file.
MODEL_OPTION = ('model="{model}" (in the prompthooks marker or prompthooks_run; a case file\'s '
                "model: {model})")

class Recorder:
    """The cassettes of one test run, each in the mode ``record_mode`` gives it."""

    def __init__(self, record_mode: RecordMode) -> None:
        self.record_mode = record_mode
        # Per cassette: its mode in this run, and whether it existed at its first use.
        self._modes: dict[Path, tuple[Mode, bool]] = {}
        self._lock = threading.Lock()

    def cassette(self, path: Path) -> Cassette:
        from ..model.recording import Cassette  # the cassette code: only once a test records

        path = path.resolve()  # one cassette, however a test spells its path
        with self._lock:
            seen = self._modes.get(path)
            if seen is None:
                existed = path.exists()
                seen = self._modes[path] = self._first_use(path), existed
        mode, existed = seen
        return Cassette(path, mode, hint=_hint(existed), model_option=MODEL_OPTION)

    def _first_use(self, path: Path) -> Mode:
        if self.record_mode == "none":
            return "replay"
        if self.record_mode == "once":
            return "replay" if path.exists() else "auto"
        if self.record_mode == "all":
            return "record"
        if self.record_mode == "rewrite":
            path.unlink(missing_ok=True)
        return "auto"


def _hint(existed: bool) -> str:
    """What to run when a replay misses: ``once`` cannot add to a cassette that exists."""
    if existed:
        return (f"record it with {OPTION}=new_episodes (once records only the cassettes that "
                "do not exist yet)")
    return f"record it with {OPTION}=once (or new_episodes)"


recorder_key = pytest.StashKey[Recorder]()
