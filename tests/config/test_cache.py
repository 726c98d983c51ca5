"""The cache of validated configs: a hit needs no pydantic; any change is a miss."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from prompthooks.api import load_config

from ..helpers import (
    claude_bash,
    claude_config,
    write_json,
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


# --- the entry's bytes ------------------------------------------------------------------------
# An entry written by one release is read by the same release only (its version is in the
# key), but the records a load is made of may change shape without the entry changing: the
# golden below was written by the code before its records stopped being dataclasses, and an
# entry must stay byte for byte what it was (then one written before is still a hit).

GOLDEN = Path(__file__).with_name("cache_entries.golden.json")
MTIME_NS = 1_700_000_000_123_456_789
# The inode of each file in the key (`"file", mtime, size, inode`): the one part of an entry
# a test cannot choose.
_INODE = re.compile(r'(\\"file\\", \d+, \d+, )\d+')


def _every_field(tmp_path: Path) -> list[Path]:
    """Config files that set every field an entry holds (a pack used: such a load with a
    failure is never cached, see :func:`_a_failure`)."""
    pack = tmp_path / "pack"
    pack.mkdir()
    (pack / "prompthooks-pack.yaml").write_text(json.dumps({"name": "acme", "policies": [
        {"id": "force-push", "prompt_file": "force.md", "events": ["PreToolUse"],
         "matcher": "Bash", "timeout": 30, "failClosed": True, "model": "pack-model"}]}))
    (pack / "force.md").write_text("Block force pushes. $ARGUMENTS\n")
    claude = write_json(tmp_path / "claude" / "hooks.json", {
        "prompthooks": {
            "model": "file-model", "api_base": "http://127.0.0.1:9/v1",
            "api_key_env": "GOLDEN_KEY", "max_event_chars": 4000, "verdict_cache_ttl": 60,
            "stop_block_cap": 3,
            "audit": {"enabled": True, "store_events": True, "export": {
                "jsonl": {"path": "/var/log/golden/rows.jsonl", "max_mb": 2},
                "otlp": {"endpoint": "http://127.0.0.1:9", "headers_env": "OTLP_HEADERS",
                         "timeout": 2}}},
            "packs": [{"path": "../pack", "policies": [
                {"id": "force-push", "timeout": 20, "max_event_chars": 900}]}]},
        "hooks": {
            "PreToolUse": [{"matcher": "Bash|Edit", "hooks": [
                {"type": "command", "command": "echo '{}'", "name": "the guard", "timeout": 9,
                 "failClosed": True, "allow_approves": True, "raw_event": True,
                 "not_a_key": 1},
                {"type": "prompt", "prompt": "Block rm. $ARGUMENTS", "model": "m1",
                 "cache_ttl": 30, "transcript": 4, "max_event_chars": 700},
                {"type": "prompt", "prompt_file": "destructive-shell"},
                {"type": "http", "url": "http://127.0.0.1:9/hook?t=1",
                 "headers": {"Authorization": "Bearer $GOLDEN_TOKEN"},
                 "allowedEnvVars": ["GOLDEN_TOKEN"]},
                {"type": "agent", "prompt": "Do not stop while tests fail. $ARGUMENTS",
                 "max_turns": 5}]}],
            "Stop": [{"hooks": [{"type": "prompt", "prompt": "Finished? $ARGUMENTS"}]}],
            "NotAnEvent": []}})
    cursor = write_json(tmp_path / "cursor.json", {"version": 1, "hooks": {
        "stop": [{"command": "echo '{}'", "loop_limit": 2}],
        "beforeShellExecution": [{"command": "true", "timeout": 3}]}})
    return [claude, cursor]


def _a_failure(tmp_path: Path) -> list[Path]:
    """A broken file (fail-closed, two problems) beside a Cline-style folder: the entry holds
    the failure."""
    write_script(tmp_path / "cline" / "PreToolUse", "echo '{}'")
    broken = claude_config(tmp_path / "broken.json", "PreToolUse",
                           {"command": "true", "failClosed": True, "timeout": "soon"},
                           {"command": 7})
    return [tmp_path / "cline", broken]


CASES = {"every field": _every_field, "a failure": _a_failure}


def _fixed(tmp_path: Path) -> None:
    for path in tmp_path.rglob("*"):
        if path.is_file():
            os.utime(path, ns=(MTIME_NS, MTIME_NS))


def _written(tmp_path: Path, case: str) -> tuple[Path, list[Path]]:
    """The cache entry a load of the case's files writes, and those files."""
    folder = tmp_path / "case"
    folder.mkdir()
    configs = CASES[case](folder)
    _fixed(folder)
    load_config([str(c) for c in configs], project_dir=str(folder),
                managed_dir=tmp_path / "none")
    [entry] = (Path(os.environ["XDG_CACHE_HOME"]) / "prompthooks").glob("config-*.json")
    return entry, configs


def _normal(text: str, tmp_path: Path) -> str:
    return _INODE.sub(r"\g<1>0", text.replace(str(tmp_path / "case"), "<TMP>"))


@pytest.mark.parametrize("case", list(CASES))
def test_an_entry_is_byte_for_byte_what_it_was(tmp_path: Path, case: str) -> None:
    entry, _ = _written(tmp_path, case)
    text = entry.read_text()
    assert str(tmp_path) in text and _INODE.search(text)  # what the normalising replaces
    golden = json.loads(GOLDEN.read_text())[case]
    assert _normal(text, tmp_path) == golden


@pytest.mark.parametrize("case", list(CASES))
def test_an_entry_written_before_is_a_hit(tmp_path: Path, case: str,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from prompthooks.loading import loader

    entry, configs = _written(tmp_path, case)
    args = ([str(c) for c in configs], str(tmp_path / "case"))
    fresh = load_config(*args, environ={**os.environ, "PROMPTHOOKS_NO_CACHE": "1"},
                        managed_dir=tmp_path / "none")
    # The golden entry as that code wrote it here: this folder, and the key this load asks
    # for (the golden's key but for the inodes, as the test above shows).
    golden = json.loads(GOLDEN.read_text())[case].replace("<TMP>", str(tmp_path / "case"))
    old_key = json.dumps(json.loads(golden)["key"])
    key = json.loads(entry.read_text())["key"]
    loads: list[Path] = []
    real = loader.load_path

    def counted(path: Path, *rest: Any) -> None:
        loads.append(path)
        real(path, *rest)

    monkeypatch.setattr(loader, "load_path", counted)
    # Canary: an entry of another key is a miss, and the files are loaded anew.
    entry.write_text(golden.replace(old_key, json.dumps(key + " "), 1))
    assert load_config(*args, managed_dir=tmp_path / "none").hooks == fresh.hooks
    assert loads
    loads.clear()
    entry.write_text(golden.replace(old_key, json.dumps(key), 1))
    cached = load_config(*args, managed_dir=tmp_path / "none")
    assert not loads  # a hit
    assert cached.hooks == fresh.hooks and cached.errors == fresh.errors
    assert cached.warnings == fresh.warnings and cached.loaded.audit == fresh.loaded.audit
    assert cached.loaded.pack_checks == fresh.loaded.pack_checks
