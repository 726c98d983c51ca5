"""The canonical event: one shape for what every host sends.

Each host module parses its own input into an :class:`Event`. Canonical event and tool names
are Claude Code's (PascalCase events, ``Bash``/``Read``/``Write`` tools, ``mcp__server__tool``),
because that vocabulary is the most widely written; Cursor and Cline names map onto it.
The host's raw input is kept byte for byte in ``raw_bytes``: command hooks receive exactly
what the host sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# Canonical event names. Events that exist in one host only keep a name of their own.
TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest"})
EVENTS = TOOL_EVENTS | frozenset(
    {
        "UserPromptSubmit",
        "Stop",
        "SubagentStart",
        "SubagentStop",
        "SessionStart",
        "SessionEnd",
        "PreCompact",
        "Notification",
        "AfterAgentResponse",
        "AfterAgentThought",
        "BeforeTabFileRead",
        "AfterTabFileEdit",
    }
)
# Events where a block means "keep going" (the agent or subagent may not stop yet).
STOP_EVENTS = frozenset({"Stop", "SubagentStop"})

MCP_PREFIX = "mcp__"
# The server name used when a host does not say which MCP server a tool belongs to (Cursor).
UNKNOWN_MCP_SERVER = "unknown"

# Tool names across hosts: (canonical, Cursor tool type, Cline tool). None = no such tool.
TOOL_TABLE: tuple[tuple[str, str | None, str | None], ...] = (
    ("Bash", "Shell", "execute_command"),
    ("Read", "Read", "read_file"),
    ("Write", "Write", "write_to_file"),
    ("Edit", "Write", "replace_in_file"),
    ("MultiEdit", "Write", None),
    ("NotebookEdit", "Write", None),
    ("Grep", "Grep", "search_files"),
    ("Glob", None, "list_files"),
    ("Task", "Task", None),
    ("WebFetch", None, "web_fetch"),
    ("Delete", "Delete", None),
)
_FROM_CURSOR: dict[str, str] = {}
for _canon, _cursor, _ in TOOL_TABLE:
    if _cursor:
        _FROM_CURSOR.setdefault(_cursor, _canon)  # the first row wins: Cursor "Write" is Write
_FROM_CLINE = {cline: canon for canon, _, cline in TOOL_TABLE if cline}
_TO_CURSOR = {canon: cursor for canon, cursor, _ in TOOL_TABLE if cursor}


def tool_from_cursor(name: str) -> str:
    """Cursor tool type (``Shell``, ``MCP:tool``) to the canonical tool name."""
    if name.startswith("MCP:"):
        return f"{MCP_PREFIX}{UNKNOWN_MCP_SERVER}__{name[4:]}"
    return _FROM_CURSOR.get(name, name)


def tool_from_cline(name: str, parameters: Mapping[str, Any]) -> str:
    """Cline tool name to the canonical one; ``use_mcp_tool`` names its server and tool."""
    if name == "use_mcp_tool":
        server = parameters.get("server_name") or UNKNOWN_MCP_SERVER
        tool = parameters.get("tool_name") or "unknown"
        return f"{MCP_PREFIX}{server}__{tool}"
    return _FROM_CLINE.get(name, name)


def tool_to_cursor(name: str) -> str:
    """Canonical tool name to Cursor's tool type, for Cursor-dialect matchers."""
    if name.startswith(MCP_PREFIX):
        return "MCP:" + name.split("__", 2)[-1]
    return _TO_CURSOR.get(name, name)


@dataclass(frozen=True, slots=True)
class Event:
    """One hook event from any host, in canonical terms, with the raw input kept."""

    host: str
    host_event: str
    name: str
    raw: Mapping[str, Any]
    raw_bytes: bytes
    project_dir: str
    cwd: str | None = None
    session_id: str | None = None
    transcript_path: str | None = None
    tool_name: str | None = None
    host_tool_name: str | None = None
    tool_input: Any = None
    tool_response: Any = None
    command: str | None = None
    prompt: str | None = None
    # What a matcher sees for non-tool events: SessionStart source, PreCompact trigger,
    # SessionEnd reason, Notification type, subagent type.
    subject: str | None = None
    stop_hook_active: bool = False
    loop_count: int | None = None
    env: Mapping[str, str] = field(default_factory=dict)

    @property
    def is_tool_event(self) -> bool:
        return self.name in TOOL_EVENTS
