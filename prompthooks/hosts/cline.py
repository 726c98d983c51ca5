"""Cline: hook names, nested input parsing, hook-directory keys and output rendering."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core.events import Event, tool_from_cline
from ..core.hook import Trigger
from ..core.merge import Decision
from . import _common
from ._common import ConfigEvent, Reply, dumps, first_root, project_dir, shell_command, text

NAME = "cline"
TITLE = "Cline"
# The run's whole budget (seconds): Cline gives a hook 30 s.
BUDGET = 28.0

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
}
HOST_EVENTS: dict[str, str] = {key: ce.trigger.event for key, ce in CONFIG_EVENTS.items()}

# Cline caps contextModification; longer text is cut and marked.
MAX_CONTEXT = 50_000
TRUNCATION_MARKER = "\n[prompthooks: context truncated to 50,000 characters]"


def looks_like(raw: Mapping[str, Any]) -> bool:
    return "hookName" in raw or "clineVersion" in raw


def _data_key(hook_name: str) -> str:
    return hook_name[:1].lower() + hook_name[1:]


def parse(raw: Mapping[str, Any], raw_bytes: bytes, event_name: str | None,
          environ: Mapping[str, str]) -> Event:
    host_event = _common.host_event(raw, "hookName", event_name, TITLE, HOST_EVENTS)
    data = raw.get(_data_key(host_event))
    data = data if isinstance(data, Mapping) else {}
    host_tool = text(data, "toolName")
    params = data.get("parameters")
    params = params if isinstance(params, Mapping) else {}
    tool = tool_from_cline(host_tool, params) if host_tool else None
    trigger = CONFIG_EVENTS[host_event].trigger
    result = data.get("result")
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
        tool_input=data.get("parameters") if host_tool else None,
        tool_response=result,
        command=shell_command(params) if tool == "Bash" else None,
        prompt=text(data, "prompt"),
        subject=trigger.subject,
    )


def hook_env(event: Event) -> dict[str, str]:
    return {}


def with_input(event: Event, tool_input: Mapping[str, Any]) -> Event:
    """The event with its tool's parameters rewritten."""
    key = _data_key(event.host_event)
    data = event.raw.get(key)
    data = dict(data) if isinstance(data, Mapping) else {}
    data["parameters"] = dict(tool_input)
    return _common.rebuilt(event, {**event.raw, key: data}, tool_input)


def render(decision: Decision, event: Event) -> Reply:
    """Cline JSON: ``cancel`` always, ``contextModification`` capped, ``errorMessage``."""
    blocked = decision.blocked or decision.halt
    out: dict[str, Any] = {"cancel": blocked}
    if decision.contexts:
        context = "\n\n".join(decision.contexts)
        if len(context) > MAX_CONTEXT:
            context = context[: MAX_CONTEXT - len(TRUNCATION_MARKER)] + TRUNCATION_MARKER
        out["contextModification"] = context
    if blocked:
        message = decision.user_message or decision.reason or decision.stop_reason
        out["errorMessage"] = message or "Blocked by a prompthooks hook"
    return Reply(dumps(out))


def block_reply(message: str) -> Reply:
    """A block when no event could be read: Cline only knows ``cancel``."""
    return Reply(dumps({"cancel": True, "errorMessage": message}))
