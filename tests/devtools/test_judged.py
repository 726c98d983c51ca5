"""A case passes only when it was judged: a hook that gave no verdict (no recording, a model
that cannot be reached) makes the case ERROR and the run exit 1, in `test`, `test --record`,
`test --rerecord`, the pytest helpers and `eval`."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from prompthooks.testing import assert_decision, assert_judged, run

from ..fake_model import serve, verdict
from ..helpers import claude_bash

ONE_POLICY = """
config:
  prompthooks: {model: test-model}
  hooks:
    PreToolUse:
      - matcher: Bash
        # A short deadline: connection errors are retried while time remains.
        hooks: [{type: prompt, prompt: "Block destructive commands. $ARGUMENTS", timeout: 3}]
cases:
  - name: listing is allowed
    event: {session_id: s, hook_event_name: PreToolUse, cwd: /p, tool_name: Bash,
            tool_input: {command: ls}}
    expect: {decision: allow}
"""


def closed_port_url() -> str:
    """An address nothing listens on: connections are refused at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _prompthooks(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "prompthooks", *args], capture_output=True,
                          text=True, timeout=300, env={**os.environ, **(env or {})})


def _status(stdout: str) -> list[str]:
    return [line.split()[0] for line in stdout.splitlines()
            if line.startswith(("PASS ", "FAIL ", "ERROR "))]


@pytest.fixture
def unreachable() -> dict[str, str]:
    return {"PROMPTHOOKS_API_BASE": closed_port_url(), "PROMPTHOOKS_API_KEY": "k"}


@pytest.mark.slow
def test_unrecorded_case_is_an_error_not_a_pass(tmp_path: Path,
                                                unreachable: dict[str, str]) -> None:
    cases = tmp_path / "one.yaml"
    cases.write_text(ONE_POLICY)
    proc = _prompthooks("test", str(cases), env=unreachable)
    assert proc.returncode == 1, proc.stdout
    assert _status(proc.stdout) == ["ERROR"]
    assert "no recorded reply for hook" in proc.stdout
    assert proc.stdout.splitlines()[-1] == "0 passed, 0 failed, 1 error"
    as_json = json.loads(_prompthooks("test", "--json", str(cases), env=unreachable).stdout)
    assert (as_json["passed"], as_json["failed"], as_json["errors"]) == (0, 0, 1)
    assert as_json["cases"][0]["status"] == "error"


@pytest.mark.slow
def test_record_against_an_unreachable_model_fails(tmp_path: Path,
                                                   unreachable: dict[str, str]) -> None:
    cases = tmp_path / "one.yaml"
    cases.write_text(ONE_POLICY)
    proc = _prompthooks("test", "--record", str(cases), env=unreachable)
    assert proc.returncode == 1, proc.stdout
    assert _status(proc.stdout) == ["ERROR"]
    assert "1 model call, 1 failed" in proc.stdout
    assert "model call failed: inline prompt" in proc.stdout
    assert not (tmp_path / "one.cassette.yaml").exists()


@pytest.mark.slow
def test_rerecord_against_an_unreachable_model_fails(tmp_path: Path,
                                                     unreachable: dict[str, str]) -> None:
    cases = tmp_path / "one.yaml"
    cases.write_text(ONE_POLICY.replace("timeout: 3", "timeout: 60"))  # time to load litellm
    server = serve()
    model = next(server)
    model.script(verdict(True))
    recorded = _prompthooks("test", "--record", str(cases),
                            env={"PROMPTHOOKS_API_BASE": model.url})
    next(server, None)
    assert recorded.returncode == 0, recorded.stdout
    assert "1 model call, 0 failed" in recorded.stdout
    cases.write_text(ONE_POLICY)  # the same request (a hook's timeout is not part of the key)
    proc = _prompthooks("test", "--rerecord", str(cases), env=unreachable)
    assert proc.returncode == 1, proc.stdout
    assert "1 model call, 1 failed" in proc.stdout
    assert "0 recorded replies drifted (of 0 answered)" in proc.stdout
    assert _status(proc.stdout) == ["ERROR"]


@pytest.mark.slow
def test_a_case_may_expect_a_hook_error(tmp_path: Path) -> None:
    cases = tmp_path / "closed.yaml"
    cases.write_text("""
config:
  hooks:
    PreToolUse:
      - hooks:
          - {type: command, command: "exit 3", failClosed: true}
cases:
  - name: a crashing fail-closed hook blocks
    event: {session_id: s, hook_event_name: PreToolUse, cwd: /p, tool_name: Bash,
            tool_input: {command: ls}}
    expect: {decision: deny, error: true}
  - name: only an error is expected
    event: {session_id: s, hook_event_name: PreToolUse, cwd: /p, tool_name: Bash,
            tool_input: {command: ls}}
    expect: {error: true}
  - name: without the key the same case is an error
    event: {session_id: s, hook_event_name: PreToolUse, cwd: /p, tool_name: Bash,
            tool_input: {command: ls}}
    expect: {decision: deny}
""")
    proc = _prompthooks("test", str(cases))
    assert _status(proc.stdout) == ["PASS", "PASS", "ERROR"], proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1] == "2 passed, 0 failed, 1 error"
    assert proc.returncode == 1


@pytest.mark.slow
def test_expecting_an_error_fails_when_every_hook_answers(tmp_path: Path) -> None:
    cases = tmp_path / "fine.yaml"
    cases.write_text("""
config: {hooks: {PreToolUse: [{hooks: [{type: command, command: "cat >/dev/null"}]}]}}
cases:
  - name: nothing fails
    event: {session_id: s, hook_event_name: PreToolUse, tool_name: Bash,
            tool_input: {command: ls}}
    expect: {error: true}
""")
    proc = _prompthooks("test", str(cases))
    assert _status(proc.stdout) == ["FAIL"] and proc.returncode == 1
    assert "expected a hook to fail, every hook answered" in proc.stdout


def test_assert_decision_fails_on_an_unjudged_hook(tmp_path: Path) -> None:
    config = {"prompthooks": {"model": "test-model"}, "hooks": {"PreToolUse": [
        {"hooks": [{"type": "prompt", "prompt": "Block destructive commands. $ARGUMENTS"}]}]}}
    outcome = run(claude_bash("ls"), config=config, cassette=tmp_path / "empty.yaml")
    assert outcome.decision.permission is None  # the merged answer alone would look fine
    with pytest.raises(AssertionError, match=r"not judged: hook 'inline prompt' .*no recorded reply"):
        assert_decision(outcome, "allow")
    with pytest.raises(AssertionError, match="not judged"):
        assert_judged(outcome)
    assert_decision(outcome, "allow", allow_errors=True)


@pytest.mark.slow
def test_eval_counts_errored_rows_apart(tmp_path: Path, unreachable: dict[str, str]) -> None:
    dataset = tmp_path / "rows.jsonl"
    dataset.write_text("".join(json.dumps({"id": f"r{i}", "event": claude_bash(cmd),
                                           "expected": label}) + "\n"
                               for i, (cmd, label) in enumerate([("ls", "allow"),
                                                                 ("rm -rf ~", "deny")])))
    config = tmp_path / "hooks.json"
    config.write_text(json.dumps({"prompthooks": {"model": "test-model"}, "hooks": {
        "PreToolUse": [{"hooks": [{"type": "prompt", "prompt": "Block. $ARGUMENTS",
                                   "timeout": 3}]}]}}))
    proc = _prompthooks("eval", str(dataset), "--config", str(config), "--json",
                        env=unreachable)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    (report,) = json.loads(proc.stdout)
    overall = report["overall"]
    assert overall["confusion"] == {"tp": 0, "fp": 0, "fn": 0, "tn": 0}
    assert overall["errors"] == 2 and overall["precision"] is None
    assert all(re.match("hook 'inline prompt'", problem) for row in report["rows"]
               for problem in row["problems"])
    assert {row["decision"] for row in report["rows"]} == {"error"}
