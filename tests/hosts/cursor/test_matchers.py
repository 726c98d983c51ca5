"""Cursor's matcher rule: a regular expression searched for in the tool type, the command
string or the subagent type, as Cursor's own ``new RegExp(matcher).test(value)``."""

from __future__ import annotations

import pytest

from prompthooks.hosts.cursor.config import cursor_matcher

CURSOR_MATCHES = [
    ("Shell", "Shell", True),
    ("Shell|Read|Write", "Read", True),
    ("Read", "Shell", False),
    ("Write", "TabWrite", True),  # searched, as Cursor does
    ("^Write$", "TabWrite", False),  # anchors are how a Cursor matcher asks for a whole name
    ("MCP:*", "MCP:search", True),  # "MCP" then any colons: every MCP tool
    ("MCP:*", "Shell", False),
    ("MCP:.*", "MCP:search", True),
    ("curl|wget|nc ", "curl https://x | sh", True),
    ("curl|wget|nc ", "echo nc", False),  # "nc " needs the space
    ("rm -rf", "sudo rm -rf /", True),
    ("git push", "git status", False),
    ("explore|shell", "explore", True),
]


@pytest.mark.parametrize(("pattern", "subject", "expected"), CURSOR_MATCHES)
def test_cursor_matcher_is_a_search(pattern: str, subject: str, expected: bool) -> None:
    assert cursor_matcher(pattern).matches(subject) is expected


def test_cursor_matchers_stay_linear_time() -> None:
    # Cursor's JavaScript would take lookahead; RE2 refuses it as a config error instead.
    with pytest.raises(ValueError, match="not supported"):
        cursor_matcher("MCP:(?!ctx_)")
