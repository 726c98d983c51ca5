"""The pytest plugin from an installed wheel, in a project outside the repository: a host's
saved event, recorded once by `prompthooks run --record`, replays through the plugin's fixture
and as a collected case file, with pytest started from another folder, and nothing is written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ..fake_model import FakeModel, verdict
from ..helpers import install_wheel

# As Claude Code saves it, indented: the recording's key must not depend on the layout.
EVENT = {"session_id": "9f1c2e", "transcript_path": "/tmp/transcript.jsonl", "cwd": "/tmp",
         "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash",
         "tool_input": {"command": "git push --force origin main",
                        "description": "Force-push main"}}

HOOKS = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
    {"type": "prompt", "prompt_file": "destructive-shell", "model": "test-model"}]}]}}

# No conftest: the fixtures come from the installed plugin alone.
TESTS = '''
import json
from pathlib import Path

from prompthooks.testing import assert_decision

def test_saved_push_is_blocked(prompthooks_run):
    event = json.loads((Path(__file__).parent / "events" / "push.json").read_text())
    outcome = prompthooks_run(event, config="hooks.json")
    assert_decision(outcome, "deny", reason_contains="shared history")
'''


def snapshot(folder: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(folder)): p.read_bytes() if p.is_file() else None
            for p in folder.rglob("*")}


@pytest.mark.wheel
def test_saved_event_recorded_by_run_replays_in_pytest_from_the_wheel(
        tmp_path: Path, model: FakeModel) -> None:
    target = install_wheel(tmp_path)
    # The installed copy, not the checkout (PYTHONPATH comes before the editable install);
    # no bytecode, so anything new in the project is the plugin's doing.
    env = {**os.environ, "PYTHONPATH": str(target), "PYTHONDONTWRITEBYTECODE": "1"}
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    plugin = subprocess.run([sys.executable, "-c",
                             "import prompthooks.devtools.pytest_plugin as p; print(p.__file__)"],
                            capture_output=True, text=True, cwd=elsewhere, env=env, timeout=60)
    assert plugin.stdout.startswith(str(target)), plugin.stdout + plugin.stderr

    project = tmp_path / "project"
    tests = project / "tests"
    (tests / "events").mkdir(parents=True)
    (project / "pytest.ini").write_text("[pytest]\nprompthooks_cases = *.cases.yaml\n")
    (tests / "hooks.json").write_text(json.dumps(HOOKS))
    (tests / "test_policies.py").write_text(TESTS)
    saved = tests / "events" / "push.json"
    saved.write_text(json.dumps(EVENT, indent=2) + "\n")
    tape = tests / "cassettes" / "test_policies" / "test_saved_push_is_blocked.yaml"
    (tests / "push.cases.yaml").write_text(yaml.safe_dump({
        "config": "hooks.json", "cassette": "cassettes/test_policies/test_saved_push_is_blocked.yaml",
        "cases": [{"name": "saved push is blocked", "event": EVENT,
                   "expect": {"decision": "deny", "reason_contains": "shared history"}}]}))

    # Recorded once, as a user would from the host's saved event, from another folder.
    model.script(verdict(False, "force-pushing main rewrites shared history"))
    with saved.open("rb") as stdin:
        record = subprocess.run([sys.executable, "-m", "prompthooks", "run", "--config",
                                 str(tests / "hooks.json"), "--record", str(tape)],
                                stdin=stdin, capture_output=True, text=True, cwd=elsewhere,
                                env=env, timeout=300)
    assert record.returncode == 0, record.stderr
    assert "rewrites shared history" in record.stdout
    assert len(model.requests) == 1
    assert os.listdir(tape.parent) == [tape.name]  # no lock file beside the cassette

    before = snapshot(project)
    proc = subprocess.run([sys.executable, "-m", "pytest", str(project), "-p", "no:cacheprovider",
                           "-rA", "--strict-markers"],
                          capture_output=True, text=True, cwd=elsewhere, env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    passed = sorted(line.split("::")[-1] for line in proc.stdout.splitlines()
                    if line.startswith("PASSED "))
    assert passed == ["saved push is blocked", "test_saved_push_is_blocked"], proc.stdout
    assert "2 passed" in proc.stdout.splitlines()[-1]
    assert len(model.requests) == 1  # replayed: the model, still reachable, was not asked
    assert snapshot(project) == before and os.listdir(elsewhere) == []
