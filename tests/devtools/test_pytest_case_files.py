"""Case files collected as pytest tests (the ini's ``prompthooks_cases``): one test per case,
PASS/FAIL/ERROR as pytest outcomes, the file's cassette in the run's record mode."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from ..fake_model import FakeModel, verdict

HOOKS = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
    {"type": "prompt", "prompt_file": "destructive-shell", "model": "test-model"}]}]}}

CASES = """
config: hooks.json
cases:
  - name: home wipe is blocked
    event: {session_id: s, hook_event_name: PreToolUse, cwd: /tmp, tool_name: Bash,
            tool_input: {command: "rm -rf ~"}}
    expect: {decision: deny, reason_contains: home}
  - name: listing is wrongly expected to be blocked
    event: {session_id: s, hook_event_name: PreToolUse, cwd: /tmp, tool_name: Bash,
            tool_input: {command: "ls"}}
    expect: {decision: deny}
"""

NEW_CASE = """
  - name: root wipe nobody recorded
    event: {session_id: s, hook_event_name: PreToolUse, cwd: /tmp, tool_name: Bash,
            tool_input: {command: "rm -rf /"}}
    expect: {decision: allow}
"""

QUIET = ("-p", "no:cacheprovider", "--override-ini", "addopts=", "-rA")


@pytest.fixture(scope="module", autouse=True)
def _litellm_imported() -> None:
    # Imported here, outside the in-process runs: imported inside one, it is dropped with the
    # run's other new modules afterwards, and later runs in this process lose the plugins
    # installed by entry point.
    from prompthooks.model.litellm_client import import_litellm

    import_litellm()


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    pytester.makeini("[pytest]\nprompthooks_cases =\n    *.cases.yaml\n")
    folder = pytester.mkdir("policies")
    (folder / "hooks.json").write_text(json.dumps(HOOKS))
    (folder / "shell.cases.yaml").write_text(CASES)
    (folder / "notes.yaml").write_text("not: a case file\n")  # not matched: not collected
    return folder


@pytest.mark.slow
def test_each_case_is_a_test_recorded_once_then_replayed(
        pytester: pytest.Pytester, suite: Path, model: FakeModel) -> None:
    model.script(verdict(False, "wipes the home directory"), verdict(True))
    result = pytester.runpytest("--prompthooks-record-mode=once", *QUIET)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "*shell.cases.yaml: listing is wrongly expected to be blocked: "
        "FAIL: expected deny, got allow*"])
    assert len(model.requests) == 2
    assert sorted(p.name for p in suite.iterdir()) == [
        "hooks.json", "notes.yaml", "shell.cases.cassette.yaml", "shell.cases.yaml"]

    (suite / "shell.cases.yaml").write_text(CASES + NEW_CASE)
    before = {p.name: p.read_bytes() for p in suite.iterdir()}
    result = pytester.runpytest(*QUIET)
    # The unrecorded case is an error, never a pass, though "allow" is what it expected.
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines([
        "shell.cases.yaml: root wipe nobody recorded: ERROR, not judged: hook 'prompt "
        "destructive-shell'*no recorded reply*record it with --prompthooks-record-mode="
        "new_episodes*",
        "PASSED policies/shell.cases.yaml::home wipe is blocked",
        "FAILED policies/shell.cases.yaml::root wipe nobody recorded*"])
    assert "Traceback" not in result.stdout.str()
    assert len(model.requests) == 2
    assert {p.name: p.read_bytes() for p in suite.iterdir()} == before  # replay wrote nothing


@pytest.mark.slow
def test_a_broken_case_file_is_one_clear_collection_error(
        pytester: pytest.Pytester, suite: Path) -> None:
    (suite / "shell.cases.yaml").write_text(CASES.replace("expect: {decision: deny}",
                                                         "expect: {decison: deny}"))
    result = pytester.runpytest(*QUIET)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*ERROR collecting policies/shell.cases.yaml*",
                                 "*shell.cases.yaml*cases.1.expect*"])
    assert "Traceback" not in result.stdout.str()


def test_a_config_that_does_not_load_fails_each_case_as_not_judged(
        pytester: pytest.Pytester, suite: Path) -> None:
    (suite / "hooks.json").write_text("{not json")
    result = pytester.runpytest(*QUIET)
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["*home wipe is blocked: ERROR, not judged: *hooks.json*"])


@pytest.mark.slow
def test_a_case_whose_recording_cannot_be_written_fails_though_judged(
        pytester: pytest.Pytester, suite: Path, model: FakeModel) -> None:
    (suite / "shell.cases.cassette.yaml").mkdir()  # a folder where the file's cassette goes
    model.script(verdict(False, "wipes the home directory"), verdict(True))
    result = pytester.runpytest("--prompthooks-record-mode=all", *QUIET)
    assert len(model.requests) == 2  # the canary: the model was asked for each case
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines([
        "*home wipe is blocked: hook 'prompt destructive-shell': the model's reply was not "
        "recorded (cassette *shell.cases.cassette.yaml is not a regular file (a folder)); its "
        "verdict stands*"])
