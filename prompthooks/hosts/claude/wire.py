"""Claude Code on the wire: event names, input parsing, config event keys and rendering."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...core.events import Event
from ...core.hook import Trigger
from ...core.merge import Decision
from ...errors import EXIT_BLOCK
from .. import _common
from .._common import ConfigEvent, Reply, dumps, project_dir, shell_command, text

NAME = "claude"
TITLE = "Claude Code"
# The run's whole budget (seconds): Claude Code gives a command hook 600 s.
BUDGET = 590.0
DEFAULT_TIMEOUT = 600.0  # a command hook's own timeout when its handler gives none
# UserPromptSubmit lowers a command hook's default to 30 s: a glue entry without a timeout of
# its own is killed then, and a killed hook is no block, so the run answers before.
EVENT_BUDGETS: dict[str, float] = {"UserPromptSubmit": 28.0}
# Where Claude Code reads the model of its prompt hooks when the handler names none (its fast,
# Haiku-class model; the second is the older name it still honours).
FAST_MODEL_VARIABLES = ("ANTHROPIC_DEFAULT_HAIKU_MODEL", "ANTHROPIC_SMALL_FAST_MODEL")
FAST_MODEL_NAME = "haiku"  # Claude Code's own name for that model in a handler's "model"

# Event -> the input field its matcher is compared with (None: matchers are ignored).
_SUBJECT_FIELD: dict[str, str | None] = {
    "PreToolUse": "tool_name",
    "PostToolUse": "tool_name",
    "PostToolUseFailure": "tool_name",
    "PermissionRequest": "tool_name",
    "SessionStart": "source",
    "PreCompact": "trigger",
    "SessionEnd": "reason",
    "Notification": "notification_type",
    "SubagentStart": "agent_type",
    "SubagentStop": "agent_type",
    "UserPromptSubmit": None,
    "Stop": None,
    # Events of Claude Code's current reference. WorktreeCreate (its hook makes the worktree
    # and prints its path) and MessageDisplay (its hook rewrites text as it streams) are
    # left out: they ask a hook for a product, not for a verdict.
    "PermissionDenied": "tool_name",
    "UserPromptExpansion": "command_name",
    "PostToolBatch": None,
    "StopFailure": "error",
    "TaskCreated": None,
    "TaskCompleted": None,
    "TeammateIdle": None,
    "ConfigChange": "source",
    "CwdChanged": None,
    "FileChanged": "file_path",
    "DirectoryAdded": "source",
    "WorktreeRemove": None,
    "PostCompact": "trigger",
    "Setup": "trigger",
    "InstructionsLoaded": "load_reason",
    "Elicitation": "mcp_server_name",
    "ElicitationResult": "mcp_server_name",
}
HOST_EVENTS: dict[str, str] = {name: name for name in _SUBJECT_FIELD}

CONFIG_EVENTS: dict[str, ConfigEvent] = {
    name: ConfigEvent(
        Trigger(name),
        "tool" if field == "tool_name" else "subject" if field else "none",
    )
    for name, field in _SUBJECT_FIELD.items()
}

_BLOCK_BY_DECISION = frozenset({"UserPromptSubmit", "PostToolUse", "Stop", "SubagentStop",
                                "PreCompact", "UserPromptExpansion", "PostToolUseFailure",
                                "PostToolBatch", "ConfigChange", "TaskCreated"})
# Events whose block Claude Code reads only from exit 2 (with the reason on stderr) or as
# {"continue": false}; the reply says the latter, which stops the teammate.
_BLOCK_BY_HALT = frozenset({"TeammateIdle", "TaskCompleted"})
# Events whose block is an elicitation declined.
_BLOCK_BY_ACTION = frozenset({"Elicitation", "ElicitationResult"})
# Events whose hookSpecificOutput.additionalContext Claude Code reads. On Stop and
# SubagentStop it keeps the turn going with that context, as feedback rather than an error.
_CONTEXT_EVENTS = frozenset({"PreToolUse", "PostToolUse", "PostToolUseFailure",
                             "UserPromptSubmit", "SessionStart", "SubagentStart", "Stop",
                             "SubagentStop", "UserPromptExpansion", "PostToolBatch", "Setup"})


def looks_like(raw: Mapping[str, Any]) -> bool:
    return "session_id" in raw and "hook_event_name" in raw


def parse(raw: Mapping[str, Any], raw_bytes: bytes, event_name: str | None,
          environ: Mapping[str, str]) -> Event:
    host_event = _common.host_event(raw, "hook_event_name", event_name, TITLE, HOST_EVENTS)
    tool_name = text(raw, "tool_name")
    tool_input = raw.get("tool_input")
    subject_field = _SUBJECT_FIELD[host_event]
    return Event(
        host=NAME,
        host_event=host_event,
        name=host_event,
        raw=raw,
        raw_bytes=raw_bytes,
        project_dir=project_dir(environ.get("CLAUDE_PROJECT_DIR"), text(raw, "cwd")),
        cwd=text(raw, "cwd"),
        session_id=text(raw, "session_id"),
        transcript_path=text(raw, "transcript_path"),
        tool_name=tool_name,
        host_tool_name=tool_name,
        tool_use_id=text(raw, "tool_use_id"),
        tool_input=tool_input,
        tool_response=raw.get("tool_response", raw.get("tool_output")),
        command=shell_command(tool_input) if tool_name == "Bash" else None,
        prompt=text(raw, "prompt"),
        subject=_subject(raw, host_event, subject_field),
        stop_hook_active=raw.get("stop_hook_active") is True,
    )


def _subject(raw: Mapping[str, Any], host_event: str, field: str | None) -> str | None:
    """What a non-tool event's matcher is compared with (FileChanged's: the file's name)."""
    if not field or field == "tool_name":
        return None
    value = text(raw, field)
    if value and host_event == "FileChanged":
        return value.rsplit("/", 1)[-1]
    return value


def hook_env(event: Event) -> dict[str, str]:
    return {"CLAUDE_PROJECT_DIR": event.project_dir}


def with_input(event: Event, tool_input: Mapping[str, Any]) -> Event:
    """The event with its tool input rewritten (to judge an ``updatedInput`` again)."""
    return _common.rebuilt(event, {**event.raw, "tool_input": dict(tool_input)}, tool_input)


def render(decision: Decision, event: Event) -> Reply:
    """Claude Code JSON on stdout, exit 0 (nothing at all when no hook had anything to say)."""
    name = event.host_event
    out: dict[str, Any] = {}
    specific: dict[str, Any] = {"hookEventName": name}
    blocked = decision.blocked
    if name == "PreToolUse":
        if decision.permission:
            specific["permissionDecision"] = decision.permission
            if decision.reason:
                specific["permissionDecisionReason"] = decision.reason
        if decision.updated_input is not None and not blocked:
            specific["updatedInput"] = dict(decision.updated_input)
    elif name == "PermissionRequest":
        if decision.permission == "deny":
            specific["decision"] = {"behavior": "deny",
                                    "message": decision.reason or "Denied by a prompthooks hook"}
        elif decision.permission == "allow":
            verdict: dict[str, Any] = {"behavior": "allow"}
            if decision.updated_input is not None:
                verdict["updatedInput"] = dict(decision.updated_input)
            specific["decision"] = verdict
    elif name in _BLOCK_BY_DECISION and blocked:
        out["decision"] = "block"
        out["reason"] = decision.reason or "Blocked by a prompthooks hook"
    elif name in _BLOCK_BY_HALT and blocked and not decision.halt:
        out["continue"] = False
        out["stopReason"] = decision.reason or "Stopped by a prompthooks hook"
    elif name in _BLOCK_BY_ACTION and blocked:
        specific["action"] = "decline"
    if name == "PostToolUse" and decision.updated_tool_output is not None and not blocked:
        specific["updatedToolOutput"] = decision.updated_tool_output
    if decision.contexts and name in _CONTEXT_EVENTS:
        specific["additionalContext"] = "\n\n".join(decision.contexts)
    if decision.halt:
        out["continue"] = False
        if decision.stop_reason:
            out["stopReason"] = decision.stop_reason
    if decision.system_message:
        out["systemMessage"] = decision.system_message
    if decision.suppress_output:
        out["suppressOutput"] = True
    if len(specific) > 1:
        out["hookSpecificOutput"] = specific
    return Reply(dumps(out) if out else "")


def block_reply(message: str) -> Reply:
    """A block when no event could be read: exit 2, the message goes to stderr."""
    return Reply("", EXIT_BLOCK)
