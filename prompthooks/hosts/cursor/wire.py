"""Cursor on the wire: event names, input parsing, config event keys and rendering."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ...core.events import Event
from ...core.hook import Trigger
from ...core.merge import Decision
from ...errors import EXIT_BLOCK
from .. import _common
from .._common import ConfigEvent, Reply, dumps, first_root, project_dir, shell_command, text
from .tools import tool_from_cursor

NAME = "cursor"
TITLE = "Cursor"
# The run's whole budget (seconds): Cursor documents no default; the glue sets 60 s.
BUDGET = 55.0
# A command hook's own timeout when its handler gives none: Cursor documents none; Cline's.
DEFAULT_TIMEOUT = 30.0

_EDIT_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")
# Cursor event -> (canonical event, the canonical tools it stands for, the matcher subject).
CONFIG_EVENTS: dict[str, ConfigEvent] = {
    "preToolUse": ConfigEvent(Trigger("PreToolUse"), "host_tool"),
    "postToolUse": ConfigEvent(Trigger("PostToolUse"), "host_tool"),
    "postToolUseFailure": ConfigEvent(Trigger("PostToolUseFailure"), "host_tool"),
    "beforeShellExecution": ConfigEvent(Trigger("PreToolUse", ("Bash",)), "command"),
    "afterShellExecution": ConfigEvent(Trigger("PostToolUse", ("Bash",)), "command"),
    "beforeMCPExecution": ConfigEvent(Trigger("PreToolUse", ("mcp__",)), "host_tool"),
    "afterMCPExecution": ConfigEvent(Trigger("PostToolUse", ("mcp__",)), "host_tool"),
    "beforeReadFile": ConfigEvent(Trigger("PreToolUse", ("Read",)), "host_tool"),
    "afterFileEdit": ConfigEvent(Trigger("PostToolUse", _EDIT_TOOLS), "host_tool"),
    "beforeSubmitPrompt": ConfigEvent(Trigger("UserPromptSubmit")),
    "stop": ConfigEvent(Trigger("Stop")),
    "subagentStart": ConfigEvent(Trigger("SubagentStart"), "subject"),
    "subagentStop": ConfigEvent(Trigger("SubagentStop"), "subject"),
    "sessionStart": ConfigEvent(Trigger("SessionStart")),
    "sessionEnd": ConfigEvent(Trigger("SessionEnd")),
    "preCompact": ConfigEvent(Trigger("PreCompact")),
    "afterAgentResponse": ConfigEvent(Trigger("AfterAgentResponse")),
    "afterAgentThought": ConfigEvent(Trigger("AfterAgentThought")),
    "beforeTabFileRead": ConfigEvent(Trigger("BeforeTabFileRead")),
    "afterTabFileEdit": ConfigEvent(Trigger("AfterTabFileEdit")),
}
HOST_EVENTS: dict[str, str] = {key: ce.trigger.event for key, ce in CONFIG_EVENTS.items()}

_PERMISSION_EVENTS = frozenset({"preToolUse", "beforeShellExecution", "beforeMCPExecution",
                                "beforeReadFile", "subagentStart", "beforeTabFileRead"})
# Events where Cursor knows only allow and deny: "ask" becomes "deny" (the safe reading).
_NO_ASK = frozenset({"beforeReadFile", "subagentStart", "beforeTabFileRead"})
_CONTEXT_EVENTS = frozenset({"postToolUse", "afterShellExecution", "afterMCPExecution",
                             "afterFileEdit", "postToolUseFailure"})


def looks_like(raw: Mapping[str, Any]) -> bool:
    return "cursor_version" in raw or "conversation_id" in raw


def _json_or_text(value: Any) -> Any:
    """Cursor sends MCP tool input as a JSON string; give hooks and policies the object."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _tool(host_event: str, raw: Mapping[str, Any]) -> tuple[str | None, str | None, Any, Any]:
    """(canonical tool, Cursor's tool name, tool input, tool response) for a Cursor event."""
    if host_event in ("beforeShellExecution", "afterShellExecution"):
        return "Bash", "Shell", {"command": raw.get("command")}, raw.get("output")
    if host_event in ("beforeMCPExecution", "afterMCPExecution"):
        name = text(raw, "tool_name") or "unknown"
        return (tool_from_cursor("MCP:" + name), "MCP:" + name,
                _json_or_text(raw.get("tool_input")), _json_or_text(raw.get("result_json")))
    if host_event == "beforeReadFile":
        return "Read", "Read", {"file_path": raw.get("file_path")}, None
    if host_event == "afterFileEdit":
        return "Write", "Write", {"file_path": raw.get("file_path"),
                                  "edits": raw.get("edits")}, None
    host_tool = text(raw, "tool_name")
    if host_tool is None:
        return None, None, None, None
    return (tool_from_cursor(host_tool), host_tool, raw.get("tool_input"),
            raw.get("tool_output"))


def parse(raw: Mapping[str, Any], raw_bytes: bytes, event_name: str | None,
          environ: Mapping[str, str]) -> Event:
    host_event = _common.host_event(raw, "hook_event_name", event_name, TITLE, HOST_EVENTS)
    tool, host_tool, tool_input, tool_response = _tool(host_event, raw)
    loop_count = raw.get("loop_count")
    if not isinstance(loop_count, int) or isinstance(loop_count, bool):
        loop_count = None
    subject = text(raw, "subagent_type") or text(raw, "trigger") or text(raw, "reason")
    return Event(
        host=NAME,
        host_event=host_event,
        name=HOST_EVENTS[host_event],
        raw=raw,
        raw_bytes=raw_bytes,
        project_dir=project_dir(environ.get("CURSOR_PROJECT_DIR"),
                                first_root(raw, "workspace_roots"), text(raw, "cwd")),
        cwd=text(raw, "cwd"),
        session_id=text(raw, "conversation_id") or text(raw, "session_id"),
        transcript_path=text(raw, "transcript_path"),
        tool_name=tool,
        host_tool_name=host_tool,
        tool_use_id=text(raw, "tool_use_id"),
        tool_input=tool_input,
        tool_response=tool_response,
        command=shell_command(tool_input) if tool == "Bash" else None,
        prompt=text(raw, "prompt"),
        subject="startup" if host_event == "sessionStart" else subject,
        stop_hook_active=bool(loop_count),
        loop_count=loop_count,
        # Cursor sends a shell command as preToolUse and as beforeShellExecution, each to
        # the hooks written under that key; hooks of other hosts run on the general one.
        own_key=host_event,
        serves_other_dialects=not CONFIG_EVENTS[host_event].trigger.tools,
        mcp_server_known=False,
    )


def hook_env(event: Event) -> dict[str, str]:
    env = {"CURSOR_PROJECT_DIR": event.project_dir, "CLAUDE_PROJECT_DIR": event.project_dir}
    for var, key in (("CURSOR_VERSION", "cursor_version"), ("CURSOR_USER_EMAIL", "user_email"),
                     ("CURSOR_TRANSCRIPT_PATH", "transcript_path")):
        value = text(event.raw, key)
        if value:
            env[var] = value
    return env


def with_input(event: Event, tool_input: Mapping[str, Any]) -> Event:
    """The event with its tool input rewritten (to judge an ``updated_input`` again), each
    event's input where that event carries it."""
    raw = dict(event.raw)
    if event.host_event in ("beforeShellExecution", "afterShellExecution"):
        raw["command"] = tool_input.get("command")
    elif event.host_event == "beforeReadFile":
        raw["file_path"] = tool_input.get("file_path")
    else:
        raw["tool_input"] = dict(tool_input)
    return _common.rebuilt(event, raw, tool_input)


def render(decision: Decision, event: Event) -> Reply:
    """Cursor JSON on stdout, exit 0."""
    name = event.host_event
    out: dict[str, Any] = {}
    blocked = decision.blocked or decision.halt
    agent = decision.reason or decision.stop_reason
    # Cursor has no message for the person apart from a verdict's: a system message (a notice
    # that a hook cannot judge) goes with the user_message where one is sent.
    user = "\n".join(m for m in (decision.user_message or agent, decision.system_message)
                     if m) or None
    if name in _PERMISSION_EVENTS:
        permission = "deny" if decision.halt else decision.permission
        if permission == "ask" and name in _NO_ASK:
            permission = "deny"
        if permission:
            out["permission"] = permission
            if permission != "allow":
                if user:
                    out["user_message"] = user
                if agent:
                    out["agent_message"] = agent
        if (name == "preToolUse" and decision.updated_input is not None
                and permission != "deny"):
            out["updated_input"] = dict(decision.updated_input)
    elif name == "beforeSubmitPrompt":
        out["continue"] = not blocked
        if blocked and user:
            out["user_message"] = user
    elif name in ("stop", "subagentStop"):
        # Only a block keeps the agent going; "stop everything" must not become a follow-up.
        if decision.blocked and not decision.halt:
            out["followup_message"] = (decision.reason
                                       or "A prompthooks hook asked to keep going.")
        elif decision.contexts and not decision.halt:
            # Context from a stop hook keeps the agent going with it (Claude Code's Stop
            # additionalContext); Cursor's only way to say so is a follow-up.
            out["followup_message"] = "\n\n".join(decision.contexts)
    elif name in _CONTEXT_EVENTS:
        contexts = list(decision.contexts)
        if blocked and agent:
            contexts.append(agent)
        if contexts:
            out["additional_context"] = "\n\n".join(contexts)
        if decision.updated_tool_output is not None:
            out["updated_mcp_tool_output"] = decision.updated_tool_output
    elif name == "sessionStart":
        if decision.env:
            out["env"] = dict(decision.env)
        if decision.contexts:
            out["additional_context"] = "\n\n".join(decision.contexts)
    elif name == "preCompact" and decision.user_message:
        out["user_message"] = decision.user_message
    return Reply(dumps(out))


def block_reply(message: str) -> Reply:
    """A block when no event could be read: exit 2 (Cursor's deny), message on stderr."""
    return Reply("", EXIT_BLOCK)
