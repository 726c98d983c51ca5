"""A handler's ``name`` (all three dialects) names it wherever prompthooks names a hook: the
audit row, `log`, `explain`, `prompthooks test`, stderr lines; instead of "inline prompt" or
the command's text."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from prompthooks.api import load_config

from ..helpers import (
    claude_bash,
    cline_event,
    cursor_event,
    run_in_process,
    write_json,
    write_script,
)


def _cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "prompthooks", *args], input=stdin,
                          capture_output=True, text=True, timeout=60, env=dict(os.environ))


def _audit(tmp_path: Path) -> dict[str, object]:
    return {"audit": {"path": str(tmp_path / "audit.db")}}


@pytest.mark.slow
def test_named_hooks_of_each_dialect_are_named_in_the_log_and_explain(tmp_path: Path) -> None:
    deny = write_script(tmp_path / "deny.sh", "cat >/dev/null; echo no >&2; exit 2")
    claude = write_json(tmp_path / "claude.json", {"prompthooks": _audit(tmp_path), "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": f"TOKEN=abc {deny}", "name": "No deletes"},
            {"type": "prompt", "prompt": "Judge. $ARGUMENTS", "name": "  Exfil judge "}]}]}})
    cursor = write_json(tmp_path / "cursor.json", {"version": 1, "hooks": {
        "beforeShellExecution": [{"command": str(deny), "name": "cursor guard"}]}})
    cline = tmp_path / "cline"
    (cline).mkdir()
    (cline / "PreToolUse.md").write_text("---\nname: cline policy\ntimeout: 5\n---\nJudge it.\n")
    hooks = load_config([str(claude), str(cursor), str(cline)]).hooks
    assert [h.name for h in hooks] == ["No deletes", "Exfil judge", "cursor guard",
                                       "cline policy"]

    explained = _cli("explain", "--config", str(claude), "--json",
                     stdin=json.dumps(claude_bash("rm -rf /")))
    assert [h["name"] for h in json.loads(explained.stdout)["hooks"]] == ["No deletes",
                                                                         "Exfil judge"]
    # Only the command hook runs here (the prompt hook has no model): the row is named.
    cmd_only = write_json(tmp_path / "cmd.json", {"prompthooks": _audit(tmp_path), "hooks": {
        "PreToolUse": [{"hooks": [{"command": str(deny), "name": "No deletes"}]}]}})
    run_in_process(claude_bash("rm -rf /"), "--config", str(cmd_only))
    run_in_process(cursor_event("beforeShellExecution", command="rm -rf /"), "--config", str(cursor),
            "--config", str(cmd_only))
    rows = json.loads(_cli("log", "--db", str(tmp_path / "audit.db"), "--json").stdout)
    # Cursor's beforeShellExecution runs its own entries only (see tests/hosts/cursor).
    assert sorted(r["hook"] for r in rows) == ["No deletes", "cursor guard"]
    table = _cli("log", "--db", str(tmp_path / "audit.db")).stdout
    assert "No deletes" in table and "cursor guard" in table


@pytest.mark.slow
def test_a_failing_named_hook_is_named_on_stderr_and_in_test_output(tmp_path: Path) -> None:
    cfg = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"command": "exit 7", "name": "broken guard"}]}]}})
    proc = run_in_process(claude_bash("ls"), "--config", str(cfg))
    assert "hook 'broken guard'" in proc.stderr and "exit 7" not in proc.stderr.split("(")[0]
    cases = tmp_path / "cases.yaml"
    cases.write_text(f"""
config: {cfg}
cases:
  - name: listing
    event: {{session_id: s, hook_event_name: PreToolUse, cwd: /p, tool_name: Bash,
            tool_input: {{command: ls}}}}
    expect: {{decision: allow}}
""")
    tested = _cli("test", str(cases))
    assert tested.returncode == 1 and "broken guard" in tested.stdout


def test_a_cline_executable_keeps_its_file_name(tmp_path: Path) -> None:
    write_script(tmp_path / "hooks" / "PreToolUse", "echo '{}'")
    (hook,) = load_config([str(tmp_path / "hooks")]).hooks
    assert hook.name == "hooks/PreToolUse"
    assert run_in_process(cline_event("PreToolUse", toolName="read_file"), "--config",
                   str(tmp_path / "hooks")).returncode == 0


@pytest.mark.slow
@pytest.mark.parametrize("name, message", [
    ("", "blank"), ("   ", "blank"), ("x" * 81, "at most 80"),
    ("two\nlines", "one line"), ("esc\x1b[2J", "control"), (7, "string"),
])
def test_a_bad_name_is_a_config_error(tmp_path: Path, name: object, message: str) -> None:
    cfg = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"command": "true", "name": name}]}]}})
    proc = _cli("validate", "--config", str(cfg))
    assert proc.returncode == 1
    assert "hooks.PreToolUse[0].hooks[0].name" in proc.stdout
    assert message in proc.stdout


def test_a_bad_name_in_cline_front_matter_is_that_files_failure(tmp_path: Path) -> None:
    folder = tmp_path / "hooks"
    folder.mkdir()
    (folder / "PreToolUse.md").write_text("---\nname: " + "y" * 90 + "\n---\nJudge it.\n")
    (failure,) = load_config([str(folder)]).loaded.failures
    assert "at most 80" in failure.message
