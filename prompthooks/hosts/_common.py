"""Small helpers shared by the host modules."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..core.hook import MatchOn, Trigger
from ..errors import InputError

if TYPE_CHECKING:
    from ..core.events import Event


@dataclass(frozen=True, slots=True)
class Reply:
    """What prompthooks prints for the host and the exit code it leaves with."""

    stdout: str
    exit_code: int = 0


@dataclass(frozen=True, slots=True)
class ConfigEvent:
    """What an event key of a dialect's config stands for."""

    trigger: Trigger
    match_on: MatchOn = "none"


@dataclass(frozen=True, slots=True)
class RawHandler:
    """One handler of a JSON config as written, found without validating the file: what
    ``validate`` checks in every handler, even in a file whose other values are wrong."""

    event_key: str
    where: str  # the handler's JSON path: hooks.PreToolUse[0].hooks[1]
    handler: Mapping[str, Any]
    matcher: Any = None  # the matcher as written (None: no matcher)
    matcher_where: str = ""
    cwd: str = ""  # the folder a command hook runs in (the project, for the event's cwd)
    env: Mapping[str, str] = field(default_factory=dict)  # the variables its host sets


def text(raw: Mapping[str, Any], key: str) -> str | None:
    """A string field, or None when missing or of another type."""
    value = raw.get(key)
    return value if isinstance(value, str) else None


def host_event(raw: Mapping[str, Any], key: str, given: str | None, title: str,
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
    return replace(event, raw=raw, raw_bytes=json.dumps(raw).encode(),
                   tool_input=dict(tool_input),
                   command=shell_command(tool_input) if event.tool_name == "Bash" else None)
