"""The live model through every way a run reaches it: the direct path, litellm's, the resident
process, a Stop hook reading a real-shaped transcript. Each asserts the plumbing (answered
within the deadline, every reply a verdict, nothing secret on the wire), never the verdicts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from prompthooks.address import socket_name

from ..helpers import REPO, claude_bash, claude_event, reply, run_cli, write_json
from .conftest import (
    BUDGET,
    ENDPOINT_KEY,
    EVENTS,
    NAME,
    Exchange,
    Live,
    asked_schema,
    audited,
    library_config,
    prompt_rows,
    verdicts,
)

SCRIPT = str(Path(sys.executable).parent / "prompthooks")


def _session(run: Callable[[dict[str, Any]], subprocess.CompletedProcess[str]],
             live: Live, events: list[tuple[dict[str, Any], int]] = EVENTS) -> list[Exchange]:
    mark = live.mark()
    for event, _ in events:
        proc = run(event)
        assert proc.returncode == 0, proc.stderr
        assert "Traceback" not in proc.stderr
        reply(proc)  # the host's JSON (or nothing: no objection)
    exchanges = verdicts(live.since(mark))
    assert len(exchanges) == sum(hooks for _, hooks in events)
    return exchanges


def _run(cfg: Path, tmp_path: Path, env: dict[str, str] | None = None
         ) -> Callable[[dict[str, Any]], subprocess.CompletedProcess[str]]:
    return lambda event: run_cli(event, "--config", str(cfg), "--budget", str(BUDGET),
                                 cwd=tmp_path, env=env, timeout=BUDGET + 60)


def test_the_direct_path(tmp_path: Path, live: Live) -> None:
    # One event, two policies at once: eval --library (test_recordings.py) asks every shipped
    # policy on this same path.
    exchanges = _session(_run(library_config(tmp_path), tmp_path), live, EVENTS[:1])
    audited(len(exchanges))
    for exchange in exchanges:
        assert exchange.request["model"] == NAME
        assert b"openai/python" not in exchange.head.lower()  # not litellm's client


def test_litellm_s_path(tmp_path: Path, live: Live) -> None:
    # One event: eval --library asks every policy.
    exchanges = _session(_run(library_config(tmp_path), tmp_path, {"PROMPTHOOKS_DIRECT": "0"}),
                         live, EVENTS[1:2])
    audited(len(exchanges))
    for exchange in exchanges:
        assert b"openai/python" in exchange.head.lower()  # the OpenAI SDK litellm drives


def test_a_stop_hook_on_a_real_transcript_sends_nothing_secret(
        tmp_path: Path, live: Live, isolated_home: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The conversation is context and passes the redaction pass before it is sent; the
    environment's secrets are never sent; the endpoint's key goes only in its header. The
    event itself is sent as it is (a policy must see what it judges): its marker is the
    canary that the request was the one built from this event and transcript."""
    planted = "ghp_" + "R" * 36  # GitHub's token format
    aws = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    monkeypatch.setenv("GITHUB_TOKEN", planted)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", aws)
    shipped = REPO / "prompts" / "tests" / "transcripts" / "claude-unfinished.jsonl"
    lines = shipped.read_text().splitlines()
    # A tool result in the transcript that prints a token, and a line only the transcript has.
    lines.insert(3, json.dumps({
        "parentUuid": "u2", "type": "user", "uuid": "u2b", "sessionId": "s",
        "message": {"role": "user", "content": [{
            "type": "tool_result", "tool_use_id": "toolu_1",
            "content": f"TRANSCRIPT-CANARY-41 export GITHUB_TOKEN={planted} token {aws}"}]}}))
    transcript = isolated_home / ".claude" / "projects" / "-home-dev-app" / "s.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text("\n".join(lines) + "\n")
    event = claude_event("Stop", cwd="/home/dev/app", transcript_path=str(transcript),
                         stop_hook_active=False,
                         last_assistant_message="EVENT-CANARY-17 Fixed one of the two tests.")
    mark = live.mark()
    proc = _run(library_config(tmp_path), tmp_path)(event)
    assert proc.returncode == 0, proc.stderr
    (exchange,) = verdicts(live.since(mark))
    schema = asked_schema(exchange)
    assert schema is not None
    assert "impossible" in schema["required"]  # a stop hook's verdict may say it
    sent = exchange.head + exchange.body
    assert b"EVENT-CANARY-17" in sent and b"TRANSCRIPT-CANARY-41" in sent  # the canaries
    for secret in (planted, aws):
        assert secret.encode() not in sent
    assert ENDPOINT_KEY.encode() not in exchange.body
    assert f"Bearer {ENDPOINT_KEY}".encode() in exchange.head
    audited(1)


def test_a_session_through_the_resident_process(
        tmp_path: Path, live: Live, monkeypatch: pytest.MonkeyPatch) -> None:
    """`prompthooks serve`, then a session of events through the thin client: each run is
    done by the resident process (a command hook beside the prompt hooks notes its parent)
    and every prompt hook is answered by the model. Two events: eval --library asks every
    policy."""
    monkeypatch.setenv("PROMPTHOOKS_WORKER", "1")
    who = tmp_path / "who"
    note = {"type": "command", "command": f"tr '\\0' ' ' < /proc/$PPID/cmdline >> {who}; "
                                          f"echo >> {who}; cat > /dev/null"}
    cfg = library_config(tmp_path, note)
    server = subprocess.Popen([SCRIPT, "serve", "--idle", "300"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        end = time.monotonic() + 120
        while not os.path.exists(socket_name(os.environ)):
            assert server.poll() is None and time.monotonic() < end, "serve did not listen"
            time.sleep(0.1)

        def run(event: dict[str, Any]) -> subprocess.CompletedProcess[str]:
            return subprocess.run([SCRIPT, "run", "--config", str(cfg), "--budget",
                                   str(BUDGET)], input=json.dumps(event), text=True,
                                  capture_output=True, cwd=tmp_path, timeout=BUDGET + 60)

        exchanges = _session(run, live, EVENTS[1:])
    finally:
        server.terminate()
        server.wait(30)
    ancestry = who.read_text().splitlines()
    assert len(ancestry) == 2 and all("serve" in line.split() for line in ancestry), ancestry
    audited(len(exchanges))


def test_a_deadline_too_short_for_the_model_fails_closed_in_time(
        tmp_path: Path, live: Live) -> None:
    """A fail-closed hook whose timeout the model may not meet: the run answers well before
    its budget, with the model's verdict or, past the deadline, a block by the failure
    policy; never an allow by default."""
    cfg = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "prompt", "prompt_file": "destructive-shell", "failClosed": True,
         "timeout": 1}]}]}})
    started = time.monotonic()
    proc = run_cli(claude_bash("rm -rf ~/"), "--config", str(cfg), "--budget", "60",
                   cwd=tmp_path, timeout=120)
    assert time.monotonic() - started < 45, proc.stderr
    output = reply(proc).get("hookSpecificOutput", {})
    row = prompt_rows()[-1]
    # The hook's own 1 s holds, whatever the model does: a verdict after it is a timeout.
    assert row["duration_ms"] < (1 + 2) * 1000, row
    if row["status"] == "ok":
        assert output.get("permissionDecision") in (None, "deny")
    else:
        assert output["permissionDecision"] == "deny", proc.stdout
        assert row["status"] in ("timeout", "error")
