"""Real-shaped transcripts of the three hosts, written as the hosts write them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# A key a tool printed: it must never reach the model.
LEAKED_KEY = "sk-ant-api03-LeakedByAToolOutput0123456789abcdef"
Step = tuple[str, Any]  # ("user", text) ("assistant", text) ("call", (tool, input))
#                          ("result", (output, is_error))


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def claude_lines(steps: Sequence[Step], session: str = "s-1") -> list[dict[str, Any]]:
    """Claude Code's session log lines (one API response split over lines, as it does)."""
    out: list[dict[str, Any]] = [{"type": "summary", "summary": "Session", "leafUuid": "u0"}]
    call = 0
    for n, (kind, value) in enumerate(steps):
        base = {"parentUuid": f"u{n}", "isSidechain": False, "userType": "external",
                "cwd": "/home/dev/app", "sessionId": session, "version": "2.1.150",
                "gitBranch": "main", "uuid": f"u{n + 1}",
                "timestamp": f"2026-11-24T05:{n % 60:02d}:00.000Z"}
        if kind == "user":
            out.append({**base, "type": "user", "message": {"role": "user", "content": value}})
        elif kind == "assistant":
            out.append({**base, "type": "assistant", "message": {
                "role": "assistant", "model": "claude-sonnet-4-5",
                "content": [{"type": "thinking", "thinking": "private", "signature": "x"},
                            {"type": "text", "text": value}]}})
        elif kind == "call":
            call += 1
            tool, tool_input = value
            out.append({**base, "type": "assistant", "message": {
                "role": "assistant", "content": [{"type": "tool_use", "id": f"toolu_{call}",
                                                  "name": tool, "input": tool_input}]}})
        else:
            output, failed = value
            out.append({**base, "type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": f"toolu_{call}", "content": output,
                 "is_error": failed}]},
                "toolUseResult": {"stdout": output, "stderr": "", "interrupted": False}})
    return out


def claude_transcript(home: Path, steps: Sequence[Step], name: str = "s-1") -> Path:
    lines = claude_lines(steps, name)
    return _write(home / ".claude" / "projects" / "-home-dev-app" / f"{name}.jsonl",
                  "".join(json.dumps(line) + "\n" for line in lines))


def cursor_lines(steps: Sequence[Step]) -> list[dict[str, Any]]:
    """Cursor's JSONL agent transcript: no tool results (Cursor keeps them elsewhere)."""
    out: list[dict[str, Any]] = []
    for kind, value in steps:
        if kind == "user":
            out.append({"role": "user", "message": {"content": [{"type": "text", "text":
                "<timestamp>Monday, Nov 24, 2026</timestamp>\n<user_query>\n" + value
                + "\n</user_query>"}]}})
            out.append({"role": "user", "message": {"content": [
                {"type": "text", "text": "<recommended_plugins>none</recommended_plugins>"}]}})
        elif kind == "assistant":
            out.append({"role": "assistant", "message": {"content": [
                {"type": "thinking", "thinking": "private"}, {"type": "text", "text": value}]}})
            out.append({"type": "turn_ended", "status": "success"})
        elif kind == "call":
            tool, tool_input = value
            out.append({"role": "assistant", "message": {"content": [
                {"type": "tool_use", "name": tool, "input": tool_input}]}})
    return out


def cursor_transcript(home: Path, steps: Sequence[Step], name: str = "c-1") -> Path:
    folder = home / ".cursor" / "projects" / "home-dev-app" / "agent-transcripts" / name
    return _write(folder / f"{name}.jsonl",
                  "".join(json.dumps(line) + "\n" for line in cursor_lines(steps)))


def cline_messages(steps: Sequence[Step], session: str = "1784094124598_rruoq") -> dict[str, Any]:
    """Cline's SDK session history: one JSON document, tool results in user messages."""
    messages: list[dict[str, Any]] = []
    call = 0
    last: tuple[str, Any] = ("run_commands", {})
    for n, (kind, value) in enumerate(steps):
        if kind == "user":
            messages.append({"id": f"msg_{n}", "role": "user", "content": [
                {"type": "text", "text": value + "\n\n<environment_details>\n# Open tabs\n"
                 "src/app.ts\n</environment_details>"}]})
        elif kind == "assistant":
            messages.append({"id": f"msg_{n}", "role": "assistant", "content": [
                {"type": "text", "text": value}], "ts": 1783376875985 + n,
                "modelInfo": {"id": "anthropic/claude-sonnet-4.5", "provider": "cline"}})
        elif kind == "call":
            call += 1
            tool, tool_input = value
            last = value
            messages.append({"id": f"msg_{n}", "role": "assistant", "content": [
                {"type": "tool_use", "id": f"toolu_{call}", "name": tool, "input": tool_input}]})
        else:
            output, failed = value
            messages.append({"id": f"msg_{n}_tool", "role": "user", "content": [
                {"type": "tool_result", "tool_use_id": f"toolu_{call}", "name": last[0],
                 "content": [{"query": json.dumps(last[1]), "result": output,
                              "success": not failed}]}]})
    return {"version": 1, "updated_at": "2026-11-24T05:42:04.818Z", "agent": "lead",
            "sessionId": session, "messages": messages}


def cline_history(home: Path, steps: Sequence[Step],
                  session: str = "1784094124598_rruoq") -> Path:
    folder = home / ".cline" / "data" / "sessions" / session
    return _write(folder / f"{session}.messages.json",
                  json.dumps(cline_messages(steps, session)))


UNFINISHED: list[Step] = [
    ("user", "Fix the date parser so that the test suite passes."),
    ("call", ("Bash", {"command": "pytest -q tests/test_dates.py"})),
    ("result", (f"ANTHROPIC_API_KEY={LEAKED_KEY}\n2 failed, 40 passed", True)),
    ("assistant", "I fixed the parser. Two tests in test_dates.py still fail; I will look at "
                  "them next."),
]
