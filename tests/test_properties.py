"""Properties over the input side: whatever a host, a hook or a model sends, prompthooks
answers in the host's format or says "bad input" in one line; it never raises anything else."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prompthooks.api import parse_event
from prompthooks.errors import InputError
from prompthooks.events import Event
from prompthooks.executors.replies import ReplyError, read_reply
from prompthooks.hook import Hook, Source, Trigger
from prompthooks.hosts import HOSTS
from prompthooks.merge import Decision
from prompthooks.templates import event_json, render
from prompthooks.verdicts import VerdictError, parse_verdict

PROPS = settings(max_examples=300, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow])
text = st.text(alphabet=st.characters(codec="utf-8"), max_size=40)  # no lone surrogates
any_text = st.text(max_size=40)  # lone surrogates included
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4),
    max_leaves=12)
EVENT_NAMES = sorted({n for host in HOSTS.values() for n in host.HOST_EVENTS} | {"Bogus"})
KEYS = ["hook_event_name", "hookName", "session_id", "conversation_id", "cursor_version",
        "clineVersion", "tool_name", "tool_input", "command", "prompt", "cwd",
        "workspace_roots", "workspaceRoots", "preToolUse", "postToolUse", "loop_count",
        "stop_hook_active", "subagent_type", "tool_output", "file_path"]
events = st.dictionaries(st.sampled_from(KEYS), json_values | st.sampled_from(EVENT_NAMES),
                         max_size=8)


@PROPS
@given(events, st.sampled_from([None, "claude", "cursor", "cline"]))
def test_any_event_object_parses_or_is_bad_input(raw: dict[str, Any], host: str | None) -> None:
    try:
        module, event = parse_event(json.dumps(raw).encode(), host=host, environ={})
    except InputError:
        return
    assert event.host == module.NAME and isinstance(event.name, str)


@PROPS
@given(st.binary(max_size=200))
def test_any_bytes_on_stdin_parse_or_are_bad_input(data: bytes) -> None:
    try:
        _, event = parse_event(data, environ={})
    except InputError as exc:
        assert "\n" not in exc.message  # one line
        return
    assert event.host in HOSTS and event.raw_bytes == data.removeprefix(b"\xef\xbb\xbf")


def _event(host: str, name: str) -> Event:
    return Event(host=host, host_event=name, name=HOSTS[host].HOST_EVENTS[name], raw={},
                 raw_bytes=b"{}", project_dir="/tmp")


decisions = st.builds(
    Decision, permission=st.sampled_from([None, "allow", "ask", "deny"]),
    reason=st.none() | any_text, user_message=st.none() | any_text,
    system_message=st.none() | any_text, contexts=st.lists(any_text, max_size=3).map(tuple),
    updated_input=st.none() | st.dictionaries(text, json_values, max_size=3),
    halt=st.booleans(), stop_reason=st.none() | any_text,
    env=st.dictionaries(text, text, max_size=2))
host_events = st.sampled_from([(h, n) for h, m in HOSTS.items() for n in m.HOST_EVENTS])


@PROPS
@given(decisions, host_events)
def test_every_decision_renders_as_valid_host_output(decision: Decision,
                                                     host_event: tuple[str, str]) -> None:
    host, name = host_event
    reply = HOSTS[host].render(decision, _event(host, name))
    reply.stdout.encode("ascii")  # safe to write whatever the strings held
    assert reply.exit_code == 0
    if reply.stdout or host != "claude":
        out = json.loads(reply.stdout)
        assert isinstance(out, dict)
        if host == "cline":
            assert out["cancel"] is (decision.permission == "deny" or decision.halt)
        if decision.permission == "deny" and host == "claude" and name == "PreToolUse":
            assert out["hookSpecificOutput"]["permissionDecision"] == "deny"


HOOKS = [Hook(source=Source("t", "/t", 0), dialect=d, config_event="PreToolUse", index=0,
              trigger=Trigger("PreToolUse"), kind="command", timeout=1, label="t",
              command="x") for d in ("claude", "cursor", "cline")]


@PROPS
@given(st.sampled_from(HOOKS), st.integers(-20, 255), st.binary(max_size=120) |
       json_values.map(lambda v: json.dumps(v).encode()), st.binary(max_size=40))
def test_any_hook_output_is_read_or_is_a_hook_error(hook: Hook, code: int, stdout: bytes,
                                                    stderr: bytes) -> None:
    try:
        fields = read_reply(hook, _event("claude", "PreToolUse"), code, stdout, stderr)
    except ReplyError:
        return
    assert fields.get("permission") in (None, "allow", "ask", "deny")


@PROPS
@given(any_text)
def test_any_model_reply_is_a_verdict_or_a_verdict_error(reply: str) -> None:
    try:
        verdict = parse_verdict(reply)
    except VerdictError as exc:
        assert len(str(exc)) < 500
        return
    assert verdict.permission in (None, "ask", "deny")


@PROPS
@given(text.filter(lambda t: "$" not in t and "\\" not in t), any_text)
def test_arguments_are_substituted_literally(template: str, arguments: str) -> None:
    assert render(template + "$ARGUMENTS", arguments) == template + arguments
    assert render(template, arguments) == f"{template}\n\nARGUMENTS: {arguments}"


@PROPS
@given(st.dictionaries(text, json_values, max_size=6), st.integers(50, 2000))
def test_event_json_respects_the_budget(raw: dict[str, Any], budget: int) -> None:
    raw_text = json.dumps(raw)
    out, cut = event_json(raw, raw_text, budget)
    assert len(out) <= max(budget, len(raw_text) if not cut else budget)
    assert cut == (len(raw_text) > budget)
