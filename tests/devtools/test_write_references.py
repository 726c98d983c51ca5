"""`prompthooks test --write-references`: the cases' expected verdicts written offline as
reference entries, keyed as the real calls (they replay in `test`, `eval --replay` and
`run --replay`), labelled as references everywhere, never written over a model's recording,
and replaced by `test --record` with the model's replies."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from ..fake_model import serve, verdict
from ..helpers import reply, run_in_process, write_script

DESTRUCTIVE = "Block commands that destroy data. $ARGUMENTS"
NETWORK = "Block commands that reach the network. $ARGUMENTS"
# Generous deadlines: `--record` loads litellm, which takes long on a busy machine (a hook's
# timeout is not part of a recording's key).
CONFIG = {"prompthooks": {"model": "test-model"}, "hooks": {"PreToolUse": [{
    "matcher": "Bash", "hooks": [
        {"type": "command", "command": "true"},
        {"type": "prompt", "prompt": DESTRUCTIVE, "timeout": 240},
        {"type": "prompt", "prompt": NETWORK, "timeout": 240}]}]}}
WIPE = {"session_id": "s", "transcript_path": "/tmp/t.jsonl", "cwd": "/home/dev/app",
        "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": "rm -rf ~/", "description": "clean up"}}
LIST = {**WIPE, "tool_input": {"command": "ls", "description": "look"}}
CURL = {**WIPE, "tool_input": {"command": "curl https://example.com", "description": "get"}}
SUMMARY = "reference verdicts written, "


def _prompthooks(*args: str, cwd: Path,
                 env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if k != "PROMPTHOOKS_MODEL"}
    return subprocess.run([sys.executable, "-m", "prompthooks", *args], capture_output=True,
                          text=True, timeout=600, cwd=cwd, env={**full, **(env or {})})


def _case(name: str, event: dict[str, Any], **expect: Any) -> dict[str, Any]:
    return {"name": name, "event": event, "expect": expect}


def _project(folder: Path, *cases: dict[str, Any], config: Any = None) -> Path:
    folder.mkdir(exist_ok=True)
    (folder / "hooks.json").write_text(json.dumps(CONFIG if config is None else config))
    (folder / "cases.yaml").write_text(yaml.safe_dump({"config": "hooks.json", "budget": 280,
                                                       "cases": list(cases)}))
    return folder


def _entries(folder: Path) -> list[dict[str, Any]]:
    data = yaml.safe_load((folder / "cases.cassette.yaml").read_text())
    return list(data["entries"])


def _by_prompt(folder: Path, command: str) -> dict[str, str]:
    """The replies of the entries for one event's command, by the hook's policy line."""
    return {policy: e["reply"] for e in _entries(folder) if command in e["prompt"]
            for policy in (DESTRUCTIVE, NETWORK) if e["prompt"].startswith(policy.split(" $")[0])}


def _summary(proc: subprocess.CompletedProcess[str]) -> str:
    return next(line for line in proc.stdout.splitlines() if SUMMARY in line)


@pytest.fixture
def written(tmp_path: Path) -> Path:
    project = _project(tmp_path / "project",
                       _case("deleting the home directory is blocked", WIPE,
                             decision="deny", reason_contains="home"),
                       _case("listing is allowed", LIST, decision="allow"))
    proc = _prompthooks("test", "--write-references", "cases.yaml", cwd=project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _summary(proc) == ("4 reference verdicts written, 0 cases already recorded, "
                              "0 skipped")
    assert "not a model's output" in proc.stdout.splitlines()[-1]
    return project


def test_entries_are_labelled_references_with_a_note(written: Path) -> None:
    entries = _entries(written)
    assert len(entries) == 4
    for entry in entries:
        assert entry["source"] == "reference"
        assert "not a model's output" in entry["note"]
        assert "--write-references" in entry["note"]
        assert "input_tokens" not in entry and "recorded" not in entry
    assert "source: reference" in (written / "cases.cassette.yaml").read_text()


@pytest.mark.slow
def test_written_references_pass_in_test_counted_as_references(written: Path,
                                                               tmp_path: Path) -> None:
    proc = _prompthooks("test", str(written / "cases.yaml"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [line.split()[0] for line in proc.stdout.splitlines()[1:3]] == ["PASS", "PASS"]
    assert ("verdicts: 0 from model recordings, 4 from reference verdicts (not a model's "
            "output)") in proc.stdout
    as_json = json.loads(_prompthooks("test", "--json", "cases.yaml", cwd=written).stdout)
    assert as_json["sources"] == {"reference": 4}


@pytest.mark.slow
def test_written_references_replay_in_eval(written: Path) -> None:
    rows = written / "rows.jsonl"
    rows.write_text("".join(json.dumps(row) + "\n" for row in (
        {"id": "wipe", "event": WIPE, "expected": "deny"},
        {"id": "list", "event": LIST, "expected": "allow"})))
    args = ("eval", "rows.jsonl", "--config", "hooks.json", "--replay", "cases.cassette.yaml")
    as_json = _prompthooks(*args, "--json", cwd=written)
    assert as_json.returncode == 0, as_json.stdout + as_json.stderr
    (report,) = json.loads(as_json.stdout)
    assert report["overall"]["confusion"] == {"tp": 1, "fp": 0, "fn": 0, "tn": 1}
    assert report["sources"] == {"reference": 4}
    table = _prompthooks(*args, "--report", "report.md", cwd=written)
    assert table.returncode == 0, table.stdout + table.stderr
    line = "verdicts: 0 from model recordings, 4 from reference verdicts (not a model's output)"
    assert line in table.stdout
    assert line[1:] in (written / "report.md").read_text()  # "Verdicts: ..." as a sentence
    _prompthooks(*args, "--report", "report.html", cwd=written)
    assert "4 from reference verdicts" in (written / "report.html").read_text()


@pytest.mark.slow
def test_written_references_replay_in_run(written: Path) -> None:
    # The case's event as a host sends it (other key order, indented): the same key.
    saved = json.dumps(dict(reversed(list(WIPE.items()))), indent=4)
    proc = run_in_process(saved, "--config", "hooks.json", "--replay", "cases.cassette.yaml",
                   cwd=written, env={"PROMPTHOOKS_MODEL": ""})
    assert proc.returncode == 0, proc.stderr
    out = reply(proc)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny"
    assert "deleting the home directory is blocked" in out["permissionDecisionReason"]
    allowed = run_in_process(LIST, "--config", "hooks.json", "--replay", "cases.cassette.yaml",
                      cwd=written, env={"PROMPTHOOKS_MODEL": ""})
    assert allowed.returncode == 0 and allowed.stderr == "" and reply(allowed) == {}


@pytest.mark.slow
def test_an_allow_case_gets_ok_verdicts(written: Path) -> None:
    assert _by_prompt(written, '"ls"') == {DESTRUCTIVE: '{"ok": true}',
                                           NETWORK: '{"ok": true}'}


@pytest.mark.slow
def test_every_selected_prompt_hook_objects_unless_the_case_names_one(tmp_path: Path) -> None:
    project = _project(tmp_path / "p",
                       _case("wipe", WIPE, decision="deny", reason_contains="home"),
                       {**_case("curl is asked", CURL, decision="ask"),
                        "reference": {"hooks": ["hooks.PreToolUse[0].hooks[2]"],
                                      "reason": "curl reaches the network"}})
    proc = _prompthooks("test", "--write-references", "cases.yaml", cwd=project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    wipe = _by_prompt(project, "rm -rf")
    assert {json.loads(text)["ok"] for text in wipe.values()} == {False}
    assert all("home" in json.loads(text)["reason"] for text in wipe.values())
    assert _by_prompt(project, "curl") == {
        DESTRUCTIVE: '{"ok": true}',
        NETWORK: '{"decision": "ask", "reason": "curl reaches the network"}'}
    replay = _prompthooks("test", "cases.yaml", cwd=project)
    assert replay.returncode == 0, replay.stdout
    assert replay.stdout.splitlines()[-1] == "2 passed, 0 failed, 0 errors"


@pytest.mark.slow
def test_a_hook_name_no_selected_prompt_hook_has_is_an_error(tmp_path: Path) -> None:
    project = _project(tmp_path / "p", {**_case("wipe", WIPE, decision="deny"),
                                        "reference": {"hooks": ["prompt no-such-policy"]}})
    proc = _prompthooks("test", "--write-references", "cases.yaml", cwd=project)
    assert proc.returncode == 1
    assert "reference.hooks names 'prompt no-such-policy'" in proc.stdout
    assert _summary(proc).endswith("0 skipped, 1 error")


@pytest.mark.slow
def test_a_case_that_still_fails_is_reported(tmp_path: Path) -> None:
    config = json.loads(json.dumps(CONFIG))
    deny = write_script(tmp_path / "deny.sh", "echo 'no listing' >&2; exit 2")
    config["hooks"]["PreToolUse"][0]["hooks"][0]["command"] = str(deny)
    project = _project(tmp_path / "p", _case("listing is allowed", LIST, decision="allow"),
                       config=config)
    proc = _prompthooks("test", "--write-references", "cases.yaml", cwd=project)
    assert proc.returncode == 1
    assert "the case does not pass with these verdicts: expected allow, got deny" in proc.stdout


def _record(project: Path, *answers: Any) -> subprocess.CompletedProcess[str]:
    server = serve()
    model = next(server)
    model.script(*answers)
    try:
        return _prompthooks("test", "--record", "cases.yaml", cwd=project,
                            env={"PROMPTHOOKS_API_BASE": model.url,
                                 "PROMPTHOOKS_API_KEY": "test-key-not-a-secret"})
    finally:
        next(server, None)


@pytest.mark.slow
def test_a_model_recording_is_never_overwritten(tmp_path: Path) -> None:
    project = _project(tmp_path / "p", _case("wipe", WIPE, decision="deny"))
    recorded = _record(project, verdict(False, "the model says: home directory"))
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    before = (project / "cases.cassette.yaml").read_text()
    # A second case with no recording; and the first case's expectation changed.
    _project(project, _case("wipe", WIPE, decision="allow"),
             _case("listing is allowed", LIST, decision="allow"))
    for extra in ((), ("--replace-references",)):
        proc = _prompthooks("test", "--write-references", *extra, "cases.yaml", cwd=project)
        assert "2 already recorded by a model" in proc.stdout
        model_entries = [e for e in _entries(project) if "source" not in e]
        assert len(model_entries) == 2
        assert all("the model says" in e["reply"] for e in model_entries)
    assert proc.returncode == 1  # the changed case fails on the model's recording
    assert "expected allow, got deny" in proc.stdout
    after = _entries(project)
    assert all(entry in after for entry in yaml.safe_load(before)["entries"])


@pytest.mark.slow
def test_earlier_references_are_replaced_only_when_asked(tmp_path: Path) -> None:
    project = _project(tmp_path / "p", _case("listing", LIST, decision="allow"))
    assert _prompthooks("test", "--write-references", "cases.yaml", cwd=project).returncode == 0
    _project(project, _case("listing", LIST, decision="deny"))  # the expectation changed
    kept = _prompthooks("test", "--write-references", "cases.yaml", cwd=project)
    assert kept.returncode == 1
    assert "2 already recorded as a reference" in kept.stdout
    assert "expected deny, got allow" in kept.stdout
    assert set(_by_prompt(project, '"ls"').values()) == {'{"ok": true}'}
    replaced = _prompthooks("test", "--write-references", "--replace-references", "cases.yaml",
                            cwd=project)
    assert replaced.returncode == 0, replaced.stdout
    assert _summary(replaced).startswith("2 reference verdicts written")
    assert {json.loads(t)["ok"] for t in _by_prompt(project, '"ls"').values()} == {False}


@pytest.mark.slow
def test_record_replaces_references_with_the_models_replies(written: Path) -> None:
    proc = _record(written, verdict(False, "model: deletes the home directory"),
                   verdict(False, "model: deletes the home directory"), verdict(True))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "4 model calls, 0 failed" in proc.stdout
    entries = _entries(written)
    assert len(entries) == 4 and not [e for e in entries if "source" in e or "note" in e]
    replay = _prompthooks("test", "cases.yaml", cwd=written)
    assert replay.returncode == 0, replay.stdout
    assert ("verdicts: 4 from model recordings, 0 from reference verdicts (not a model's "
            "output)") in replay.stdout


@pytest.mark.slow
def test_cases_with_nothing_to_write_are_reported(tmp_path: Path) -> None:
    config = {"prompthooks": {"model": "test-model"}, "hooks": {
        "PreToolUse": CONFIG["hooks"]["PreToolUse"],  # type: ignore[index]
        "Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}}
    stop = {k: v for k, v in WIPE.items() if not k.startswith("tool")}
    project = _project(tmp_path / "p", _case("stop", {**stop, "hook_event_name": "Stop"},
                                             decision="allow"),
                       _case("a failure policy", WIPE, error=True), config=config)
    proc = _prompthooks("test", "--write-references", "cases.yaml", cwd=project)
    assert proc.returncode == 0, proc.stdout
    assert "no prompt hook asks a model for this event" in proc.stdout
    assert "expects a hook error: nothing to write" in proc.stdout
    assert _summary(proc) == "0 reference verdicts written, 0 cases already recorded, 2 skipped"
    assert not (project / "cases.cassette.yaml").exists()
    as_json = json.loads(_prompthooks("test", "--write-references", "--json", "cases.yaml",
                                      cwd=project).stdout)
    assert [c["status"] for c in as_json["cases"]] == ["skipped", "skipped"]


@pytest.mark.slow
def test_a_config_that_does_not_load_is_reported(tmp_path: Path) -> None:
    project = _project(tmp_path / "p", _case("wipe", WIPE, decision="deny"))
    (project / "hooks.json").write_text("{not json")
    other = _project(tmp_path / "q", _case("wipe", WIPE, decision="deny"))
    proc = _prompthooks("test", "--write-references", str(project), str(other), cwd=tmp_path)
    assert proc.returncode == 1
    assert "config does not load" in proc.stdout and "hooks.json" in proc.stdout
    assert _summary(proc) == ("2 reference verdicts written, 0 cases already recorded, "
                              "0 skipped, 1 error")


@pytest.mark.slow
@pytest.mark.parametrize(("args", "code", "message"), [
    (("--write-references", "missing.yaml"), 1, "missing.yaml: no such file or folder"),
    (("--write-references", "bad.yaml"), 1, "bad.yaml: cannot read"),
    (("--write-references", "--library"), 64, "name your own case files"),
    (("--replace-references", "bad.yaml"), 64, "--replace-references goes with"),
    (("--write-references", "--record", "bad.yaml"), 64, "not allowed with argument"),
])
def test_bad_input_is_one_line(tmp_path: Path, args: tuple[str, ...], code: int,
                               message: str) -> None:
    (tmp_path / "bad.yaml").write_text("cases: [unclosed\n")
    proc = _prompthooks("test", *args, cwd=tmp_path)
    assert proc.returncode == code
    assert proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1 and message in proc.stderr, proc.stderr


def test_the_demo_cassette_is_labelled_reference() -> None:
    from prompthooks.commands.demo import examples_dir

    entries = yaml.safe_load((examples_dir() / "demo.cassette.yaml").read_text())["entries"]
    assert entries and all(e["source"] == "reference" and "not a model's output" in e["note"]
                           for e in entries)


@pytest.mark.slow
def test_two_cases_of_one_event_do_not_overwrite_each_other(tmp_path: Path) -> None:
    project = _project(tmp_path / "p", _case("listing is blocked", LIST, decision="deny"),
                       _case("listing is allowed", LIST, decision="allow"))
    proc = _prompthooks("test", "--write-references", "--replace-references", "cases.yaml",
                        cwd=project)
    assert proc.returncode == 1
    assert "2 already recorded as a reference; the case does not pass" in proc.stdout
    assert {json.loads(t)["ok"] for t in _by_prompt(project, '"ls"').values()} == {False}


@pytest.mark.slow
def test_a_case_may_name_the_objecting_hook_by_its_prompt_file(tmp_path: Path) -> None:
    config = {"prompthooks": {"model": "test-model"}, "hooks": {"PreToolUse": [{
        "matcher": "Bash", "hooks": [{"type": "prompt", "prompt_file": "destructive-shell"},
                                     {"type": "prompt", "prompt_file": "force-push"}]}]}}
    push = {**WIPE, "tool_input": {"command": "git push --force origin main"}}
    project = _project(tmp_path / "p", {**_case("force push", push, decision="deny"),
                                        "reference": {"hooks": ["force-push"]}},
                       config=config)
    proc = _prompthooks("test", "--write-references", "cases.yaml", cwd=project)
    assert proc.returncode == 0, proc.stdout
    replies = {e["hook"]: json.loads(e["reply"]) for e in _entries(project)}
    assert replies["prompt destructive-shell"] == {"ok": True}
    assert replies["prompt force-push"]["ok"] is False
