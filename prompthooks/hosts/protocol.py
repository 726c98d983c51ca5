"""What a host's modules offer, by role, and the values they trade.

A host (``hosts.Host``) reaches its modules by role: its ``wire`` module satisfies
:class:`Wire` and its ``config`` module :class:`Dialect` (the folder dialect's,
:class:`FolderDialect`); its ``install`` module holds its ``GLUE``
(``install.glue.HostGlue``) and its ``transcript`` module is a
``transcripts.reading.TranscriptReader``. The registry imports them by name, on first use, so
``tests/hosts/test_roles.py`` holds each against its role.

Code outside ``hosts/`` asks a host (found in the registry, ``hosts.HOSTS``) instead of
branching on its name. A host is also a *config dialect*: a hook written in Cursor's
``hooks.json`` has ``hook.dialect == "cursor"`` and is framed, matched and run by Cursor's
rules whichever host sent the event.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from ..core.events import NO_MAPPING
from ..core.hook import MatchOn, Trigger

if TYPE_CHECKING:
    from ..config.load_result import Loaded
    from ..core.events import Event
    from ..core.hook import Hook, Source
    from ..core.matchers import Matcher
    from ..core.merge import Decision
    from .framing import Framed


class Reply(NamedTuple):
    """What prompthooks prints for the host and the exit code it leaves with."""

    stdout: str
    exit_code: int = 0


class ConfigEvent(NamedTuple):
    """What an event key of a dialect's config stands for."""

    trigger: Trigger
    match_on: MatchOn = "none"


class RawHandler(NamedTuple):
    """One handler of a JSON config as written, found without validating the file: what
    ``validate`` checks in every handler, even in a file whose other values are wrong."""

    event_key: str
    where: str  # the handler's JSON path: hooks.PreToolUse[0].hooks[1]
    handler: Mapping[str, Any]
    matcher: Any = None  # the matcher as written (None: no matcher)
    matcher_where: str = ""
    cwd: str = ""  # the folder a command hook runs in (the project, for the event's cwd)
    env: Mapping[str, str] = NO_MAPPING  # the variables its host sets


class Wire(Protocol):
    """A host on the wire (what ``run`` needs): the events it sends and the replies it reads,
    and how a hook written for it is run (what it is sent, in what world, and how its answer
    is read)."""

    NAME: str
    TITLE: str
    DEFAULT_TIMEOUT: float  # a command hook's timeout when its handler gives none
    CONFIG_EVENTS: dict[str, ConfigEvent]  # the dialect's event keys
    HOST_EVENTS: dict[str, str]  # the event names the host sends -> canonical events
    TOOL_NAMES: dict[str, str]  # the host's tool names -> canonical tools
    # A hook of this dialect that prints {"continue": false} blocks (Cursor's
    # beforeSubmitPrompt) instead of stopping everything (Claude Code).
    CONTINUE_FALSE_BLOCKS: bool
    # The variables this host puts in its hooks' environment, a trailing ``*`` naming a
    # prefix: taken away from a hook written for another host, which must not read this
    # host's world beside a stdin in its own dialect.
    HOOK_VARIABLES: tuple[str, ...]

    # Events in, replies out.
    def parse(self, raw: Mapping[str, Any], raw_bytes: bytes, event_name: str | None,
              environ: Mapping[str, str]) -> Event: ...

    def hook_env(self, event: Event) -> dict[str, str]: ...

    def render(self, decision: Decision, event: Event) -> Reply: ...

    def with_input(self, event: Event, tool_input: Mapping[str, Any]) -> Event: ...

    def block_reply(self, message: str) -> Reply: ...

    def sample_event(self, name: str, fields: Mapping[str, Any]) -> dict[str, Any]:
        """An event as the host would send it, for tests of policies."""
        ...

    # Hooks written for this host: how they are sent an event, run and read.
    def host_tool(self, tool: str) -> str:
        """A canonical tool name in this dialect's words (what its matchers compare)."""
        ...

    def working_dirs(self, hook: Hook, event: Event) -> list[str | None]:
        """Where a hook of this dialect runs, in order of preference (the first that is a
        folder wins; the project folder comes after these)."""
        ...

    def frame_reply(self, hook: Hook, event: Event, code: int, stdout: bytes,
                    stderr: bytes) -> Framed:
        """What a finished hook's exit code and output say, by this dialect's rules."""
        ...

    def sends_as_is(self, event: Event, hook: Hook) -> bool:
        """Whether this host itself would send ``event`` to ``hook`` as it came (not when a
        Cursor hook on ``beforeShellExecution`` serves a ``preToolUse`` event)."""
        ...

    def translate(self, event: Event, hook: Hook) -> bytes:
        """Another host's event as this host would have sent it to ``hook`` (the module says
        what is kept and what is dropped)."""
        ...

    def dialect_env(self, event: Event) -> dict[str, str]:
        """The variables this host sets for its hooks, for a hook of this dialect that
        another host runs (set over the sending host's, which are taken away)."""
        ...


class Dialect(Protocol):
    """A host's config dialect: the shape of its files, their reading, its matchers."""

    # Every tool name the host is known to send (those of TOOL_NAMES and the ones passed on
    # unchanged): what ``validate`` tells a misspelled or foreign tool in a matcher from.
    KNOWN_TOOLS: frozenset[str]
    # What the host sends as a matcher's subject, per canonical event (SessionStart's
    # sources...), where the values are a fixed few; events whose values are open (agent
    # types) are absent.
    KNOWN_SUBJECTS: dict[str, frozenset[str]]
    # Other names the host sends for its config's event keys (Cline's SDK: tool_call).
    EVENT_ALIASES: dict[str, str]

    def make_matcher(self, pattern: str | None, match_on: MatchOn) -> Matcher:
        """A matcher of this dialect for what ``match_on`` names; ValueError for a pattern
        that does not compile."""
        ...

    def claims_file(self, data: Mapping[str, Any]) -> bool:
        """Whether a JSON config file has this dialect's shape."""
        ...

    def load_file(self, data: Mapping[str, Any], path: Path, source: Source, loaded: Loaded,
                  project_dir: str, canonical: HostRoles) -> list[Hook]:
        """The hooks of a JSON config file in this dialect (raises ConfigError);
        ``canonical`` is the dialect its policy packs are written in."""
        ...

    def raw_handlers(self, data: Mapping[str, Any], path: Path,
                     project_dir: str) -> Iterator[RawHandler]:
        """Every handler of a JSON config file in this dialect as written, whatever its
        values (for ``validate``); nothing for a shape it does not have."""
        ...


class FolderDialect(Dialect, Protocol):
    """A dialect whose hooks are a folder of executables named after its events."""

    def load_folder(self, path: Path, source: Source, loaded: Loaded) -> None: ...


class HostRoles(Protocol):
    """A host as the registry holds it (``hosts.Host``), as far as a dialect's reader uses
    one: the canonical host it is handed, whose vocabulary policy packs are written in."""

    @property
    def name(self) -> str: ...

    @property
    def title(self) -> str: ...

    @property
    def wire(self) -> Wire: ...

    @property
    def config(self) -> Dialect: ...
