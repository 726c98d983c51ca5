"""Claude Code's matcher rule: exact names and name lists, else an unanchored regex."""

from __future__ import annotations

import pytest

from prompthooks.hosts.claude.config import claude_matcher
from prompthooks.hosts.cursor.config import cursor_matcher

CLAUDE = [
    (None, "Bash", True),
    ("", "Anything", True),
    ("*", "Bash", True),
    ("Bash", "Bash", True),
    ("Bash", "BashOutput", False),  # exact names are not prefixes
    ("Edit|Write", "Write", True),
    ("Edit|Write", "NotebookEdit", False),
    ("Edit, Write", "Edit", True),
    ("Edit.*", "NotebookEdit", True),  # a regex is unanchored
    ("Edit.*", "Editor", True),
    ("mcp__github__.*", "mcp__github__create_issue", True),
    ("mcp__github__.*", "mcp__gitlab__create_issue", False),
    ("^Read$", "Read", True),
    ("^Read$", "ReadMany", False),
]


@pytest.mark.parametrize(("pattern", "subject", "expected"), CLAUDE)
def test_claude_matcher(pattern: str | None, subject: str, expected: bool) -> None:
    assert claude_matcher(pattern).matches(subject) is expected


def test_missing_subject_never_matches_a_pattern() -> None:
    assert not claude_matcher("Bash").matches(None)
    assert claude_matcher("*").matches(None)


@pytest.mark.parametrize("pattern", ["Bash(", "[unclosed"])
def test_bad_regex_is_a_value_error(pattern: str) -> None:
    with pytest.raises(ValueError, match="invalid matcher regex"):
        claude_matcher(pattern)
    with pytest.raises(ValueError, match="invalid matcher regex"):
        cursor_matcher(pattern)
