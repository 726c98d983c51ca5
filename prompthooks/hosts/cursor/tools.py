"""Cursor's tool types and the canonical tools they stand for."""

from __future__ import annotations

from ...core.events import MCP_PREFIX, UNKNOWN_MCP_SERVER

# Canonical tool -> Cursor tool type; Claude Code's edit tools are all Cursor's "Write".
TO_CURSOR: dict[str, str] = {
    "Bash": "Shell", "Read": "Read", "Write": "Write", "Edit": "Write", "MultiEdit": "Write",
    "NotebookEdit": "Write", "Grep": "Grep", "Task": "Task", "Delete": "Delete",
}
FROM_CURSOR: dict[str, str] = {"Shell": "Bash", "Read": "Read", "Write": "Write",
                               "Grep": "Grep", "Task": "Task", "Delete": "Delete"}
# The tool types Cursor sends (MCP tools are MCP:<tool>).
KNOWN_TOOLS = frozenset(FROM_CURSOR)


def tool_from_cursor(name: str) -> str:
    """Cursor tool type (``Shell``, ``MCP:tool``) to the canonical tool name."""
    if name.startswith("MCP:"):
        return f"{MCP_PREFIX}{UNKNOWN_MCP_SERVER}__{name[4:]}"
    return FROM_CURSOR.get(name, name)


def tool_to_cursor(name: str) -> str:
    """Canonical tool name to Cursor's tool type, for Cursor-dialect matchers."""
    if name.startswith(MCP_PREFIX):
        return "MCP:" + name.split("__", 2)[-1]
    return TO_CURSOR.get(name, name)
