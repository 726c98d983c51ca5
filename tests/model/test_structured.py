"""Structured verdicts: the verdict's JSON schema in the request, a refusal answered once
without it and remembered (in the process, and across runs for hooks that are not managed),
and cassette keys that do not depend on it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from prompthooks import paths
from prompthooks.api import dispatch
from prompthooks.model import verdict as model_verdict
from prompthooks.model.endpoint import Endpoint, ModelRequest
from prompthooks.model.recording import request_key

from ..fake_model import VERDICT_FORMAT, Answer, FakeModel, error, serve, verdict
from ..helpers import REPO, claude_bash, claude_event, reply, run_cli, write_json

REFUSAL = "Invalid parameter: 'response_format' of type 'json_schema' is not supported"


@pytest.fixture(autouse=True)
def _forgotten() -> Iterator[None]:
    """Each test starts with no refusal remembered in this process."""
    model_verdict._refused.clear()
    yield
    model_verdict._refused.clear()


def _refusing(body: dict[str, Any]) -> Answer:
    """An endpoint that takes JSON mode and refuses a schema, as OpenAI's older models do."""
    if body.get("response_format", {}).get("type") == "json_schema":
        return error(400, REFUSAL)
    return verdict(False, "no schema, still a verdict")


def _config(tmp_path: Path, event: str = "PreToolUse", **handler: Any) -> Path:
    return write_json(tmp_path / "hooks.json", {"hooks": {event: [{"hooks": [
        {"type": "prompt", "prompt": "Block deletions. $ARGUMENTS", "failClosed": True,
         **handler}]}]}})


def _formats(model: FakeModel) -> list[str]:
    return [r.body.get("response_format", {}).get("type", "none") for r in model.requests]


def test_a_verdict_request_carries_the_schema_and_a_stop_hook_s_has_impossible(
        tmp_path: Path, model: FakeModel) -> None:
    model.script(verdict(True))
    dispatch(claude_bash("ls"), config_paths=[str(_config(tmp_path))], budget=60)
    dispatch(claude_event("Stop", stop_hook_active=False),
             config_paths=[str(_config(tmp_path, "Stop"))], budget=60)
    tool, stop = (r.body["response_format"] for r in model.requests)
    assert tool == VERDICT_FORMAT
    schema = stop["json_schema"]["schema"]
    assert list(schema["properties"]) == ["ok", "reason", "impossible"]
    assert schema["required"] == ["ok", "reason", "impossible"]
    assert schema["properties"]["impossible"] == {"type": "boolean"}
    assert schema["additionalProperties"] is False and stop["json_schema"]["strict"] is True


@pytest.mark.parametrize(("max_tokens", "chars"), [(300, 400), (240, 400), (200, 320),
                                                   (60, 40), (40, 0), (20, 0)])
def test_the_reason_is_bounded_within_the_token_cap(max_tokens: int, chars: int) -> None:
    assert model_verdict.reason_chars(max_tokens) == chars


def test_a_refused_schema_is_asked_again_without_it_and_remembered_across_runs(
        tmp_path: Path, model: FakeModel) -> None:
    model.responder = _refusing
    cfg = _config(tmp_path)
    first = dispatch(claude_bash("rm -rf ~"), config_paths=[str(cfg)], budget=60)
    assert first.decision.permission == "deny"
    assert first.decision.reason == "no schema, still a verdict"
    # The canary: the schema was sent and refused, then JSON mode answered.
    assert _formats(model) == ["json_schema", "json_object"]
    second = dispatch(claude_bash("rm -rf ~"), config_paths=[str(cfg)], budget=60)
    assert second.decision.permission == "deny"
    assert _formats(model)[2:] == ["json_object"]  # this process remembers
    model_verdict._refused.clear()
    proc = run_cli(claude_bash("rm -rf ~"), "--config", str(cfg), cwd=tmp_path)
    assert reply(proc)["hookSpecificOutput"]["permissionDecision"] == "deny", proc.stderr
    assert _formats(model)[3:] == ["json_object"]  # a new run reads the file


LLAMA_CPP_PYTHON = ('{"error":{"message":"1 validation error:\\n  {\'type\': \'literal_error\', '
                    '\'loc\': (\'body\', \'response_format\', \'type\'), \'msg\': \\"Input '
                    'should be \'text\' or \'json_object\'\\", \'input\': \'json_schema\'}",'
                    '"type":"internal_server_error","param":null,"code":null}}')


def test_a_500_naming_the_format_is_a_refusal_not_a_failing_server(
        tmp_path: Path, model: FakeModel) -> None:
    """llama-cpp-python's server answers a json_schema it does not take with a 500: asked
    again at once in JSON mode, not retried until the deadline."""
    def answer(body: dict[str, Any]) -> Answer:
        if body.get("response_format", {}).get("type") == "json_schema":
            return Answer(status=500, body=LLAMA_CPP_PYTHON)
        return verdict(False, "no schema, still a verdict")

    model.responder = answer
    cfg = _config(tmp_path)
    outcome = dispatch(claude_bash("ls"), config_paths=[str(cfg)], budget=60)
    assert outcome.decision.reason == "no schema, still a verdict"
    assert _formats(model) == ["json_schema", "json_object"]
    # JSON mode asked in llama-cpp-python's form, the schema in its object, and so again
    # once the refusal is remembered
    dispatch(claude_bash("ls"), config_paths=[str(cfg)], budget=60)
    sent = [r.body["response_format"] for r in model.requests]
    asked = sent[0]["json_schema"]["schema"]
    assert asked["required"] == ["ok", "reason"]
    assert sent[1:] == [{"type": "json_object", "schema": asked}] * 2


def test_a_server_refusing_the_schema_key_too_gets_plain_json_mode_remembered(
        tmp_path: Path, model: FakeModel) -> None:
    """A server that rejects unknown keys refuses llama-cpp-python's form as well: asked a
    third time in plain JSON mode, and remembered so, across runs."""
    def answer(body: dict[str, Any]) -> Answer:
        if body["response_format"]["type"] == "json_schema":
            return error(400, REFUSAL)
        if "schema" in body["response_format"]:
            return error(400, "Unrecognized key in response_format: 'schema'")
        return verdict(False, "plain JSON mode")

    model.responder = answer
    cfg = _config(tmp_path)
    outcome = dispatch(claude_bash("rm -rf ~"), config_paths=[str(cfg)], budget=60)
    assert outcome.decision.reason == "plain JSON mode"
    sent = [r.body["response_format"] for r in model.requests]
    assert [f["type"] for f in sent] == ["json_schema", "json_object", "json_object"]
    assert "schema" in sent[1] and sent[2] == {"type": "json_object"}
    model_verdict._refused.clear()
    proc = run_cli(claude_bash("rm -rf ~"), "--config", str(cfg), cwd=tmp_path)
    assert reply(proc)["hookSpecificOutput"]["permissionDecision"] == "deny", proc.stderr
    assert [r.body["response_format"] for r in model.requests][3:] == [{"type": "json_object"}]


def test_a_refusal_whose_retry_fails_too_is_not_remembered(
        tmp_path: Path, model: FakeModel) -> None:
    """A 400 naming the format that JSON mode gets as well was not the schema's doing: the
    hook fails by its policy (fail-closed: a block), and the next call sends the schema."""
    model.script(error(400, "Invalid response_format: unsupported"))
    cfg = _config(tmp_path)
    outcome = dispatch(claude_bash("ls"), config_paths=[str(cfg)], budget=60)
    assert outcome.decision.permission == "deny"
    assert "the request was refused (400)" in (outcome.decision.reason or "")
    assert _formats(model) == ["json_schema", "json_object", "json_object"]
    model.script(verdict(True))
    dispatch(claude_bash("ls"), config_paths=[str(cfg)], budget=60)
    assert _formats(model)[3:] == ["json_schema"]
    assert not list(paths.runtime_home(os.environ).glob("schema-*.json"))


def test_another_400_is_not_taken_for_a_refused_schema(tmp_path: Path, model: FakeModel) -> None:
    model.script(error(400, "This model's maximum context length is 8192 tokens"))
    outcome = dispatch(claude_bash("ls"), config_paths=[str(_config(tmp_path))], budget=60)
    assert outcome.decision.permission == "deny"  # fail-closed
    assert _formats(model) == ["json_schema"]


def test_the_litellm_path_sends_the_schema_and_falls_back_the_same(
        tmp_path: Path, model: FakeModel, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROMPTHOOKS_DIRECT", "0")
    model.responder = _refusing
    cfg = _config(tmp_path)
    proc = run_cli(claude_bash("rm -rf ~"), "--config", str(cfg), cwd=tmp_path)
    specific = reply(proc)["hookSpecificOutput"]
    assert specific["permissionDecisionReason"] == "no schema, still a verdict", proc.stderr
    assert _formats(model) == ["json_schema", "json_object"]
    assert model.requests[0].body["response_format"] == VERDICT_FORMAT
    proc = run_cli(claude_bash("rm -rf ~"), "--config", str(cfg), cwd=tmp_path)
    assert reply(proc)["hookSpecificOutput"]["permissionDecision"] == "deny", proc.stderr
    assert _formats(model)[2:] == ["json_object"]


@pytest.fixture
def policy() -> Iterator[FakeModel]:
    """A managed policy's pinned endpoint, refusing the schema."""
    server = serve()
    state = next(server)
    state.responder = _refusing
    yield state
    next(server, None)


def test_a_managed_hook_never_takes_the_refusal_from_the_user_s_file(
        tmp_path: Path, policy: FakeModel, monkeypatch: pytest.MonkeyPatch) -> None:
    """The memory file is the user's, so an agent's: it must not take the schema off a
    managed hook's request. A project hook on the same endpoint and model writes it (and then
    reads it: the canary that the file is the one a run consults); the managed hook still
    sends the schema, in a run of its own."""
    monkeypatch.setenv("PROMPTHOOKS_API_BASE", policy.url)
    monkeypatch.setenv("PROMPTHOOKS_MODEL", "policy-model")
    cfg = _config(tmp_path)
    run_cli(claude_bash("ls"), "--config", str(cfg), cwd=tmp_path)
    run_cli(claude_bash("ls"), "--config", str(cfg), cwd=tmp_path)
    assert _formats(policy) == ["json_schema", "json_object", "json_object"]
    assert list(paths.runtime_home(os.environ).glob("schema-*.json"))
    etc = write_json(tmp_path / "etc" / "hooks.json", {
        "prompthooks": {"model": "policy-model", "api_base": policy.url},
        "hooks": {"PreToolUse": [{"hooks": [
            {"type": "prompt", "prompt": "Judge it. $ARGUMENTS", "failClosed": True}]}]}}).parent
    proc = run_cli(claude_bash("ls"), "--managed-dir", str(etc), cwd=tmp_path)
    assert reply(proc)["hookSpecificOutput"]["permissionDecision"] == "deny", proc.stderr
    assert _formats(policy)[3:] == ["json_schema", "json_object"]
    assert policy.requests[3].body["model"] == "policy-model"


def test_a_managed_hook_never_takes_a_refusal_a_user_s_hook_met_in_the_same_process(
        tmp_path: Path, policy: FakeModel, monkeypatch: pytest.MonkeyPatch) -> None:
    """The memory in this process too: a library caller (or one run) judges a project hook,
    whose refusal is remembered here (the canary: its second request goes out in JSON mode),
    then a managed hook on the same endpoint and model, which still sends the schema."""

    monkeypatch.setenv("PROMPTHOOKS_API_BASE", policy.url)
    monkeypatch.setenv("PROMPTHOOKS_MODEL", "policy-model")
    cfg = _config(tmp_path)
    dispatch(claude_bash("ls"), config_paths=[str(cfg)], managed_dir=tmp_path / "none")
    dispatch(claude_bash("ls"), config_paths=[str(cfg)], managed_dir=tmp_path / "none")
    assert _formats(policy) == ["json_schema", "json_object", "json_object"]
    etc = write_json(tmp_path / "etc" / "hooks.json", {
        "prompthooks": {"model": "policy-model", "api_base": policy.url},
        "hooks": {"PreToolUse": [{"hooks": [
            {"type": "prompt", "prompt": "Judge it. $ARGUMENTS", "failClosed": True}]}]}}).parent
    dispatch(claude_bash("ls"), config_paths=[str(cfg)], managed_dir=etc)
    managed = [r for r in policy.requests[3:] if "Judge it." in json.dumps(r.body)]
    assert [r.body.get("response_format", {}).get("type") for r in managed][:1] == \
        ["json_schema"]


def test_cassette_keys_do_not_depend_on_the_format() -> None:
    request = ModelRequest(Endpoint("m"), ({"role": "user", "content": "x"},))
    keys = {request_key(ModelRequest(request.endpoint, request.messages, structured=s,
                                     impossible=i))
            for s in (True, False) for i in (True, False)}
    assert keys == {request_key(request)}


def test_the_shipped_cassettes_still_replay(tmp_path: Path, model: FakeModel) -> None:
    """`prompthooks test --library` replays the recordings made before the schema was sent;
    the scripted server would fail every case it was asked about."""
    model.script(error(500, "never asked"))
    proc = subprocess.run([sys.executable, "-m", "prompthooks", "test", "--library"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert " 0 failed, 0 errors" in proc.stdout
    assert model.requests == []


def test_the_worker_request_carries_the_format() -> None:
    from prompthooks.model import model_process

    request = ModelRequest(Endpoint("m"), ({"role": "user", "content": "x"},),
                           structured=False, impossible=True)
    data = json.loads(json.dumps(model_process._request_data(request, 5.0)))
    assert data["structured"] is False and data["impossible"] is True
