"""`prompthooks validate`: every problem as `file: json.path: message`, exit 1 on errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ..helpers import write_json


def _validate(*paths: Path, env: dict[str, str] | None = None,
              cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``validate --config PATH...``; the default model's provider has a (made-up) key, so
    that only the tests about models see model warnings."""
    args = [a for p in paths for a in ("--config", str(p))]
    environ = {**os.environ, "ANTHROPIC_API_KEY": "test-key-not-a-secret", **(env or {})}
    return subprocess.run([sys.executable, "-m", "prompthooks", "validate", *args],
                          capture_output=True, text=True, timeout=60, env=environ, cwd=cwd)


def _problems(proc: subprocess.CompletedProcess[str]) -> list[str]:
    """The table's rows as 'level: problem' (its header and summary line dropped)."""
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["level", "problem"]
    return [": ".join(line.split(None, 1)) for line in lines[1:-1]]


def test_broken_configs_with_exact_messages(tmp_path: Path) -> None:
    unknown_event = write_json(tmp_path / "a.json", {"hooks": {"PreToolUze": [
        {"hooks": [{"type": "command", "command": "true"}]}]}})
    bad_regex = write_json(tmp_path / "b.json", {"hooks": {"PreToolUse": [
        {"matcher": "Bash(", "hooks": [{"type": "command", "command": "true"}]}]}})
    bad_template = write_json(tmp_path / "c.json", {"version": 1, "hooks": {"preToolUse": [
        {"type": "prompt", "prompt_file": "no-such-policy"}]}})
    no_command = write_json(tmp_path / "d.json", {"hooks": {"Stop": [
        {"hooks": [{"type": "command"}]}]}})
    bad_timeout = write_json(tmp_path / "e.json", {"version": 1, "hooks": {"stop": [
        {"command": "true", "timeout": "30s", "color": "blue"}]}})
    proc = _validate(unknown_event, bad_regex, bad_template, no_command, bad_timeout)
    assert proc.returncode == 1
    lines = _problems(proc)
    assert lines[:4] == [
        f"error: {bad_regex}: hooks.PreToolUse[0].matcher: invalid matcher regex 'Bash(': "
        "missing ), unterminated subpattern at position 4",
        f"error: {bad_template}: hooks.preToolUse[0].prompt_file: prompt file "
        "'no-such-policy' not found (shipped templates: credential-reads, destructive-shell, "
        "force-push, network-exfiltration, prompt-secrets, secrets-in-files, stop-when-done, "
        "tests-pass, tool-output-injection)",
        f"error: {no_command}: hooks.Stop[0].hooks[0]: a command hook needs a non-empty "
        "'command'",
        f"error: {bad_timeout}: hooks.stop[0].timeout: Input should be a valid number",
    ]
    assert lines[4] == (f"error: {unknown_event}: hooks.PreToolUze: unknown Claude Code event "
                        "(did you mean 'PreToolUse'?); its hooks are ignored")
    assert len(lines) == 5
    assert proc.stdout.splitlines()[-1].endswith("5 errors, 0 warnings")


def test_every_problem_of_a_file_is_reported(tmp_path: Path) -> None:
    # Each problem on its own line, the loader's own (its values) first. `run` counts the
    # file as one failure.
    values = write_json(tmp_path / "values.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": "true", "timeout": "ten"},
        {"type": "command", "command": "true", "failClosed": "maybe"}]}]}})
    rest = write_json(tmp_path / "rest.json", {"hooks": {
        "PreToolUse": [{"matcher": "Bash(", "hooks": [{"type": "command", "command": "true"}]},
                       {"matcher": "Edit|(", "hooks": [
                           {"type": "prompt", "prompt_file": "no-such-policy"}]}],
        "Nope": [{"hooks": [{"type": "command", "command": "true"}]}]}})
    proc = _validate(values, rest)
    assert proc.returncode == 1
    assert _problems(proc) == [
        f"error: {values}: hooks.PreToolUse[0].hooks[0].timeout: Input should be a valid number",
        f"error: {values}: hooks.PreToolUse[0].hooks[1].failClosed: Input should be a valid "
        "boolean",
        f"error: {rest}: hooks.PreToolUse[0].matcher: invalid matcher regex 'Bash(': missing ), "
        "unterminated subpattern at position 4",
        f"error: {rest}: hooks.PreToolUse[1].matcher: invalid matcher regex 'Edit|(': missing ), "
        "unterminated subpattern at position 5",
        f"error: {rest}: hooks.PreToolUse[1].hooks[0].prompt_file: prompt file 'no-such-policy' "
        "not found (shipped templates: credential-reads, destructive-shell, force-push, "
        "network-exfiltration, prompt-secrets, secrets-in-files, stop-when-done, tests-pass, "
        "tool-output-injection)",
        f"error: {rest}: hooks.Nope: unknown Claude Code event; its hooks are ignored",
    ]
    run = subprocess.run([sys.executable, "-m", "prompthooks", "run", "--config", str(values),
                          "--managed-dir", str(tmp_path / "none")], capture_output=True,
                         text=True, timeout=60,
                         input=json.dumps({"session_id": "s", "hook_event_name": "Stop"}))
    assert (run.returncode, run.stdout) == (1, "")
    assert run.stderr == (f"prompthooks: config {values}: hooks.PreToolUse[0].hooks[0].timeout: "
                          "Input should be a valid number (and 1 more problem)\n")


@pytest.mark.slow
def test_clean_config_with_ignored_keys_warns_and_passes(tmp_path: Path) -> None:
    cfg = write_json(tmp_path / "settings.json", {"permissions": {}, "hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": "true", "shiny": 1}]}]}})
    proc = _validate(cfg)
    assert proc.returncode == 0
    assert _problems(proc) == [
        f"warning: {cfg}: unknown key 'permissions' ignored",
        f"warning: {cfg}: hooks.PreToolUse[0].hooks[0]: unknown key 'shiny' ignored",
    ]
    assert proc.stdout.splitlines()[-1] == f"1 hook from {cfg}; 0 errors, 2 warnings"
    as_json = subprocess.run([sys.executable, "-m", "prompthooks", "validate", "--json",
                              "--config", str(cfg)], capture_output=True, text=True, timeout=60)
    assert json.loads(as_json.stdout) == {
        "errors": [], "hooks": 1, "sources": [str(cfg)], "trust": [], "left_out": [],
        "notes": [],
        "warnings": [f"{cfg}: unknown key 'permissions' ignored",
                     f"{cfg}: hooks.PreToolUse[0].hooks[0]: unknown key 'shiny' ignored"]}
