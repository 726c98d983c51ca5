"""Cursor: everything it means to prompthooks.

``wire`` (events in, replies out), ``tools`` (its tool types), ``config`` and ``schema`` (its
``hooks.json``), ``matchers``, ``framing`` (how a hook written for it answers), ``install``
(the glue) and ``samples``. This module is the host's face (``hosts.protocol.Host``); the
config reader, the glue and the samples are imported only when used.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .framing import frame_reply as frame_reply
from .tools import FROM_CURSOR, tool_to_cursor
from .tools import KNOWN_TOOLS as KNOWN_TOOLS
from .wire import BUDGET as BUDGET
from .wire import CONFIG_EVENTS as CONFIG_EVENTS
from .wire import DEFAULT_TIMEOUT as DEFAULT_TIMEOUT
from .wire import HOST_EVENTS as HOST_EVENTS
from .wire import NAME as NAME
from .wire import TITLE as TITLE
from .wire import block_reply as block_reply
from .wire import hook_env as hook_env
from .wire import looks_like as looks_like
from .wire import parse as parse
from .wire import render as render
from .wire import with_input as with_input

if TYPE_CHECKING:
    from ...config.load_result import Loaded
    from ...core.events import Event
    from ...core.hook import Hook, MatchOn, Source
    from ...core.matchers import Matcher
    from ...install.host import HostGlue
    from ...transcripts.reading import TranscriptReader
    from .._common import RawHandler
    from ..protocol import Host

EVENT_BUDGETS: dict[str, float] = {}  # every event has the host's whole budget
TOOL_NAMES = FROM_CURSOR
KNOWN_SUBJECTS: dict[str, frozenset[str]] = {}  # its matchers see tools, commands, agents
EVENT_ALIASES: dict[str, str] = {}
CONTINUE_FALSE_BLOCKS = True  # beforeSubmitPrompt's {"continue": false} refuses the prompt
# CURSOR_PROJECT_DIR, CURSOR_VERSION, CURSOR_USER_EMAIL, CURSOR_TRANSCRIPT_PATH and the
# editor's own (CURSOR_TRACE_ID...), with CLAUDE_PROJECT_DIR as Cursor's alias of the first
# (and CLAUDE_PLUGIN_ROOT of CURSOR_PLUGIN_ROOT for a plugin's hooks).
HOOK_VARIABLES: tuple[str, ...] = ("CURSOR_*", "CLAUDE_PROJECT_DIR", "CLAUDE_PLUGIN_ROOT")


def host_tool(tool: str) -> str:
    return tool_to_cursor(tool)


def make_matcher(pattern: str | None, match_on: MatchOn) -> Matcher:
    from .matchers import cursor_matcher

    return cursor_matcher(pattern)


def working_dirs(hook: Hook, event: Event) -> list[str | None]:
    """The folder fixed when the config was read (the project root, or the config's own)."""
    return [hook.cwd]


def claims_file(data: Mapping[str, Any]) -> bool:
    from .config import claims_file as claims

    return claims(data)


def load_file(data: Mapping[str, Any], path: Path, source: Source, loaded: Loaded,
              project_dir: str, canonical: Host) -> list[Hook]:
    from .config import load_file as load

    return load(data, path, source, loaded, project_dir, canonical)


def raw_handlers(data: Mapping[str, Any], path: Path,
                 project_dir: str) -> Iterator[RawHandler]:
    from .config import raw_handlers as walk

    return walk(data, path, project_dir)


def sends_as_is(event: Event, hook: Hook) -> bool:
    """Cursor sends each hook the event of its own key (the only event that runs it)."""
    return hook.config_event == event.host_event


def translate(event: Event, hook: Hook) -> bytes:
    import json

    from .translation import translate as native

    return json.dumps(native(event, hook)).encode()


def dialect_env(event: Event) -> dict[str, str]:
    from .translation import environment

    return environment(event)


def glue() -> HostGlue:
    from .install import GLUE

    return GLUE


def sample_event(name: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    from .samples import sample_event as sample

    return sample(name, fields)


def transcript_reader() -> TranscriptReader:
    from . import transcript

    return transcript
