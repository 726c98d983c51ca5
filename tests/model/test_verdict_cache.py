"""The optional verdict cache: hits skip the model, stop hooks are left out, TTLs expire."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from prompthooks.api import dispatch

from ..fake_model import FakeModel, verdict
from ..helpers import claude_bash, claude_event, run_cli, write_json


@pytest.fixture(scope="module", autouse=True)
def _litellm_imported() -> None:
    from prompthooks.model.litellm_client import import_litellm

    import_litellm()


def _config(tmp_path: Path, block: dict[str, Any], handler: dict[str, Any]) -> Path:
    prompt = {"type": "prompt", "prompt": "Judge: $ARGUMENTS", **handler}
    return write_json(tmp_path / "hooks.json", {"prompthooks": block, "hooks": {
        "PreToolUse": [{"hooks": [prompt]}], "Stop": [{"hooks": [prompt]}]}})


def test_off_unless_asked(tmp_path: Path, model: FakeModel) -> None:
    cfg = _config(tmp_path, {}, {})
    for _ in range(2):
        dispatch(claude_bash("ls"), config_paths=[str(cfg)], budget=60)
    assert len(model.requests) == 2


def test_a_hit_skips_the_model_and_is_reported(tmp_path: Path, model: FakeModel) -> None:
    cfg = _config(tmp_path, {"verdict_cache_ttl": 300}, {})
    model.script(verdict(False, "cached reason"))
    first = run_cli(claude_bash("rm -rf /"), "--config", str(cfg))
    second = run_cli(claude_bash("rm -rf /"), "--config", str(cfg))
    assert len(model.requests) == 1
    assert first.stdout == second.stdout and "cached reason" in second.stdout
    assert "verdict from the verdict cache" in second.stderr
    assert "verdict cache" not in first.stderr
    dispatch(claude_bash("ls -la"), config_paths=[str(cfg)], budget=60)  # another prompt
    assert len(model.requests) == 2


def test_stop_hooks_are_left_out_by_default(tmp_path: Path, model: FakeModel) -> None:
    cfg = _config(tmp_path, {"verdict_cache_ttl": 300}, {})
    stop = claude_event("Stop", stop_hook_active=False, last_assistant_message="done?")
    for _ in range(2):
        dispatch(stop, config_paths=[str(cfg)], budget=60)
    assert len(model.requests) == 2
    own = _config(tmp_path, {}, {"cache_ttl": 300})  # a handler may opt in for itself
    for _ in range(2):
        dispatch(stop, config_paths=[str(own)], budget=60)
    assert len(model.requests) == 3


def test_entries_expire(tmp_path: Path, model: FakeModel) -> None:
    cfg = _config(tmp_path, {}, {"cache_ttl": 0.5})
    outcome = dispatch(claude_bash("ls"), config_paths=[str(cfg)], budget=60)
    again = dispatch(claude_bash("ls"), config_paths=[str(cfg)], budget=60)
    assert [r.cached for r in (*outcome.decision.results, *again.decision.results)] == [
        False, True]
    time.sleep(0.6)
    dispatch(claude_bash("ls"), config_paths=[str(cfg)], budget=60)
    assert len(model.requests) == 2
