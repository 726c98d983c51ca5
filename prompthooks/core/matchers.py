"""Matchers: a name list, or a regular expression searched or matched whole. Which a
config's pattern becomes is its dialect's rule (``hosts/<name>/config.py``).

Patterns come from config files (which an agent may write) and are searched in text the agent
chose, so they run on RE2 (the ``google-re2`` package), whose time is linear in the text
whatever the pattern: ``^(a|aa)+$`` against a long command answers at once, where Python's
``re`` would backtrack for ever. RE2 has no lookaround and no backreferences; a pattern using
them is a config error. It is imported only when a regex is compiled or searched (about
10 ms), never for name-list matchers or on a run whose config comes from the cache and whose
event no regex matcher looks at.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Literal, NamedTuple

from .events import MCP_PREFIX, UNKNOWN_MCP_SERVER

Mode = Literal["all", "names", "search", "full"]


class Matcher(NamedTuple):
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
        regex = _compiled(self.pattern)
        if regex is None:
            # Only a cache entry written by something else can hold a pattern that does not
            # compile (a config's patterns are checked as it loads): the hook runs.
            return True
        # Bytes, so that a lone surrogate from the host's JSON ("\ud800") is matched like any
        # other character instead of failing to encode.
        text = subject.encode("utf-8", "surrogatepass")
        if self.mode == "full":
            return regex.fullmatch(text) is not None
        return regex.search(text) is not None

    def matches_any_server(self, subject: str | None) -> bool:
        """``matches`` for a host that names no MCP server (its tools are
        ``mcp__unknown__<tool>``): the server part is not checked, so ``mcp__github__x``,
        ``mcp__git(hub|lab)__x`` and ``mcp__github.*`` all match the tool ``x`` of whichever
        server sent it. Other subjects are matched as written."""
        if subject is None or not subject.startswith(_UNKNOWN):
            return self.matches(subject)
        if _any_server(self).matches(subject):
            return True
        if self.mode != "search":
            return False
        # A server part with no ``__`` after it (``mcp__github.*``): the servers the pattern
        # names literally are tried, a few at most.
        tool = subject[len(_UNKNOWN):]
        return any(self.matches(f"{MCP_PREFIX}{server}__{tool}") for server in _servers(self))


MATCH_ALL = Matcher()

_UNKNOWN = f"{MCP_PREFIX}{UNKNOWN_MCP_SERVER}__"
_MAX_SERVERS = 4


@functools.cache
def _mcp_patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """(server part, server name, literal server), compiled on first use: only an MCP tool's
    event needs them.

    A server part in a pattern: up to the next ``__``, whole groups included, never across a
    top-level ``|`` (``mcp__a|mcp__b__x`` is two alternatives, not a server ``a|mcp``). A
    server named literally, for a pattern whose server part has no ``__`` after it
    (``mcp__github.*``, every tool of that server); at most ``_MAX_SERVERS`` are tried per
    event, since each is one more search of the pattern."""
    return (re.compile(r"mcp__(?:\([^()]*\)|[^|()])*?__"), re.compile(r"mcp__.+?__"),
            re.compile(r"mcp__([A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*)"))


@functools.lru_cache(maxsize=128)
def _any_server(matcher: Matcher) -> Matcher:
    if matcher.mode == "all":
        return matcher
    if matcher.mode == "names":
        return matcher._replace(names=tuple(_mcp_patterns()[1].sub(_UNKNOWN, n, count=1)
                                          for n in matcher.names))
    pattern = _mcp_patterns()[0].sub(_UNKNOWN, matcher.pattern)
    if pattern == matcher.pattern or _compiled(pattern) is None:
        return matcher
    return matcher._replace(pattern=pattern)


@functools.lru_cache(maxsize=128)
def _servers(matcher: Matcher) -> tuple[str, ...]:
    found: dict[str, None] = {}
    for server in _mcp_patterns()[2].finditer(matcher.pattern):
        found.setdefault(server[1])
        if len(found) == _MAX_SERVERS:
            break
    return tuple(found)


def _compile(pattern: str) -> Any:
    """The RE2 regex; ValueError says why a pattern is refused."""
    import re2  # type: ignore[import-untyped]  # lazily: see the module docstring

    options = re2.Options()
    options.log_errors = False  # RE2 would print its own line on stderr
    try:
        return re2.compile(pattern, options)
    except (re2.error, UnicodeError) as exc:
        why = exc.args[0] if isinstance(exc, re2.error) and exc.args else exc
        why = why.decode("utf-8", "replace") if isinstance(why, bytes) else str(why)
    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError) as exc:  # not a regex at all
        raise ValueError(f"invalid matcher regex {pattern!r}: {exc}") from None
    raise ValueError(f"matcher regex {pattern!r} is not supported: {why} (matchers run in "
                     "linear time, on RE2: no lookaround, backreferences, atomic groups or "
                     "possessive quantifiers)")


@functools.lru_cache(maxsize=128)
def _compiled(pattern: str) -> Any:
    try:
        return _compile(pattern)
    except ValueError:
        return None


def check_regex(pattern: str) -> None:
    """Raises ValueError for a pattern that does not compile on RE2."""
    _compile(pattern)


def matches_everything(pattern: str | None) -> bool:
    """Missing, ``""`` and ``"*"``: every host's way of saying "every subject"."""
    return pattern is None or pattern.strip() in ("", "*")
