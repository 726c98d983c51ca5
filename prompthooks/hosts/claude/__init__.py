"""Claude Code: everything it means to prompthooks.

``wire`` (events in, replies out), ``config`` and ``schema`` (its ``settings.json`` hooks),
``matchers``, ``framing`` (how a hook written for it answers), ``install`` (the glue) and
``samples``. This module is the host's face (``hosts.protocol.Host``); the config reader,
the glue and the samples are imported only when used.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...core.events import CANONICAL_TOOLS
from .framing import frame_reply as frame_reply
from .wire import BUDGET as BUDGET
from .wire import CONFIG_EVENTS as CONFIG_EVENTS
from .wire import EVENT_BUDGETS as EVENT_BUDGETS
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

from .wire import DEFAULT_TIMEOUT as DEFAULT_TIMEOUT

TOOL_NAMES = {tool: tool for tool in CANONICAL_TOOLS if tool != "Delete"}
# Claude Code's built-in tools, past and present (its tools reference), beside the canonical
# ones; MCP tools are mcp__<server>__<tool>.
KNOWN_TOOLS = frozenset({
    *TOOL_NAMES, "Agent", "AskUserQuestion", "BashOutput", "EnterPlanMode", "ExitPlanMode",
    "KillBash", "KillShell", "LS", "LSP", "ListMcpResourcesTool", "NotebookRead",
    "ReadMcpResourceTool", "Skill", "SlashCommand", "TaskCreate", "TaskGet", "TaskList",
    "TaskOutput", "TaskStop", "TaskUpdate", "TodoRead", "TodoWrite", "ToolSearch",
    "WebSearch"})
# The values Claude Code documents for its matchers on non-tool events.
KNOWN_SUBJECTS: dict[str, frozenset[str]] = {
    "SessionStart": frozenset({"startup", "resume", "clear", "compact"}),
    "PreCompact": frozenset({"manual", "auto"}),
    "SessionEnd": frozenset({"clear", "logout", "prompt_input_exit", "other",
                             "bypass_permissions_disabled"}),
    "Notification": frozenset({"permission_prompt", "idle_prompt", "auth_success",
                               "elicitation_dialog"}),
}
EVENT_ALIASES: dict[str, str] = {}
CONTINUE_FALSE_BLOCKS = False  # {"continue": false} stops everything
# Hooks run with Claude Code's own environment: CLAUDE_PROJECT_DIR, CLAUDE_ENV_FILE,
# CLAUDE_CODE_REMOTE, CLAUDE_PLUGIN_ROOT..., and CLAUDECODE=1 with CLAUDE_CODE_ENTRYPOINT.
HOOK_VARIABLES: tuple[str, ...] = ("CLAUDE_*", "CLAUDECODE")


def host_tool(tool: str) -> str:
    return tool  # the canonical vocabulary is Claude Code's own


def make_matcher(pattern: str | None, match_on: MatchOn) -> Matcher:
    from .matchers import claude_matcher

    return claude_matcher(pattern)


def working_dirs(hook: Hook, event: Event) -> list[str | None]:
    """Claude Code runs hooks in the session's working directory."""
    return [hook.cwd, event.cwd]


def claims_file(data: Mapping[str, Any]) -> bool:
    """Claude Code's nested shape is the default: any JSON file no other dialect claims."""
    return True


def load_file(data: Mapping[str, Any], path: Path, source: Source, loaded: Loaded,
              project_dir: str, canonical: Host) -> list[Hook]:
    from .config import load_file as load

    return load(data, path, source, loaded, project_dir, canonical)


def raw_handlers(data: Mapping[str, Any], path: Path,
                 project_dir: str) -> Iterator[RawHandler]:
    from .config import raw_handlers as walk

    return walk(data, path, project_dir)


def sends_as_is(event: Event, hook: Hook) -> bool:
    return True  # a hook's event key is the event's own name


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
