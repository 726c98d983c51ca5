"""Cline's tool names, their parameter shapes, and the canonical tools they stand for.

The documented (pre-SDK) tools are ``execute_command``, ``read_file``, ``write_to_file``...;
the current extension and the SDK engine name them ``run_commands``, ``read_files``,
``editor``, ``apply_patch``... The extension sends every parameter as a string (arrays and
objects JSON-encoded); the SDK sends the model's raw input, which may be any shape its
schema accepts (``run_commands`` as ``{"commands": [...]}``, ``{"command": ...}``, a bare
string or a list). Both are read here into one shape a guard can check.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from typing import Any

from ...core.events import MCP_PREFIX, UNKNOWN_MCP_SERVER

# Cline tool -> canonical tool.
FROM_CLINE: dict[str, str] = {
    "execute_command": "Bash", "read_file": "Read", "write_to_file": "Write",
    "replace_in_file": "Edit", "search_files": "Grep", "list_files": "Glob",
    "web_fetch": "WebFetch",
    # The SDK's tools (the current extension's too).
    "run_commands": "Bash", "read_files": "Read", "editor": "Edit", "apply_patch": "Edit",
    "search_codebase": "Grep", "fetch_web_content": "WebFetch",
}
# Every tool Cline is known to send: the extension's and the SDK's (the ones FROM_CLINE does
# not map are passed on under their own names).
KNOWN_TOOLS = frozenset({
    *FROM_CLINE, "access_mcp_resource", "ask_followup_question", "ask_question",
    "attempt_completion", "browser_action", "condense", "list_code_definition_names",
    "load_mcp_documentation", "new_rule", "new_task", "plan_mode_respond", "report_bug",
    "skills", "submit_and_exit", "summarize_task", "use_mcp_tool", "web_search"})
# Canonical tool -> the documented Cline tool a Cline-style hook knows it by.
TO_CLINE: dict[str, str] = {"Bash": "execute_command", "Read": "read_file",
                            "Write": "write_to_file", "Edit": "replace_in_file",
                            "Grep": "search_files", "Glob": "list_files",
                            "WebFetch": "web_fetch"}
# SDK tool parameters that hold arrays or objects (sent JSON-encoded by the extension).
# Only these are decoded: a file's new text that happens to be JSON stays text.
_STRUCTURED = frozenset({"commands", "files", "paths", "file_paths", "queries", "requests",
                         "options"})
_SDK_TOOLS = frozenset({"run_commands", "read_files", "editor", "apply_patch",
                        "search_codebase", "fetch_web_content", "ask_question",
                        "submit_and_exit", "skills"})
_MAX_DEPTH = 4  # how deep a run_commands input may nest before it is not read as commands


def tool_from_cline(name: str, parameters: Mapping[str, Any]) -> str:
    """Cline tool name to the canonical one; ``use_mcp_tool`` names its server and tool, and
    the SDK names an MCP tool ``<server>__<tool>``."""
    if name == "use_mcp_tool":
        server = parameters.get("server_name") or UNKNOWN_MCP_SERVER
        tool = parameters.get("tool_name") or "unknown"
        return f"{MCP_PREFIX}{server}__{tool}"
    if name in FROM_CLINE:
        return FROM_CLINE[name]
    if "__" in name.strip("_") and not name.startswith(MCP_PREFIX):
        return MCP_PREFIX + name
    return name


def tool_to_cline(name: str) -> str:
    return TO_CLINE.get(name, name)


def decoded(tool: str, tool_input: Any) -> Any:
    """The input with the SDK tools' JSON-encoded arrays and objects decoded."""
    if tool not in _SDK_TOOLS or not isinstance(tool_input, Mapping):
        return tool_input
    out = dict(tool_input)
    for key in _STRUCTURED & out.keys():
        value = out[key]
        if isinstance(value, str) and value.lstrip()[:1] in ("[", "{"):
            # Not JSON after all: a guard still sees the text.
            with contextlib.suppress(ValueError, RecursionError):
                out[key] = json.loads(value)
    return out


def commands(tool_input: Any, depth: int = 0) -> list[str]:
    """Every command line in a shell tool's input, whatever shape it came in."""
    if depth > _MAX_DEPTH:
        return []
    if isinstance(tool_input, str):
        return [tool_input]
    if isinstance(tool_input, list):
        return [line for item in tool_input for line in commands(item, depth + 1)]
    if isinstance(tool_input, Mapping):
        if "commands" in tool_input:
            return commands(tool_input["commands"], depth + 1)
        command = tool_input.get("command", tool_input.get("cmd"))
        if isinstance(command, str):
            args = tool_input.get("args")
            if isinstance(args, list) and all(isinstance(a, str) for a in args):
                return [" ".join([command, *args])]
            return [command]
    return []


def command(tool_input: Any) -> str | None:
    """The shell commands a tool call runs, one per line (None when it names none)."""
    found = commands(tool_input)
    return "\n".join(found) if found else None
