"""`prompthooks install` as a new user meets it: the starter's model is one the user can call
(a stored key, an Ollama answering), tried once with a real request; with none, install says
in plain words that prompt hooks cannot judge and what to run. Real `prompthooks install`
processes in a scratch project; the models are local fake servers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from prompthooks.setup.starter import STARTER

from ..fake_model import Listing, error, serve_listing

KEY = "sk-install-0123456789"  # made up


@pytest.fixture
def listing() -> Iterator[Listing]:
    gen = serve_listing("llama3.2:1b", "qwen2.5:0.5b")
    yield next(gen)
    next(gen, None)


def _install(project: Path, *args: str, env: dict[str, str] | None = None,
             stdin: str = "") -> subprocess.CompletedProcess[str]:
    project.mkdir(exist_ok=True)
    return subprocess.run([sys.executable, "-m", "prompthooks", "install", "--host", "claude",
                           "--project", str(project), *args], input=stdin,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})


def _set_key(name: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "prompthooks", "keys", "set", name],
                          input=KEY, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def _auth(headers: dict[str, str]) -> str | None:
    return {k.lower(): v for k, v in headers.items()}.get("authorization")


@pytest.mark.slow
def test_no_model_anywhere_is_said_in_plain_words_with_the_next_command(
        tmp_path: Path) -> None:
    assert not any(os.environ.get(v) for v in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY",
                                               "GEMINI_API_KEY", "PROMPTHOOKS_API_BASE"))
    proc = _install(tmp_path / "proj")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "no model found for prompt hooks: no ANTHROPIC_API_KEY, OPENAI_API_KEY or " \
           "GEMINI_API_KEY, no stored key, no PROMPTHOOKS_API_BASE, no LiteLLM Proxy, no " \
           "Ollama answering" in lines
    assert ("until then the destructive-shell prompt hook cannot judge: it lets every command "
            "through, and a fail-closed prompt hook would block them all") in lines
    assert lines[-1] == ("next: prompthooks keys set anthropic (or start Ollama, or set "
                         "PROMPTHOOKS_API_BASE: see docs/prompt-hooks.md, \"Pointing it at a model\"), "
                         "then prompthooks doctor")
    assert (tmp_path / "proj" / ".prompthooks" / "hooks.json").read_bytes() == STARTER
    as_json = _install(tmp_path / "other", "--json")
    model = json.loads(as_json.stdout)["model"]
    assert model["judges"] is False and model["next"].startswith("prompthooks keys set")


@pytest.mark.slow
def test_a_stored_key_is_found_and_its_model_tried_once(tmp_path: Path,
                                                        listing: Listing) -> None:
    _set_key("openai")
    env = {"OPENAI_BASE_URL": listing.url}  # OpenAI's address, here the fake
    proc = _install(tmp_path / "proj", env=env)
    assert proc.returncode == 0, proc.stderr
    assert len(listing.requests) == 1, proc.stdout  # one tiny real call
    assert _auth(listing.requests[0].headers) == f"Bearer {KEY}"
    assert listing.requests[0].body["model"] == "gpt-4.1-mini"
    config = json.loads((tmp_path / "proj" / ".prompthooks" / "hooks.json").read_text())
    assert config["prompthooks"] == {"model": "gpt-4.1-mini"}
    said = [line for line in proc.stdout.splitlines() if line.startswith("model: ")]
    assert len(said) == 1 and said[0].startswith(
        "model: gpt-4.1-mini (a stored key for openai): answered in ")
    assert said[0].endswith("; prompt hooks judge from now on")
    assert proc.stdout.splitlines()[-1].startswith("next: prompthooks validate")
    assert KEY not in proc.stdout + proc.stderr


@pytest.mark.slow
def test_a_refused_key_says_so_with_the_fix(tmp_path: Path, listing: Listing) -> None:
    _set_key("openai")
    listing.script(error(401, "Incorrect API key provided"))
    proc = _install(tmp_path / "proj", env={"OPENAI_BASE_URL": listing.url})
    assert proc.returncode == 0, proc.stderr
    assert len(listing.requests) == 1  # the canary: it was tried, and refused
    lines = proc.stdout.splitlines()
    assert ("model: gpt-4.1-mini (a stored key for openai) did not answer: the key for openai "
            "was refused (401) (run: prompthooks keys set openai)") in lines
    assert lines[-1] == "next: prompthooks keys set openai, then prompthooks doctor"


@pytest.mark.slow
def test_an_ollama_answering_is_found_and_used_without_a_key(tmp_path: Path,
                                                             listing: Listing) -> None:
    host = listing.url.removeprefix("http://").removesuffix("/v1")
    proc = _install(tmp_path / "proj", env={"OLLAMA_HOST": host})
    assert proc.returncode == 0, proc.stderr
    assert [r.path for r in listing.listings] == ["/api/tags"]
    config = json.loads((tmp_path / "proj" / ".prompthooks" / "hooks.json").read_text())
    assert config["prompthooks"] == {"model": "llama3.2:1b", "api_base": f"http://{host}/v1"}
    assert len(listing.requests) == 1 and listing.requests[0].path == "/v1/chat/completions"
    assert _auth(listing.requests[0].headers) is None
    assert f"model: llama3.2:1b (Ollama answers at http://{host}): answered in " in proc.stdout


@pytest.mark.slow
def test_offline_tries_nothing(tmp_path: Path, listing: Listing) -> None:
    _set_key("openai")
    proc = _install(tmp_path / "proj", "--offline", env={"OPENAI_BASE_URL": listing.url})
    assert proc.returncode == 0, proc.stderr
    assert "model: gpt-4.1-mini (a stored key for openai); not tried" in proc.stdout
    assert listing.requests == []


@pytest.mark.slow
def test_the_starter_on_its_model_is_uninstalled_as_the_starter(tmp_path: Path,
                                                                listing: Listing) -> None:
    host = listing.url.removeprefix("http://").removesuffix("/v1")
    project = tmp_path / "proj"
    assert _install(project, "--offline", env={"OLLAMA_HOST": host}).returncode == 0
    assert "prompthooks" in json.loads((project / ".prompthooks" / "hooks.json").read_text())
    proc = subprocess.run([sys.executable, "-m", "prompthooks", "uninstall", "--host", "claude",
                           "--project", str(project)], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert not (project / ".prompthooks").exists()


@pytest.mark.slow
def test_a_litellm_proxy_is_asked_for_its_models_and_one_is_tried(
        tmp_path: Path, listing: Listing) -> None:
    env = {"LITELLM_PROXY_API_BASE": listing.url, "LITELLM_PROXY_API_KEY": "sk-proxy-team"}
    proc = _install(tmp_path / "proj", env=env)
    assert proc.returncode == 0, proc.stderr
    assert [r.path for r in listing.listings] == ["/v1/models"]
    assert _auth(listing.listings[0].headers) == "Bearer sk-proxy-team"  # the proxy's own key
    config = json.loads((tmp_path / "proj" / ".prompthooks" / "hooks.json").read_text())
    assert config["prompthooks"] == {"model": "litellm_proxy/llama3.2:1b"}
    assert len(listing.requests) == 1 and listing.requests[0].body["model"] == "llama3.2:1b"
    assert "model: litellm_proxy/llama3.2:1b (LITELLM_PROXY_API_BASE set): answered in " in (
        proc.stdout)
