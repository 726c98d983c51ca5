"""Matchers with each dialect's semantics.

Claude Code: missing, ``""`` or ``"*"`` match everything; a value made only of letters, digits,
``_``, ``-``, spaces, ``,`` and ``|`` is an exact name or a list of exact names; anything else is
an unanchored regular expression (``Edit.*`` also matches ``NotebookEdit``).
Cursor: a regular expression; it must match a whole tool type (``Shell|Read``, ``MCP:.*``) and
is searched for anywhere in a shell command string (``curl|wget``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Mode = Literal["all", "names", "search", "full"]
_NAME_LIST = re.compile(r"[A-Za-z0-9_\- ,|]*")


@dataclass(frozen=True, slots=True)
class Matcher:
    """A compiled-on-demand matcher; ``mode`` says how ``pattern`` is compared."""

    mode: Mode = "all"
    pattern: str = ""
    names: tuple[str, ...] = ()

    def matches(self, subject: str | None) -> bool:
        if self.mode == "all":
            return True
        if subject is None:
            return False
        if self.mode == "names":
            return subject in self.names
        if self.mode == "full":
            return re.fullmatch(self.pattern, subject) is not None
        return re.search(self.pattern, subject) is not None


MATCH_ALL = Matcher()


def _check_regex(pattern: str) -> None:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"invalid matcher regex {pattern!r}: {exc}") from None


def claude_matcher(pattern: str | None) -> Matcher:
    """A Claude Code matcher; raises ValueError for a regex that does not compile."""
    if pattern is None or pattern.strip() in ("", "*"):
        return MATCH_ALL
    if _NAME_LIST.fullmatch(pattern):
        names = tuple(n.strip() for n in re.split(r"[|,]", pattern) if n.strip())
        return Matcher("names", pattern, names) if names else MATCH_ALL
    _check_regex(pattern)
    return Matcher("search", pattern)


def cursor_matcher(pattern: str | None, *, whole: bool) -> Matcher:
    """A Cursor matcher: ``whole`` for tool types, a search for command strings."""
    if pattern is None or pattern.strip() in ("", "*"):
        return MATCH_ALL
    _check_regex(pattern)
    return Matcher("full" if whole else "search", pattern)
