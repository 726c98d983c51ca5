"""The hosts prompthooks speaks to, in one registry.

Each host (``hosts/<name>/``) is a few modules by role: ``wire`` (events in, replies out, and
how a hook written for it is run), ``config`` (its config dialect), ``install`` (the glue)
and ``transcript`` (its session log). A :class:`Host` is its name, its budgets and what marks
its events (``markers``), and those modules, each imported the first time it is asked for:
the thin client imports this package for its table, and ``run`` loads the wire of the host
that sent the event and of the dialects of the hooks it runs, nothing more.

The rest of prompthooks finds a host here by name, by the event it sent, or by the shape of a
config file, and asks it instead of branching on its name.
"""

from __future__ import annotations

import importlib

from .markers import BUDGETS, EVENT_BUDGETS, EVENT_KEYS, HOOK_FILES, MARKERS, TITLES
from .markers import NAMES as NAMES

# Not typing's: the thin client imports this package, and typing costs more than it does
# (mypy reads any TYPE_CHECKING as true).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

    from ..core.events import Event
    from ..core.hook import Hook
    from ..install.glue import HostGlue
    from ..transcripts.reading import TranscriptReader
    from .protocol import Dialect, FolderDialect, Wire

__all__ = ["CANONICAL", "FOLDER_DIALECT", "HOSTS", "NAMES", "Host", "budget", "detect",
           "file_dialect", "folder_dialect", "get", "home", "hook_variables", "host_tool",
           "sender"]


class Host:
    """One host: its name, budgets and markers, and its modules by role, each imported on
    first use (``wire``, ``config``, ``glue``, ``transcript``)."""

    __slots__ = ("budget", "event_budgets", "event_key", "hook_files", "markers", "name",
                 "title")

    def __init__(self, name: str) -> None:
        self.name = name
        self.title = TITLES[name]
        self.budget = BUDGETS[name]  # the run's whole budget (seconds) when this host calls
        self.event_budgets = EVENT_BUDGETS[name]  # its events that get less
        self.event_key = EVENT_KEYS[name]  # the key its events are named in
        self.markers = MARKERS[name]
        self.hook_files = HOOK_FILES.get(name, ())  # as a folder dialect: its hook files

    def __repr__(self) -> str:
        return f"<host {self.name}>"

    def looks_like(self, raw: Mapping[str, Any]) -> bool:
        """Whether ``raw`` has this host's marker keys."""
        return any(all(key in raw for key in group) for group in self.markers)

    def _role(self, role: str) -> Any:
        return importlib.import_module(f"{__name__}.{self.name}.{role}")

    @property
    def wire(self) -> Wire:
        """What the host sends and reads back, and how a hook written for it is run."""
        wire: Wire = self._role("wire")
        return wire

    @property
    def config(self) -> Dialect:
        """Its config dialect: the shape of its files, their reading, its matchers."""
        config: Dialect = self._role("config")
        return config

    @property
    def glue(self) -> HostGlue:
        """How prompthooks is wired into it (never on the ``run`` path)."""
        glue: HostGlue = self._role("install").GLUE
        return glue

    @property
    def transcript(self) -> TranscriptReader:
        """The reader of its session transcript, for prompt hooks that judge the
        conversation."""
        reader: TranscriptReader = self._role("transcript")
        return reader


HOSTS: dict[str, Host] = {name: Host(name) for name in NAMES}
# The host whose vocabulary is canonical (events, tools): policy packs are written in it, and
# it answers when nothing else can be told.
CANONICAL = HOSTS["claude"]
# The host whose hooks are a folder of executables named after its events.
FOLDER_DIALECT = HOSTS["cline"]
_DETECT_ORDER = tuple(HOSTS[name] for name in MARKERS)


def sender(data: bytes, host_name: str | None,
           event_name: str | None) -> tuple[Host | None, str | None]:
    """The host that sent ``data`` and its own name for the event, as far as the bytes tell
    (``host_name`` and ``event_name``, the run's options, first): what the run's budget
    follows, read without the host's wire module."""
    # For the run's supervisor: the thin client imports this package, never json.
    import json

    from ..errors import InputError  # (as above)

    host = HOSTS.get(host_name) if host_name else None
    raw = None
    try:
        value = json.loads(data.removeprefix(b"\xef\xbb\xbf"))
        raw = value if isinstance(value, dict) else None
    except (ValueError, RecursionError):
        pass
    if host is None and raw is not None:
        try:
            host = detect(raw)
        except InputError:
            host = None
    name = event_name  # as the hosts' parsers read it: an empty name is no name
    if not name and raw is not None and host is not None:
        name = next((raw[key] for key in dict.fromkeys(EVENT_KEYS.values())
                     if isinstance(raw.get(key), str) and raw[key]), None)
    return host, name


def folder_dialect() -> FolderDialect:
    """The folder dialect's config reader (its ``load_folder``)."""
    reader: FolderDialect = importlib.import_module(f"{__name__}.{FOLDER_DIALECT.name}.config")
    return reader


def detect(raw: Mapping[str, Any]) -> Host:
    """The host that sent ``raw``: Cline, Cursor, then Claude Code by their marker fields."""
    for host in _DETECT_ORDER:
        if host.looks_like(raw):
            return host
    name = raw.get(CANONICAL.event_key)
    if isinstance(name, str) and name:
        # camelCase event names are Cursor's, PascalCase Claude Code's.
        return HOSTS["cursor"] if name[0].islower() else CANONICAL
    from ..errors import InputError  # only for this error: the thin client imports the package

    raise InputError(f"cannot tell which host sent this event; pass --host {'|'.join(NAMES)}")


def budget(host: Host, event: str | None) -> float:
    """The run's whole budget (seconds) when ``host`` sends ``event`` (its own name)."""
    return host.event_budgets.get(event or "", host.budget)


def get(name: str) -> Host:
    try:
        return HOSTS[name]
    except KeyError:
        from ..errors import InputError  # as in detect

        raise InputError(f"unknown host {name!r}; use {', '.join(NAMES[:-1])} or "
                         f"{NAMES[-1]}") from None


def host_tool(dialect: str, tool: str) -> str:
    """A canonical tool's name in ``dialect``'s own words (what its tool matchers see)."""
    return get(dialect).wire.host_tool(tool)


def file_dialect(data: Mapping[str, Any]) -> Host:
    """The dialect a JSON config file is written in: the first host that claims its shape,
    else the canonical one."""
    for host in HOSTS.values():
        if host is not CANONICAL and host.config.claims_file(data):
            return host
    return CANONICAL


# The world a command hook runs in: its environment and working folder say the same host as
# its stdin. A hook written for one host and run under another gets the event in its own
# dialect, so it must not find the sending host's variables beside it: a Claude Code script
# under Cursor that saw ``CURSOR_VERSION`` would take itself for a Cursor hook and answer in
# Cursor's words (as third-party hooks that pick their adapter from that variable do). So the
# sending host's variables are taken away and the hook's own host's are set. A hook that asked
# for the sending host's bytes (``raw_event``) keeps the sending host's world whole.

def home(hook: Hook, event: Event) -> Host:
    """The host whose world ``hook`` runs in: the sending host's when the hook gets its
    bytes, else the host the hook was written for."""
    return get(event.host if hook.raw_event else hook.dialect)


def _named(patterns: Iterable[str], name: str) -> bool:
    """Whether ``name`` is one of ``patterns`` (a trailing ``*`` matches any rest)."""
    return any(name.startswith(p[:-1]) if p.endswith("*") else name == p for p in patterns)


def hook_variables(hook: Hook, event: Event, base: Mapping[str, str]) -> dict[str, str]:
    """``base`` (the environment prompthooks was started with) as the hook's own host would
    have given it: under that host, with the variables prompthooks read from its event;
    under another, without the sending host's variables and with its own host's."""
    world = home(hook, event)
    if event.host == world.name:
        return {**base, **event.env}
    sender = get(event.host).wire.HOOK_VARIABLES
    env = {name: value for name, value in base.items() if not _named(sender, name)}
    env.update(world.wire.dialect_env(event))
    return env
