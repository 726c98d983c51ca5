"""The Host protocol: everything one host means to prompthooks, behind one face.

Each host is a package ``hosts/<name>/`` whose ``__init__`` satisfies this protocol. Code
outside ``hosts/`` asks a host (found in the registry, ``hosts.HOSTS``) instead of branching
on its name. The same object is the host's *config dialect*: a hook written in Cursor's
``hooks.json`` has ``hook.dialect == "cursor"`` and is framed, matched and run by Cursor's
rules whichever host sent the event.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ._common import ConfigEvent, RawHandler, Reply
from ._framing import Framed

if TYPE_CHECKING:
    from ..config.load_result import Loaded
    from ..core.events import Event
    from ..core.hook import Hook, MatchOn, Source
    from ..core.matchers import Matcher
    from ..core.merge import Decision
    from ..install.host import HostGlue
    from ..transcripts.reading import TranscriptReader


class Host(Protocol):
    """One host: its wire format, its config dialect, and the glue that wires it to us."""

    NAME: str
    TITLE: str
    BUDGET: float  # the run's whole budget (seconds) when this host calls
    # The host's events (its own names) it gives a hook less time than BUDGET allows.
    EVENT_BUDGETS: dict[str, float]
    DEFAULT_TIMEOUT: float  # a command hook's timeout when its handler gives none
    CONFIG_EVENTS: dict[str, ConfigEvent]  # the dialect's event keys
    HOST_EVENTS: dict[str, str]  # the event names the host sends -> canonical events
    TOOL_NAMES: dict[str, str]  # the host's tool names -> canonical tools
    # Every tool name the host is known to send (those of TOOL_NAMES and the ones passed on
    # unchanged): what ``validate`` tells a misspelled or foreign tool in a matcher from.
    KNOWN_TOOLS: frozenset[str]
    # What the host sends as a matcher's subject, per canonical event (SessionStart's
    # sources...), where the values are a fixed few; events whose values are open (agent
    # types) are absent.
    KNOWN_SUBJECTS: dict[str, frozenset[str]]
    # Other names the host sends for its config's event keys (Cline's SDK: tool_call).
    EVENT_ALIASES: dict[str, str]
    # A hook of this dialect that prints {"continue": false} blocks (Cursor's
    # beforeSubmitPrompt) instead of stopping everything (Claude Code).
    CONTINUE_FALSE_BLOCKS: bool
    # The variables this host puts in its hooks' environment, a trailing ``*`` naming a
    # prefix: taken away from a hook written for another host, which must not read this
    # host's world beside a stdin in its own dialect.
    HOOK_VARIABLES: tuple[str, ...]

    # The wire: what the host sends and what it reads back.
    def looks_like(self, raw: Mapping[str, Any]) -> bool: ...

    def parse(self, raw: Mapping[str, Any], raw_bytes: bytes, event_name: str | None,
              environ: Mapping[str, str]) -> Event: ...

    def hook_env(self, event: Event) -> dict[str, str]: ...

    def render(self, decision: Decision, event: Event) -> Reply: ...

    def with_input(self, event: Event, tool_input: Mapping[str, Any]) -> Event: ...

    def block_reply(self, message: str) -> Reply: ...

    # The dialect: how hooks written for this host are matched, run and read.
    def host_tool(self, tool: str) -> str:
        """A canonical tool name in this dialect's words (what its matchers compare)."""
        ...

    def make_matcher(self, pattern: str | None, match_on: MatchOn) -> Matcher:
        """A matcher of this dialect for what ``match_on`` names; ValueError for a pattern
        that does not compile."""
        ...

    def working_dirs(self, hook: Hook, event: Event) -> list[str | None]:
        """Where a hook of this dialect runs, in order of preference (the first that is a
        folder wins; the project folder comes after these)."""
        ...

    def frame_reply(self, hook: Hook, event: Event, code: int, stdout: bytes,
                    stderr: bytes) -> Framed:
        """What a finished hook's exit code and output say, by this dialect's rules."""
        ...

    def claims_file(self, data: Mapping[str, Any]) -> bool:
        """Whether a JSON config file has this dialect's shape."""
        ...

    def load_file(self, data: Mapping[str, Any], path: Path, source: Source, loaded: Loaded,
                  project_dir: str, canonical: Host) -> list[Hook]:
        """The hooks of a JSON config file in this dialect (raises ConfigError);
        ``canonical`` is the dialect its policy packs are written in."""
        ...

    def raw_handlers(self, data: Mapping[str, Any], path: Path,
                     project_dir: str) -> Iterator[RawHandler]:
        """Every handler of a JSON config file in this dialect as written, whatever its
        values (for ``validate``); nothing for a shape it does not have."""
        ...

    def sends_as_is(self, event: Event, hook: Hook) -> bool:
        """Whether this host itself would send ``event`` to ``hook`` as it came (not when a
        Cursor hook on ``beforeShellExecution`` serves a ``preToolUse`` event)."""
        ...

    def translate(self, event: Event, hook: Hook) -> bytes:
        """Another host's event as this host would have sent it to ``hook`` (its
        ``translation`` module says what is kept and what is dropped)."""
        ...

    def dialect_env(self, event: Event) -> dict[str, str]:
        """The variables this host sets for its hooks, for a hook of this dialect that
        another host runs (set over the sending host's, which are taken away)."""
        ...

    # Glue and samples, imported only when asked for (never on the ``run`` path).
    def glue(self) -> HostGlue: ...

    def sample_event(self, name: str, fields: Mapping[str, Any]) -> dict[str, Any]: ...

    def transcript_reader(self) -> TranscriptReader | None:
        """The reader of this host's session transcript (its ``transcript`` module), for
        prompt hooks that judge the conversation; None when it keeps none we can read."""
        ...
