"""The canonical event: one shape for what every host sends.

Each host module parses its own input into an :class:`Event`. Canonical event and tool names
are Claude Code's (PascalCase events, ``Bash``/``Read``/``Write`` tools, ``mcp__server__tool``),
because that vocabulary is the most widely written; each host maps its own names onto it.
The host's raw input is kept byte for byte in ``raw_bytes``: command hooks receive exactly
what the host sent.
"""

# Annotations are evaluated here (no `from __future__ import annotations`): typing.NamedTuple
# compiles every string annotation of its fields when the class is made, on every run.

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

# Canonical event names. Events that exist in one host only keep a name of their own.
TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest",
                         "PermissionDenied"})
EVENTS = TOOL_EVENTS | frozenset(
    {
        "UserPromptSubmit",
        "UserPromptExpansion",
        "PostToolBatch",
        "StopFailure",
        "TaskCreated",
        "TaskCompleted",
        "TeammateIdle",
        "ConfigChange",
        "CwdChanged",
        "FileChanged",
        "DirectoryAdded",
        "WorktreeRemove",
        "PostCompact",
        "Setup",
        "InstructionsLoaded",
        "Elicitation",
        "ElicitationResult",
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

# Canonical tool names (Claude Code's); each host maps its own onto these
# (``hosts/<name>/wire.py``). "Delete" is Cursor's, with no Claude Code equivalent.
CANONICAL_TOOLS: tuple[str, ...] = ("Bash", "Read", "Write", "Edit", "MultiEdit",
                                    "NotebookEdit", "Grep", "Glob", "Task", "WebFetch",
                                    "Delete")

# The default of a record's mapping field: one shared value, so read-only.
NO_MAPPING: Mapping[str, Any] = MappingProxyType({})


class Event(NamedTuple):
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
    tool_use_id: str | None = None  # the host's id of the tool call, shared by pre and post
    command: str | None = None
    prompt: str | None = None
    # What a matcher sees for non-tool events: SessionStart source, PreCompact trigger,
    # SessionEnd reason, Notification type, subagent type.
    subject: str | None = None
    stop_hook_active: bool = False
    loop_count: int | None = None
    env: Mapping[str, str] = NO_MAPPING
    # Set by a host that sends one action under several events, each running its own entries
    # (Cursor: ``preToolUse`` and ``beforeShellExecution`` for one shell command): hooks of
    # that host's own dialect run only when written under this key.
    own_key: str | None = None
    # False where the same action also comes under a general event of that host (Cursor's
    # ``beforeShellExecution`` beside ``preToolUse``): hooks written for other hosts run on
    # the general one only, so once per action.
    serves_other_dialects: bool = True
    # False when the host names no MCP server (Cursor): a matcher's server part cannot be
    # checked, so only its tool part is matched.
    mcp_server_known: bool = True

    @property
    def is_tool_event(self) -> bool:
        return self.name in TOOL_EVENTS
