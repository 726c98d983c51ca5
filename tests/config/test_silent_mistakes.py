"""Config mistakes that make hooks silently never run: files in formats prompthooks does not
read (``hooks.yaml``, ``hooks.toml``, ``hooks.jsonc``, ``PreToolUse.sh``) and event keys no
host has (``PreToolUSe``). ``validate``, ``explain`` and ``doctor`` name them every time;
``run`` says each once per config change (after the reply, which they never change)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ..helpers import approve, claude_bash, claude_config, run_in_process, write_script

ONCE = " (said once until the config changes; prompthooks validate lists every problem)"


def prompthooks(*args: str, cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "prompthooks", *args], input=stdin,
                          capture_output=True, text=True, cwd=cwd, timeout=60)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "proj"
    (folder / ".prompthooks").mkdir(parents=True)
    return folder


UNREAD = {
    "hooks.yaml": "YAML is not read: prompthooks reads hooks.json (plain JSON) here",
    "hooks.toml": "TOML is not read: prompthooks reads hooks.json (plain JSON) here",
    "hooks.jsonc": "JSON with comments is not read: prompthooks reads hooks.json (plain JSON) "
                   "here",
    "hook.json": "not read: prompthooks reads hooks.json here (the name is exact)",
}


@pytest.mark.slow
def test_validate_names_every_unread_file(project: Path) -> None:
    config = project / ".prompthooks"
    for name in UNREAD:
        (config / name).write_text("hooks: {}\n")
    script = write_script(config / "hooks" / "PreToolUse.sh", "exit 0")
    proc = prompthooks("validate", "--json", cwd=project)
    assert proc.returncode == 0, proc.stderr  # warnings, not errors
    report = json.loads(proc.stdout)
    expected = sorted([f"{config / name}: {why}" for name, why in UNREAD.items()]
                      + [f"{script}: not run: a Cline-style hook is named exactly PreToolUse "
                         "(an executable, no extension), or PreToolUse.md for a prompt"])
    assert sorted(report["warnings"]) == expected
    assert report["hooks"] == 0

    text = prompthooks("validate", cwd=project)
    assert text.stdout.splitlines()[-1] == \
        f"0 hooks from none found; 0 errors, {len(expected)} warnings"
    assert f"warning  {config / 'hooks.yaml'}: {UNREAD['hooks.yaml']}" in text.stdout


@pytest.mark.slow
def test_explain_and_doctor_name_them_too(project: Path) -> None:
    config = project / ".prompthooks"
    (config / "hooks.toml").write_text("[hooks]\n")
    claude_config(config / "hooks.json", "PreToolUSe", {"command": "exit 0"})
    approve(config)
    event = json.dumps(claude_bash("ls", str(project)))
    report = json.loads(prompthooks("explain", "--json", cwd=project, stdin=event).stdout)
    typo = (f"{config / 'hooks.json'}: hooks.PreToolUSe: unknown Claude Code event (did you "
            "mean 'PreToolUse'?); its hooks are ignored")
    assert report["warnings"] == [typo, f"{config / 'hooks.toml'}: {UNREAD['hooks.toml']}"]
    text = prompthooks("explain", cwd=project, stdin=event).stdout
    assert f"  warning: {typo}" in text.splitlines()

    doctor = json.loads(prompthooks("doctor", "--offline", "--json", cwd=project).stdout)
    details = [c["detail"] for c in doctor["checks"] if c["check"] == "config warning"]
    assert f"{config / 'hooks.toml'}: {UNREAD['hooks.toml']}" in details


def test_run_warns_once_per_config_change_about_an_unknown_event(project: Path) -> None:
    config = project / ".prompthooks"
    marker = project / "ran"
    claude_config(config / "hooks.json", "PreToolUse", {"command": f"touch '{marker}'"})
    data = json.loads((config / "hooks.json").read_text())
    data["hooks"]["PreToolUSe"] = data["hooks"]["PreToolUse"]
    (config / "hooks.json").write_text(json.dumps(data))
    approve(config)
    event = claude_bash("ls", str(project))
    typo = (f"prompthooks: warning: {config / 'hooks.json'}: hooks.PreToolUSe: unknown Claude "
            f"Code event (did you mean 'PreToolUse'?); its hooks are ignored{ONCE}")

    first = run_in_process(event, cwd=project)
    assert (first.returncode, first.stdout) == (0, "")  # the reply is what it would be
    assert first.stderr.splitlines() == [typo]
    assert marker.exists()  # the well-named hook ran
    second = run_in_process(event, cwd=project)
    assert (second.returncode, second.stdout, second.stderr) == (0, "", "")

    data["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"] = 5  # another edit, typo kept
    (config / "hooks.json").write_text(json.dumps(data))
    approve(config)
    third = run_in_process(event, cwd=project)
    assert third.stderr.splitlines() == [typo]
    assert run_in_process(event, cwd=project).stderr == ""


def test_run_warns_once_about_an_unread_config(project: Path) -> None:
    config = project / ".prompthooks"
    (config / "hooks.yaml").write_text("hooks:\n  PreToolUse: []\n")
    event = claude_bash("ls", str(project))
    first = run_in_process(event, cwd=project)
    assert (first.returncode, first.stdout) == (0, "")
    assert first.stderr.splitlines() == [
        f"prompthooks: warning: {config / 'hooks.yaml'}: {UNREAD['hooks.yaml']}{ONCE}"]
    assert run_in_process(event, cwd=project).stderr == ""


def test_run_says_it_every_time_when_it_cannot_remember(project: Path,
                                                         isolated_home: Path) -> None:
    """No writable data folder: repeated rather than never said."""
    config = project / ".prompthooks"
    (config / "hooks.toml").write_text("")
    data = isolated_home / ".local" / "share"
    data.parent.mkdir(parents=True, exist_ok=True)
    data.write_text("a file where the folder should be")
    event = claude_bash("ls", str(project))
    for _ in range(2):
        proc = run_in_process(event, cwd=project)
        assert proc.returncode == 0
        assert f"{config / 'hooks.toml'}: " in proc.stderr
