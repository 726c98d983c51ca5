"""Cassettes: record against the local server, stop it, replay offline; concurrency; drift."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from prompthooks.api import dispatch

from ..fake_model import FakeModel, serve, verdict
from ..helpers import REPO, claude_bash, claude_event, reply, run_cli, write_json


@pytest.fixture(scope="module", autouse=True)
def _litellm_imported() -> None:
    from prompthooks.model.litellm_client import import_litellm

    import_litellm()


def _config(tmp_path: Path) -> Path:
    return write_json(tmp_path / "hooks.json", {"hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "prompt", "prompt_file": "destructive-shell", "model": "test-model"}]}],
        "UserPromptSubmit": [{"hooks": [
            {"type": "prompt", "prompt_file": "prompt-secrets", "model": "test-model"}]}],
    }})


def _entries(path: Path) -> list[dict[str, Any]]:
    data = yaml.safe_load(path.read_text())
    assert data["version"] == 1
    return list(data["entries"])


def test_record_stop_the_server_replay_same_decisions(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    cfg, tape = _config(tmp_path), tmp_path / "tape.yaml"
    events = [claude_bash("rm -rf ~"), claude_bash("ls"),
              claude_event("UserPromptSubmit", prompt="my key is sk-live-123")]
    server = serve()
    model = next(server)
    model.script(verdict(False, "wipes the home directory"), verdict(True),
                 verdict(False, "that prompt holds an API key"))
    env = {"PROMPTHOOKS_API_BASE": model.url, "PROMPTHOOKS_API_KEY": "sk-test-secret-value"}
    recorded = [reply(run_cli(e, "--config", str(cfg), "--record", str(tape), env=env))
                for e in events]
    next(server, None)  # the server is gone now
    replayed = [reply(run_cli(e, "--config", str(cfg), "--replay", str(tape))) for e in events]
    assert replayed == recorded
    assert recorded[0]["hookSpecificOutput"]["permissionDecisionReason"] == \
        "wipes the home directory"
    assert recorded[1] == {}
    assert recorded[2]["decision"] == "block"
    entries = _entries(tape)
    assert len(entries) == 3
    assert {e["hook"] for e in entries} == {"prompt destructive-shell", "prompt prompt-secrets"}
    text = tape.read_text()
    assert "sk-test-secret-value" not in text and "uthorization" not in text
    rm = next(e for e in entries if '"command": "rm -rf ~"' in e["prompt"])
    assert rm["prompt"].startswith("Policy: block shell commands")  # reviewers see the prompt
    assert "<event-data-NONCE>" in rm["prompt"]  # the random boundary is normalized
    assert json.loads(rm["reply"]) == {"ok": False, "reason": "wipes the home directory"}


def test_replay_miss_names_the_hook_and_key(tmp_path: Path) -> None:
    proc = run_cli(claude_bash("ls"), "--config", str(_config(tmp_path)), "--replay",
                   str(tmp_path / "empty.yaml"))
    assert proc.returncode == 0 and proc.stdout == ""
    assert "no recorded reply for hook 'prompt destructive-shell'" in proc.stderr
    assert "(key " in proc.stderr and "record it with --record" in proc.stderr


def test_environment_selects_the_cassette(tmp_path: Path, model: FakeModel) -> None:
    cfg, tape = _config(tmp_path), tmp_path / "env.yaml"
    model.script(verdict(False, "recorded via env"))
    run_cli(claude_bash("rm -rf /"), "--config", str(cfg),
            env={"PROMPTHOOKS_CASSETTE": str(tape), "PROMPTHOOKS_CASSETTE_MODE": "auto"})
    assert len(model.requests) == 1 and len(_entries(tape)) == 1
    again = run_cli(claude_bash("rm -rf /"), "--config", str(cfg),
                    env={"PROMPTHOOKS_CASSETTE": str(tape)})  # replay is the default mode
    assert "recorded via env" in again.stdout and len(model.requests) == 1


def test_parallel_recorders_lose_nothing(tmp_path: Path, model: FakeModel) -> None:
    # Six processes each import litellm at once (no warm worker in the suite): on a busy
    # two-core machine that alone can pass the default 30 s hook timeout, and a hook that times
    # out records nothing. The timeouts are generous so that only a lost entry can fail this.
    cfg = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "prompt", "prompt_file": "destructive-shell", "model": "test-model",
         "timeout": 500}]}]}})
    tape = tmp_path / "shared.yaml"
    model.script(verdict(True))
    procs = [subprocess.Popen(
        [sys.executable, "-m", "prompthooks", "run", "--config", str(cfg), "--record", str(tape),
         "--budget", "550"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(6)]
    for i, proc in enumerate(procs):
        _, err = proc.communicate(json.dumps(claude_bash(f"echo {i}")).encode(), timeout=600)
        assert proc.returncode == 0, err
    entries = _entries(tape)
    assert len(entries) == 6
    # The lock is the folder's, so nothing is left beside the cassette (no lock, no temp file).
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hooks.json", "shared.yaml"]
    assert {f"echo {i}" for i in range(6)} == {
        next(f"echo {i}" for i in range(6) if f'"echo {i}"' in e["prompt"]) for e in entries}


def test_same_event_same_key_other_model_other_key(tmp_path: Path, model: FakeModel) -> None:
    cfg, tape = _config(tmp_path), tmp_path / "keys.yaml"
    for _ in range(2):
        dispatch(claude_bash("ls"), config_paths=[str(cfg)], budget=60)
    from prompthooks.model.chain import ModelChain
    from prompthooks.model.recording import Cassette

    models = ModelChain(cassette=Cassette(tape, "auto"))
    dispatch(claude_bash("ls"), config_paths=[str(cfg)], budget=60, models=models)
    dispatch(claude_bash("ls"), config_paths=[str(cfg)], budget=60, models=models)
    assert len(_entries(tape)) == 1  # the second call was a replay
    other = json.loads(cfg.read_text())
    other["hooks"]["PreToolUse"][0]["hooks"][0]["model"] = "other-model"
    cfg.write_text(json.dumps(other))
    dispatch(claude_bash("ls"), config_paths=[str(cfg)], budget=60, models=models)
    assert len(_entries(tape)) == 2


def test_corrupt_cassette_is_a_clear_hook_error(tmp_path: Path) -> None:
    tape = tmp_path / "bad.yaml"
    tape.write_text("entries: [unclosed")
    proc = run_cli(claude_bash("ls"), "--config", str(_config(tmp_path)), "--replay", str(tape))
    assert f"cassette {tape} cannot be read" in proc.stderr
    assert "Traceback" not in proc.stderr


CASES = """
config:
  hooks:
    PreToolUse:
      - matcher: Bash
        hooks:
          - {type: prompt, prompt_file: destructive-shell, model: test-model}
          - {type: command, command: "cat >/dev/null; case \\"$PROMPTHOOKS_TOOL\\" in Bash) exit 0;; esac"}
cases:
  - name: home wipe is blocked
    host: claude
    event: {session_id: s, hook_event_name: PreToolUse, cwd: /p, tool_name: Bash,
            tool_input: {command: "rm -rf ~"}}
    expect: {decision: deny, reason_contains: HOME}
  - name: listing is fine
    event: {session_id: s, hook_event_name: PreToolUse, cwd: /p, tool_name: Bash,
            tool_input: {command: ls}}
    expect: {decision: allow}
"""


def _prompthooks(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run([sys.executable, "-m", "prompthooks", *args], capture_output=True,
                          text=True, timeout=300, env={**os.environ, **(env or {})})


def _rows(stdout: str) -> list[list[str]]:
    """The case table's rows, split into cells (two or more spaces apart)."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("result "))
    return [re.split(r" {2,}", line.strip()) for line in lines[start + 1:]
            if line.startswith(("PASS", "FAIL"))]


def test_prompthooks_test_records_then_replays_then_reports_drift(tmp_path: Path) -> None:
    cases = tmp_path / "shell.yaml"
    cases.write_text(CASES)
    server = serve()
    model = next(server)
    env = {"PROMPTHOOKS_API_BASE": model.url}
    model.script(verdict(False, "wipes the home directory"), verdict(True))
    recorded = _prompthooks("test", "--record", str(cases), env=env)
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    assert (tmp_path / "shell.cassette.yaml").exists()
    model.script(verdict(True), verdict(True))  # the model changed its mind on the first case
    drift = _prompthooks("test", "--rerecord", str(cases), env=env)
    (drifted,) = [line for line in drift.stdout.splitlines()
                  if line.startswith("prompt destructive-shell")]
    assert drifted.split("  ")[1].strip() == "verdict changed: deny -> ok"
    assert "1 recorded reply drifted" in drift.stdout
    assert drift.returncode == 1  # and the first case now fails against the live model
    next(server, None)
    replay = _prompthooks("test", str(cases))
    rows = _rows(replay.stdout)
    assert rows[0][:3] == ["PASS", "home wipe is blocked", "deny"]
    assert rows[1][:3] == ["PASS", "listing is fine", "allow"]
    assert replay.stdout.splitlines()[-1] == "2 passed, 0 failed, 0 errors" and replay.returncode == 0
    as_json = json.loads(_prompthooks("test", "--json", str(cases)).stdout)
    assert [(c["name"], c["passed"], c["decision"]) for c in as_json["cases"]] == [
        ("home wipe is blocked", True, "deny"), ("listing is fine", True, "allow")]
    assert (as_json["passed"], as_json["failed"], as_json["errors"], as_json["drift"]) == \
        (2, 0, 0, [])


def test_prompthooks_test_failure_output(tmp_path: Path) -> None:
    cases = tmp_path / "fail.yaml"
    cases.write_text("""
config: {hooks: {PreToolUse: [{hooks: [{type: command, command: "cat >/dev/null"}]}]}}
cases:
  - name: expects a block that never comes
    event: {session_id: s, hook_event_name: PreToolUse, tool_name: Bash,
            tool_input: {command: ls}}
    expect: {decision: deny}
""")
    proc = _prompthooks("test", str(cases))
    assert proc.returncode == 1
    (row,) = _rows(proc.stdout)
    assert row[:3] == ["FAIL", "expects a block that never comes", "allow"]
    assert row[-1] == "expected deny, got allow"
    assert proc.stdout.splitlines()[-1] == "0 passed, 1 failed, 0 errors"


def test_shipped_library_suites_pass_offline() -> None:
    proc = _prompthooks("test", str(REPO / "prompts" / "tests"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = proc.stdout.splitlines()[-1]
    passed = int(summary.split()[0])
    assert passed >= 24 and summary.endswith(" 0 failed, 0 errors")


@pytest.mark.parametrize("place", ["writable", "a folder", "under a file", "a FIFO"])
def test_a_recording_that_cannot_be_written_never_changes_the_verdict(
        tmp_path: Path, model: FakeModel, place: str) -> None:
    """Recording is a side effect: a cassette path that cannot be written (tests run as root,
    so not a read-only folder) is said in one line, and the model's deny stands."""
    import os
    import time

    model.script(verdict(False, "model says no"))
    cfg = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "prompt", "prompt": "Block deletions. $ARGUMENTS", "timeout": 20}]}]}})
    tape = tmp_path / "tape.yaml"
    if place == "a folder":
        tape.mkdir()
    elif place == "under a file":
        (tmp_path / "file").write_text("not a folder")
        tape = tmp_path / "file" / "tape.yaml"
    elif place == "a FIFO":
        os.mkfifo(tape)  # no writer ever comes: a blocking read would hold the run
    started = time.monotonic()
    proc = run_cli(claude_bash("rm -rf /"), "--config", str(cfg), "--record", str(tape),
                   "--budget", "60", timeout=120)
    assert time.monotonic() - started < 30, proc.stderr  # well before the budget
    assert len(model.requests) == 1  # the canary: the model was asked
    output = reply(proc)["hookSpecificOutput"]
    assert output["permissionDecision"] == "deny", proc.stderr
    assert output["permissionDecisionReason"] == "model says no"
    said = [line for line in proc.stderr.splitlines() if "not recorded" in line]
    if place == "writable":
        assert said == [] and len(_entries(tape)) == 1
        return
    assert "Traceback" not in proc.stderr
    assert len(said) == 1 and said[0].startswith(
        "prompthooks: hook 'inline prompt': the model's reply was not recorded (cassette ")
    assert said[0].endswith("; its verdict stands")
    assert {"a folder": "is not a regular file (a folder)", "a FIFO": "(a FIFO)",
            "under a file": "file is a file, not a folder"}[place] in said[0]


def test_a_fifo_named_as_the_cassette_is_an_error_at_once_on_replay(
        tmp_path: Path, model: FakeModel) -> None:
    import os
    import time

    cfg = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "prompt", "prompt": "Block deletions. $ARGUMENTS", "failClosed": True}]}]}})
    tape = tmp_path / "tape.yaml"
    os.mkfifo(tape)  # no writer ever comes: a blocking read would hold the run to its budget
    started = time.monotonic()
    proc = run_cli(claude_bash("rm -rf /"), "--config", str(cfg), "--replay", str(tape),
                   "--budget", "60", timeout=120)
    assert time.monotonic() - started < 30, proc.stderr
    output = reply(proc)["hookSpecificOutput"]
    assert output["permissionDecision"] == "deny"  # fail-closed: the hook's own policy
    assert f"cassette {tape} is not a regular file (a FIFO)" in output["permissionDecisionReason"]
    assert model.requests == []  # a replay never asks


def test_prompthooks_test_record_fails_when_a_reply_is_not_recorded(
        tmp_path: Path, model: FakeModel) -> None:
    """The case is judged by the model's verdict, but the run asked for a recording: exit 1."""
    hooks = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "prompt", "prompt": "Judge $ARGUMENTS", "model": "test-model"}]}]}})
    (tmp_path / "tape.yaml").mkdir()  # a folder where the cassette should be
    cases = tmp_path / "cases.yaml"
    cases.write_text(json.dumps({"config": hooks.name, "cassette": "tape.yaml", "cases": [
        {"name": "rm", "event": claude_bash("rm -rf /"), "expect": {"decision": "deny"}}]}))
    model.script(verdict(False, "no"))
    proc = subprocess.run([sys.executable, "-m", "prompthooks", "test", "--record", "--json",
                           str(cases)], capture_output=True, text=True, timeout=120)
    assert len(model.requests) == 1  # the canary: the model was asked
    data = json.loads(proc.stdout)
    assert proc.returncode == 1
    assert data["passed"] == 1 and data["failed"] == 0  # the deny stood
    (unrecorded,) = data["unrecorded"]
    assert "the model's reply was not recorded" in unrecorded["line"]
    assert "not recorded" in proc.stderr


def test_auto_mode_asks_past_an_unreadable_cassette_and_the_verdict_stands(
        tmp_path: Path, model: FakeModel) -> None:
    model.script(verdict(False, "model says no"))
    cfg = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "prompt", "prompt": "Block deletions. $ARGUMENTS", "timeout": 20}]}]}})
    tape = tmp_path / "tape.yaml"
    tape.mkdir()
    proc = run_cli(claude_bash("rm -rf /"), "--config", str(cfg), env={
        "PROMPTHOOKS_CASSETTE": str(tape), "PROMPTHOOKS_CASSETTE_MODE": "auto"})
    assert len(model.requests) == 1  # the canary: the model was asked
    output = reply(proc)["hookSpecificOutput"]
    assert output["permissionDecisionReason"] == "model says no", proc.stderr
    (said,) = proc.stderr.splitlines()
    assert said == (f"prompthooks: hook 'inline prompt': the model's reply was not recorded "
                    f"(cassette {tape} is not a regular file (a folder)); its verdict stands")


def _entry(i: int) -> dict[str, Any]:
    return {"key": f"{i * 7919 % 1000:032x}", "hook": "h", "model": "test-model",
            "prompt": f"line one\nüñí {i}: " + "word " * 40, "reply": '{"ok": true}',
            "input_tokens": 10, "output_tokens": 3, "recorded": "2026-11-26T00:00:00Z"}


def test_a_recording_write_dumps_its_own_entry_only(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from prompthooks.model.recording import HEADER, Cassette, _dumper

    real_dump, real_load = yaml.dump, yaml.load
    dumped: list[int] = []  # entries serialized, per yaml.dump call
    loads: list[int] = []

    def dump(data: Any, *args: Any, **kwargs: Any) -> Any:
        dumped.append(len(data) if isinstance(data, list) else len(data["entries"]))
        return real_dump(data, *args, **kwargs)

    def load(*args: Any, **kwargs: Any) -> Any:
        loads.append(1)
        return real_load(*args, **kwargs)

    monkeypatch.setattr(yaml, "dump", dump)
    monkeypatch.setattr(yaml, "load", load)
    tape = tmp_path / "tape.yaml"
    cassette = Cassette(tape, "record")
    cassette.write(_entry(0))
    assert dumped == [1]  # the canary: the cassette's writes go through the counted dump
    for i in range(1, 40):
        cassette.write(_entry(i))
    # The quadratic pattern dumps every entry on every write: 820 entries for 40 writes.
    assert sum(dumped) == 40 and loads == []
    # Another writer (another hook process) changes the file: it is read again, once, and
    # nothing either wrote is lost; only the entries new to this writer are dumped (the other
    # writer's and its own).
    Cassette(tape, "record").write(_entry(40))
    loads.clear()
    dumped.clear()
    cassette.write(_entry(41))
    assert len(loads) == 1 and sum(dumped) == 2
    monkeypatch.undo()
    # The file is byte for byte what one dump of every entry, sorted by key, writes.
    entries = sorted((_entry(i) for i in range(42)), key=lambda e: e["key"])
    whole = yaml.dump({"version": 1, "entries": entries}, Dumper=_dumper(), sort_keys=False,
                      allow_unicode=True, width=100)
    assert tape.read_text(encoding="utf-8") == HEADER + whole
