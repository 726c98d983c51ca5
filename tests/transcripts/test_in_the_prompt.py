"""The conversation in a prompt hook's request, end to end: real `prompthooks run`
processes, real transcript files, and the fake model server's record of what it was asked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ..fake_model import FakeModel, verdict
from ..helpers import (
    claude_event,
    cline_event,
    cursor_event,
    file_modes_bind_root,
    reply,
    run_cli,
    run_in_process,
    write_json,
)
from .samples import (
    LEAKED_KEY,
    UNFINISHED,
    claude_transcript,
    cline_history,
    cursor_transcript,
)

POLICY = "The agent stops only when the task is done."


def _config(tmp_path: Path, event: str = "Stop", **handler: Any) -> Path:
    # A generous timeout: a busy machine's first litellm import must not time the hook out.
    fields = {"type": "prompt", "prompt": POLICY, "timeout": 120, **handler}
    return write_json(tmp_path / "hooks.json", {"hooks": {event: [{"hooks": [fields]}]}})


def _run(event: dict[str, Any], *args: str, **kwargs: Any) -> Any:
    return run_in_process(event, *args, **kwargs)


def _fenced(user: str) -> str:
    """What lies inside the event's fence of a user message."""
    start = user.index("<event-data-")
    return user[user.index("\n", start) + 1:user.rindex("</event-data-")]


@pytest.mark.slow
def test_claude_stop_sends_the_conversation_redacted_inside_the_fence(
        tmp_path: Path, isolated_home: Path, model: FakeModel) -> None:
    path = claude_transcript(isolated_home, UNFINISHED)
    model.script(verdict(False, "Two tests still fail; fix them."))
    event = claude_event("Stop", transcript_path=str(path), stop_hook_active=False,
                         last_assistant_message="Two tests still fail.")
    proc = _run(event, "--config", str(_config(tmp_path)))
    assert reply(proc) == {"decision": "block", "reason": "Two tests still fail; fix them."}
    (request,) = model.requests
    raw_body = json.dumps(request.body)
    assert LEAKED_KEY not in raw_body  # a key a tool printed never reaches the model
    fenced = _fenced(request.user)
    assert "[redacted]" in fenced
    lines = fenced.splitlines()
    assert json.loads(lines[0])["hook_event_name"] == "Stop"  # the event, then the conversation
    assert "read from the host's transcript" in fenced
    assert json.loads(lines[-1]) == {"role": "assistant", "text": UNFINISHED[-1][1]}
    assert {"role": "user", "text": UNFINISHED[0][1]} in [
        json.loads(line) for line in lines if line.startswith('{"role"')]
    # The system message holds none of it, and is the stop evaluator's.
    assert "date parser" not in request.system and "test_dates" not in request.system
    assert "stopping condition" in request.system and "evidence" in request.system


@pytest.mark.slow
def test_cursor_stop_reads_its_agent_transcript(tmp_path: Path, isolated_home: Path,
                                                model: FakeModel) -> None:
    path = cursor_transcript(isolated_home, [("user", "Add a CSV export"),
                                             ("call", ("Shell", {"command": "npm test"})),
                                             ("assistant", "I still need to write the tests.")])
    model.script(verdict(False, "Write the tests for the CSV export."))
    event = cursor_event("stop", status="completed", loop_count=0, transcript_path=str(path))
    cfg = write_json(tmp_path / "cursor.json", {"version": 1, "hooks": {"stop": [
        {"type": "prompt", "prompt": POLICY, "timeout": 120}]}})
    proc = _run(event, "--config", str(cfg))
    assert reply(proc) == {"followup_message": "Write the tests for the CSV export."}
    fenced = _fenced(model.requests[0].user)
    assert '{"role": "user", "text": "Add a CSV export"}' in fenced
    assert '"tool": "Shell"' in fenced and "recommended_plugins" not in fenced


@pytest.mark.slow
def test_cline_task_complete_finds_the_history_by_task_id(
        tmp_path: Path, isolated_home: Path, model: FakeModel) -> None:
    cline_history(isolated_home, UNFINISHED, "task-1")
    model.script(verdict(False, "Two tests still fail."))
    event = cline_event("TaskComplete", taskMetadata={"taskId": "task-1", "ulid": "",
                                                      "initialTask": "", "result": "Done"})
    proc = _run(event, "--config", str(_config(tmp_path)))  # one config serves every host
    assert reply(proc) == {"cancel": True, "errorMessage": "Two tests still fail."}
    fenced = _fenced(model.requests[0].user)
    assert "Fix the date parser" in fenced and LEAKED_KEY not in fenced
    assert "environment_details" not in fenced


@pytest.mark.slow
def test_the_event_and_the_conversation_share_the_event_budget(
        tmp_path: Path, isolated_home: Path, model: FakeModel) -> None:
    steps = [("user", "the task")] + [("result", ("z" * 1900, False))] * 200
    steps.append(("assistant", "last words"))
    path = claude_transcript(isolated_home, steps)
    event = claude_event("Stop", transcript_path=str(path), last_assistant_message="L" * 50_000)
    _run(event, "--config", str(_config(tmp_path, max_event_chars=6000)))
    fenced = _fenced(model.requests[0].user)
    assert len(fenced) <= 6000
    assert "earlier entries left out" in fenced and "the task" in fenced
    assert fenced.rstrip().endswith('"last words"}')
    assert "more characters cut]" in fenced.splitlines()[0]  # the event got at most half


@pytest.mark.slow
def test_transcript_key_turns_it_on_off_and_bounds_it(tmp_path: Path, isolated_home: Path,
                                                     model: FakeModel) -> None:
    path = claude_transcript(isolated_home, UNFINISHED)
    off = _run(claude_event("Stop", transcript_path=str(path)),
                  "--config", str(_config(tmp_path, transcript=False)))
    assert off.returncode == 0 and "transcript" not in _fenced(model.requests[0].user).split(
        "\n", 1)[-1]
    event = claude_event("PreToolUse", transcript_path=str(path), tool_name="Bash",
                         tool_input={"command": "git push"})
    _run(event, "--config", str(_config(tmp_path, "PreToolUse")))
    assert "read from the host's transcript" not in model.requests[1].user  # off by default
    _run(event, "--config", str(_config(tmp_path, "PreToolUse", transcript=2)))
    fenced = _fenced(model.requests[2].user)
    assert fenced.count('{"role"') == 3  # the last two entries and the pinned request
    assert "conversation read from the host's transcript" in model.requests[2].system


def test_bad_transcript_key_is_a_config_error(tmp_path: Path) -> None:
    proc = _run(claude_event("Stop"), "--config", str(_config(tmp_path, transcript=-3)))
    assert proc.returncode == 1 and "transcript" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.slow
def test_missing_or_unreadable_transcript_still_judges_and_says_so_in_debug(
        tmp_path: Path, isolated_home: Path, model: FakeModel) -> None:
    missing = isolated_home / ".claude" / "projects" / "p" / "gone.jsonl"
    proc = _run(claude_event("Stop", transcript_path=str(missing)),
                "--config", str(_config(tmp_path)), env={"PROMPTHOOKS_DEBUG": "1"})
    assert proc.returncode == 0 and len(model.requests) == 1
    assert "not read: the transcript file does not exist" in proc.stderr
    assert "the conversation could not be read" in model.requests[0].user
    locked = claude_transcript(isolated_home, UNFINISHED)
    locked.chmod(0)
    # A process of its own: the file modes are bound for it alone.
    proc = run_cli(claude_event("Stop", transcript_path=str(locked)),
                   "--config", str(_config(tmp_path)), env={"PROMPTHOOKS_DEBUG": "1"},
                   preexec_fn=file_modes_bind_root)
    assert proc.returncode == 0 and len(model.requests) == 2
    assert "permission denied" in proc.stderr and "Traceback" not in proc.stderr
    cut = claude_transcript(isolated_home, UNFINISHED, "cut")
    cut.write_text(cut.read_text() + '{"type": "user", "mess')
    proc = _run(claude_event("Stop", transcript_path=str(cut)),
                   "--config", str(_config(tmp_path)), env={"PROMPTHOOKS_DEBUG": "1"})
    assert "4 entries read (the transcript's last line is cut off" in proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize("attack", ["symlink", "outside", "hardlink"])
def test_a_planted_transcript_never_carries_another_file_into_the_prompt(
        tmp_path: Path, isolated_home: Path, model: FakeModel, attack: str) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text(json.dumps({"type": "user", "message": {"content": "TOP-SECRET-42"}})
                      + "\n")
    folder = isolated_home / ".claude" / "projects" / "p"
    folder.mkdir(parents=True)
    path = folder / "s.jsonl"
    if attack == "symlink":
        path.symlink_to(secret)
    elif attack == "hardlink":
        path.hardlink_to(secret)
    else:
        path = secret
    _run(claude_event("Stop", transcript_path=str(path)), "--config",
            str(_config(tmp_path)))
    assert "TOP-SECRET-42" not in json.dumps(model.requests[0].body)
    assert "the conversation could not be read" in model.requests[0].user
