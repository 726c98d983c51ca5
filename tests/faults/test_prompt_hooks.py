"""Fault matrix, prompt hooks: an endpoint that refuses, errs or stalls, a malformed reply, a
broken cassette (see rows.py for how a row runs)."""

from __future__ import annotations

import json
import re
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from prompthooks.api import Outcome, dispatch
from prompthooks.errors import excerpt
from prompthooks.model.verdict import MAX_REPLY_CHARS

from ..fake_model import Answer, FakeModel, error
from ..helpers import (
    claude_bash,
    reply,
    write_json,
)
from .rows import (
    HEALTHY,
    POLICIES,
    PROMPT,
    Run,
    claude_reply,
    expected_failure,
    run_row,
    stderr_lines,
)


@pytest.fixture(scope="module", autouse=True)
def _litellm_warm() -> Iterator[None]:
    """Import litellm and make one call up front, so deadline rows measure the fault, not the
    first call's set-up (over a second on this machine)."""
    from prompthooks.model.endpoint import Endpoint, ModelRequest
    from prompthooks.model.litellm_client import complete as call_model
    from prompthooks.model.litellm_client import import_litellm

    from ..fake_model import serve

    import_litellm()
    server = serve()
    state = next(server)
    request = ModelRequest(Endpoint("test-model", state.url, "warm-up-key"),
                           ({"role": "user", "content": "warm up"},))
    call_model(request, time.monotonic() + 30)
    next(server, None)
    yield


def _prompt_row(tmp_path: Path, fail_closed: bool, timeout: float = 2) -> tuple[Outcome, str]:
    cfg = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "prompt", "prompt": PROMPT, "timeout": timeout, "failClosed": fail_closed},
        {"type": "command", "command": HEALTHY},
    ]}]}})
    outcome = dispatch(claude_bash("ls", cwd=str(tmp_path)), config_paths=[str(cfg)], budget=30,
                       managed_dir=tmp_path / "no-managed")
    assert outcome.exit_code == 0
    return outcome, f"{cfg}: hooks.PreToolUse[0].hooks[0]"


def _assert_prompt_failure(tmp_path: Path, fail_closed: bool, error: str,
                           timeout: float = 2, unjudged: str | None = None) -> str:
    """The whole check for a prompt row whose model call fails; returns the error.
    ``unjudged``: the failure is one of set-up, said in one line with its fix: the
    fail-closed hook's block reason, or the fail-open one's notice to the person."""
    outcome, label = _prompt_row(tmp_path, fail_closed, timeout)
    failure = expected_failure(outcome.problems, "inline prompt", label, error)
    if unjudged is None:
        expected = claude_reply(failure, fail_closed)
    elif fail_closed:
        expected = claude_reply(None, False, denial=f"inline prompt cannot judge: {unjudged}")
    else:
        expected = claude_reply(None, False, system=(
            f"healthy note\nprompthooks: 'inline prompt' cannot judge: {unjudged}; it lets "
            "everything through until then"))
    assert json.loads(outcome.stdout) == expected
    return failure


def _attempts(failure: str) -> int:
    match = re.search(r"\(test-model, (\d+) attempts?\)", failure)
    assert match, failure
    return int(match[1])


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@POLICIES
def test_prompt_endpoint_refuses_connections(tmp_path: Path, fail_closed: bool,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    base = f"http://127.0.0.1:{_closed_port()}/v1"
    monkeypatch.setenv("PROMPTHOOKS_API_BASE", base)
    monkeypatch.setenv("PROMPTHOOKS_MODEL", "test-model")
    failure = _assert_prompt_failure(tmp_path, fail_closed, re.escape(
        "cannot connect to the model endpoint (connection refused) (test-model, 1 attempt)"),
        unjudged=f"nothing answers at {base} (connection refused) (run: prompthooks doctor)")
    assert _attempts(failure) == 1  # nothing listens: not retried into the deadline


def _assert_retried(tmp_path: Path, model: FakeModel, fail_closed: bool, what: str,
                    detail: str) -> None:
    failure = _assert_prompt_failure(tmp_path, fail_closed, re.escape(
        f"{what} (test-model, ") + r"\d+" + re.escape(" attempts)" + (
            f": {detail}" if detail else "")))
    assert _attempts(failure) == len(model.requests) >= 2


@POLICIES
def test_prompt_endpoint_answers_429_forever(tmp_path: Path, model: FakeModel,
                                             fail_closed: bool) -> None:
    model.script(error(429, "slow down"))
    _assert_retried(tmp_path, model, fail_closed, "rate limited (429)", "slow down")


@POLICIES
def test_prompt_endpoint_answers_500(tmp_path: Path, model: FakeModel, fail_closed: bool) -> None:
    model.script(error(500, "boom"))
    _assert_retried(tmp_path, model, fail_closed, "the model endpoint failed (500)", "boom")


@POLICIES
def test_prompt_endpoint_answers_an_empty_body(tmp_path: Path, model: FakeModel,
                                               fail_closed: bool) -> None:
    model.script(Answer(body=""))
    _assert_retried(tmp_path, model, fail_closed,
                    "the endpoint's answer is not a chat completion", "")


@POLICIES
def test_prompt_endpoint_answers_an_html_body(tmp_path: Path, model: FakeModel,
                                              fail_closed: bool) -> None:
    page = "<html><body>502 Bad Gateway</body></html>"
    model.script(Answer(body=page, content_type="text/html"))
    _assert_retried(tmp_path, model, fail_closed,
                    "the endpoint's answer is not a chat completion", "")


@POLICIES
def test_prompt_reply_of_the_wrong_schema(tmp_path: Path, model: FakeModel,
                                          fail_closed: bool) -> None:
    model.script(Answer('{"answer": "yes", "confidence": 0.9}'))
    _assert_prompt_failure(tmp_path, fail_closed, re.escape(
        "the model's reply is not a verdict: '{\"answer\": \"yes\", \"confidence\": 0.9}'"))
    assert len(model.requests) == 1  # a reply, however wrong, is not retried


@POLICIES
def test_prompt_reply_in_markdown_fences_is_accepted(tmp_path: Path, model: FakeModel,
                                                     fail_closed: bool) -> None:
    # docs/prompt-hooks.md, "Verdicts": markdown fences are stripped. Not a fault: the verdict decides.
    model.script(Answer('```json\n{"ok": false, "reason": "deletes the home directory"}\n```'))
    outcome, _ = _prompt_row(tmp_path, fail_closed)
    assert outcome.problems == ()
    assert json.loads(outcome.stdout) == claude_reply(
        None, fail_closed, denial="deletes the home directory")


@POLICIES
def test_prompt_reply_of_1_mb(tmp_path: Path, model: FakeModel, fail_closed: bool) -> None:
    # A verdict is a few hundred characters; a longer reply is a hook error, quoted short.
    text = ("all good " * 120_000)[:1_048_576] + '{"ok": true}'
    model.script(Answer(text))
    _assert_prompt_failure(tmp_path, fail_closed, re.escape(
        f"the model's reply is too long to be a verdict (1,048,588 characters, at most "
        f"{MAX_REPLY_CHARS:,}): {excerpt(text, 300)!r}"))


@POLICIES
@pytest.mark.parametrize("text", [
    "{" * MAX_REPLY_CHARS,  # searching each "{" used to cost a scan back to the start
    '{"a":' * (MAX_REPLY_CHARS // 5),  # nested past the JSON decoder's recursion limit
], ids=["open-braces", "deep-nesting"])
def test_prompt_reply_of_pathological_json_under_the_cap(tmp_path: Path, model: FakeModel,
                                                         fail_closed: bool, text: str) -> None:
    # Read in bounded time, and a hook error like any other reply without a verdict (the
    # nesting used to escape as "internal error: RecursionError(...)").
    model.script(Answer(text))
    _assert_prompt_failure(tmp_path, fail_closed, re.escape(
        f"the model's reply is not a verdict: {excerpt(text, 300)!r}"))


@POLICIES
def test_prompt_reply_after_the_deadline(tmp_path: Path, model: FakeModel,
                                         fail_closed: bool) -> None:
    model.script(Answer('{"ok": false, "reason": "too late"}', delay=30))
    started = time.monotonic()
    outcome, label = _prompt_row(tmp_path, fail_closed, timeout=2)
    assert time.monotonic() - started < 2 + 5
    failure = expected_failure(outcome.problems, "inline prompt", label,
                       re.escape("the model did not answer in time (test-model, 1 attempt)"))
    assert [r.status for r in outcome.decision.results] == ["timeout", "ok"]
    assert json.loads(outcome.stdout) == claude_reply(failure, fail_closed)


def _cassette_row(tmp_path: Path, fail_closed: bool, cassette: Path) -> Run:
    cfg = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "prompt", "prompt": PROMPT, "failClosed": fail_closed},
        {"type": "command", "command": HEALTHY},
    ]}]}})
    proc = run_row(tmp_path, claude_bash("ls", cwd=str(tmp_path)), cfg, "--replay", str(cassette))
    assert proc.returncode == 0, proc.stderr
    return proc, f"{cfg}: hooks.PreToolUse[0].hooks[0]"


@POLICIES
def test_prompt_replay_of_a_cassette_that_is_not_yaml(tmp_path: Path, fail_closed: bool) -> None:
    import yaml

    tape = tmp_path / "tape.yaml"
    tape.write_text("entries: [\n  {key: 'unclosed\n")
    with pytest.raises(yaml.YAMLError) as parsed:  # the error of the loader the cassette uses
        yaml.load(tape.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    proc, label = _cassette_row(tmp_path, fail_closed, tape)
    failure = expected_failure(stderr_lines(proc), "inline prompt", label, re.escape(
        f"cassette {tape} cannot be read: {excerpt(str(parsed.value))}"))
    assert reply(proc) == claude_reply(failure, fail_closed)


@POLICIES
def test_prompt_replay_of_a_file_that_is_not_a_cassette(tmp_path: Path,
                                                        fail_closed: bool) -> None:
    tape = tmp_path / "tape.yaml"
    tape.write_text("- just\n- a list\n")
    proc, label = _cassette_row(tmp_path, fail_closed, tape)
    failure = expected_failure(stderr_lines(proc), "inline prompt", label, re.escape(
        f"cassette {tape} is not a cassette (no 'entries' list)"))
    assert reply(proc) == claude_reply(failure, fail_closed)
