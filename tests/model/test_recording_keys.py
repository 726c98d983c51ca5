"""Recording keys come from what the model is asked: a host's saved event recorded once by
`run --record`, whatever its bytes (an indented file, `echo`, `printf '%s'`), replays in
`prompthooks test`, `eval --replay` and the pytest helpers; the suite's config pins the model,
PROMPTHOOKS_MODEL in the environment does not change a replay."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ..fake_model import serve, verdict

EVENT = {"session_id": "s1", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp",
         "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash",
         "tool_input": {"command": "rm -rf ~", "description": "clean up"}}
REASON = "rm -rf ~ deletes the home directory"
CONFIG = {"prompthooks": {"model": "test-model"}, "hooks": {"PreToolUse": [
    {"matcher": "Bash", "hooks": [{"type": "prompt", "prompt_file": "destructive-shell"}]}]}}


def _prompthooks(*args: str, cwd: Path, env: dict[str, str] | None = None,
                 stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "prompthooks", *args], capture_output=True,
                          text=True, timeout=300, cwd=cwd, input=stdin,
                          env={**os.environ, **(env or {})})


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    """A project whose cassette was recorded by `run --record` from three byte forms of one
    event: an indented file, `echo "$EV"` and `printf '%s' "$EV"`."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "hooks.json").write_text(json.dumps(CONFIG))
    saved = project / "event.json"
    saved.write_text(json.dumps(EVENT, indent=4))  # as a host's saved event, pretty-printed
    server = serve()
    model = next(server)
    model.script(*[verdict(False, REASON)] * 3)
    env = {**os.environ, "PROMPTHOOKS_API_BASE": model.url, "EV": json.dumps(EVENT)}
    run = f"{sys.executable} -m prompthooks run --config hooks.json --record tape.yaml"
    for pipe in ("cat event.json", 'echo "$EV"', "printf '%s' \"$EV\""):
        proc = subprocess.run(["sh", "-c", f"{pipe} | {run}"], capture_output=True, text=True,
                              cwd=project, env=env, timeout=300)
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    next(server, None)  # no model from here on
    assert len(model.requests) == 3
    entries = yaml.safe_load((project / "tape.yaml").read_text())["entries"]
    assert len(entries) == 1, "three byte forms of one event gave different keys"
    return project


def test_replays_in_prompthooks_test_from_another_folder(recorded: Path,
                                                         tmp_path: Path) -> None:
    # The case lists the event's keys in another order: what is asked is the same.
    reordered = dict(reversed(list(EVENT.items())))
    (recorded / "cases.yaml").write_text(yaml.safe_dump({
        "config": "hooks.json", "cassette": "tape.yaml",
        "cases": [{"name": "home wipe", "event": reordered,
                   "expect": {"decision": "deny", "reason_contains": "home directory"}}]}))
    proc = _prompthooks("test", str(recorded / "cases.yaml"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1] == "1 passed, 0 failed, 0 errors"
    assert "1 from model recordings" in proc.stdout


def test_environment_model_does_not_change_a_replay(recorded: Path) -> None:
    (recorded / "cases.yaml").write_text(yaml.safe_dump({
        "config": "hooks.json", "cassette": "tape.yaml",
        "cases": [{"name": "home wipe", "event": EVENT, "expect": {"decision": "deny"}}]}))
    proc = _prompthooks("test", "cases.yaml", cwd=recorded,
                        env={"PROMPTHOOKS_MODEL": "some-other-model"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # Only an explicit option changes it: then the recording (of test-model) does not apply.
    other = _prompthooks("test", "cases.yaml", "--model", "some-other-model", cwd=recorded)
    assert other.returncode == 1 and other.stdout.splitlines()[-1].endswith("1 error")
    (recorded / "rows.jsonl").write_text(json.dumps({"event": EVENT, "expected": "deny"}) + "\n")
    ev = _prompthooks("eval", "rows.jsonl", "--config", "hooks.json", "--replay", "tape.yaml",
                      "--json", cwd=recorded, env={"PROMPTHOOKS_MODEL": "some-other-model"})
    assert ev.returncode == 0, ev.stdout + ev.stderr
    (report,) = json.loads(ev.stdout)
    assert report["overall"]["confusion"] == {"tp": 1, "fp": 0, "fn": 0, "tn": 0}
    assert report["overall"]["errors"] == 0


def test_replays_in_eval(recorded: Path, tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"id": "wipe", "event": EVENT, "expected": "deny"}) + "\n")
    proc = _prompthooks("eval", str(rows), "--config", str(recorded / "hooks.json"),
                        "--replay", str(recorded / "tape.yaml"), "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (report,) = json.loads(proc.stdout)
    assert report["overall"]["confusion"]["tp"] == 1 and report["overall"]["errors"] == 0


def test_replays_in_the_pytest_helpers(recorded: Path, pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_saved_event=f'''
from prompthooks.testing import assert_decision

def test_saved_event(prompthooks_run):
    outcome = prompthooks_run({EVENT!r}, config={str(recorded / "hooks.json")!r},
                              cassette={str(recorded / "tape.yaml")!r})
    assert_decision(outcome, "deny", reason_contains="home directory")
''')
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--override-ini",
                                           "addopts=")
    result.assert_outcomes(passed=1)
