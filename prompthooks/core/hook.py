"""A configured hook, as loaded from any dialect: a frozen value the engine runs."""

# Annotations are evaluated here (no `from __future__ import annotations`): typing.NamedTuple
# compiles every string annotation of its fields when the class is made, on every run.

import re
from collections.abc import Callable, Iterable, Iterator
from typing import Literal, NamedTuple

from ..redaction import redact
from .events import MCP_PREFIX, Event
from .matchers import MATCH_ALL, Matcher

# A canonical tool's name in a dialect's own words, ``(dialect, tool) -> name``: the host
# registry's (``hosts.host_tool``), handed in by the caller, since core knows no host.
HostTool = Callable[[str, str], str]

Kind = Literal["command", "prompt", "http", "agent"]
# The kinds whose hooks a model judges: a prompt, and an agent (a prompt with read-only tools).
JUDGED: frozenset[str] = frozenset({"prompt", "agent"})
Dialect = str  # the name of the host whose config dialect a hook is written in (hosts)
# What a hook's matcher is compared with.
# "host_tool": the tool's name in the hook's own dialect (Cursor's "Shell" for Bash).
MatchOn = Literal["tool", "host_tool", "command", "subject", "none"]


MAX_TURNS = 50  # an agent hook's model turns at most (Claude Code's own agent hooks' limit)
DEFAULT_TURNS = 10  # an agent hook's model turns unless its ``max_turns`` says otherwise
MAX_NAME = 80  # characters of a handler's name: it is a label in tables and messages


def check_name(value: str) -> str:
    """A handler's ``name``, stripped: one printable line, not blank (it replaces the command
    or "inline prompt" wherever the hook is named). ValueError says what is wrong."""
    if not value.strip():
        raise ValueError("a name must not be blank")
    if len(value) > MAX_NAME:
        raise ValueError(f"a name is at most {MAX_NAME} characters")
    if any(ord(c) < 32 or 127 <= ord(c) < 160 or c in "\u2028\u2029" for c in value):
        raise ValueError("a name must be one line without control characters")
    return value.strip()


# A variable's name as an http hook's allowedEnvVars lists it, and as a header value names it
# ($NAME or ${NAME}).
ENV_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_REFERENCE = re.compile(rf"\$(?:\{{({ENV_NAME})\}}|({ENV_NAME}))")


def variable_reference() -> re.Pattern[str]:
    """The pattern of one ``$NAME`` or ``${NAME}`` (group 1 or 2 is the name)."""
    return _REFERENCE


def references(value: str) -> Iterator[str]:
    """The variables a header value names, as ``$NAME`` or ``${NAME}``."""
    for match in _REFERENCE.finditer(value):
        yield match.group(1) or match.group(2)


def unlisted_variables(headers: Iterable[tuple[str, str]],
                       allowed: Iterable[str]) -> list[tuple[str, str]]:
    """``(header, variable)`` for each variable a header names that ``allowed`` does not list
    (Claude Code sends those empty)."""
    listed = set(allowed)
    return [(name, var) for name, value in headers for var in references(value)
            if var not in listed]


def origin(url: str) -> str:
    """``scheme://host[:port]`` of a URL, without its user, password, path or query: what may
    be shown of an http hook's URL wherever its name is (a query may hold a token)."""
    # urllib.parse (with ipaddress, some 1.5 ms) only for an http hook's URL: a command-only
    # run shows none (before Python 3.13, pathlib imports it anyway).
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        host = parts.hostname or "?"
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "?"
    host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{host}{port}"


def shown_url(url: str) -> str:
    """An http hook's URL as explain and the audit log show it: its origin and path, without
    a user, password or query (``?...`` marks one), since either may hold a token."""
    from urllib.parse import urlsplit  # as in origin

    try:
        path = urlsplit(url).path
    except ValueError:
        path = ""
    return origin(url) + path + ("?..." if "?" in url else "")


class Source(NamedTuple):
    """Where hooks came from. Priority 0 is the highest (managed policy, or the first --config)."""

    name: str
    path: str
    priority: int


class PromptSettings(NamedTuple):
    """A config file's defaults for its prompt hooks (its ``prompthooks`` block)."""

    model: str | None = None
    api_base: str | None = None
    api_key_env: str | None = None  # the name of the variable holding the key, never the key
    max_event_chars: int | None = None
    verdict_cache_ttl: float | None = None
    proxy: str | None = None  # managed hooks only: the proxy their requests go through
    # Consecutive blocks of a session's stop before it is let through (0: no cap).
    stop_block_cap: int | None = None


class Trigger(NamedTuple):
    """The canonical event a config key stands for, narrowed to some tools or a subject."""

    event: str
    tools: tuple[str, ...] = ()  # canonical tool names; "mcp__" stands for every MCP tool
    subject: str | None = None  # e.g. SessionStart source "resume" for Cline's TaskResume

    def fires_on(self, event: Event) -> bool:
        if event.name != self.event:
            return False
        if self.tools:
            tool = event.tool_name or ""
            if not any(tool == t or (t == MCP_PREFIX and tool.startswith(MCP_PREFIX))
                       for t in self.tools):
                return False
        return self.subject is None or event.subject == self.subject


class Hook(NamedTuple):
    """One handler of one config source, ready to run."""

    source: Source
    dialect: Dialect
    config_event: str  # the event key as written in the file
    # config order within the source (a field named as tuple's own method, which it hides:
    # nothing calls that method on a hook)
    index: int  # type: ignore[assignment]
    trigger: Trigger
    kind: Kind
    timeout: float
    label: str  # where it was written, for messages: "path: hooks.PreToolUse[0].hooks[0]"
    matcher: Matcher = MATCH_ALL
    match_on: MatchOn = "none"
    command: str | None = None  # a shell command string (Claude Code, Cursor)
    executable: str | None = None  # a file run through its shebang (Cline)
    # The sha256 of an approved executable's bytes: it runs from a private copy of exactly
    # those bytes, never from the file opened again by name (loading.approval_digest).
    digest: str | None = None
    # http hooks: the URL the event is POSTed to, the request's headers as written (their
    # ``$VAR``s filled at each request, from the allow-listed variables only).
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    allowed_env_vars: tuple[str, ...] = ()
    prompt: str | None = None  # inline template text
    prompt_file: str | None = None  # a shipped template's name or a path
    model: str | None = None
    # The variables in which the host of the hook's dialect names its fast model (Claude
    # Code's): used when neither the handler, PROMPTHOOKS_MODEL nor the file names a model.
    model_variables: tuple[str, ...] = ()
    # That host's own name for its fast model ("haiku"), as a handler's ``model`` may give it.
    fast_model_name: str | None = None
    prompt_settings: PromptSettings | None = None
    max_event_chars: int | None = None
    cache_ttl: float | None = None  # this hook's own verdict cache TTL (seconds)
    fail_closed: bool = False
    loop_limit: int | None = None
    cwd: str | None = None  # a fixed working directory; None = the dialect's rule per event
    config_dir: str | None = None  # the folder of the file that defines the hook
    policy: str | None = None  # "<pack>/<id>" for a policy taken from a pack
    title: str | None = None  # the handler's own ``name``, as its config gives it
    # An "allow" from a hook written for another host is "no objection" unless its config
    # says it approves (``allow_approves``): a Cursor script's default allow must not skip
    # Claude Code's permission prompt.
    allow_approves: bool = False
    # A hook written for another host gets the event translated into its dialect, unless it
    # asks for the sending host's own bytes (``raw_event``).
    raw_event: bool = False
    # Prompt hooks: how many entries of the host's transcript the prompt holds (0: none;
    # None: the event's default, on for Stop and SubagentStop).
    transcript: int | None = None
    # Prompt hooks: the canonical events on which this hook's block also ends the agent's turn
    # (a Claude Code style prompt hook without ``continueOnBlock``, as Claude Code's own).
    halt_on_block: frozenset[str] = frozenset()
    # Agent hooks: how many model turns the tool loop may take (None: the default).
    max_turns: int | None = None

    def identity(self) -> tuple[object, ...]:
        """Handlers equal under this key run once, however many sources list them."""
        # A command naming its own config folder, or a prompt file (which may be relative to
        # it), is a different hook in each folder; so is a prompt with other settings.
        folder = (self.config_dir if self.prompt_file
                  or "PROMPTHOOKS_CONFIG_DIR" in (self.command or "") else None)
        return (self.kind, self.command, self.executable, self.url, self.headers,
                self.allowed_env_vars, self.prompt, self.prompt_file,
                self.model, self.dialect, self.cwd, folder, self.prompt_settings,
                self.max_event_chars, self.cache_ttl, self.allow_approves,
                self.raw_event, self.transcript, self.halt_on_block, self.max_turns)

    @property
    def managed(self) -> bool:
        """From the managed policy: nothing the user or an agent can write may change how it
        runs (no environment overrides, cassettes, verdict cache or warm worker)."""
        return self.source.name == "managed"

    @property
    def name(self) -> str:
        """A short human name: the handler's ``name`` when its config gives one, else the
        command (redacted), the executable or the prompt's file.

        An inline prompt is never quoted: its text is policy, not something for the agent."""
        if self.title:
            return self.title
        if self.kind in JUDGED:
            if self.policy:
                return f"{self.kind} {self.policy}"
            return (f"{self.kind} {self.prompt_file}" if self.prompt_file
                    else f"inline {self.kind}" if self.kind == "agent" else "inline prompt")
        if self.kind == "http":
            return redact(f"http {origin(self.url or '?')}")
        if self.executable:
            return redact("/".join(self.executable.split("/")[-2:]))
        # Redacted before it is cut, so no secret is cut in two: a command may carry one
        # ("GH_TOKEN=ghp_... ./x.sh"), and the name is stored, logged and shown.
        text = redact(" ".join((self.command or "?").split()))
        return text if len(text) <= 60 else text[:57] + "..."

    @property
    def judged(self) -> bool:
        """Whether a model judges this hook (a prompt or an agent hook)."""
        return self.kind in JUDGED

    @property
    def api_key_env(self) -> str | None:
        """The variable a prompt hook's config names for its key, if any."""
        return self.prompt_settings.api_key_env if self.prompt_settings else None

    def applies_to(self, event: Event, host_tool: HostTool) -> bool:
        """True when the hook's event key and matcher both select this event."""
        if not (self.served_by(event) and self.trigger.fires_on(event)):
            return False
        return self.match_on == "none" or self.subject_matches(event, host_tool)

    def served_by(self, event: Event) -> bool:
        """Whether the host that sent ``event`` would run this hook on it at all: its own
        dialect's hooks under the event's own key only (when it says so), other dialects'
        hooks only on an event that serves them (see ``Event.own_key``).

        A managed hook written for another host runs on every event of its action: where the
        glue sits, or a host version without the general event (Cursor's before preToolUse
        existed), must not leave the administrator's policy unrun; it may then run once per
        event Cursor sends for the action."""
        if self.dialect == event.host:
            return event.own_key is None or self.config_event == event.own_key
        return event.serves_other_dialects or self.managed

    def subject_matches(self, event: Event, host_tool: HostTool) -> bool:
        """Whether the matcher selects this event's subject; with no MCP server in the
        event, a canonical tool matcher's server part is not checked (its tool part is). A
        canonical tool matcher also takes the calling host's own name for the tool, as
        Cursor matches the Claude Code hooks it runs (``"matcher": "Shell"``)."""
        subject = self.match_subject(event, host_tool)
        if self.unchecked_server(event):
            found = self.matcher.matches_any_server(subject)
        else:
            found = self.matcher.matches(subject)
        return found or self.matches_host_name(event)

    def matches_host_name(self, event: Event) -> bool:
        """Whether a canonical tool matcher selects the calling host's own tool name."""
        own = event.host_tool_name
        return (self.match_on == "tool" and own is not None and own != event.tool_name
                and self.matcher.matches(own))

    def unchecked_server(self, event: Event) -> bool:
        """Whether ``event`` names no MCP server that this hook's matcher could check."""
        return (self.match_on == "tool" and not event.mcp_server_known
                and (event.tool_name or "").startswith(MCP_PREFIX))

    def match_subject(self, event: Event, host_tool: HostTool) -> str | None:
        """What the matcher is compared with for this event."""
        if self.match_on == "tool":
            return event.tool_name
        if self.match_on == "host_tool":
            return host_tool(self.dialect, event.tool_name) if event.tool_name else None
        if self.match_on == "command":
            return event.command
        if self.match_on == "subject":
            return event.subject
        return None
