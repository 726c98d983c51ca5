"""Any host's event as Claude Code would have sent it, for a hook written for Claude Code.

Kept: the event (its canonical name is Claude Code's), the session, the working folder, the
tool's name and input (canonical: Bash's ``command``, a file's ``file_path``), the call's id
where the sending host gives one, the tool's response, the prompt, a stop hook's
``stop_hook_active``, and what a matcher looks at (a session's source, a compaction's trigger,
a subagent's type). Dropped: fields only the sending host has (Cursor's model and generation,
Cline's user id and model); they are in the raw event, which ``raw_event: true`` gives the
hook instead."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._translate import canonical_input

if TYPE_CHECKING:
    from ...core.events import Event
    from ...core.hook import Hook

# Event -> the input field its subject (a matcher's target) is sent in.
_SUBJECT = {"SessionStart": "source", "PreCompact": "trigger", "SessionEnd": "reason",
            "Notification": "notification_type", "SubagentStart": "agent_type",
            "SubagentStop": "agent_type"}


def translate(event: Event, hook: Hook) -> dict[str, Any]:
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
    if event.name in _SUBJECT and event.subject is not None:
        out[_SUBJECT[event.name]] = event.subject
    return out


def environment(event: Event) -> dict[str, str]:
    """Claude Code's documented variable for every hook; CLAUDE_ENV_FILE (SessionStart) has no
    file behind it under another host, so it is left unset."""
    return {"CLAUDE_PROJECT_DIR": event.project_dir}
