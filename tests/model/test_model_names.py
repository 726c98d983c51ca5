"""Model names as people give them: an alias (`prompthooks aliases set fast ...`), Claude Code's
own fast-model variables for its hooks; neither, nor a stored key, reaches a managed hook,
whose model and key source are its file's alone. Real runs against a local fake model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from prompthooks.api import load_config
from prompthooks.model.endpoint import DEFAULT_MODEL, endpoint_for

from ..fake_model import FakeModel, scripted, verdict
from ..helpers import approve, claude_bash, cursor_config, reply, run_cli, write_json

FAST_VARS = ("ANTHROPIC_DEFAULT_HAIKU_MODEL", "ANTHROPIC_SMALL_FAST_MODEL")


@pytest.fixture(autouse=True)
def clean(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in (*FAST_VARS, "OPENAI_BASE_URL", "OPENAI_API_BASE", "PROMPTHOOKS_DIRECT"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def server() -> Iterator[FakeModel]:
    yield from scripted(verdict(False, "no"))


def _cli(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "prompthooks", *args], input=stdin,
                          capture_output=True, text=True, timeout=60)


def _project(tmp_path: Path, **handler: Any) -> Path:
    project = tmp_path / "proj"
    write_json(project / ".prompthooks" / "hooks.json", {"hooks": {"PreToolUse": [
        {"hooks": [{"type": "prompt", "prompt": "Judge. $ARGUMENTS", **handler}]}]}})
    approve(project / ".prompthooks")
    return project


def _auth(server: FakeModel) -> str | None:
    return {k.lower(): v for k, v in server.requests[0].headers.items()}.get("authorization")


def test_an_alias_is_called_as_the_model_it_stands_for(tmp_path: Path,
                                                       server: FakeModel) -> None:
    made = _cli("aliases", "set", "fast", "openai/test-model")
    assert made.returncode == 0, made.stderr
    listed = _cli("aliases", "list")
    assert listed.stdout == "fast  openai/test-model\n"
    project = _project(tmp_path, model="fast")
    proc = run_cli(claude_bash("rm -rf ~", cwd=str(project)), cwd=project,
                   env={"OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "test-key"})
    assert proc.returncode == 0, proc.stderr
    assert [r.body["model"] for r in server.requests] == ["test-model"]
    assert reply(proc)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert _cli("aliases", "remove", "fast").returncode == 0
    assert _cli("aliases", "list", "--json").stdout.endswith('"aliases": {}}\n')


@pytest.mark.parametrize("args", [("set", "fast"), ("set", "bad name", "m"),
                                  ("set", "same", "same"), ("remove", "fast", "extra")])
def test_aliases_refuse_what_is_not_an_alias(args: tuple[str, ...]) -> None:
    proc = _cli("aliases", *args)
    assert proc.returncode == 64
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


def test_claude_codes_fast_model_variables_for_its_hooks(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    claude = _project(tmp_path)
    cursor = cursor_config(tmp_path / "cursor" / "hooks.json", "preToolUse",
                           {"type": "prompt", "prompt": "Judge. $ARGUMENTS"})

    def model(folder: Path) -> str:
        (hook,) = load_config([str(folder)], keep_managed=False).hooks
        return endpoint_for(hook).model

    claude_dir = claude / ".prompthooks"
    assert model(claude_dir) == model(cursor.parent) == DEFAULT_MODEL
    monkeypatch.setenv("ANTHROPIC_SMALL_FAST_MODEL", "claude-3-5-haiku-latest")
    assert model(claude_dir) == "claude-3-5-haiku-latest"
    assert model(cursor.parent) == DEFAULT_MODEL  # Cursor's hooks: not Claude Code's setting
    monkeypatch.setenv("ANTHROPIC_DEFAULT_HAIKU_MODEL", "claude-haiku-4-5-20251001")
    assert model(claude_dir) == "claude-haiku-4-5-20251001"  # the current name first
    monkeypatch.setenv("PROMPTHOOKS_MODEL", "gpt-4.1-mini")
    assert model(claude_dir) == "gpt-4.1-mini"  # prompthooks' own setting wins


def test_claude_codes_haiku_is_its_fast_model_in_its_own_dialect(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    claude = _project(tmp_path, model="haiku") / ".prompthooks"
    cursor = cursor_config(tmp_path / "cursor" / "hooks.json", "preToolUse",
                           {"type": "prompt", "prompt": "Judge. $ARGUMENTS", "model": "haiku"})

    def model(folder: Path) -> str:
        (hook,) = load_config([str(folder)], keep_managed=False).hooks
        return endpoint_for(hook).model

    assert model(claude) == DEFAULT_MODEL
    assert model(cursor.parent) == "haiku"  # a name like any other in Cursor's dialect
    monkeypatch.setenv("ANTHROPIC_SMALL_FAST_MODEL", "claude-3-5-haiku-latest")
    assert model(claude) == "claude-3-5-haiku-latest"
    made = subprocess.run([sys.executable, "-m", "prompthooks", "aliases", "set", "haiku",
                           "openai/gpt-4.1-mini"], capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    assert model(claude) == "openai/gpt-4.1-mini"  # the user's own alias first


def test_claude_codes_fast_model_on_a_real_run(tmp_path: Path, server: FakeModel) -> None:
    project = _project(tmp_path)
    proc = run_cli(claude_bash("ls", cwd=str(project)), cwd=project,
                   env={"ANTHROPIC_SMALL_FAST_MODEL": "openai/test-model",
                        "OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "test-key"})
    assert proc.returncode == 0, proc.stderr
    assert [r.body["model"] for r in server.requests] == ["test-model"]


def test_a_managed_hook_takes_no_alias_and_no_stored_key(tmp_path: Path,
                                                         server: FakeModel) -> None:
    """The user (or an agent acting as the user) can write the aliases and the key store:
    neither may steer or be sent by the administrator's policy."""
    assert _cli("aliases", "set", "policy-model", "openai/agent-model").returncode == 0
    assert _cli("keys", "set", "openai", stdin="sk-user-stored-999").returncode == 0
    etc = tmp_path / "etc"
    write_json(etc / "hooks.json", {
        "prompthooks": {"model": "policy-model", "api_base": server.url},
        "hooks": {"PreToolUse": [{"hooks": [
            {"type": "prompt", "prompt": "Judge it. $ARGUMENTS", "failClosed": True}]}]}})
    proc = run_cli(claude_bash("ls"), "--managed-dir", str(etc), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert len(server.requests) == 1  # the canary: the managed hook called its model
    assert server.requests[0].body["model"] == "policy-model"
    assert _auth(server) is None
    assert json.loads(_cli("aliases", "list", "--json").stdout)["aliases"] == {
        "policy-model": "openai/agent-model"}
    assert os.environ.get("OPENAI_API_KEY") is None
