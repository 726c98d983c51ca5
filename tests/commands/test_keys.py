"""`prompthooks keys`: a key stored as a user stores it (a prompt that does not echo, or stdin)
reaches the model's Authorization header on a real run with no key in the environment, and
nowhere else: not the audit log, not a cassette, not stderr, not another endpoint."""

from __future__ import annotations

import json
import os
import pty
import select
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from prompthooks import address
from prompthooks.model import keys

from ..fake_model import FakeModel, error, serve, verdict
from ..helpers import approve, claude_bash, reply, run_in_process, write_json

KEY = "sk-stored-0123456789abcdef"  # a made-up key: never a real one
PROVIDER_VARS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE",
                 "ANTHROPIC_BASE_URL", "LITELLM_PROXY_API_KEY", "PROMPTHOOKS_DIRECT")


@pytest.fixture(autouse=True)
def no_provider_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in PROVIDER_VARS:
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def server() -> Iterator[FakeModel]:
    gen = serve()
    yield next(gen)
    next(gen, None)


def _auth(server: FakeModel, index: int = 0) -> str | None:
    headers = {k.lower(): v for k, v in server.requests[index].headers.items()}
    return headers.get("authorization")


def _keys(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "prompthooks", "keys", *args], input=stdin,
                          capture_output=True, text=True, timeout=60)


def _project(tmp_path: Path, model: str, fail_closed: bool = False) -> Path:
    project = tmp_path / "proj"
    write_json(project / ".prompthooks" / "hooks.json", {"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "prompt", "name": "destructive-shell",
                                       "prompt": "Block rm -rf. $ARGUMENTS", "model": model,
                                       "failClosed": fail_closed, "timeout": 20}]}]}})
    return approve(project / ".prompthooks").parent


@pytest.mark.slow
def test_set_from_stdin_is_owner_only_and_listed_without_its_value(
        isolated_home: Path) -> None:
    proc = _keys("set", "openai", stdin=KEY + "\n")
    assert proc.returncode == 0, proc.stderr
    path = isolated_home / ".config" / "prompthooks" / "keys.json"
    assert json.loads(path.read_text()) == {"openai": KEY}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    listed = _keys("list")
    assert listed.returncode == 0
    assert "openai" in listed.stdout and "key store (OPENAI_API_KEY)" in listed.stdout
    assert KEY not in listed.stdout + listed.stderr + proc.stdout + proc.stderr
    listed = _keys("list", "--json")
    assert KEY not in listed.stdout
    assert json.loads(listed.stdout)["keys"] == [
        {"name": "openai", "variable": "OPENAI_API_KEY", "source": "key store"}]
    assert _keys("remove", "openai").returncode == 0
    assert json.loads(path.read_text()) == {}
    gone = _keys("remove", "openai")
    assert (gone.returncode, gone.stderr) == (1, "prompthooks: no stored key for openai\n")


def test_set_never_takes_the_key_from_the_command_line() -> None:
    proc = _keys("set", "openai", KEY)
    assert proc.returncode == 64
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert not keys.store_path(os.environ).exists()


@pytest.mark.parametrize("given", ["", "two words", "line\nbreak"])
def test_set_refuses_what_is_not_a_key(given: str) -> None:
    proc = _keys("set", "openai", stdin=given)
    assert proc.returncode == 64, proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("prompthooks: keys set")
    assert not keys.store_path(os.environ).exists()


def test_set_through_a_terminal_prompts_without_echo(isolated_home: Path) -> None:
    pid, fd = pty.fork()
    if pid == 0:  # the child: prompthooks at a terminal, as a person runs it
        os.execv(sys.executable, [sys.executable, "-m", "prompthooks", "keys", "set",
                                  "anthropic"])
    seen = b""
    end = time.monotonic() + 60
    try:
        while b"not shown" not in seen and time.monotonic() < end:
            if select.select([fd], [], [], 1)[0]:
                seen += os.read(fd, 1024)
        assert b"not shown" in seen, seen  # the canary: it asked at the terminal
        os.write(fd, KEY.encode() + b"\n")
        while time.monotonic() < end:
            if not select.select([fd], [], [], 1)[0]:
                continue
            try:
                chunk = os.read(fd, 1024)
            except OSError:  # the child is gone and its terminal closed
                break
            if not chunk:
                break
            seen += chunk
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0, seen
    assert b"stored the key for anthropic" in seen
    assert KEY.encode() not in seen  # not echoed
    assert keys.read(os.environ) == {"anthropic": KEY}


@pytest.mark.slow
@pytest.mark.parametrize("direct", ["1", "0"], ids=["direct", "litellm"])
def test_a_stored_key_reaches_its_provider_on_a_real_run(
        tmp_path: Path, server: FakeModel, direct: str, isolated_home: Path) -> None:
    assert "OPENAI_API_KEY" not in os.environ  # the canary: the environment has no key
    assert _keys("set", "openai", stdin=KEY).returncode == 0
    project = _project(tmp_path, "openai/test-model")
    env = {"OPENAI_BASE_URL": server.url, "PROMPTHOOKS_DIRECT": direct}
    proc = run_in_process(claude_bash("ls", cwd=str(project)), cwd=project, env=env)
    assert proc.returncode == 0, proc.stderr
    assert len(server.requests) == 1, proc.stderr
    assert _auth(server) == f"Bearer {KEY}"


@pytest.mark.slow
def test_a_stored_key_never_goes_to_an_endpoint_of_the_users(
        tmp_path: Path, server: FakeModel) -> None:
    """PROMPTHOOKS_API_BASE is the user's own server: its key is its own, not OpenAI's."""
    assert _keys("set", "openai", stdin=KEY).returncode == 0
    project = _project(tmp_path, "gpt-4.1-mini")
    proc = run_in_process(claude_bash("ls", cwd=str(project)), cwd=project,
                   env={"PROMPTHOOKS_API_BASE": server.url})
    assert proc.returncode == 0, proc.stderr
    assert len(server.requests) == 1  # the canary: the call was made, to that server
    assert _auth(server) is None


@pytest.mark.slow
def test_a_refused_stored_key_is_in_no_log_cassette_or_message(
        tmp_path: Path, server: FakeModel, isolated_home: Path) -> None:
    """The server echoes the key in its error, as providers do; it goes nowhere from there."""
    assert _keys("set", "openai", stdin=KEY).returncode == 0
    server.script(error(401, f"Incorrect API key provided: {KEY}"))
    project = _project(tmp_path, "openai/test-model", fail_closed=True)
    tape = tmp_path / "tape.yaml"
    env = {"OPENAI_BASE_URL": server.url}
    proc = run_in_process(claude_bash("rm -rf ~", cwd=str(project)), "--record", str(tape),
                   cwd=project, env=env)
    assert server.requests and _auth(server) == f"Bearer {KEY}"
    assert proc.returncode == 0, proc.stderr
    decision = reply(proc)["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny"
    assert decision["permissionDecisionReason"] == (
        "destructive-shell cannot judge: the key for openai was refused (401) "
        "(run: prompthooks keys set openai)")
    assert "401" in proc.stderr
    assert KEY not in proc.stdout + proc.stderr
    # Served again, now recording a verdict: the cassette holds no key either.
    server.script(verdict(True))
    ok = run_in_process(claude_bash("ls", cwd=str(project)), "--record", str(tape), cwd=project,
                 env=env)
    assert ok.returncode == 0, ok.stderr
    assert tape.exists() and "test-model" in tape.read_text()
    assert KEY not in tape.read_text()
    data = isolated_home / ".local" / "share" / "prompthooks"
    stored = [p for p in data.rglob("*") if p.is_file()]
    assert any(p.name == "audit.db" for p in stored)  # the canary: rows were written
    for path in stored:
        assert KEY.encode() not in path.read_bytes(), path


def test_a_changed_store_is_another_resident_process(isolated_home: Path) -> None:
    """The socket's name, and the environment a resident process takes runs with, follow
    the key store: a key set after it started is never served by it."""
    before_name = address.socket_name(os.environ)
    own = address.model_environment(os.environ)  # the resident process's, at its start
    assert _keys("set", "anthropic", stdin=KEY).returncode == 0
    assert address.socket_name(os.environ) != before_name
    assert address.model_environment(own) == own  # kept as it was at the start
    now = address.model_environment_of(
        {k.encode(): v.encode() for k, v in os.environ.items()})
    assert now != own
    assert now == address.model_environment(os.environ)
    assert KEY not in json.dumps(now)


@pytest.mark.slow
@pytest.mark.parametrize("model", ["litellm_proxy/team-model", "openai/gpt-4.1-mini",
                                   "anthropic/claude-haiku-4-5"])
def test_a_config_naming_an_api_base_gets_no_stored_key(
        tmp_path: Path, server: FakeModel, model: str) -> None:
    """A config (the project's, say) that names an api_base and a provider's prefix: the
    stored key of that provider is not sent there."""
    for name in ("litellm_proxy", "openai", "anthropic"):
        assert _keys("set", name, stdin=KEY).returncode == 0
    project = tmp_path / "proj"
    write_json(project / ".prompthooks" / "hooks.json", {
        "prompthooks": {"api_base": server.url},
        "hooks": {"PreToolUse": [{"hooks": [
            {"type": "prompt", "prompt": "Judge. $ARGUMENTS", "model": model}]}]}})
    approve(project / ".prompthooks")
    proc = run_in_process(claude_bash("ls", cwd=str(project)), cwd=project,
                   env={"PROMPTHOOKS_DIRECT": "1"})
    assert proc.returncode == 0, proc.stderr
    if model.startswith("anthropic/"):
        # litellm's Anthropic client reached with no key refuses to send: had it been given
        # the stored one, the request would have gone out with it.
        assert "authentication failed; no API key is set for this model" in proc.stderr
        assert server.requests == []
        return
    assert len(server.requests) == 1, proc.stderr  # the canary: the call went there
    assert not any(KEY in value for value in server.requests[0].headers.values())


@pytest.mark.slow
def test_a_planted_link_in_place_of_the_store_is_not_followed(
        tmp_path: Path, server: FakeModel, isolated_home: Path) -> None:
    """Something running as the user links keys.json to a file of its choosing: prompthooks
    reads its own files only, so the run has no stored key and says so."""
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps({"openai": KEY}))
    assert json.loads(elsewhere.read_text()) == {"openai": KEY}  # the canary: a valid store
    store = isolated_home / ".config" / "prompthooks" / "keys.json"
    store.parent.mkdir(parents=True)
    store.symlink_to(elsewhere)
    project = _project(tmp_path, "openai/test-model")
    proc = run_in_process(claude_bash("ls", cwd=str(project)), cwd=project,
                   env={"OPENAI_BASE_URL": server.url})
    assert proc.returncode == 0, proc.stderr
    assert len(server.requests) == 1, proc.stderr  # the call went out, with no stored key
    assert _auth(server) is None
    listed = _keys("list")
    assert listed.returncode == 1
    assert "a symbolic link" in listed.stderr and listed.stderr.count("\n") == 1
