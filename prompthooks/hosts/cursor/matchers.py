"""Cursor's matchers: a regular expression searched for anywhere in what the event's key
compares (the tool type, ``Shell`` or ``MCP:<tool>``; a shell command string; a subagent
type), as Cursor's own ``new RegExp(matcher).test(value)`` does: ``MCP:*`` fires on every MCP
tool, ``Write`` on ``TabWrite`` too, ``curl|wget`` on any command holding either."""

from __future__ import annotations

from ...core.matchers import MATCH_ALL, Matcher, check_regex, matches_everything


def cursor_matcher(pattern: str | None) -> Matcher:
    """A Cursor matcher (RE2, searched); ValueError for a pattern that does not compile."""
    if matches_everything(pattern):
        return MATCH_ALL
    assert pattern is not None
    check_regex(pattern)
    return Matcher("search", pattern)
