"""Reading and writing the fields every host's events share: a field of a type, the event's
name, its project folder, a shell command, the canonical tool input; an event rebuilt with
a rewritten input, a reply's JSON."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import InputError

if TYPE_CHECKING:
    from ..core.events import Event


def text(raw: Mapping[str, Any], key: str) -> str | None:
    """A string field, or None when missing or of another type."""
    value = raw.get(key)
    return value if isinstance(value, str) else None


def known_event(raw: Mapping[str, Any], key: str, given: str | None, title: str,
                known: Mapping[str, str]) -> str:
    """The event name given on the command line, else the input's own; it must be known."""
    name = given or text(raw, key)
    if not name:
        raise InputError(f"the {title} event has no {key}; name it: prompthooks run EVENT")
    if name not in known:
        raise InputError(f"unknown {title} event {name!r}")
    return name


def first_root(raw: Mapping[str, Any], key: str) -> str | None:
    roots = raw.get(key)
    if isinstance(roots, list) and roots and isinstance(roots[0], str) and roots[0]:
        return roots[0]
    return None


def shell_command(tool_input: Any) -> str | None:
    if isinstance(tool_input, Mapping):
        command = tool_input.get("command")
        return command if isinstance(command, str) else None
    return None


def dumps(obj: Mapping[str, Any]) -> str:
    # ASCII with \u escapes: a lone surrogate from a hook's reply can never break the output.
    return json.dumps(obj, ensure_ascii=True)


def project_dir(*candidates: str | None) -> str:
    """The first candidate given, else the current directory."""
    return next((c for c in candidates if c), os.getcwd())


def rebuilt(event: Event, raw: Mapping[str, Any], tool_input: Mapping[str, Any]) -> Event:
    """``event`` as if the host had sent ``raw`` (its tool input replaced by ``tool_input``):
    what a rewritten input is judged as."""
    return event._replace(raw=raw, raw_bytes=json.dumps(raw).encode(),
                          tool_input=dict(tool_input),
                          command=shell_command(tool_input) if event.tool_name == "Bash"
                          else None)


def canonical_input(event: Event) -> dict[str, Any]:
    """The tool input in Claude Code's words (the canonical vocabulary): a shell command as
    ``command``, a file as ``file_path``, whatever else the host sent kept beside them."""
    given = event.tool_input
    out: dict[str, Any] = dict(given) if isinstance(given, Mapping) else {}
    if event.tool_name == "Bash" and event.command is not None:
        out = {"command": event.command}
    elif "file_path" not in out:
        for key in ("path", "filePath"):
            if isinstance(out.get(key), str):
                out["file_path"] = out[key]
                break
    return out
