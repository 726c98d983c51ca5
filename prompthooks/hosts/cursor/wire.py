"""Cursor on the wire: the events it sends (names, parsing, config event keys, its tool
types), the replies it reads (rendering), and how a hook written for it is run: what it is
sent, in what world, and how its answer is read.

A hook's answer: exit 2 blocks (Cursor's deny), with the hook's own ``user_message``/
``agent_message`` when its stdout is a JSON object holding them, else its stderr; exit 0 with
stdout is a JSON reply, empty stdout no opinion; any other exit code is a hook error.

What it is sent: any host's event as Cursor would have sent it to the hook's own event key (a
hook on ``beforeShellExecution`` gets ``command`` and ``cwd``, one on ``preToolUse`` gets the
tool type, ``Shell``, and its input, one on ``beforeReadFile`` the ``file_path``). Kept: the
event (as the hook's own key), the session (as ``conversation_id``), the project folder (as
``workspace_roots``), the tool's Cursor type and input, its output (as Cursor's JSON string),
the prompt, a stop's ``loop_count``. Dropped: fields only the sending host has (Claude Code's
permission mode, Cline's user id); ``model`` and ``generation_id`` are empty."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ...core.events import MCP_PREFIX, UNKNOWN_MCP_SERVER, Event
from ...core.hook import Trigger
from ...core.merge import Decision
from ...errors import EXIT_BLOCK
from ..fields import (
    canonical_input,
    dumps,
    first_root,
    known_event,
    project_dir,
    rebuilt,
    shell_command,
    text,
)
from ..framing import Framed, decode, exit_2_block, failed, load_object
from ..markers import TITLES
from ..protocol import ConfigEvent, Reply

if TYPE_CHECKING:
    from ...core.hook import Hook

NAME = "cursor"
TITLE = TITLES[NAME]
# A command hook's own timeout when its handler gives none: Cursor documents none; Cline's.
DEFAULT_TIMEOUT = 30.0

# Canonical tool -> Cursor tool type; Claude Code's edit tools are all Cursor's "Write".
TO_CURSOR: dict[str, str] = {
    "Bash": "Shell", "Read": "Read", "Write": "Write", "Edit": "Write", "MultiEdit": "Write",
    "NotebookEdit": "Write", "Grep": "Grep", "Task": "Task", "Delete": "Delete",
}
FROM_CURSOR: dict[str, str] = {"Shell": "Bash", "Read": "Read", "Write": "Write",
                               "Grep": "Grep", "Task": "Task", "Delete": "Delete"}
TOOL_NAMES = FROM_CURSOR
CONTINUE_FALSE_BLOCKS = True  # beforeSubmitPrompt's {"continue": false} refuses the prompt
# CURSOR_PROJECT_DIR, CURSOR_VERSION, CURSOR_USER_EMAIL, CURSOR_TRANSCRIPT_PATH and the
# editor's own (CURSOR_TRACE_ID...), with CLAUDE_PROJECT_DIR as Cursor's alias of the first
# (and CLAUDE_PLUGIN_ROOT of CURSOR_PLUGIN_ROOT for a plugin's hooks).
HOOK_VARIABLES: tuple[str, ...] = ("CURSOR_*", "CLAUDE_PROJECT_DIR", "CLAUDE_PLUGIN_ROOT")


def tool_from_cursor(name: str) -> str:
    """Cursor tool type (``Shell``, ``MCP:tool``) to the canonical tool name."""
    if name.startswith("MCP:"):
        return f"{MCP_PREFIX}{UNKNOWN_MCP_SERVER}__{name[4:]}"
    return FROM_CURSOR.get(name, name)


def host_tool(name: str) -> str:
    """Canonical tool name to Cursor's tool type (what Cursor-dialect matchers see)."""
    if name.startswith(MCP_PREFIX):
        return "MCP:" + name.split("__", 2)[-1]
    return TO_CURSOR.get(name, name)


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
    cursor_tool = text(raw, "tool_name")
    if cursor_tool is None:
        return None, None, None, None
    return (tool_from_cursor(cursor_tool), cursor_tool, raw.get("tool_input"),
            raw.get("tool_output"))


def parse(raw: Mapping[str, Any], raw_bytes: bytes, event_name: str | None,
          environ: Mapping[str, str]) -> Event:
    host_event = known_event(raw, "hook_event_name", event_name, TITLE, HOST_EVENTS)
    tool, cursor_tool, tool_input, tool_response = _tool(host_event, raw)
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
        host_tool_name=cursor_tool,
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
    return rebuilt(event, raw, tool_input)


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


# Hooks written for Cursor.
def working_dirs(hook: Hook, event: Event) -> list[str | None]:
    """The folder fixed when the config was read (the project root, or the config's own)."""
    return [hook.cwd]


def sends_as_is(event: Event, hook: Hook) -> bool:
    """Cursor sends each hook the event of its own key (the only event that runs it)."""
    return hook.config_event == event.host_event


def frame_reply(hook: Hook, event: Event, code: int, stdout: bytes, stderr: bytes) -> Framed:
    if code == 2:
        return _exit_2(hook, stdout, stderr)
    if code != 0:
        raise failed(code, stderr)
    text = decode(stdout).strip()
    return ("json", load_object(text)) if text else ("fields", {})


def _message(reply: dict[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = reply.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None


def _exit_2(hook: Hook, stdout: bytes, stderr: bytes) -> Framed:
    """Exit 2 is a deny whatever stdout says; Cursor keeps the messages of a JSON deny
    printed with it, verbatim, so they are the block's text (stderr's where one is missing).
    Read only for its messages: a reply that is not JSON, or has fields of the wrong type,
    still blocks."""
    kind, fields = exit_2_block(hook.name, stderr)
    try:
        reply = json.loads(stdout.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return kind, fields
    if not isinstance(reply, dict):
        return kind, fields
    agent = _message(reply, "agent_message", "agentMessage")
    user = _message(reply, "user_message", "userMessage")
    if agent:
        fields = {**fields, "reason": agent}
    if user:
        fields = {**fields, "user_message": user}
    return kind, fields


def _translated(event: Event, hook: Hook) -> dict[str, Any]:
    key = hook.config_event
    tool_input = canonical_input(event)
    out: dict[str, Any] = {"conversation_id": event.session_id or "", "generation_id": "",
                           "model": "", "hook_event_name": key, "cursor_version": "",
                           "workspace_roots": [event.project_dir], "user_email": None,
                           "transcript_path": event.transcript_path}
    cwd = event.cwd or event.project_dir
    if key in ("beforeShellExecution", "afterShellExecution"):
        out.update(command=event.command or "", cwd=cwd)
        if key == "afterShellExecution":
            out["output"] = _text(event.tool_response)
    elif key in ("beforeMCPExecution", "afterMCPExecution"):
        out.update(tool_name=host_tool(event.tool_name or "")[4:],
                   tool_input=json.dumps(tool_input))
        if key == "afterMCPExecution":
            out["result_json"] = _text(event.tool_response)
    elif key == "beforeReadFile":
        out.update(file_path=tool_input.get("file_path", ""), content="", attachments=[])
    elif key == "afterFileEdit":
        out.update(file_path=tool_input.get("file_path", ""), edits=tool_input.get("edits", []))
    elif event.tool_name:
        out.update(tool_name=host_tool(event.tool_name), tool_input=tool_input, cwd=cwd)
        if event.tool_use_id:
            out["tool_use_id"] = event.tool_use_id
        if event.name != "PreToolUse":
            out["tool_output"] = _text(event.tool_response)
    if event.prompt is not None:
        out.update(prompt=event.prompt, attachments=[])
    if key in ("stop", "subagentStop"):
        out.update(status="completed", loop_count=event.loop_count or 0)
    return out


def _text(value: Any) -> str:
    """Cursor sends tool output as a (JSON) string."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value)


def dialect_env(event: Event) -> dict[str, str]:
    """Cursor's variables, as the translated stdin has them: the project folder (Cursor sets
    CLAUDE_PROJECT_DIR as its alias) and the transcript; its version and the user's email
    are empty in stdin and so left unset."""
    env = {"CURSOR_PROJECT_DIR": event.project_dir, "CLAUDE_PROJECT_DIR": event.project_dir}
    if event.transcript_path:
        env["CURSOR_TRANSCRIPT_PATH"] = event.transcript_path
    return env


def translate(event: Event, hook: Hook) -> bytes:
    return json.dumps(_translated(event, hook)).encode()


_SAMPLE: dict[str, Any] = {"conversation_id": "test-conversation",
                           "generation_id": "test-generation", "model": "test",
                           "cursor_version": "1.7.2", "workspace_roots": ["/tmp"],
                           "user_email": None, "transcript_path": None}


def sample_event(name: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    """An event as Cursor would send it, for tests of policies."""
    return {**_SAMPLE, "hook_event_name": name, **fields}
