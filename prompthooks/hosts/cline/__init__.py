"""Cline: everything it means to prompthooks.

``wire`` (events in, replies out), ``tools`` (its tool names), ``config`` (a folder of hook
files named after its events), ``framing`` (how a hook written for it answers), ``install``
(the glue) and ``samples``. This module is the host's face (``hosts.protocol.Host``); the
config reader, the glue and the samples are imported only when used.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...errors import ConfigError
from .framing import frame_reply as frame_reply
from .tools import FROM_CLINE, tool_to_cline
from .tools import KNOWN_TOOLS as KNOWN_TOOLS
from .wire import BUDGET as BUDGET
from .wire import CONFIG_EVENTS as CONFIG_EVENTS
from .wire import DEFAULT_TIMEOUT as DEFAULT_TIMEOUT
from .wire import HOST_EVENTS as HOST_EVENTS
from .wire import MAX_CONTEXT as MAX_CONTEXT
from .wire import NAME as NAME
from .wire import SDK_EVENTS
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
TOOL_NAMES = FROM_CLINE
# Cline has no matchers; the subjects its hook names stand for are in CONFIG_EVENTS.
KNOWN_SUBJECTS: dict[str, frozenset[str]] = {}
EVENT_ALIASES = SDK_EVENTS
CONTINUE_FALSE_BLOCKS = False  # Cline has no "continue"; our reading stays Claude Code's
# Cline documents no variables for its hooks, which inherit its process's environment; its
# SDK engine adds CLINE_BUILD_ENV and reads CLINE_VERSION and other CLINE_* settings there.
HOOK_VARIABLES: tuple[str, ...] = ("CLINE_*",)


def host_tool(tool: str) -> str:
    return tool_to_cline(tool)


def make_matcher(pattern: str | None, match_on: MatchOn) -> Matcher:
    """Cline has no matchers: a hook runs for every event of its name."""
    from ...core.matchers import MATCH_ALL

    return MATCH_ALL


def working_dirs(hook: Hook, event: Event) -> list[str | None]:
    """Cline runs a hook in its workspace root (the project folder, which comes next)."""
    return [hook.cwd]


def claims_file(data: Mapping[str, Any]) -> bool:
    return False  # Cline's hooks are a folder of executables, never a JSON file


def load_file(data: Mapping[str, Any], path: Path, source: Source, loaded: Loaded,
              project_dir: str, canonical: Host) -> list[Hook]:
    raise ConfigError(str(path), "Cline hooks are a folder of executables, not a JSON file")


def raw_handlers(data: Mapping[str, Any], path: Path,
                 project_dir: str) -> Iterator[RawHandler]:
    return iter(())  # Cline's hooks are never a JSON file


def load_folder(path: Path, source: Source, loaded: Loaded) -> None:
    from .config import load_folder as load

    load(path, source, loaded)


def sends_as_is(event: Event, hook: Hook) -> bool:
    return True  # both of Cline's engines run the same hook file with their own payload


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
