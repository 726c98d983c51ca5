"""The merge function, table-driven: many results in, one decision out."""

from __future__ import annotations

from typing import Any

import pytest

from prompthooks.core.hook import Hook, Source, Trigger
from prompthooks.core.merge import merge
from prompthooks.core.result import HookResult


def hook(priority: int = 1, index: int = 0, fail_closed: bool = False,
         name: str = "h") -> Hook:
    return Hook(source=Source("test", "/cfg", priority), dialect="claude",
                config_event="PreToolUse", index=index, trigger=Trigger("PreToolUse"),
                kind="command", timeout=5, label=f"/cfg: {name}", command=name,
                fail_closed=fail_closed)


def res(priority: int = 1, index: int = 0, fail_closed: bool = False,
        **fields: Any) -> HookResult:
    return HookResult(hook=hook(priority, index, fail_closed, f"h{priority}{index}"), **fields)


PERMISSION_TABLE = [
    ([], None),
    ([None], None),
    (["allow"], "allow"),
    (["allow", "ask"], "ask"),
    (["ask", "allow"], "ask"),
    (["allow", "deny", "ask"], "deny"),
    (["deny", "allow"], "deny"),
    ([None, "allow", None], "allow"),
]


@pytest.mark.parametrize(("permissions", "expected"), PERMISSION_TABLE)
def test_deny_beats_ask_beats_allow(permissions: list[Any], expected: str | None) -> None:
    results = [res(index=i, permission=p) for i, p in enumerate(permissions)]
    assert merge(results).permission == expected


FAILURE_TABLE = [
    # (status, fail_closed, other hook's permission, merged permission)
    ("error", False, None, None),
    ("timeout", False, None, None),
    ("error", True, None, "deny"),
    ("timeout", True, None, "deny"),
    ("error", False, "deny", "deny"),
    ("timeout", False, "allow", "allow"),
    ("error", True, "allow", "deny"),
]


@pytest.mark.parametrize(("status", "fail_closed", "other", "expected"), FAILURE_TABLE)
def test_failure_policy_and_other_answers_kept(status: Any, fail_closed: bool, other: Any,
                                               expected: str | None) -> None:
    failed = res(index=0, fail_closed=fail_closed, status=status, error="boom")
    fine = res(index=1, permission=other, reason="other said so" if other else None,
               contexts=("keep me",))
    decision = merge([failed, fine])
    assert decision.permission == expected
    assert decision.contexts == ("keep me",)  # a failing hook never discards another's answer
    assert len(decision.errors) == 1 and "boom" in decision.errors[0]
    if fail_closed:
        assert "fail-closed" in (decision.reason or "")


def test_reasons_of_the_winning_permission_joined_in_priority_order() -> None:
    decision = merge([
        res(priority=2, index=0, permission="deny", reason="user says no"),
        res(priority=0, index=3, permission="deny", reason="managed says no"),
        res(priority=1, index=0, permission="allow", reason="fine by me"),
    ])
    assert decision.reason == "managed says no\nuser says no"


def test_contexts_all_kept_in_order_and_messages_joined() -> None:
    decision = merge([
        res(priority=1, index=1, contexts=("b",), system_message="s2"),
        res(priority=1, index=0, contexts=("a", ""), system_message="s1"),
        res(priority=2, index=0, contexts=("c",)),
    ])
    assert decision.contexts == ("a", "b", "c")
    assert decision.system_message == "s1\ns2"


def test_updated_input_higher_source_then_config_order_wins() -> None:
    decision = merge([
        res(priority=2, index=0, updated_input={"command": "user"}),
        res(priority=1, index=5, updated_input={"command": "project-late"}),
        res(priority=1, index=2, updated_input={"command": "project-early"}),
    ])
    assert decision.updated_input == {"command": "project-early"}


def test_updated_input_dropped_when_denied() -> None:
    decision = merge([res(index=0, permission="deny", reason="no"),
                      res(index=1, permission="allow", updated_input={"x": 1})])
    assert decision.updated_input is None


def test_halt_env_and_suppress() -> None:
    decision = merge([
        res(priority=2, index=0, env={"A": "user", "B": "user"}),
        res(priority=0, index=0, env={"A": "managed"}, halt=True, stop_reason="stop now"),
        res(priority=1, index=0, suppress_output=True),
    ])
    assert decision.env == {"A": "managed", "B": "user"}
    assert decision.halt and decision.stop_reason == "stop now"
    assert decision.suppress_output


def test_result_order_does_not_change_the_decision() -> None:
    items = [res(priority=p, index=i, permission=perm, reason=f"r{p}{i}", contexts=(f"c{p}{i}",))
             for p, i, perm in [(2, 0, "deny"), (0, 1, "ask"), (1, 0, "deny"), (0, 0, "allow")]]
    first = merge(items)
    second = merge(list(reversed(items)))
    assert first.permission == second.permission == "deny"
    assert first.reason == second.reason == "r10\nr20"
    assert first.contexts == second.contexts == ("c00", "c01", "c10", "c20")


def managed_res(index: int = 0, **fields: Any) -> HookResult:
    managed = Hook(source=Source("managed", "/etc/prompthooks/hooks.json", 0), dialect="cursor",
                   config_event="sessionStart", index=index, trigger=Trigger("SessionStart"),
                   kind="command", timeout=5, label="/etc: m", command="m")
    return HookResult(hook=managed, **fields)


STEERING_KEYS = ["PROMPTHOOKS_API_BASE", "HTTPS_PROXY", "https_proxy", "ALL_PROXY",
                 "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "LITELLM_LOG", "HOME",
                 "XDG_CONFIG_HOME", "PATH", "LD_PRELOAD", "DYLD_INSERT_LIBRARIES",
                 "PYTHONPATH", "AZURE_API_BASE", "GEMINI_API_KEY", "SSL_CERT_FILE"]


@pytest.mark.parametrize("key", STEERING_KEYS)
def test_a_project_hook_cannot_set_steering_env(key: str) -> None:
    decision = merge([res(priority=1, index=0, env={key: "http://agent", "SAFE": "1"})])
    assert decision.env == {"SAFE": "1"}
    (notice,) = decision.errors
    assert notice == (f"hook 'h10' (/cfg: h10): env keys ignored: {key}: only a managed hook "
                      "may set them")


@pytest.mark.parametrize("key", STEERING_KEYS)
def test_a_managed_hook_may_set_steering_env(key: str) -> None:
    decision = merge([managed_res(env={key: "managed"}),
                      res(priority=1, index=0, env={key: "project", "B": "2"})])
    assert decision.env == {key: "managed", "B": "2"}
    assert len(decision.errors) == 1  # the project's attempt is still named


def test_one_notice_names_every_dropped_key() -> None:
    decision = merge([res(env={"PATH": "/x", "HTTP_PROXY": "p", "OK": "1"})])
    assert decision.env == {"OK": "1"}
    assert decision.errors == ("hook 'h10' (/cfg: h10): env keys ignored: HTTP_PROXY, PATH: "
                               "only a managed hook may set them",)
