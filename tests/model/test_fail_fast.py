"""Fail fast, say why: dead endpoints are not retried into the deadline and are remembered for
a while; Retry-After is honoured; each error status reads as one accurate line, on the direct
path and on litellm's."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from prompthooks.api import dispatch
from prompthooks.model import failures

from ..fake_model import Answer, FakeModel, error, serve_with_headers, verdict
from ..helpers import claude_bash, reply, run_cli, write_json

PATHS = ["direct", "litellm"]


def _config(tmp_path: Path, **handler: object) -> Path:
    return write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "prompt", "prompt": "Block deletions. $ARGUMENTS", **handler}]}]}})


def _path(monkeypatch: pytest.MonkeyPatch, path: str) -> None:
    if path == "litellm":
        monkeypatch.setenv("PROMPTHOOKS_DIRECT", "0")


def _error_of(tmp_path: Path, **handler: object) -> str:
    outcome = dispatch(claude_bash("rm -rf /"), config_paths=[str(_config(tmp_path, **handler))],
                       budget=60)
    (result,) = outcome.decision.results
    assert result.failed, result
    return result.error or ""


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("path", PATHS)
def test_a_refused_connection_is_tried_once_and_remembered(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: str) -> None:
    _path(monkeypatch, path)
    monkeypatch.setenv("PROMPTHOOKS_API_BASE", f"http://127.0.0.1:{_closed_port()}/v1")
    monkeypatch.setenv("PROMPTHOOKS_MODEL", "test-model")
    first = _error_of(tmp_path, timeout=20)
    assert first == ("cannot connect to the model endpoint (connection refused) "
                     "(test-model, 1 attempt)")
    second = _error_of(tmp_path, timeout=20)
    assert second.startswith("cannot connect to the model endpoint (connection refused) "
                             "(test-model; seen ")
    assert f"not tried again for {failures.DEAD_SECONDS:g} s" in second


@pytest.mark.parametrize("path", PATHS)
def test_a_host_that_does_not_resolve_is_tried_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: str) -> None:
    _path(monkeypatch, path)
    monkeypatch.setenv("PROMPTHOOKS_API_BASE", "http://nonexistent.invalid/v1")
    monkeypatch.setenv("PROMPTHOOKS_MODEL", "test-model")
    assert _error_of(tmp_path, timeout=20) == (
        "cannot connect to the model endpoint (its host name does not resolve) "
        "(test-model, 1 attempt)")


def test_a_remembered_dead_endpoint_answers_the_next_process_with_the_same_policy(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two `prompthooks run` processes: the second does not try the endpoint at all, and a
    fail-closed hook still blocks; a live endpoint at another address is not affected."""
    dead_base = f"http://127.0.0.1:{_closed_port()}/v1"
    cfg = _config(tmp_path, failClosed=True, timeout=20)
    env = {"PROMPTHOOKS_API_BASE": dead_base, "PROMPTHOOKS_MODEL": "test-model"}
    for attempt in ("1 attempt", "seen "):
        proc = run_cli(claude_bash("rm -rf /"), "--config", str(cfg), cwd=tmp_path, env=env)
        output = reply(proc)["hookSpecificOutput"]
        assert output["permissionDecision"] == "deny", proc.stderr
        assert output["permissionDecisionReason"] == (
            f"inline prompt cannot judge: nothing answers at {dead_base} (connection refused) "
            "(run: prompthooks doctor)")
        assert attempt in proc.stderr  # the first tried it, the second remembered it
        assert "Traceback" not in proc.stderr
    stored = list(tmp_path.parent.rglob("dead-*.json"))
    assert stored and all("test-key" not in p.read_text() for p in stored)


def test_the_memory_lasts_only_its_documented_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    env = dict(os.environ)
    failures.remember_dead("http://127.0.0.1:9/v1", "cannot connect", env)
    assert failures.recall_dead("http://127.0.0.1:9/v1", env) is not None
    monkeypatch.setattr(time, "time", lambda: 10**10)  # far past DEAD_SECONDS
    assert failures.recall_dead("http://127.0.0.1:9/v1", env) is None


@pytest.fixture
def retry_after(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
                ) -> Iterator[FakeModel]:
    for state in serve_with_headers({"Retry-After": str(request.param)}):
        monkeypatch.setenv("PROMPTHOOKS_API_BASE", state.url)
        monkeypatch.setenv("PROMPTHOOKS_MODEL", "test-model")
        yield state


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("retry_after", [60], indirect=True)
def test_a_retry_after_past_the_deadline_is_not_waited_for(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, retry_after: FakeModel,
        path: str) -> None:
    _path(monkeypatch, path)
    retry_after.script(error(429, "slow down"))
    line = _error_of(tmp_path, timeout=5)
    assert line == ("rate limited (429) (test-model, 1 attempt); it asks to wait 60 s, past "
                    "the hook's deadline: slow down")
    assert len(retry_after.requests) == 1


@pytest.mark.parametrize("retry_after", [1], indirect=True)
def test_a_retry_after_that_fits_is_waited_for(
        tmp_path: Path, retry_after: FakeModel) -> None:
    retry_after.script(error(429), verdict(False, "after the wait"))
    outcome = dispatch(claude_bash("rm -rf /"), budget=60,
                       config_paths=[str(_config(tmp_path, timeout=20))])
    assert outcome.decision.reason == "after the wait"
    assert len(retry_after.requests) == 2


GATEWAY = [
    (error(401, "Invalid proxy server token passed"),
     "authentication failed (401); check the API key", "Invalid proxy server token passed"),
    (error(403, "team not allowed to access model"),
     "permission denied (403); the key may not use this model or endpoint",
     "team not allowed to access model"),
    (error(404, "model not found"), "not found (404); check the model name and api_base",
     "model not found"),
    (error(422, "messages: field required"), "the request was refused as invalid (422)",
     "messages: field required"),
    (error(400, "No connected db."),
     "the LiteLLM Proxy has no database connected, so it cannot check keys or budgets (400)",
     "No connected db."),
    (error(500, "No connected db."),
     "the LiteLLM Proxy has no database connected, so it cannot check keys or budgets (500)",
     "No connected db."),
    (error(400, "Budget has been exceeded! Current cost: 1.2, Max budget: 1.0"),
     "the LiteLLM Proxy's budget for this key or team is exceeded (400)",
     "Budget has been exceeded! Current cost: 1.2, Max budget: 1.0"),
]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("answer, what, said", GATEWAY)
def test_each_error_status_reads_as_one_accurate_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: FakeModel, path: str,
        answer: Answer, what: str, said: str) -> None:
    _path(monkeypatch, path)
    model.script(answer)
    line = _error_of(tmp_path, timeout=10)
    assert line == f"{what} (test-model, 1 attempt): {said}"
    assert len(model.requests) == 1  # none of these is retried


@pytest.mark.parametrize("path", PATHS)
def test_an_html_gateway_page_is_not_quoted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: FakeModel, path: str) -> None:
    _path(monkeypatch, path)
    model.script(Answer(status=404, body="<html><body><h1>404 Not Found</h1>" + "x" * 5000,
                        content_type="text/html"))
    assert _error_of(tmp_path, timeout=10) == (
        "not found (404); check the model name and api_base (test-model, 1 attempt)")


def test_a_planted_dead_endpoint_memory_cannot_open_a_gate(
        tmp_path: Path, model: FakeModel) -> None:
    """The memory lives in the user's runtime folder, which an agent can write: a record it
    plants for a live endpoint makes a fail-closed hook block at once (its own policy), never
    allow; the model is not asked."""
    import os

    model.script(verdict(True))  # the model would have allowed it: the record must not
    failures.remember_dead(failures.endpoint_name(model.url, "test-model"), "cannot connect (planted)",
                  dict(os.environ))
    cfg = _config(tmp_path, failClosed=True, timeout=20)
    proc = run_cli(claude_bash("rm -rf /"), "--config", str(cfg), cwd=tmp_path)
    output = reply(proc)["hookSpecificOutput"]
    assert output["permissionDecision"] == "deny", proc.stderr
    assert "planted" in output["permissionDecisionReason"]
    assert model.requests == []


def test_a_managed_hook_never_reads_the_dead_endpoint_memory(
        tmp_path: Path, model: FakeModel) -> None:
    import os

    model.script(verdict(False, "managed model says no"))
    failures.remember_dead(failures.endpoint_name(model.url, "policy-model"), "cannot connect (planted)",
                  dict(os.environ))
    etc = write_json(tmp_path / "etc" / "hooks.json", {
        "prompthooks": {"model": "policy-model", "api_base": model.url},
        "hooks": {"PreToolUse": [{"hooks": [
            {"type": "prompt", "prompt": "Judge it. $ARGUMENTS", "failClosed": True}]}]}})
    proc = run_cli(claude_bash("rm -rf /"), "--managed-dir", str(etc.parent), cwd=tmp_path)
    output = reply(proc)["hookSpecificOutput"]
    assert output["permissionDecisionReason"] == "managed model says no", proc.stderr
    assert len(model.requests) == 1


def _imports_of(argv: list[str], data: str, env: dict[str, str]) -> tuple[set[str], str]:
    """The modules a fresh ``python -m prompthooks ARGV`` imports (its run's child too), and
    what it printed."""
    import os
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "prompthooks", *argv],
                          input=data, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PROMPTHOOKS_RESIDENT": "0", **env})
    return ({line.rsplit("|", 1)[1].strip() for line in proc.stderr.splitlines()
             if line.startswith("import time:") and "|" in line}, proc.stdout)


def test_no_event_loop_is_loaded_until_a_call_is_made(tmp_path: Path, model: FakeModel) -> None:
    """The shared loop's asyncio is loaded by a call, not by the modules around it: validate
    and a replayed prompt hook (which read failures.py for its lines and its dead endpoints)
    never import it."""
    import json

    model.script(verdict(False, "no deletions"))
    cfg, event = str(_config(tmp_path)), json.dumps(claude_bash("rm -rf /"))
    tape = tmp_path / "tape.yaml"
    called, said = _imports_of(["run", "--config", cfg, "--record", str(tape)], event, {})
    assert len(model.requests) == 1 and "no deletions" in said  # a call made...
    assert "asyncio" in called  # ...loads it: the check sees it when it is there
    replayed, said = _imports_of(["run", "--config", cfg, "--replay", str(tape)], event, {})
    assert len(model.requests) == 1 and "no deletions" in said  # the recorded verdict
    assert "prompthooks.model.failures" in replayed
    assert "asyncio" not in replayed
    checked, _ = _imports_of(["validate", "--config", cfg], "", {})
    assert "prompthooks.model.failures" in checked and "asyncio" not in checked
