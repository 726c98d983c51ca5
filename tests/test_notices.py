"""A prompt hook that cannot judge for a reason of set-up (here: no key at all) is never
silently off: the person is told in the host's own message, once per session and again when
the reason changes, without the verdict changing; a fail-closed one blocks with one short
line naming the hook and the fix, never a provider's error text. Real `prompthooks run`
processes, a real config, no key anywhere."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from .helpers import (
    approve,
    claude_bash,
    cline_event,
    cursor_event,
    reply,
    run_in_process,
    write_json,
)

NOTICE = ("prompthooks: 'destructive-shell' cannot judge: no key for anthropic (run: "
          "prompthooks keys set anthropic); it lets everything through until then")
BLOCK = ("destructive-shell cannot judge: no key for anthropic (run: prompthooks keys set "
         "anthropic)")


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL",
                "ANTHROPIC_SMALL_FAST_MODEL", "ANTHROPIC_DEFAULT_HAIKU_MODEL"):
        monkeypatch.delenv(var, raising=False)


def _project(tmp_path: Path, fail_closed: bool, model: str | None = None) -> Path:
    """The starter's policy, on the default model (a hosted one that needs a key)."""
    project = tmp_path / "proj"
    handler: dict[str, Any] = {"type": "prompt", "name": "destructive-shell",
                               "prompt_file": "destructive-shell", "timeout": 20,
                               "failClosed": fail_closed}
    if model:
        handler["model"] = model
    write_json(project / ".prompthooks" / "hooks.json",
               {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [handler]}]}})
    approve(project / ".prompthooks")
    return project


def _unjudged(stderr: str) -> None:
    """The canary: the hook ran and reached the model's set-up, which found no key."""
    assert "hook 'destructive-shell'" in stderr, stderr
    assert "no key for anthropic: ANTHROPIC_API_KEY is not set and no key is stored" in stderr


def test_claude_code_is_told_once_per_session_and_the_verdict_is_unchanged(
        tmp_path: Path) -> None:
    project = _project(tmp_path, fail_closed=False)
    event = claude_bash("rm -rf ~", cwd=str(project))
    first = run_in_process(event, cwd=project)
    _unjudged(first.stderr)
    assert first.returncode == 0
    assert reply(first) == {"systemMessage": NOTICE}  # no permissionDecision: unchanged
    again = run_in_process(event, cwd=project)
    _unjudged(again.stderr)
    assert (again.returncode, again.stdout) == (0, "")  # told once in this session
    other = run_in_process({**event, "session_id": "sess-2"}, cwd=project)
    assert reply(other) == {"systemMessage": NOTICE}


def test_told_again_in_the_same_session_when_the_reason_changes(tmp_path: Path) -> None:
    project = _project(tmp_path, fail_closed=False)
    event = claude_bash("rm -rf ~", cwd=str(project))
    assert reply(run_in_process(event, cwd=project)) == {"systemMessage": NOTICE}
    project = _project(tmp_path, fail_closed=False, model="openai/gpt-4.1-mini")
    changed = run_in_process(event, cwd=project)
    assert "no key for openai" in changed.stderr
    assert reply(changed) == {"systemMessage": NOTICE.replace("anthropic", "openai")}


def test_a_broken_notice_record_is_not_trusted_and_the_notice_still_shows(
        tmp_path: Path, isolated_home: Path) -> None:
    """A FIFO where the record should be (an agent can write the state folder) neither hangs
    the run nor silences the notice."""
    state = isolated_home / ".local" / "state" / "prompthooks"
    state.mkdir(parents=True)
    os.mkfifo(state / "notices.json")
    project = _project(tmp_path, fail_closed=False)
    proc = run_in_process(claude_bash("rm -rf ~", cwd=str(project)), cwd=project)
    _unjudged(proc.stderr)
    assert reply(proc) == {"systemMessage": NOTICE}


def test_claude_code_fail_closed_blocks_with_one_short_line(tmp_path: Path) -> None:
    """The README's fail-closed example with no key: a block (it is fail-closed), said in one
    line with the fix."""
    project = _project(tmp_path, fail_closed=True)
    proc = run_in_process(claude_bash("ls", cwd=str(project)), cwd=project)
    _unjudged(proc.stderr)
    out = reply(proc)
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert out["hookSpecificOutput"]["permissionDecisionReason"] == BLOCK
    assert "systemMessage" not in out  # the block says it already


def test_cursor_fail_open_and_fail_closed(tmp_path: Path) -> None:
    project = _project(tmp_path, fail_closed=False)
    event = cursor_event("preToolUse", str(project), tool_name="Shell",
                         tool_input={"command": "rm -rf ~"})
    proc = run_in_process(event, cwd=project)
    _unjudged(proc.stderr)
    assert (proc.returncode, reply(proc)) == (0, {})  # no verdict: Cursor's own flow decides
    project = _project(tmp_path, fail_closed=True)
    proc = run_in_process({**event, "conversation_id": "conv-2"}, cwd=project)
    _unjudged(proc.stderr)
    assert reply(proc) == {"permission": "deny", "user_message": BLOCK, "agent_message": BLOCK}


def test_cursor_shows_the_notice_with_the_first_verdict_of_the_conversation(
        tmp_path: Path) -> None:
    """Cursor reads a message for the person only with a verdict: the notice waits for one
    (another hook's), then goes with it, once."""
    project = _project(tmp_path, fail_closed=False)
    config = json.loads((project / ".prompthooks" / "hooks.json").read_text())
    config["hooks"]["PreToolUse"][0]["hooks"].append(
        {"type": "command", "command": "case \"$(cat)\" in *rm*) echo 'no deletes' >&2; "
                                       "exit 2;; esac"})
    write_json(project / ".prompthooks" / "hooks.json", config)
    approve(project / ".prompthooks")

    def event(command: str) -> dict[str, Any]:
        return cursor_event("preToolUse", str(project), tool_name="Shell",
                            tool_input={"command": command})

    quiet = run_in_process(event("ls"), cwd=project)
    _unjudged(quiet.stderr)
    assert reply(quiet) == {}  # no verdict: nowhere to say it
    proc = run_in_process(event("rm -rf ~"), cwd=project)
    _unjudged(proc.stderr)
    out = reply(proc)
    assert out["permission"] == "deny"
    assert out["user_message"] == "no deletes\n" + NOTICE
    again = run_in_process(event("rm -rf ~"), cwd=project)
    assert reply(again)["user_message"] == "no deletes"  # once


def test_cline_fail_open_and_fail_closed(tmp_path: Path) -> None:
    project = _project(tmp_path, fail_closed=False)
    event = cline_event("PreToolUse", str(project), toolName="execute_command",
                        parameters={"command": "rm -rf ~"})
    proc = run_in_process(event, cwd=project)
    _unjudged(proc.stderr)
    assert reply(proc) == {"cancel": False}  # its reply has no message without a cancel
    project = _project(tmp_path, fail_closed=True)
    proc = run_in_process({**event, "taskId": "task-2"}, cwd=project)
    _unjudged(proc.stderr)
    assert reply(proc) == {"cancel": True, "errorMessage": BLOCK}


@pytest.mark.slow
def test_log_and_doctor_show_unjudged_events_first(tmp_path: Path) -> None:
    import subprocess
    import sys

    project = _project(tmp_path, fail_closed=False)
    for session in ("s1", "s2"):
        proc = run_in_process({**claude_bash("rm -rf ~", cwd=str(project)), "session_id": session},
                       cwd=project)
        _unjudged(proc.stderr)

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "prompthooks", *args], cwd=project,
                              capture_output=True, text=True, timeout=120,
                              env={**os.environ, "CLAUDE_PROJECT_DIR": str(project)})

    log = cli("log")
    assert log.returncode == 0, log.stderr
    first = log.stdout.splitlines()[0]
    assert first.startswith("not judged: 'destructive-shell': no key for anthropic: 2 events "
                            "not judged (last "), log.stdout
    assert log.stdout.splitlines()[1].startswith("fix: prompthooks doctor")
    doctor = cli("doctor", "--offline", "--json")
    checks = json.loads(doctor.stdout)["checks"]
    assert checks[0]["check"] == "not judged" and checks[0]["status"] == "warn"
    assert "no key for anthropic: 2 events not judged" in checks[0]["detail"]
    assert "run: prompthooks keys set anthropic" in checks[0]["detail"]


@pytest.mark.slow
@pytest.mark.parametrize(("model", "fault"), [
    ("no-such-provider-model", "no model no-such-provider-model there (run: prompthooks "
                               "doctor)"),
    ("openai/test-model", "no model openai/test-model there (run: prompthooks doctor)")])
def test_an_unknown_model_blocks_fail_closed_in_one_line(tmp_path: Path, model: str,
                                                         fault: str) -> None:
    """A name litellm cannot place, and a model the endpoint answers 404 for."""
    from .fake_model import error, serve

    gen = serve()
    server = next(gen)
    server.script(error(404, "The model `test-model` does not exist"))
    try:
        project = _project(tmp_path, fail_closed=True, model=model)
        proc = run_in_process(claude_bash("ls", cwd=str(project)), cwd=project,
                       env={"OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "test-key"})
    finally:
        next(gen, None)
    assert proc.returncode == 0, proc.stderr
    # The canary: the call was made and met the fault (litellm's, or the server's 404).
    assert ("the model name is unknown" in proc.stderr if "/" not in model
            else "not found (404)" in proc.stderr and len(server.requests) == 1), proc.stderr
    out = reply(proc)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny"
    assert out["permissionDecisionReason"] == f"destructive-shell cannot judge: {fault}"
