"""Any host's event as Cursor would have sent it to the hook's own event key: a hook on
``beforeShellExecution`` gets ``command`` and ``cwd``, one on ``preToolUse`` gets the tool
type (``Shell``) and its input, one on ``beforeReadFile`` the ``file_path``.

Kept: the event (as the hook's own key), the session (as ``conversation_id``), the project
folder (as ``workspace_roots``), the tool's Cursor type and input, its output (as Cursor's
JSON string), the prompt, a stop's ``loop_count``. Dropped: fields only the sending host has
(Claude Code's permission mode, Cline's user id); ``model`` and ``generation_id`` are empty."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .._translate import canonical_input
from .tools import tool_to_cursor

if TYPE_CHECKING:
    from ...core.events import Event
    from ...core.hook import Hook


def translate(event: Event, hook: Hook) -> dict[str, Any]:
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
        out.update(tool_name=tool_to_cursor(event.tool_name or "")[4:],
                   tool_input=json.dumps(tool_input))
        if key == "afterMCPExecution":
            out["result_json"] = _text(event.tool_response)
    elif key == "beforeReadFile":
        out.update(file_path=tool_input.get("file_path", ""), content="", attachments=[])
    elif key == "afterFileEdit":
        out.update(file_path=tool_input.get("file_path", ""), edits=tool_input.get("edits", []))
    elif event.tool_name:
        out.update(tool_name=tool_to_cursor(event.tool_name), tool_input=tool_input, cwd=cwd)
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


def environment(event: Event) -> dict[str, str]:
    """Cursor's variables, as the translated stdin has them: the project folder (Cursor sets
    CLAUDE_PROJECT_DIR as its alias) and the transcript; its version and the user's email
    are empty in stdin and so left unset."""
    env = {"CURSOR_PROJECT_DIR": event.project_dir, "CLAUDE_PROJECT_DIR": event.project_dir}
    if event.transcript_path:
        env["CURSOR_TRANSCRIPT_PATH"] = event.transcript_path
    return env
