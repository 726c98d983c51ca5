"""Any host's event as Cline's extension would have sent it to the hook file: its name as
``hookName`` and the event's data nested under it (``preToolUse{toolName, parameters}``).

Kept: the event (as the hook file's name), the session (as ``taskId``), the project folder
(as ``workspaceRoots``), the tool's documented Cline name (``execute_command``) and its
parameters, as Cline sends them (strings), the tool's result, the prompt. Dropped: fields
only the sending host has (Claude Code's transcript path and permission mode, Cursor's
model)."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from .._translate import canonical_input
from .tools import tool_to_cline

if TYPE_CHECKING:
    from ...core.events import Event
    from ...core.hook import Hook


def translate(event: Event, hook: Hook) -> dict[str, Any]:
    name = hook.config_event
    data: dict[str, Any] = {}
    if event.tool_name:
        params = canonical_input(event)
        if "file_path" in params and "path" not in params:
            params["path"] = params["file_path"]
        data = {"toolName": tool_to_cline(event.tool_name),
                "parameters": {k: v if isinstance(v, str) else json.dumps(v)
                               for k, v in params.items()}}
        if event.name != "PreToolUse":
            result = event.tool_response
            data.update(result=result if isinstance(result, str) else json.dumps(result),
                        success=True)
    elif event.prompt is not None:
        data = {"prompt": event.prompt, "attachments": []}
    else:
        data = {"taskMetadata": {"taskId": event.session_id or ""}}
    return {"clineVersion": "", "hookName": name, "timestamp": str(int(time.time() * 1000)),
            "taskId": event.session_id or "", "workspaceRoots": [event.project_dir],
            "userId": "", name[:1].lower() + name[1:]: data}


def environment(event: Event) -> dict[str, str]:
    return {}  # Cline sets no variables of its own; its hooks run in the workspace root
