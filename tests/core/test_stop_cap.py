"""The consecutive-block cap on stop events: counted per session in the user's state folder,
reset when a stop is let through, configurable, and never able to silence a managed hook."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from prompthooks.api import Outcome, dispatch

from ..fake_model import FakeModel, verdict
from ..helpers import claude_event, cline_event, cursor_event, write_json

pytestmark = pytest.mark.slow

NO_MANAGED = Path("/nonexistent/prompthooks-managed")


def _config(folder: Path, settings: dict[str, Any] | None = None, name: str = "hooks.json",
            prompt: str = "Keep going until done.") -> Path:
    data: dict[str, Any] = {"hooks": {"Stop": [{"hooks": [
        {"type": "prompt", "prompt": prompt, "timeout": 120}]}]}}
    if settings:
        data["prompthooks"] = settings
    return write_json(folder / name, data)


def _stop(cfg: Path, event: dict[str, Any] | None = None,
          managed: Path = NO_MANAGED) -> Outcome:
    return dispatch(event or claude_event("Stop", stop_hook_active=True),
                    config_paths=[str(cfg)], budget=60, managed_dir=managed)


def _blocks(outcomes: list[Outcome]) -> list[bool]:
    return [o.decision.blocked for o in outcomes]


def test_default_cap_is_eight_then_the_stop_goes_through_and_the_count_restarts(
        tmp_path: Path, model: FakeModel, isolated_home: Path) -> None:
    model.script(verdict(False, "not done"))
    cfg = _config(tmp_path)
    outcomes = [_stop(cfg) for _ in range(10)]
    assert _blocks(outcomes) == [True] * 8 + [False, True]
    ninth = outcomes[8]
    assert len(model.requests) == 9  # the ninth was not even asked
    assert json.loads(ninth.stdout) == {"systemMessage": (
        "prompthooks: the stop hooks blocked 8 times in a row; this stop is let through "
        "(stop_block_cap 8)")}
    counted = list((isolated_home / ".local" / "state" / "prompthooks" / "stop-blocks").iterdir())
    assert len(counted) == 1 and json.loads(counted[0].read_text()) == {"blocks": 1}


def test_a_stop_let_through_resets_the_count(tmp_path: Path, model: FakeModel) -> None:
    cfg = _config(tmp_path, {"stop_block_cap": 2})
    model.script(verdict(False, "no"), verdict(True), verdict(False, "no"), verdict(False, "no"),
                 verdict(False, "no"))
    assert _blocks([_stop(cfg) for _ in range(5)]) == [True, False, True, True, False]


def test_sessions_and_subagents_are_counted_apart(tmp_path: Path, model: FakeModel) -> None:
    model.script(verdict(False, "no"))
    cfg = _config(tmp_path, {"stop_block_cap": 1})
    assert _stop(cfg, claude_event("Stop", session_id="a")).decision.blocked
    assert _stop(cfg, claude_event("Stop", session_id="b")).decision.blocked
    assert not _stop(cfg, claude_event("Stop", session_id="a")).decision.blocked


def test_claude_codes_variable_sets_the_cap_under_claude_code_only(
        tmp_path: Path, model: FakeModel, monkeypatch: pytest.MonkeyPatch) -> None:
    model.script(verdict(False, "no"))
    monkeypatch.setenv("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", "2")
    cfg = _config(tmp_path)
    assert _blocks([_stop(cfg) for _ in range(3)]) == [True, True, False]
    cursor = cursor_event("stop", status="completed", loop_count=1)
    assert _blocks([_stop(cfg, cursor) for _ in range(3)]) == [True, True, True]
    # The config's own setting wins over the variable.
    capped = _config(tmp_path, {"stop_block_cap": 1}, "capped.json")
    event = claude_event("Stop", session_id="other")
    assert _blocks([_stop(capped, event) for _ in range(2)]) == [True, False]


def test_zero_means_no_cap(tmp_path: Path, model: FakeModel,
                           monkeypatch: pytest.MonkeyPatch) -> None:
    model.script(verdict(False, "no"))
    monkeypatch.setenv("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", "0")
    cfg = _config(tmp_path)
    assert all(_blocks([_stop(cfg) for _ in range(12)]))


def test_cline_task_complete_is_counted_too(tmp_path: Path, model: FakeModel) -> None:
    model.script(verdict(False, "no"))
    cfg = _config(tmp_path, {"stop_block_cap": 1})
    event = cline_event("TaskComplete", taskMetadata={"taskId": "task-1"})
    assert _blocks([_stop(cfg, event) for _ in range(2)]) == [True, False]


def test_reaching_the_cap_never_skips_a_managed_hook(tmp_path: Path, model: FakeModel,
                                                     isolated_home: Path) -> None:
    """The count is a file the user (and an agent) can write: planting a count only skips
    project and user hooks."""
    managed = tmp_path / "etc"
    # A managed hook reads no endpoint from the environment: its file pins it.
    _config(managed, {"api_base": model.url, "model": "test-model"}, prompt="MANAGED POLICY")
    cfg = _config(tmp_path, prompt="PROJECT POLICY")
    model.script(verdict(False, "no"))
    first = _stop(cfg, managed=managed)
    assert first.decision.blocked and len(model.requests) == 2
    (count,) = (isolated_home / ".local" / "state" / "prompthooks" / "stop-blocks").iterdir()
    count.write_text(json.dumps({"blocks": 999}))
    capped = _stop(cfg, managed=managed)
    asked = [r.user for r in model.requests[2:]]
    assert len(asked) == 1 and "MANAGED POLICY" in asked[0]
    assert capped.decision.blocked  # the managed hook still holds the agent


def test_a_damaged_or_planted_count_does_not_stall_or_break_the_run(
        tmp_path: Path, model: FakeModel, isolated_home: Path) -> None:
    model.script(verdict(False, "no"))
    cfg = _config(tmp_path, {"stop_block_cap": 3})
    assert _stop(cfg).decision.blocked
    (count,) = (isolated_home / ".local" / "state" / "prompthooks" / "stop-blocks").iterdir()
    count.write_text("{not json")
    assert _stop(cfg).decision.blocked
    count.unlink()
    os.mkfifo(count)
    assert _stop(cfg).decision.blocked  # read as no count, not waited for
