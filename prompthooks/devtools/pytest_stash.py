"""Where the pytest plugin keeps the session's recorder: read by the fixtures and by the
case-file items alike."""

from __future__ import annotations

import pytest

from ..model.record_modes import Recorder

recorder_key = pytest.StashKey[Recorder]()

__all__ = ["recorder_key"]
