"""Cline on the wire: the events it sends (hook names, parsing, hook-folder keys, its tool
names and their parameter shapes), the replies it reads (rendering), and how a hook written
for it is run: what it is sent, in what world, and how its answer is read.

Cline speaks two dialects, told apart by ``hookName``. Its VS Code extension sends the hook's
own name (``PreToolUse``) with the event's data nested under ``preToolUse`` (tool parameters
as strings). Its SDK/CLI engine sends a snake_case name (``tool_call``) with
``tool_call{id, name, input}`` holding the model's raw input, and reads ``context`` and
``overrideInput`` in replies, from the whole of stdout. Both run the same hook files.

Its tools: the documented (pre-SDK) ones are ``execute_command``, ``read_file``,
``write_to_file``...; the current extension and the SDK engine name them ``run_commands``,
``read_files``, ``editor``, ``apply_patch``... The extension sends every parameter as a string
(arrays and objects JSON-encoded); the SDK sends the model's raw input, which may be any shape
its schema accepts (``run_commands`` as ``{"commands": [...]}``, ``{"command": ...}``, a bare
string or a list). Both are read here into one shape a guard can check.

A hook's answer is JSON on stdout: a ``HOOK_CONTROL<TAB>`` line (the SDK engine's form; the
last one counts), else the LAST JSON object in stdout, log lines before it allowed (the
extension's rule; a whole-stdout object is one too). Valid JSON is honoured whatever the exit
code, as both engines do. No JSON at all means ``{"cancel": false}`` on exit 0 and a hook
error otherwise (exit 2 is not a block here).

What it is sent: any host's event as Cline's extension would have sent it to the hook file
(its name as ``hookName``, the event's data nested under it). Kept: the event (as the hook
file's name), the session (as ``taskId``), the project folder (as ``workspaceRoots``), the
tool's documented Cline name (``execute_command``) and its parameters, as Cline sends them
(strings), the tool's result, the prompt. Dropped: fields only the sending host has (Claude
Code's transcript path and permission mode, Cursor's model).
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ...core.events import MCP_PREFIX, UNKNOWN_MCP_SERVER, Event
from ...core.hook import Trigger
from ...core.merge import Decision
from ..fields import canonical_input, dumps, first_root, known_event, project_dir, text
from ..framing import Framed, ReplyError, decode, failed, last_json_object, load_object
from ..markers import TITLES
from ..protocol import ConfigEvent, Reply

if TYPE_CHECKING:
    from ...core.hook import Hook

NAME = "cline"
TITLE = TITLES[NAME]
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

# Cline tool -> canonical tool.
FROM_CLINE: dict[str, str] = {
    "execute_command": "Bash", "read_file": "Read", "write_to_file": "Write",
    "replace_in_file": "Edit", "search_files": "Grep", "list_files": "Glob",
    "web_fetch": "WebFetch",
    # The SDK's tools (the current extension's too).
    "run_commands": "Bash", "read_files": "Read", "editor": "Edit", "apply_patch": "Edit",
    "search_codebase": "Grep", "fetch_web_content": "WebFetch",
}
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


def host_tool(name: str) -> str:
    """Canonical tool name to the documented Cline tool (what a Cline-style hook knows)."""
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


TOOL_NAMES = FROM_CLINE
CONTINUE_FALSE_BLOCKS = False  # Cline has no "continue"; our reading stays Claude Code's
# Cline documents no variables for its hooks, which inherit its process's environment; its
# SDK engine adds CLINE_BUILD_ENV and reads CLINE_VERSION and other CLINE_* settings there.
HOOK_VARIABLES: tuple[str, ...] = ("CLINE_*",)
# Cline caps contextModification; longer text is cut and marked.
MAX_CONTEXT = 50_000
TRUNCATION_MARKER = "\n[prompthooks: context truncated to 50,000 characters]"


def _data_key(hook_name: str) -> str:
    return hook_name[:1].lower() + hook_name[1:]


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def parse(raw: Mapping[str, Any], raw_bytes: bytes, event_name: str | None,
          environ: Mapping[str, str]) -> Event:
    host_event = known_event(raw, "hookName", event_name, TITLE, HOST_EVENTS)
    file_event = SDK_EVENTS.get(host_event, host_event)
    data = _mapping(raw.get(_data_key(file_event)))  # both dialects carry this block
    cline_tool = text(data, "toolName")
    tool_input: Any = data.get("parameters") if cline_tool else None
    response = data.get("result")
    call = _mapping(raw.get("tool_call") or raw.get("tool_result"))
    if host_event in SDK_EVENTS and text(call, "name"):
        # The SDK's own object holds the model's input as it was, not stringified.
        cline_tool, tool_input = text(call, "name"), call.get("input")
        response = call.get("output", response)
    tool_input = decoded(cline_tool, tool_input) if cline_tool else None
    tool = tool_from_cline(cline_tool, _mapping(tool_input)) if cline_tool else None
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
        host_tool_name=cline_tool,
        tool_use_id=text(call, "id") if host_event in SDK_EVENTS else None,
        tool_input=tool_input,
        tool_response=response,
        command=command(tool_input) if tool == "Bash" else None,
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
    return event._replace(raw=again.raw, raw_bytes=again.raw_bytes,
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


# Hooks written for Cline.
def working_dirs(hook: Hook, event: Event) -> list[str | None]:
    """Cline runs a hook in its workspace root (the project folder, which comes next)."""
    return [hook.cwd]


def sends_as_is(event: Event, hook: Hook) -> bool:
    return True  # both of Cline's engines run the same hook file with their own payload


CONTROL_PREFIX = "HOOK_CONTROL\t"


def frame_reply(hook: Hook, event: Event, code: int, stdout: bytes, stderr: bytes) -> Framed:
    try:
        text = decode(stdout)
        control = [line for line in text.splitlines() if line.startswith(CONTROL_PREFIX)]
        obj = (load_object(control[-1][len(CONTROL_PREFIX):]) if control
               else last_json_object(text))
    except ReplyError:
        if code != 0:
            raise failed(code, stderr) from None
        raise
    if obj is not None:
        return "json", obj
    if code != 0:
        raise failed(code, stderr)
    return "fields", {}


def _translated(event: Event, hook: Hook) -> dict[str, Any]:
    name = hook.config_event
    data: dict[str, Any] = {}
    if event.tool_name:
        params = canonical_input(event)
        if "file_path" in params and "path" not in params:
            params["path"] = params["file_path"]
        data = {"toolName": host_tool(event.tool_name),
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


def dialect_env(event: Event) -> dict[str, str]:
    return {}  # Cline sets no variables of its own; its hooks run in the workspace root


def translate(event: Event, hook: Hook) -> bytes:
    return json.dumps(_translated(event, hook)).encode()


_SAMPLE: dict[str, Any] = {"clineVersion": "3.36.0", "timestamp": "0", "taskId": "test-task",
                           "workspaceRoots": ["/tmp"], "userId": "test-user"}


def sample_event(name: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    """The common fields, the hook name, and ``fields`` under the event's own key, as Cline
    nests them."""
    return {**_SAMPLE, "hookName": name, _data_key(name): dict(fields)}
