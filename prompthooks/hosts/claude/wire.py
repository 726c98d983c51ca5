"""Claude Code on the wire: the events it sends (names, parsing, config event keys), the
replies it reads (rendering), and how a hook written for it is run: what it is sent (any
host's event as Claude Code would have sent it), in what world, and how its answer is read.

A hook's answer: exit 2 blocks with stderr as the reason; exit 0 with stdout starting with
``{`` is a JSON reply; other stdout is plain text (context for UserPromptSubmit and
SessionStart); any other exit code is a hook error.

What it is sent from another host's event: the event (its canonical name is Claude Code's),
the session, the working folder, the tool's name and input (canonical: Bash's ``command``, a
file's ``file_path``), the call's id where the sending host gives one, the tool's response,
the prompt, a stop hook's ``stop_hook_active``, and what a matcher looks at (a session's
source, a compaction's trigger, a subagent's type). Dropped: fields only the sending host has
(Cursor's model and generation, Cline's user id and model); they are in the raw event, which
``raw_event: true`` gives the hook instead."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ...core.events import CANONICAL_TOOLS, Event
from ...core.hook import Trigger
from ...core.merge import Decision
from ...errors import EXIT_BLOCK
from ..fields import canonical_input, dumps, known_event, project_dir, rebuilt, shell_command, text
from ..framing import Framed, decode, exit_2_block, failed, load_object
from ..markers import TITLES
from ..protocol import ConfigEvent, Reply

if TYPE_CHECKING:
    from ...core.hook import Hook

NAME = "claude"
TITLE = TITLES[NAME]
DEFAULT_TIMEOUT = 600.0  # a command hook's own timeout when its handler gives none
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
TOOL_NAMES = {tool: tool for tool in CANONICAL_TOOLS if tool != "Delete"}
CONTINUE_FALSE_BLOCKS = False  # {"continue": false} stops everything
# Hooks run with Claude Code's own environment: CLAUDE_PROJECT_DIR, CLAUDE_ENV_FILE,
# CLAUDE_CODE_REMOTE, CLAUDE_PLUGIN_ROOT..., and CLAUDECODE=1 with CLAUDE_CODE_ENTRYPOINT.
HOOK_VARIABLES: tuple[str, ...] = ("CLAUDE_*", "CLAUDECODE")

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


def parse(raw: Mapping[str, Any], raw_bytes: bytes, event_name: str | None,
          environ: Mapping[str, str]) -> Event:
    host_event = known_event(raw, "hook_event_name", event_name, TITLE, HOST_EVENTS)
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
    return rebuilt(event, {**event.raw, "tool_input": dict(tool_input)}, tool_input)


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


# Hooks written for Claude Code.
def host_tool(tool: str) -> str:
    return tool  # the canonical vocabulary is Claude Code's own


def working_dirs(hook: Hook, event: Event) -> list[str | None]:
    """Claude Code runs hooks in the session's working directory."""
    return [hook.cwd, event.cwd]


def sends_as_is(event: Event, hook: Hook) -> bool:
    return True  # a hook's event key is the event's own name


_TEXT_CONTEXT = frozenset({"UserPromptSubmit", "SessionStart"})  # plain stdout is context


def frame_reply(hook: Hook, event: Event, code: int, stdout: bytes, stderr: bytes) -> Framed:
    if code == 2:
        return exit_2_block(hook.name, stderr)
    if code != 0:
        raise failed(code, stderr)
    text = decode(stdout).strip()
    if not text:
        return "fields", {}
    if not text.startswith("{"):
        return "fields", {"contexts": (text,)} if event.name in _TEXT_CONTEXT else {}
    return "json", load_object(text)


# Event -> the input field its subject (a matcher's target) is sent in.
_SUBJECT_SENT = {"SessionStart": "source", "PreCompact": "trigger", "SessionEnd": "reason",
                 "Notification": "notification_type", "SubagentStart": "agent_type",
                 "SubagentStop": "agent_type"}


def _translated(event: Event, hook: Hook) -> dict[str, Any]:
    out: dict[str, Any] = {"session_id": event.session_id or "",
                           "transcript_path": event.transcript_path,
                           "cwd": event.cwd or event.project_dir,
                           "hook_event_name": event.name}
    if event.tool_name:
        out["tool_name"] = event.tool_name
        out["tool_input"] = canonical_input(event)
        if event.tool_use_id:
            out["tool_use_id"] = event.tool_use_id
        if event.name != "PreToolUse" and event.tool_response is not None:
            out["tool_response"] = event.tool_response
    if event.prompt is not None:
        out["prompt"] = event.prompt
    if event.name in ("Stop", "SubagentStop"):
        out["stop_hook_active"] = event.stop_hook_active
    if event.name in _SUBJECT_SENT and event.subject is not None:
        out[_SUBJECT_SENT[event.name]] = event.subject
    return out


def dialect_env(event: Event) -> dict[str, str]:
    """Claude Code's documented variable for every hook; CLAUDE_ENV_FILE (SessionStart) has no
    file behind it under another host, so it is left unset."""
    return {"CLAUDE_PROJECT_DIR": event.project_dir}


def translate(event: Event, hook: Hook) -> bytes:
    return json.dumps(_translated(event, hook)).encode()


_SAMPLE: dict[str, Any] = {"session_id": "test-session",
                           "transcript_path": "/tmp/transcript.jsonl", "cwd": "/tmp",
                           "permission_mode": "default"}


def sample_event(name: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    """An event as Claude Code would send it, for tests of policies."""
    return {**_SAMPLE, "hook_event_name": name, **fields}
