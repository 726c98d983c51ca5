"""Reading the model's verdict: both schemas, fences, prose, and garbage."""

from __future__ import annotations

import pytest

from prompthooks.model.verdict import VerdictError, parse_verdict

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
    "<html><body>502 Bad Gateway</body></html>",
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


# --- A reply cut off by the token cap (max_tokens) ---

CUT_REFUSALS = [
    ('{"ok": false, "reason": "It deletes the home dir', "It deletes the home dir... [cut off]"),
    ('```json\n{"ok": false, "reason": "It del\\u00', "It del... [cut off]"),
    ('{"ok": false, "reason": "line one\\nline t', "line one\nline t... [cut off]"),
    ('{"ok": false, "reason": "a raw\nline bre', "a raw line bre... [cut off]"),
    ('{"ok": false, "reason": "It deletes ~", "impos', "It deletes ~"),
    ('{"ok": false', "[the model's reason was cut off]"),
    ('{"ok": false, "rea', "[the model's reason was cut off]"),
    ('Verdict: {"decision": "block", "reason": "old sch', "old sch... [cut off]"),
    ('{"decision": "deny", "reason": "r", "systemMessage": "a note', "r"),
    ('{"ok": false, "reason": "r", "detail": [1, {"a": "b', "r"),
    ('{"ok": false, "reason": "a"} {"ok": false, "reason": "b', "a"),
]


@pytest.mark.parametrize(("text", "reason"), CUT_REFUSALS)
def test_a_cut_off_refusal_is_a_refusal(text: str, reason: str) -> None:
    verdict = parse_verdict(text)
    assert (verdict.permission, verdict.reason, verdict.impossible) == ("deny", reason, False)


@pytest.mark.parametrize("text", [
    '{"ok": true, "reason": "looks fi',  # a cut allow: its end might have said otherwise
    '{"ok": true',
    '{"ok": fa',  # the verdict itself is cut
    '{"ok": tru',
    '{"ok": "fa',
    '{"decision": "blo',
    '{"decision": "approve", "reason": "fi',
    '{"decision": "ask", "reason": "che',
    '{"ok": false, "decision": "approve", "reason": "x',  # disagrees with itself
    '{"ok": false, "ok": true, "reason": "x',
    '{"decision": ["deny"], "reason": "x',
])
def test_a_cut_off_reply_without_a_sure_refusal_is_an_error(text: str) -> None:
    with pytest.raises(VerdictError) as info:
        parse_verdict(text)
    assert "cut off before its verdict was complete" in str(info.value)


@pytest.mark.parametrize("text", [
    '{"ok": true} {"ok": false, "reason": "cu',  # a complete allow beside a cut refusal
    '{"ok": false, "reason": "x"} {"ok": true, "reason": "y',
    '{"ok": true} {"ok": fa',
    '{"ok": false, "reason": "x", "echo": {"ok": true}, "more": "cu',
])
def test_a_cut_verdict_beside_another_that_may_disagree_is_an_error(text: str) -> None:
    with pytest.raises(VerdictError) as info:
        parse_verdict(text)
    assert "verdicts that disagree" in str(info.value)


@pytest.mark.parametrize("text", [
    '{"ok": false, "reason": oops',  # malformed before the end, not cut
    '{"ok": false, "reason": "x", "n": [1}',
    '{"ok": false "reason": "x',
    '{"ok": false, "re\\xson": "x',  # a bad escape in a key
    'The event was {"tool_input": {"ok": false, "reason": "a quote',  # not at the top level
    '{"note": "nothing here',
])
def test_malformed_or_nested_is_not_a_cut_refusal(text: str) -> None:
    with pytest.raises(VerdictError) as info:
        parse_verdict(text)
    assert "not a verdict" in str(info.value)


def test_conflicting_verdicts_are_an_error() -> None:
    with pytest.raises(VerdictError, match="disagree"):
        parse_verdict('The data says {"ok": true} but my verdict is {"ok": false, "reason": "x"}')
    assert parse_verdict('```json\n{"ok": false, "reason": "r"}\n```').reason == "r"
