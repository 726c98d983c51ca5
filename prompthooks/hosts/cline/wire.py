"""Cline on the wire: hook names, input parsing, hook-folder keys and rendering.

Cline speaks two dialects, told apart by ``hookName``. Its VS Code extension sends the hook's
own name (``PreToolUse``) with the event's data nested under ``preToolUse`` (tool parameters
as strings). Its SDK/CLI engine sends a snake_case name (``tool_call``) with
``tool_call{id, name, input}`` holding the model's raw input, and reads ``context`` and
``overrideInput`` in replies, from the whole of stdout. Both run the same hook files.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ...core.events import Event
from ...core.hook import Trigger
from ...core.merge import Decision
from .. import _common
from .._common import ConfigEvent, Reply, dumps, first_root, project_dir, text
from . import tools

NAME = "cline"
TITLE = "Cline"
# The run's whole budget (seconds): Cline gives a hook 30 s.
BUDGET = 28.0
DEFAULT_TIMEOUT = 30.0  # a hook's own timeout: Cline's

# Cline hook name -> the canonical event (with the subject that tells its variants apart).
CONFIG_EVENTS: dict[str, ConfigEvent] = {
    "PreToolUse": ConfigEvent(Trigger("PreToolUse")),
    "PostToolUse": ConfigEvent(Trigger("PostToolUse")),
    "UserPromptSubmit": ConfigEvent(Trigger("UserPromptSubmit")),
    "TaskStart": ConfigEvent(Trigger("SessionStart", subject="startup")),
    "TaskResume": ConfigEvent(Trigger("SessionStart", subject="resume")),
    "TaskCancel": ConfigEvent(Trigger("SessionEnd", subject="cancel")),
    "TaskComplete": ConfigEvent(Trigger("Stop")),
    "PreCompact": ConfigEvent(Trigger("PreCompact")),
    "Notification": ConfigEvent(Trigger("Notification")),
    "TaskError": ConfigEvent(Trigger("SessionEnd", subject="error")),
    "SessionShutdown": ConfigEvent(Trigger("SessionEnd", subject="shutdown")),
}
# The SDK engine's hookName -> the hook file it runs.
SDK_EVENTS: dict[str, str] = {
    "tool_call": "PreToolUse", "tool_result": "PostToolUse",
    "prompt_submit": "UserPromptSubmit", "agent_start": "TaskStart",
    "agent_resume": "TaskResume", "agent_end": "TaskComplete", "agent_abort": "TaskCancel",
    "agent_error": "TaskError", "session_shutdown": "SessionShutdown",
    "pre_compact": "PreCompact",
}
# The hook files' names (what install writes and ``--events`` takes) -> canonical events.
FILE_EVENTS: dict[str, str] = {key: ce.trigger.event for key, ce in CONFIG_EVENTS.items()}
HOST_EVENTS: dict[str, str] = {**FILE_EVENTS,
                               **{sdk: FILE_EVENTS[f] for sdk, f in SDK_EVENTS.items()}}

# Cline caps contextModification; longer text is cut and marked.
MAX_CONTEXT = 50_000
TRUNCATION_MARKER = "\n[prompthooks: context truncated to 50,000 characters]"


def looks_like(raw: Mapping[str, Any]) -> bool:
    return "hookName" in raw or "clineVersion" in raw


def _data_key(hook_name: str) -> str:
    return hook_name[:1].lower() + hook_name[1:]


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def parse(raw: Mapping[str, Any], raw_bytes: bytes, event_name: str | None,
          environ: Mapping[str, str]) -> Event:
    host_event = _common.host_event(raw, "hookName", event_name, TITLE, HOST_EVENTS)
    file_event = SDK_EVENTS.get(host_event, host_event)
    data = _mapping(raw.get(_data_key(file_event)))  # both dialects carry this block
    host_tool = text(data, "toolName")
    tool_input: Any = data.get("parameters") if host_tool else None
    response = data.get("result")
    call = _mapping(raw.get("tool_call") or raw.get("tool_result"))
    if host_event in SDK_EVENTS and text(call, "name"):
        # The SDK's own object holds the model's input as it was, not stringified.
        host_tool, tool_input = text(call, "name"), call.get("input")
        response = call.get("output", response)
    tool_input = tools.decoded(host_tool, tool_input) if host_tool else None
    tool = tools.tool_from_cline(host_tool, _mapping(tool_input)) if host_tool else None
    trigger = CONFIG_EVENTS[file_event].trigger
    return Event(
        host=NAME,
        host_event=host_event,
        name=trigger.event,
        raw=raw,
        raw_bytes=raw_bytes,
        project_dir=project_dir(first_root(raw, "workspaceRoots")),
        cwd=first_root(raw, "workspaceRoots"),
        session_id=text(raw, "taskId"),
        tool_name=tool,
        host_tool_name=host_tool,
        tool_input=tool_input,
        tool_response=response,
        command=tools.command(tool_input) if tool == "Bash" else None,
        prompt=text(data, "prompt"),
        subject=trigger.subject,
    )


def hook_env(event: Event) -> dict[str, str]:
    return {}


def with_input(event: Event, tool_input: Mapping[str, Any]) -> Event:
    """The event with its tool's input rewritten, where the dialect that sent it keeps it."""
    raw = dict(event.raw)
    if event.host_event in SDK_EVENTS and isinstance(raw.get("tool_call"), Mapping):
        raw["tool_call"] = {**raw["tool_call"], "input": dict(tool_input)}
    else:
        key = _data_key(SDK_EVENTS.get(event.host_event, event.host_event))
        raw[key] = {**_mapping(raw.get(key)), "parameters": dict(tool_input)}
    again = parse(raw, json.dumps(raw).encode(), event.host_event, {})
    return replace(event, raw=again.raw, raw_bytes=again.raw_bytes,
                   tool_input=again.tool_input, command=again.command)


def render(decision: Decision, event: Event) -> Reply:
    """Cline JSON: ``cancel`` always, ``contextModification`` capped, ``errorMessage``; to the
    SDK engine ``context`` and ``overrideInput`` too (an ``errorMessage`` without ``cancel``
    would be taken as context there, so it is only sent with a cancel)."""
    blocked = decision.blocked or decision.halt
    sdk = event.host_event in SDK_EVENTS
    out: dict[str, Any] = {"cancel": blocked}
    if decision.contexts:
        context = "\n\n".join(decision.contexts)
        if len(context) > MAX_CONTEXT:
            context = context[: MAX_CONTEXT - len(TRUNCATION_MARKER)] + TRUNCATION_MARKER
        out["context" if sdk else "contextModification"] = context
    if sdk and decision.updated_input is not None and not blocked \
            and event.host_event == "tool_call":
        out["overrideInput"] = dict(decision.updated_input)
    if blocked:
        message = decision.user_message or decision.reason or decision.stop_reason
        out["errorMessage"] = message or "Blocked by a prompthooks hook"
    return Reply(dumps(out))


def block_reply(message: str) -> Reply:
    """A block when no event could be read: Cline only knows ``cancel``."""
    return Reply(dumps({"cancel": True, "errorMessage": message}))
