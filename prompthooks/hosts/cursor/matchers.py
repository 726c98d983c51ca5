"""Cursor's matchers: a regular expression; it must match a whole tool type (``Shell|Read``,
``MCP:.*``) and is searched for anywhere in a shell command string (``curl|wget``)."""

from __future__ import annotations

from ...core.matchers import MATCH_ALL, Matcher, check_regex, matches_everything


def cursor_matcher(pattern: str | None, *, whole: bool) -> Matcher:
    """A Cursor matcher: ``whole`` for tool types, a search for command strings."""
    if matches_everything(pattern):
        return MATCH_ALL
    assert pattern is not None
    check_regex(pattern)
    return Matcher("full" if whole else "search", pattern)
