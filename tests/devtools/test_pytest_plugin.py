"""The pytest plugin, exercised on a small sample project with pytester."""

from __future__ import annotations

import json

import pytest

from prompthooks.testing import event, run

from ..fake_model import FakeModel, verdict

pytestmark = pytest.mark.slow

HOOKS = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
    {"type": "prompt", "prompt_file": "destructive-shell", "model": "test-model"},
    {"type": "command", "command": "cat >/dev/null; exit 0"}]}]}}

SAMPLE = '''
from prompthooks.testing import assert_decision

def bash(prompthooks_event, command, host="claude"):
    if host == "cline":
        return prompthooks_event("cline", "PreToolUse", toolName="execute_command",
                                 parameters={"command": command})
    return prompthooks_event("claude", "PreToolUse", tool_name="Bash",
                             tool_input={"command": command})

def test_home_wipe_is_blocked(prompthooks_event, prompthooks_run):
    outcome = prompthooks_run(bash(prompthooks_event, "rm -rf ~"), config="hooks.json",
                              cassette="hooks.cassette.yaml")
    assert_decision(outcome, "deny", reason_contains="home directory")
    assert '"permissionDecision": "deny"' in outcome.stdout

def test_listing_is_allowed_on_cline(prompthooks_event, prompthooks_run):
    outcome = prompthooks_run(bash(prompthooks_event, "ls", host="cline"), config="hooks.json",
                              cassette="hooks.cassette.yaml")
    assert_decision(outcome, "allow")
    assert outcome.stdout == '{"cancel": false}'

def test_a_wrong_expectation_fails(prompthooks_event, prompthooks_run):
    outcome = prompthooks_run(bash(prompthooks_event, "rm -rf ~"), config="hooks.json",
                              cassette="hooks.cassette.yaml")
    assert_decision(outcome, "allow")
'''


def test_plugin_fixtures_in_a_sample_project(pytester: pytest.Pytester, model: FakeModel) -> None:
    hooks = pytester.path / "hooks.json"
    hooks.write_text(json.dumps(HOOKS))
    tape = pytester.path / "hooks.cassette.yaml"
    model.script(verdict(False, "rm -rf ~ deletes the home directory"), verdict(True))
    run(event("claude", "PreToolUse", tool_name="Bash", tool_input={"command": "rm -rf ~"}),
        config=hooks, cassette=tape, mode="record")
    run(event("cline", "PreToolUse", toolName="execute_command", parameters={"command": "ls"}),
        config=hooks, cassette=tape, mode="record")
    assert len(model.requests) == 2
    pytester.makepyfile(test_policies=SAMPLE)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider",
                                           "--override-ini", "addopts=")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*expected allow, got deny*"])
    assert len(model.requests) == 2  # the sample project never asked the model
