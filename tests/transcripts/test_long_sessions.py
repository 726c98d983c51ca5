"""Long sessions end to end: real `prompthooks run` Stop events on multi-MB transcripts shaped
as the hosts write them, and what the fake model server was asked. The request, the last
compaction's summary and Cline's task lie further back than the tail read in full / the
entries kept: each test first shows that they do (the canary), then that the judge got them,
labelled for what they are."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from prompthooks import hosts, transcripts
from prompthooks.transcripts import reading
from prompthooks.transcripts.conversation import DEFAULT_ENTRIES, HEADING

from ..fake_model import FakeModel, verdict
from ..helpers import claude_event, cline_event, cursor_event, reply, run_in_process, write_json
from .long_sessions import (
    EARLIER_REQUEST,
    FEEDBACK,
    FINAL_WORDS,
    FORGED,
    FORGED_TASK,
    NOTIFICATION,
    PRE_COMPACTION,
    REQUEST,
    SUMMARY_MARK,
    TASK,
    ClaudeLog,
    claude_long_session,
    cline_long_history,
)

POLICY = "The agent stops only when the task the user asked for is done."


def _config(tmp_path: Path) -> Path:
    # A generous timeout: a busy machine's first litellm import must not time the hook out.
    return write_json(tmp_path / "hooks.json", {"hooks": {"Stop": [{"hooks": [
        {"type": "prompt", "prompt": POLICY, "timeout": 120}]}]}})


def _run(event: dict[str, Any], tmp_path: Path) -> Any:
    return run_in_process(event, "--config", str(_config(tmp_path)))


def _fenced(user: str) -> list[str]:
    """The lines inside the event's fence of a user message."""
    start = user.index("<event-data-")
    return user[user.index("\n", start) + 1:user.rindex("</event-data-")].splitlines()


def _entries(lines: list[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in lines if line.startswith('{"role"')]


def _index(lines: list[str], text: str) -> int:
    return next(i for i, line in enumerate(lines) if text in line)


@pytest.mark.slow
def test_claude_long_session_keeps_the_request_and_the_summary_however_far_back(
        tmp_path: Path, isolated_home: Path, model: FakeModel) -> None:
    path, log = claude_long_session(isolated_home)
    size = path.stat().st_size
    data = path.read_bytes()
    # Canary: the request and the summary lie before the tail read in full, which holds
    # neither (the judge once saw a task notification as the latest "user" words).
    assert size - log.offsets["request"] > 2 * 1024 * 1024
    assert size - log.offsets["summary"] > reading.TAIL_BYTES
    assert size - log.offsets["forged"] > reading.TAIL_BYTES  # the search reads it
    tail = data[-reading.TAIL_BYTES:]
    assert REQUEST.encode() not in tail and SUMMARY_MARK.encode() not in tail
    assert FORGED.encode() in data[:-reading.TAIL_BYTES]
    assert b"<task-notification>" in data.splitlines()[-1]
    model.script(verdict(False, "Three invoice tests still fail."))
    event = claude_event("Stop", transcript_path=str(path), stop_hook_active=False,
                         last_assistant_message=FINAL_WORDS)
    proc = _run(event, tmp_path)
    assert reply(proc) == {"decision": "block", "reason": "Three invoice tests still fail."}
    lines = _fenced(model.requests[0].user)
    entries = _entries(lines)
    users = [e["text"] for e in entries if e["role"] == "user"]
    assert users == [REQUEST]  # the request, without the reminder attached to it
    assert "[prompthooks: kept from earlier: the latest user request]" in lines
    (summary,) = [e for e in entries if e["role"] == "summary"]
    assert SUMMARY_MARK in summary["text"] and "continued from a previous" in summary["text"]
    # Oldest first: the request came before the compaction, the summary before the tail.
    assert (_index(lines, f'"text": "{REQUEST}"') < _index(lines, SUMMARY_MARK)
            < _index(lines, f'"text": "{FINAL_WORDS}"'))
    notes = lines[lines.index(HEADING) + 1]
    assert "last compaction is left out; its summary is kept" in notes
    assert "[prompthooks: entries left out here]" in lines
    # Notifications are the host's words, tool output is a tool's; nothing before the
    # compaction, no earlier request, no forged line.
    hosts_said = [e["text"] for e in entries if e["role"] == "host"]
    assert any(NOTIFICATION in text for text in hosts_said)
    assert not any("task-notification" in text for text in users)
    assert {"role": "tool_result", "tool": "Bash", "error": True,
            "text": "3 failed, 41 passed"} in entries
    text = "\n".join(lines)
    for absent in (PRE_COMPACTION, EARLIER_REQUEST, "FORGED", "opened src/billing"):
        assert absent not in text, absent


def _read(host: str, raw: dict[str, Any]) -> transcripts.Conversation:
    return transcripts.read(hosts.get(host).transcript, raw, "Stop")


def test_claude_request_after_the_compaction_comes_after_its_summary(
        isolated_home: Path) -> None:
    log = ClaudeLog()
    log.human(EARLIER_REQUEST)
    log.work(300_000, PRE_COMPACTION)
    log.compaction(SUMMARY_MARK)
    log.work(500_000, "AFTER")
    log.human(REQUEST, mark="request")
    log.work(2_000_000, "LATE-WORK")
    log.assistant(FINAL_WORDS)
    path = log.write(isolated_home)
    assert path.stat().st_size - log.offsets["request"] > reading.TAIL_BYTES  # canary
    conversation = _read("claude", {"transcript_path": str(path)})
    first = [(e.role, e.text) for e in conversation.entries[:2]]
    assert first[0][0] == "summary" and SUMMARY_MARK in first[0][1]
    assert first[1] == ("user", REQUEST)
    assert conversation.gaps == {1, 2}  # between them and before the tail, unread parts
    assert not any(EARLIER_REQUEST in e.text for e in conversation.entries)


def test_claude_compaction_in_the_tail_starts_the_conversation(isolated_home: Path) -> None:
    log = ClaudeLog()
    log.human(REQUEST, mark="request")
    log.work(1_500_000, PRE_COMPACTION)
    log.compaction(SUMMARY_MARK)
    log.tool("Bash", {"command": "npm test"}, "POST 1")
    log.assistant(FINAL_WORDS)
    path = log.write(isolated_home)
    assert path.stat().st_size - log.offsets["request"] > reading.TAIL_BYTES  # canary
    assert path.stat().st_size - log.offsets["boundary"] < reading.TAIL_BYTES
    conversation = _read("claude", {"transcript_path": str(path)})
    assert [e.role for e in conversation.entries] == ["user", "summary", "tool_call",
                                                      "tool_result", "assistant"]
    assert conversation.entries[0].text == REQUEST and conversation.gaps == {1}
    assert not any(PRE_COMPACTION in e.text for e in conversation.entries)


def test_the_search_further_back_is_bounded_and_says_so(
        isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = ClaudeLog()
    log.human(REQUEST)
    log.work(3_000_000, "WORK")
    log.assistant(FINAL_WORDS)
    path = log.write(isolated_home)
    raw = {"transcript_path": str(path)}
    # Canary: with the shipped bound the request, 3 MB back, is found.
    assert _read("claude", raw).entries[0].text == REQUEST
    monkeypatch.setattr(reading, "SEARCH_BYTES", 512 * 1024)
    conversation = _read("claude", raw)
    assert all(e.role != "user" for e in conversation.entries)
    assert any("request was not found in the last 1 MiB" in n for n in conversation.notes)


def test_a_line_too_long_to_keep_is_skipped_and_the_search_goes_on(
        isolated_home: Path) -> None:
    log = ClaudeLog()
    log.human(REQUEST)
    # A file read whole into one line, longer than a line kept (and than a step more).
    log.tool("Read", {"file_path": "/home/dev/billing/dump.sql"},
             "INSERT INTO invoices VALUES (1);\n" * (2 * reading.LINE_BYTES // 32))
    log.work(log.size + 1_200_000, "WORK")
    path = log.write(isolated_home)
    longest = max(log.lines, key=len)
    assert len(longest) > reading.LINE_BYTES + reading.STEP_BYTES  # canary
    conversation = _read("claude", {"transcript_path": str(path)})
    assert conversation.entries[0].text == REQUEST  # found past it, its line whole
    assert not any("INSERT INTO" in e.text for e in conversation.entries)


@pytest.mark.slow
def test_cursor_long_transcript_keeps_its_latest_query(tmp_path: Path, isolated_home: Path,
                                                       model: FakeModel) -> None:
    folder = isolated_home / ".cursor" / "projects" / "home-dev-app" / "agent-transcripts" / "c"
    folder.mkdir(parents=True)
    lines = [{"role": "user", "message": {"content": [{"type": "text", "text":
              f"<timestamp>Monday</timestamp>\n<user_query>\n{REQUEST}\n</user_query>"}]}}]
    for n in range(300):
        lines.append({"role": "assistant", "message": {"content": [
            {"type": "text", "text": f"step {n} " + "x" * 6000},
            {"type": "tool_use", "name": "Shell", "input": {"command": f"npm test {n}"}}]}})
    lines.append({"role": "assistant", "message": {"content": [
        {"type": "text", "text": FINAL_WORDS}]}})
    path = folder / "c.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert REQUEST.encode() not in path.read_bytes()[-reading.TAIL_BYTES:]  # canary
    model.script(verdict(True))
    event = cursor_event("stop", status="completed", loop_count=0, transcript_path=str(path))
    cfg = write_json(tmp_path / "cursor.json", {"version": 1, "hooks": {"stop": [
        {"type": "prompt", "prompt": POLICY, "timeout": 120}]}})
    proc = run_in_process(event, "--config", str(cfg))
    assert proc.returncode == 0, proc.stderr
    lines_sent = _fenced(model.requests[0].user)
    assert {"role": "user", "text": REQUEST} in _entries(lines_sent)
    assert "[prompthooks: kept from earlier: the latest user request]" in lines_sent


@pytest.mark.slow
def test_cline_tool_results_written_as_user_text_and_the_task_always_kept(
        tmp_path: Path, isolated_home: Path, model: FakeModel) -> None:
    _, messages = cline_long_history(isolated_home, "task-long")
    # Canary: the task is far more than the entries a stop hook keeps back, and tool
    # results are user-role text here, a forged task among them.
    assert len(messages) - 1 > 2 * DEFAULT_ENTRIES
    results = [b["text"] for m in messages if m["role"] == "user" for b in m["content"]
               if b["text"].startswith("[") and "] Result:" in b["text"]]
    assert len(results) > DEFAULT_ENTRIES
    assert any(FORGED_TASK in b["text"] for m in messages[-12:] if m["role"] == "user"
               for b in m["content"])
    model.script(verdict(False, "Use semicolons as the separator."))
    event = cline_event("TaskComplete", taskMetadata={"taskId": "task-long", "ulid": "",
                                                      "initialTask": "", "result": "Done"})
    event["taskId"] = "task-long"
    proc = _run(event, tmp_path)
    assert reply(proc) == {"cancel": True, "errorMessage": "Use semicolons as the separator."}
    lines = _fenced(model.requests[0].user)
    entries = _entries(lines)
    assert entries[0] == {"role": "user", "text": f"<task>\n{TASK}\n</task>"}
    assert ("[prompthooks: kept from earlier: the task, as the user first gave it]"
            in lines)
    users = [e["text"] for e in entries if e["role"] == "user"]
    assert FEEDBACK in users  # the user's reply to the completion, as the user's words
    for text in users:
        assert "Result:" not in text and FORGED_TASK not in text and "Stop now" not in text
    tools = {e.get("tool") for e in entries if e["role"] == "tool_result"}
    assert {"execute_command", "read_file", "attempt_completion"} <= tools
    (forged,) = [e for e in entries if FORGED_TASK in e["text"]]
    assert forged["role"] == "tool_result" and forged["tool"] == "read_file"
    assert "environment_details" not in "\n".join(lines)


def test_the_search_further_back_reads_the_file_opened_not_one_swapped_in(
        isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from prompthooks.hosts.claude import transcript as claude_transcript

    log = ClaudeLog()
    log.human(REQUEST)
    log.work(2_000_000, "WORK")
    path = log.write(isolated_home)
    planted = ClaudeLog()
    planted.human("TOP-SECRET-42")
    planted.work(2_000_000, "OTHER")
    other = planted.write(tmp_path)
    searched = reading.earlier_values
    swapped: list[bool] = []

    def swap_then_search(read: reading.Read, wanted: Any) -> Any:
        # Between the tail read and the search further back, another file takes the path.
        other.replace(path)
        swapped.append(True)
        return searched(read, wanted)

    monkeypatch.setattr(claude_transcript, "earlier_values", swap_then_search)
    conversation = _read("claude", {"transcript_path": str(path)})
    assert swapped and b"TOP-SECRET-42" in path.read_bytes()  # canary: the swap happened
    assert conversation.entries[0].text == REQUEST
    assert "TOP-SECRET-42" not in json.dumps([e.text for e in conversation.entries])


@pytest.mark.parametrize("step", [1, 3, 7, 64, 4096])
def test_lines_read_backwards_are_the_files_lines_newest_first(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: int) -> None:
    import random

    rng = random.Random(step)
    lines = [("x" * rng.choice([0, 1, 5, 30, 90])).encode() + str(i).encode()
             for i in range(300)]
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    monkeypatch.setattr(reading, "STEP_BYTES", step)
    monkeypatch.setattr(reading, "LINE_BYTES", 60)
    with reading.read_file(path, None, 500) as read:
        assert read.head_cut and read.offset < path.stat().st_size - 400  # canary
        before = path.read_bytes()[:read.offset].split(b"\n")
        got = list(reading.earlier_lines(read))
        assert read.searched_all and read.searched == read.offset
    # Every line before what was read in full, newest first; none over LINE_BYTES.
    assert got == [line for line in reversed(before) if line and len(line) <= 60]
    assert any(len(line) > 60 for line in before)  # some were long enough to skip
