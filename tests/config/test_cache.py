"""The cache of validated configs: a hit needs no pydantic; any change is a miss."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from prompthooks.api import load_config

from ..helpers import (
    claude_bash,
    claude_config,
    write_script,
)

PROBE = """
import sys
from prompthooks.cli import main
code = main(["run", "--config", sys.argv[1]])
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("pydantic", "litellm", "openai"))
print("HEAVY=" + ",".join(heavy), file=sys.stderr)
sys.exit(code)
"""


def _probe(tmp_path: Path, cfg: Path) -> subprocess.CompletedProcess[str]:
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE)
    return subprocess.run([sys.executable, str(probe), str(cfg)], capture_output=True, text=True,
                          input=json.dumps(claude_bash("ls")), timeout=60)


@pytest.mark.slow
def test_second_run_reads_the_cache_without_pydantic(tmp_path: Path) -> None:
    script = write_script(tmp_path / "deny.sh", "cat >/dev/null; echo no >&2; exit 2")
    cfg = claude_config(tmp_path / "hooks.json", "PreToolUse", {"command": str(script)})
    first = _probe(tmp_path, cfg)
    assert "pydantic" in first.stderr  # validated once
    second = _probe(tmp_path, cfg)
    assert "HEAVY=\n" in second.stderr
    assert second.stdout == first.stdout and '"permissionDecision": "deny"' in second.stdout


def test_a_changed_file_is_a_miss(tmp_path: Path) -> None:
    cfg = claude_config(tmp_path / "hooks.json", "PreToolUse", {"command": "first"})
    assert [h.command for h in load_config([str(cfg)]).hooks] == ["first"]
    assert [h.command for h in load_config([str(cfg)]).hooks] == ["first"]
    time.sleep(0.01)
    claude_config(tmp_path / "hooks.json", "PreToolUse", {"command": "second, longer"})
    assert [h.command for h in load_config([str(cfg)]).hooks] == ["second, longer"]


def test_a_new_cline_hook_file_is_a_miss(tmp_path: Path) -> None:
    folder = tmp_path / "hooks"
    write_script(folder / "PreToolUse", "exit 0")
    assert len(load_config([str(folder)]).hooks) == 1
    write_script(folder / "PostToolUse", "exit 0")
    assert len(load_config([str(folder)]).hooks) == 2


def test_cached_hooks_equal_fresh_ones(tmp_path: Path, monkeypatch: object) -> None:
    cfg = tmp_path / "hooks.json"
    cfg.write_text(json.dumps({
        "prompthooks": {"model": "m", "max_event_chars": 500},
        "hooks": {"PreToolUse": [{"matcher": "Edit|Write", "hooks": [
            {"type": "prompt", "prompt_file": "secrets-in-files", "failClosed": True}]}],
                  "NotAnEvent": []}}))
    fresh = load_config([str(cfg)])
    cached = load_config([str(cfg)])
    assert cached.hooks == fresh.hooks and cached.warnings == fresh.warnings
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    assert load_config([str(broken)]).errors == load_config([str(broken)]).errors


def test_managed_policy_is_never_read_from_the_cache(tmp_path: Path) -> None:
    managed = tmp_path / "etc"
    claude_config(managed / "hooks.json", "PreToolUse", {"command": "managed"})
    for _ in range(2):
        config = load_config(project_dir=str(tmp_path), managed_dir=managed)
        assert [h.command for h in config.hooks] == ["managed"]
    cache = Path(os.environ["XDG_CACHE_HOME"]) / "prompthooks"
    assert not list(cache.glob("config-*.json"))
    # Beside a config that is cached, the entry holds that config alone.
    user = claude_config(tmp_path / "user.json", "PreToolUse", {"command": "user"})
    for _ in range(2):
        config = load_config([str(user)], managed_dir=managed)
        assert [h.command for h in config.hooks] == ["managed", "user"]
    [entry] = cache.glob("config-*.json")
    assert "user.json" in entry.read_text() and str(managed) not in entry.read_text()


def test_no_cache_setting_turns_the_config_cache_off(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROMPTHOOKS_NO_CACHE", "1")
    cfg = claude_config(tmp_path / "h.json", "PreToolUse", {"command": "x"})
    load_config([str(cfg)])
    cache = Path(os.environ["XDG_CACHE_HOME"]) / "prompthooks"
    assert not list(cache.glob("config-*.json"))
    monkeypatch.delenv("PROMPTHOOKS_NO_CACHE")
    load_config([str(cfg)])
    assert len(list(cache.glob("config-*.json"))) == 1
