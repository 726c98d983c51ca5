"""Reading the model's verdict: both schemas, fences, prose, and garbage."""

from __future__ import annotations

import pytest

from prompthooks.verdicts import VerdictError, parse_verdict

GOOD = [
    ('{"ok": true}', None, None),
    ('{"ok": false, "reason": "deletes /etc"}', "deny", "deletes /etc"),
    ('```json\n{"ok": false, "reason": "fenced"}\n```', "deny", "fenced"),
    ('```\n{"ok": true}\n```', None, None),
    ('Sure! Here is my verdict:\n{"ok": false, "reason": "prose"}\nHope that helps.', "deny",
     "prose"),
    ('{"decision": "block", "reason": "old schema"}', "deny", "old schema"),
    ('{"decision": "approve", "reason": "fine"}', None, "fine"),
    ('{"decision": "ask", "reason": "check"}', "ask", "check"),
    ('{"decision": "deny"}', "deny", None),
    ('I think {"note": "not a verdict"} then {"ok": false, "reason": "second"}', "deny",
     "second"),
]


@pytest.mark.parametrize(("text", "permission", "reason"), GOOD)
def test_verdicts(text: str, permission: str | None, reason: str | None) -> None:
    verdict = parse_verdict(text)
    assert (verdict.permission, verdict.reason) == (permission, reason)


def test_impossible_and_old_schema_extras() -> None:
    assert parse_verdict('{"ok": false, "reason": "x", "impossible": true}').impossible
    old = parse_verdict('{"decision": "block", "reason": "r", "continue": false, '
                        '"stopReason": "halt", "systemMessage": "note"}')
    assert old.halt and old.stop_reason == "halt" and old.system_message == "note"


@pytest.mark.parametrize("text", [
    "", "I cannot help with that.", '{"ok": "yes"}', '{"decision": "maybe"}', "[true]",
    '{"ok": tru', "<html><body>502 Bad Gateway</body></html>",
])
def test_garbage_is_an_error_that_shows_the_reply(text: str) -> None:
    with pytest.raises(VerdictError) as info:
        parse_verdict(text)
    assert "not a verdict" in str(info.value)
    if text:
        assert text[:10] in str(info.value)


def test_a_huge_reply_is_shown_truncated() -> None:
    with pytest.raises(VerdictError) as info:
        parse_verdict("blah " * 200_000)
    assert len(str(info.value)) < 400
