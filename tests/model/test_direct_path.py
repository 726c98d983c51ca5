"""The direct path: OpenAI-compatible endpoints called directly on httpx, never through
litellm; every other provider through litellm. Both against the local fake server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from prompthooks import paths
from prompthooks.api import dispatch
from prompthooks.model.direct import body
from prompthooks.model.endpoint import OPENAI_BASE, Direct, Endpoint, ModelRequest, direct_route

from ..fake_model import VERDICT_FORMAT, FakeModel, KeptAlive, serve_kept_alive, verdict
from ..helpers import claude_bash, write_json

PROBE = """
import sys
from prompthooks.cli import main
code = main(["run", "--config", sys.argv[1]])
heavy = sorted(m for m in sys.modules
               if m.split(".")[0] in ("litellm", "openai", "rich", "pygments"))
print("HEAVY=" + ",".join(heavy), file=sys.stderr)
print("HTTPX=" + str("httpx" in sys.modules), file=sys.stderr)
from prompthooks.model import direct
print("CA_BUNDLES=" + str(len(direct._tls)), file=sys.stderr)
sys.exit(code)
"""


def _config(tmp_path: Path, **handler: object) -> Path:
    return write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "prompt", "prompt": "Block deletions. $ARGUMENTS", **handler}]}]}})


def _probe(tmp_path: Path, cfg: Path, env: dict[str, str] | None = None
           ) -> subprocess.CompletedProcess[str]:
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE)
    return subprocess.run([sys.executable, str(probe), str(cfg)], capture_output=True,
                          text=True, input=json.dumps(claude_bash("rm -rf /")), timeout=120,
                          env={**os.environ, **(env or {})})


def test_an_openai_compatible_endpoint_is_called_directly_and_litellm_never_loads(
        tmp_path: Path, model: FakeModel) -> None:
    """A fresh `prompthooks run` process with the warm worker allowed: the call goes straight
    to the endpoint on httpx, nothing imports litellm, no worker is started."""
    model.script(verdict(False, "direct says no"))
    unset = {f"{scheme}_proxy": "" for scheme in ("http", "https", "all")}
    unset |= {name.upper(): "" for name in unset}
    proc = _probe(tmp_path, _config(tmp_path), {"PROMPTHOOKS_WORKER": "1", **unset})
    assert '"permissionDecisionReason": "direct says no"' in proc.stdout, proc.stderr
    assert "HEAVY=\n" in proc.stderr and "HTTPX=True" in proc.stderr
    assert "CA_BUNDLES=0" in proc.stderr  # an http endpoint: no CA bundle loaded for it
    (call,) = model.requests
    assert call.path == "/v1/chat/completions"
    assert call.headers["authorization"] == "Bearer test-key-not-a-secret"
    assert call.body["model"] == "test-model"
    assert call.body["max_tokens"] == 300 and call.body["temperature"] == 0
    assert call.body["response_format"] == VERDICT_FORMAT
    runtime = paths.runtime_home(os.environ)
    assert not runtime.exists() or not list(runtime.glob("worker-*"))


def test_the_litellm_path_still_reaches_the_same_server(
        tmp_path: Path, model: FakeModel) -> None:
    model.script(verdict(False, "litellm says no"))
    proc = _probe(tmp_path, _config(tmp_path), {"PROMPTHOOKS_DIRECT": "0"})
    assert '"permissionDecisionReason": "litellm says no"' in proc.stdout, proc.stderr
    assert "litellm" in proc.stderr.split("HEAVY=", 1)[1].splitlines()[0]
    (call,) = model.requests
    assert call.path == "/v1/chat/completions" and call.body["model"] == "test-model"


@pytest.mark.parametrize("prefix, key_var", [("litellm_proxy/", "LITELLM_PROXY_API_KEY"),
                                             ("hosted_vllm/", "HOSTED_VLLM_API_KEY"),
                                             ("openai/", "OPENAI_API_KEY")])
def test_prefixed_models_go_direct_with_the_prefix_dropped_and_their_own_key(
        tmp_path: Path, model: FakeModel, monkeypatch: pytest.MonkeyPatch, prefix: str,
        key_var: str) -> None:
    monkeypatch.delenv("PROMPTHOOKS_API_KEY")
    monkeypatch.setenv(key_var, "sk-proxy-not-a-secret")
    monkeypatch.setenv("PROMPTHOOKS_MODEL", prefix + "team-alias")
    outcome = dispatch(claude_bash("ls"), config_paths=[str(_config(tmp_path))], budget=30)
    assert outcome.problems == ()
    (call,) = model.requests
    assert call.body["model"] == "team-alias"
    assert call.headers["authorization"] == "Bearer sk-proxy-not-a-secret"


def test_a_bare_openai_model_name_goes_to_openai_base_url(
        tmp_path: Path, model: FakeModel, monkeypatch: pytest.MonkeyPatch) -> None:
    """No api_base: a gpt-* name is OpenAI's, at OPENAI_BASE_URL when that is set."""
    monkeypatch.delenv("PROMPTHOOKS_API_BASE")
    monkeypatch.delenv("PROMPTHOOKS_API_KEY")
    monkeypatch.setenv("OPENAI_BASE_URL", model.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-not-a-secret")
    monkeypatch.setenv("PROMPTHOOKS_MODEL", "gpt-4.1-mini")
    outcome = dispatch(claude_bash("ls"), config_paths=[str(_config(tmp_path))], budget=30)
    assert outcome.problems == ()
    (call,) = model.requests
    assert call.body["model"] == "gpt-4.1-mini"
    assert call.headers["authorization"] == "Bearer sk-openai-not-a-secret"


@pytest.mark.parametrize("model, api_base, env, expected", [
    ("llama3.1", "http://localhost:11434/v1", {}, ("http://localhost:11434/v1", "llama3.1")),
    ("openai/llama3.1", "http://h/v1", {}, ("http://h/v1", "llama3.1")),
    ("litellm_proxy/fast", "http://proxy:4000", {}, ("http://proxy:4000", "fast")),
    ("litellm_proxy/fast", None, {"LITELLM_PROXY_API_BASE": "http://p:4000"},
     ("http://p:4000", "fast")),
    ("litellm_proxy/fast", None, {}, None),
    ("hosted_vllm/qwen", "http://gpu:8000/v1", {}, ("http://gpu:8000/v1", "qwen")),
    ("gpt-4.1-mini", None, {}, (OPENAI_BASE, "gpt-4.1-mini")),
    ("o4-mini", None, {}, (OPENAI_BASE, "o4-mini")),
    ("openai/gpt-4o", None, {"OPENAI_API_BASE": "http://az/v1"}, ("http://az/v1", "gpt-4o")),
    ("gpt-3.5-turbo-instruct", None, {}, None),
    ("claude-haiku-4-5", None, {}, None),
    ("anthropic/claude-haiku-4-5", "http://h/v1", {}, None),
    ("ollama/llama3.1", "http://localhost:11434", {}, None),
    ("ollama_chat/llama3.1", "http://localhost:11434", {}, None),
    ("meta-llama/Llama-3-8B", "http://h/v1", {}, None),
    ("llama3.1", "http://h/v1", {"PROMPTHOOKS_DIRECT": "0"}, None),
])
def test_which_endpoints_go_direct(model: str, api_base: str | None, env: dict[str, str],
                                   expected: tuple[str, str] | None) -> None:
    route = direct_route(Endpoint(model, api_base), env)
    assert (None if route is None else (route.base, route.model)) == expected


def test_openai_reasoning_models_get_their_own_parameter_names() -> None:
    request = ModelRequest(Endpoint("o4-mini"), ({"role": "user", "content": "x"},))
    reasoning = body(request, Direct(OPENAI_BASE, "o4-mini", None, openai=True))
    assert "temperature" not in reasoning and reasoning["max_completion_tokens"] == 300
    chat = body(request, Direct(OPENAI_BASE, "gpt-4.1-mini", None, openai=True))
    assert chat["temperature"] == 0 and chat["max_completion_tokens"] == 300
    local = body(request, Direct("http://h/v1", "llama3.1", None))
    assert local["temperature"] == 0 and local["max_tokens"] == 300


@pytest.fixture
def kept_alive(monkeypatch: pytest.MonkeyPatch) -> Iterator[KeptAlive]:
    for state in serve_kept_alive():
        monkeypatch.setenv("PROMPTHOOKS_API_BASE", state.url)
        monkeypatch.setenv("PROMPTHOOKS_MODEL", "test-model")
        yield state


def test_each_call_has_a_connection_of_its_own(
        tmp_path: Path, kept_alive: KeptAlive) -> None:
    """The server would keep connections open: none carries a second call (bytes a server
    sent past an answer would be the next call's answer: tests/model/test_direct_http.py)."""
    cfg = _config(tmp_path)
    for command in ("ls", "pwd", "whoami"):
        outcome = dispatch(claude_bash(command), config_paths=[str(cfg)], budget=30)
        assert outcome.problems == ()
    assert len(kept_alive.ports) == 3 and len(set(kept_alive.ports)) == 3
