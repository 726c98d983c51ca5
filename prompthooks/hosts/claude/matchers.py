"""Claude Code's matchers: missing, ``""`` or ``"*"`` match everything; a value made only of
letters, digits, ``_``, ``-``, spaces, ``,`` and ``|`` is an exact name or a list of exact
names; anything else is an unanchored regular expression (``Edit.*`` also matches
``NotebookEdit``)."""

from __future__ import annotations

import re

from ...core.matchers import MATCH_ALL, Matcher, check_regex, matches_everything

_NAME_LIST = re.compile(r"[A-Za-z0-9_\- ,|]*")


def claude_matcher(pattern: str | None) -> Matcher:
    """A Claude Code matcher; raises ValueError for a regex that does not compile."""
    if pattern is None or matches_everything(pattern):
        return MATCH_ALL
    if _NAME_LIST.fullmatch(pattern):
        names = tuple(n.strip() for n in re.split(r"[|,]", pattern) if n.strip())
        return Matcher("names", pattern, names) if names else MATCH_ALL
    check_regex(pattern)
    return Matcher("search", pattern)
