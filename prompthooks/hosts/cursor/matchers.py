"""Cursor's matchers: a regular expression searched for anywhere in what the event's key
compares (the tool type, ``Shell`` or ``MCP:<tool>``; a shell command string; a subagent
type), as Cursor's own ``new RegExp(matcher).test(value)`` does: ``MCP:*`` fires on every MCP
tool, ``Write`` on ``TabWrite`` too, ``curl|wget`` on any command holding either."""

from __future__ import annotations

from ...core.matchers import MATCH_ALL, Matcher, check_regex, matches_everything

# Events whose matcher Cursor compares with a fixed word: it selects every such event or none.
FIXED_SUBJECTS = {"beforeSubmitPrompt": "UserPromptSubmit", "stop": "Stop",
                  "afterAgentResponse": "AgentResponse", "afterAgentThought": "AgentThought"}


def fixed_subject_missed(key: str, matcher: Matcher) -> str | None:
    """The word ``matcher`` is compared with under ``key`` when it never matches it (the
    handler never runs), else None."""
    word = FIXED_SUBJECTS.get(key)
    return word if word is not None and not matcher.matches(word) else None


def cursor_matcher(pattern: str | None) -> Matcher:
    """A Cursor matcher (RE2, searched); ValueError for a pattern that does not compile."""
    if matches_everything(pattern):
        return MATCH_ALL
    assert pattern is not None
    check_regex(pattern)
    return Matcher("search", pattern)
