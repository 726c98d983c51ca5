"""The pytest plugin in pytest-recording's idiom: record modes (option and ini), the marker,
paths relative to the test file, messages naming the option, nothing left behind. Sample
projects run in-process with pytester (a subprocess would import litellm again on every
recording run); the model is the local fake server. tests/devtools/test_pytest_plugin_wheel.py runs a
sample project in a subprocess against the installed wheel."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
import yaml

from ..fake_model import FakeModel, verdict

pytestmark = pytest.mark.slow

HOOKS = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
    {"type": "prompt", "prompt_file": "destructive-shell", "model": "test-model"}]}]}}

SAMPLE = '''
import pytest
from prompthooks.testing import assert_decision

pytestmark = pytest.mark.prompthooks(config="hooks.json")

def bash(prompthooks_event, command):
    return prompthooks_event("claude", "PreToolUse", tool_name="Bash",
                             tool_input={"command": command})

def test_home_wipe(prompthooks_event, prompthooks_run):
    assert_decision(prompthooks_run(bash(prompthooks_event, "rm -rf ~")), "deny")

def test_listing(prompthooks_event, prompthooks_run):
    assert_decision(prompthooks_run(bash(prompthooks_event, "ls")), "allow")
'''

# pytest's own files would hide ours: no cache folder, no bytecode (the assertion rewriter
# writes none when bytecode is off), so a run's leftovers are the plugin's alone.
QUIET = ("-p", "no:cacheprovider", "--override-ini", "addopts=", "--strict-markers")


@pytest.fixture(scope="module", autouse=True)
def _litellm_imported() -> None:
    # Imported here, outside the in-process runs: imported inside one, it is dropped with the
    # run's other new modules afterwards, and later runs in this process lose the plugins
    # installed by entry point.
    from prompthooks.model.litellm_client import import_litellm

    import_litellm()


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A test folder with a hooks config beside the test file; pytest runs from its parent,
    where no config is, so every path must be resolved from the test file."""
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    folder = pytester.mkdir("suite")
    (folder / "hooks.json").write_text(json.dumps(HOOKS))
    (folder / "test_policies.py").write_text(SAMPLE)
    return folder


def files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


def entries(path: Path) -> list[dict[str, object]]:
    return list(yaml.safe_load(path.read_text())["entries"])


def test_default_replays_only_creates_nothing_and_names_the_option(
        pytester: pytest.Pytester, suite: Path, model: FakeModel) -> None:
    before = files(suite)
    result = pytester.runpytest("suite", *QUIET)
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines([
        "*no recorded reply for hook 'prompt destructive-shell'*"
        "suite/cassettes/test_policies/test_home_wipe.yaml*"
        "record it with --prompthooks-record-mode=once (or new_episodes)*"])
    assert "record it with --record" not in result.stdout.str()
    assert model.requests == []
    assert files(suite) == before  # no cassette, no folder, no lock
    # Nor anything in the user's cache (the config cache is off under the fixtures).
    cache = Path(os.environ["XDG_CACHE_HOME"])
    assert [p for p in cache.rglob("*") if p.is_file()] == []


def test_once_records_missing_cassettes_then_everything_replays(
        pytester: pytest.Pytester, suite: Path, model: FakeModel) -> None:
    model.script(verdict(False, "wipes the home directory"), verdict(True))
    before = files(suite)
    pytester.runpytest("suite", "--prompthooks-record-mode=once",
                                  *QUIET).assert_outcomes(passed=2)
    assert len(model.requests) == 2
    tapes = {"cassettes", "cassettes/test_policies", "cassettes/test_policies/test_home_wipe.yaml",
             "cassettes/test_policies/test_listing.yaml"}
    assert files(suite) == before | tapes  # no lock file, no temporary file
    wipe = entries(suite / "cassettes/test_policies/test_home_wipe.yaml")
    assert len(wipe) == 1 and "rm -rf ~" in str(wipe[0]["prompt"])

    pytester.runpytest("suite", *QUIET).assert_outcomes(passed=2)
    assert len(model.requests) == 2  # replayed; the default mode never asks

    # A new call in a test whose cassette exists: once does not record it, and says what does.
    (suite / "test_policies.py").write_text(SAMPLE + '''
def test_home_wipe_twice(prompthooks_event, prompthooks_run):
    prompthooks_run(bash(prompthooks_event, "rm -rf ~"),
                    cassette="cassettes/test_policies/test_home_wipe.yaml")
    assert_decision(prompthooks_run(bash(prompthooks_event, "rm -rf /"),
                                    cassette="cassettes/test_policies/test_home_wipe.yaml"),
                    "deny")
''')
    result = pytester.runpytest("suite", "--prompthooks-record-mode=once", *QUIET)
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*record it with --prompthooks-record-mode=new_episodes "
                                 "(once records only the cassettes that do not exist yet)*"])
    assert len(model.requests) == 2
    model.script(verdict(False, "wipes the root"))
    pytester.runpytest("suite", "--prompthooks-record-mode=new_episodes",
                                  *QUIET).assert_outcomes(passed=3)
    assert len(model.requests) == 3  # only the new call was asked
    assert len(entries(suite / "cassettes/test_policies/test_home_wipe.yaml")) == 2


SHARED = SAMPLE.replace('pytest.mark.prompthooks(config="hooks.json")',
                        'pytest.mark.prompthooks(config="hooks.json", cassette="tape.yaml")')


def test_all_asks_again_and_rewrite_starts_the_cassette_afresh_once_per_run(
        pytester: pytest.Pytester, suite: Path, model: FakeModel) -> None:
    (suite / "test_policies.py").write_text(SHARED)
    tape = suite / "tape.yaml"
    model.script(verdict(False, "first wording"), verdict(True))
    pytester.runpytest("suite", "--prompthooks-record-mode=new_episodes",
                                  *QUIET).assert_outcomes(passed=2)
    assert len(model.requests) == 2 and len(entries(tape)) == 2

    # all: every call asks the model; the entries it gets replace theirs, the others stay.
    model.script(verdict(False, "second wording"))
    pytester.runpytest("suite", "-k", "home_wipe", "--prompthooks-record-mode=all",
                                  *QUIET).assert_outcomes(passed=1, deselected=1)
    assert len(model.requests) == 3
    assert sorted(json.loads(str(e["reply"])).get("reason", "") for e in entries(tape)) == \
        ["", "second wording"]

    # rewrite: the cassette is deleted at its first use in the run, not once per test, so two
    # tests sharing it both keep their entries; a later run of one test drops the other's.
    model.script(verdict(False, "third wording"), verdict(True))
    pytester.runpytest("suite", "--prompthooks-record-mode=rewrite",
                                  *QUIET).assert_outcomes(passed=2)
    assert len(model.requests) == 5 and len(entries(tape)) == 2
    model.script(verdict(True))
    pytester.runpytest("suite", "-k", "listing", "--prompthooks-record-mode=rewrite",
                                  *QUIET).assert_outcomes(passed=1, deselected=1)
    assert len(model.requests) == 6
    assert ['"ls"' in str(e["prompt"]) for e in entries(tape)] == [True]
    assert sorted(p.name for p in suite.iterdir()) == [
        "hooks.json", "tape.yaml", "test_policies.py"]


def test_ini_sets_the_mode_and_the_option_overrides_it(
        pytester: pytest.Pytester, suite: Path, model: FakeModel) -> None:
    pytester.makeini("[pytest]\nprompthooks_record_mode = new_episodes\n")
    model.script(verdict(False, "wipes the home directory"))
    pytester.runpytest("suite", "-k", "home_wipe",
                                  *QUIET).assert_outcomes(passed=1, deselected=1)
    assert len(model.requests) == 1
    result = pytester.runpytest("suite", "-k", "listing",
                                           "--prompthooks-record-mode=none", *QUIET)
    result.assert_outcomes(failed=1, deselected=1)
    result.stdout.fnmatch_lines(["*record it with --prompthooks-record-mode=once*"])
    assert len(model.requests) == 1

    pytester.makeini("[pytest]\nprompthooks_record_mode = sometimes\n")
    bad = pytester.runpytest("suite", *QUIET)
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["*prompthooks_record_mode must be one of none, once, "
                              "new_episodes, all, rewrite, not 'sometimes'*"])
    assert "Traceback" not in bad.stderr.str()
    wrong = pytester.runpytest("suite", "--prompthooks-record-mode=always", *QUIET)
    assert wrong.ret == pytest.ExitCode.USAGE_ERROR
    wrong.stderr.fnmatch_lines(["*--prompthooks-record-mode: invalid choice: 'always'*"])


def test_marker_paths_are_relative_to_the_test_file_and_misuse_is_named(
        pytester: pytest.Pytester, suite: Path, model: FakeModel,
        monkeypatch: pytest.MonkeyPatch) -> None:
    (suite / "policies").mkdir()
    (suite / "hooks.json").rename(suite / "policies" / "hooks.json")
    (suite / "test_policies.py").write_text('''
import pytest
from prompthooks.testing import assert_decision

def bash(prompthooks_event, command):
    return prompthooks_event("claude", "PreToolUse", tool_name="Bash",
                             tool_input={"command": command})

@pytest.mark.prompthooks(config="policies/hooks.json", cassette="tapes/shell.yaml")
def test_marked(prompthooks_event, prompthooks_run):
    assert_decision(prompthooks_run(bash(prompthooks_event, "rm -rf ~")), "deny")

def test_arguments_win(prompthooks_event, prompthooks_run):
    outcome = prompthooks_run(bash(prompthooks_event, "rm -rf ~"),
                              config=["policies/hooks.json"], cassette="tapes/shell.yaml")
    assert_decision(outcome, "deny")

def test_without_config(prompthooks_event, prompthooks_run):
    prompthooks_run(bash(prompthooks_event, "ls"))

@pytest.mark.prompthooks(config="policies/hooks.json", mode="record")
def test_unknown_marker_keyword(prompthooks_event, prompthooks_run):
    prompthooks_run(bash(prompthooks_event, "ls"))

@pytest.mark.prompthooks(config="policies/missing.json")
def test_missing_config(prompthooks_event, prompthooks_run):
    prompthooks_run(bash(prompthooks_event, "ls"))
''')
    model.script(verdict(False, "wipes the home directory"))
    pytester.runpytest("suite", "-k", "marked", "--prompthooks-record-mode=once",
                                  *QUIET).assert_outcomes(passed=1, deselected=4)
    assert len(entries(suite / "tapes" / "shell.yaml")) == 1
    # From yet another folder, replaying: the same files are found from the test file.
    elsewhere = pytester.mkdir("elsewhere")
    monkeypatch.chdir(elsewhere)
    result = pytester.runpytest(str(suite), *QUIET)
    # A marker with a keyword it does not know is an error in the test's setup.
    result.assert_outcomes(passed=2, failed=2, errors=1)
    assert not any(elsewhere.iterdir())
    result.stdout.fnmatch_lines_random([
        "*prompthooks_run: no hooks config; pass config=... or mark the test with "
        "@pytest.mark.prompthooks(config=...)*",
        "*@pytest.mark.prompthooks takes only the keywords config, cassette, model; got mode*",
        "*config does not load:*suite/policies/missing.json*"])
    assert len(model.requests) == 1


def test_a_recording_that_cannot_be_written_fails_the_test_not_the_verdict(
        pytester: pytest.Pytester, suite: Path, model: FakeModel) -> None:
    """The model's verdict stood (the run's own line says so), but the cassette asked for
    was not filled: the test fails, naming why, as `prompthooks test --record` exits 1."""
    (suite / "test_policies.py").write_text(SHARED)
    (suite / "tape.yaml").mkdir()  # a folder where the cassette should be
    model.script(verdict(False, "wipes the home directory"), verdict(True))
    # all: every call asks the model and records
    result = pytester.runpytest("suite", "--prompthooks-record-mode=all", *QUIET)
    result.assert_outcomes(failed=2)
    assert len(model.requests) == 2  # the canary: the model was asked for each
    result.stdout.fnmatch_lines([
        "*prompthooks_run: hook 'prompt destructive-shell': the model's reply was not "
        "recorded (cassette *tape.yaml is not a regular file (a folder)); its verdict stands*"])


def test_a_miss_names_the_model_a_recording_was_made_on(
        pytester: pytest.Pytester, suite: Path, model: FakeModel) -> None:
    test_file = suite / "test_policies.py"
    test_file.write_text(SAMPLE.replace('config="hooks.json"',
                                        'config="hooks.json", model="recorded-model"'))
    model.script(verdict(False, "wipes the home directory"), verdict(True))
    pytester.runpytest("suite", *QUIET, "--prompthooks-record-mode=once").assert_outcomes(
        passed=2)
    tape = suite / "cassettes" / "test_policies" / "test_home_wipe.yaml"
    assert [e["model"] for e in entries(tape)] == ["recorded-model"]  # the canary
    test_file.write_text(SAMPLE)  # the config's own model, test-model, again
    result = pytester.runpytest("suite", *QUIET)
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines([
        "*this prompt is recorded under model 'recorded-model', not 'test-model': run with "
        "model=\"recorded-model\" (in the prompthooks marker or prompthooks_run; a case file's "
        "model: recorded-model)*"])
