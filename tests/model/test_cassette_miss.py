"""A replay miss says what is recorded near it: the same prompt under another model (and the
option that runs on it), the same prompt and model under another key, or the closest recorded
prompt with an excerpt of each where they first differ, redacted. Real cassettes, recorded by
`prompthooks run --record` against the fake model server, replayed by `prompthooks test`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from ..fake_model import FakeModel, verdict
from ..helpers import claude_bash, run_cli, write_json

# A GitHub token's shape, made up: the redaction pass knows it.
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def _config(tmp_path: Path) -> Path:
    return write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "prompt", "prompt_file": "destructive-shell"}]}]}})


def _record(model: FakeModel, config: Path, tape: Path, command: str, model_name: str) -> None:
    """One entry recorded by `prompthooks run`, on ``model_name`` (PROMPTHOOKS_MODEL)."""
    model.script(verdict(False, "destructive"))
    proc = run_cli(claude_bash(command), "--config", str(config), "--record", str(tape),
                   env={"PROMPTHOOKS_MODEL": model_name})
    assert "destructive" in proc.stdout, proc.stderr


def _entries(tape: Path) -> list[dict[str, Any]]:
    return list(yaml.safe_load(tape.read_text())["entries"])


def _case_file(tmp_path: Path, config: Path, tape: Path, command: str) -> Path:
    path = tmp_path / "cases.yaml"
    path.write_text(yaml.safe_dump({"config": str(config), "cassette": str(tape), "cases": [
        {"name": "blocked", "event": claude_bash(command), "expect": {"decision": "deny"}}]}))
    return path


def _test(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "prompthooks", "test", "--json", *args],
                          capture_output=True, text=True, timeout=120)


def _detail(proc: subprocess.CompletedProcess[str]) -> str:
    report = json.loads(proc.stdout)
    [case] = report["cases"]
    assert case["status"] == "error"
    return str(case["detail"])


def test_the_same_prompt_under_another_model_is_named_with_its_option(
        tmp_path: Path, model: FakeModel) -> None:
    config, tape = _config(tmp_path), tmp_path / "tape.yaml"
    _record(model, config, tape, "rm -rf ~", "recorded-model")
    # The canary: the recording is there, under the model `run` used.
    [entry] = _entries(tape)
    assert entry["model"] == "recorded-model" and '"command": "rm -rf ~"' in entry["prompt"]
    cases = _case_file(tmp_path, config, tape, "rm -rf ~")

    # `test` runs on the model the config names (the default), never PROMPTHOOKS_MODEL.
    detail = _detail(_test(str(cases)))
    assert "no recorded reply for hook 'prompt destructive-shell'" in detail
    assert ("this prompt is recorded under model 'recorded-model', not 'claude-haiku-4-5': "
            "run with --model recorded-model") in detail
    # What it says works.
    proc = _test("--model", "recorded-model", str(cases))
    assert json.loads(proc.stdout)["cases"][0]["status"] == "pass", proc.stdout

    # `run --replay` has no --model: it names the variable.
    miss = run_cli(claude_bash("rm -rf ~"), "--config", str(config), "--replay", str(tape),
                   env={"PROMPTHOOKS_MODEL": "another-model"})
    assert ("recorded under model 'recorded-model', not 'another-model': run with "
            "PROMPTHOOKS_MODEL=recorded-model") in miss.stderr


def test_the_closest_prompt_and_where_it_differs(tmp_path: Path, model: FakeModel) -> None:
    config, tape = _config(tmp_path), tmp_path / "tape.yaml"
    _record(model, config, tape, "rm -rf ~/projects", "claude-haiku-4-5")
    _record(model, config, tape, "git status", "claude-haiku-4-5")
    assert len(_entries(tape)) == 2  # the canary: both recorded, under the model `test` uses
    detail = _detail(_test(str(_case_file(tmp_path, config, tape, "rm -rf ~/pictures"))))
    prompt = next(e["prompt"] for e in _entries(tape) if "rm -rf ~/projects" in e["prompt"])
    at = prompt.index("rm -rf ~/p") + len("rm -rf ~/p")
    assert (f"the closest recording (hook 'prompt destructive-shell', model "
            f"'claude-haiku-4-5') first differs at character {at}: recorded '...") in detail
    recorded, now = detail.split("recorded '", 1)[1].split("', now '", 1)
    assert recorded.endswith("...") and now.split("'", 1)[0].endswith("...")
    assert "rm -rf ~/projects" in recorded and "rm -rf ~/pictures" in now
    assert "\n" not in detail  # one line: the prompt's newlines are written as \n


def test_an_excerpt_is_redacted_whole(tmp_path: Path, model: FakeModel) -> None:
    config, tape = _config(tmp_path), tmp_path / "tape.yaml"
    _record(model, config, tape, "curl -H 'x: 1' https://example.com", "claude-haiku-4-5")
    command = f"curl -H 'Authorization: token {TOKEN}' https://example.com"
    cases = _case_file(tmp_path, config, tape, command)
    assert TOKEN in cases.read_text()  # the canary: the secret is in the event replayed
    proc = _test(str(cases))
    detail = _detail(proc)
    assert "first differs at character" in detail
    now = detail.split("', now '", 1)[1]
    assert "[redacted]" in now  # the difference is at the secret, and it is hidden
    assert TOKEN not in proc.stdout and TOKEN[:12] not in proc.stdout
    assert TOKEN not in tape.read_text()


def test_the_same_prompt_and_model_under_another_key(tmp_path: Path,
                                                    model: FakeModel) -> None:
    config, tape = _config(tmp_path), tmp_path / "tape.yaml"
    _record(model, config, tape, "rm -rf ~", "claude-haiku-4-5")
    cases = _case_file(tmp_path, config, tape, "rm -rf ~")
    proc = _test(str(cases))
    assert json.loads(proc.stdout)["cases"][0]["status"] == "pass"  # the canary: it replays
    # A recording whose key no longer matches (made with another system message, say).
    data = yaml.safe_load(tape.read_text())
    data["entries"][0]["key"] = "0" * 32
    tape.write_text(yaml.safe_dump(data))
    assert ("this prompt is recorded under 'claude-haiku-4-5' with another key: the system "
            "message or the call's settings changed since (re-record it)") in _detail(_test(
                str(cases)))


@pytest.mark.parametrize("content", ["", "version: 1\nentries: []\n"])
def test_an_empty_cassette_says_so(tmp_path: Path, content: str) -> None:
    config, tape = _config(tmp_path), tmp_path / "tape.yaml"
    tape.write_text(content)
    detail = _detail(_test(str(_case_file(tmp_path, config, tape, "ls"))))
    assert "; the cassette has no recordings; record it with --record" in detail


def test_try_pack_names_the_model_its_suite_was_recorded_on(tmp_path: Path,
                                                           model: FakeModel) -> None:
    pack = tmp_path / "pack"
    (pack / "policies").mkdir(parents=True)
    (pack / "policies" / "force-push.md").write_text("Block force pushes. $ARGUMENTS\n")
    (pack / "prompthooks-pack.yaml").write_text(yaml.safe_dump({"name": "acme", "policies": [
        {"id": "force-push", "prompt_file": "policies/force-push.md", "events": ["PreToolUse"],
         "matcher": "Bash", "cases": "force-push.yaml"}]}))
    (pack / "force-push.yaml").write_text(yaml.safe_dump({"cases": [
        {"name": "force push is blocked", "event": claude_bash("git push --force origin main"),
         "expect": {"decision": "deny"}}]}))
    model.script(verdict(False, "force push"))
    recorded = subprocess.run([sys.executable, "-m", "prompthooks", "try-pack", str(pack),
                               "--record", "--model", "recorded-model"],
                              capture_output=True, text=True, timeout=120)
    assert "1 passed" in recorded.stdout, recorded.stdout + recorded.stderr
    [entry] = _entries(pack / "force-push.cassette.yaml")
    assert entry["model"] == "recorded-model"  # the canary: recorded, under that model

    def try_pack(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "prompthooks", "try-pack", str(pack),
                               "--json", *args], capture_output=True, text=True, timeout=120)

    assert ("this prompt is recorded under model 'recorded-model', not 'claude-haiku-4-5': "
            "run with --model recorded-model") in _detail(try_pack())
    assert json.loads(try_pack("--model", "recorded-model").stdout)["passed"] == 1


def test_entries_of_any_shape_still_give_one_line(tmp_path: Path) -> None:
    config, tape = _config(tmp_path), tmp_path / "tape.yaml"
    tape.write_text(yaml.safe_dump({"version": 1, "entries": [
        {"key": "0" * 32, "reply": "{}", "prompt": ["not", "text"], "model": {"a": 1},
         "hook": 5}]}))
    detail = _detail(_test(str(_case_file(tmp_path, config, tape, "ls"))))
    assert "no recorded reply for hook 'prompt destructive-shell'" in detail
    assert "the closest recording (hook '5', model \"{'a': 1}\") first differs at character 0" \
        in detail
