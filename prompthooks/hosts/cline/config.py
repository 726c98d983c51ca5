"""Cline's config dialect: a hook folder, never a JSON file. Each file named after a Cline
hook is a command hook of that event (run through its shebang), and ``<Hook>.md`` a prompt
hook of that event. Cline has no matchers: a hook runs for every event of its name."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...config import files
from ...config.handlers import AGENT_TIMEOUT, PROMPT_TIMEOUT, transcript_entries
from ...config.load_result import Loaded, LoadFailure
from ...core.hook import MAX_TURNS, Hook, MatchOn, Source, check_name
from ...core.matchers import MATCH_ALL, Matcher
from ...errors import ConfigError
from ..protocol import RawHandler
from .wire import CONFIG_EVENTS, DEFAULT_TIMEOUT, FROM_CLINE, NAME, SDK_EVENTS

if TYPE_CHECKING:
    from ..protocol import HostRoles

# Every tool Cline is known to send: the extension's and the SDK's (the ones FROM_CLINE does
# not map are passed on under their own names).
KNOWN_TOOLS = frozenset({
    *FROM_CLINE, "access_mcp_resource", "ask_followup_question", "ask_question",
    "attempt_completion", "browser_action", "condense", "list_code_definition_names",
    "load_mcp_documentation", "new_rule", "new_task", "plan_mode_respond", "report_bug",
    "skills", "submit_and_exit", "summarize_task", "use_mcp_tool", "web_search"})
# Cline has no matchers; the subjects its hook names stand for are in CONFIG_EVENTS.
KNOWN_SUBJECTS: dict[str, frozenset[str]] = {}
EVENT_ALIASES = SDK_EVENTS


def make_matcher(pattern: str | None, match_on: MatchOn) -> Matcher:
    return MATCH_ALL  # Cline has no matchers


def claims_file(data: Mapping[str, Any]) -> bool:
    return False  # Cline's hooks are a folder of executables, never a JSON file


def load_file(data: Mapping[str, Any], path: Path, source: Source, loaded: Loaded,
              project_dir: str, canonical: HostRoles) -> list[Hook]:
    raise ConfigError(str(path), "Cline hooks are a folder of executables, not a JSON file")


def raw_handlers(data: Mapping[str, Any], path: Path,
                 project_dir: str) -> Iterator[RawHandler]:
    return iter(())  # Cline's hooks are never a JSON file


def _prompt_hook(path: Path, folder: Path, source: Source, index: int) -> Hook:
    """``<Hook>.md``: a prompt hook; its front matter may set ``name``, ``model``,
    ``timeout``, ``failClosed``, ``max_event_chars`` and ``transcript``, and ``type: agent``
    (with ``max_turns``) makes it an agent hook."""
    # the templates (some 3 ms) only for a prompt hook's file, not on every run that reads
    # this folder's command hooks
    from ...config.templates import parse_front_matter

    try:
        meta, body = parse_front_matter(files.read_text(path))
        kind = str(meta.get("type", "prompt")).strip().lower()
        if kind not in ("prompt", "agent"):
            raise ValueError(f"type must be prompt or agent, not {kind}")
        turns = int(meta["max_turns"]) if "max_turns" in meta else None
        if turns is not None and not (kind == "agent" and 1 <= turns <= MAX_TURNS):
            raise ValueError(f"max_turns is an agent hook's, from 1 to {MAX_TURNS}")
        timeout = float(meta.get("timeout", AGENT_TIMEOUT if kind == "agent"
                                 else PROMPT_TIMEOUT))
        if not 0 < timeout < float("inf"):  # "nan" and "inf" parse as floats too
            raise ValueError(f"timeout must be a positive number of seconds, not {timeout}")
        chars = int(meta["max_event_chars"]) if "max_event_chars" in meta else None
        title = check_name(str(meta["name"])) if meta.get("name") is not None else None
        transcript = (transcript_entries(str(meta["transcript"])) if "transcript" in meta
                      else None)
    except files.UnsafeFile as exc:
        raise ConfigError(str(path), str(exc)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(str(path), f"cannot read: {exc}") from None
    except ValueError as exc:
        raise ConfigError(str(path), f"bad front matter value: {exc}") from None
    if not body.strip():
        raise ConfigError(str(path), "the prompt is empty")
    config_event = CONFIG_EVENTS[path.stem]
    return Hook(source=source, dialect=NAME, config_event=path.stem, index=index,
                trigger=config_event.trigger, kind="agent" if kind == "agent" else "prompt",
                timeout=timeout, label=str(path), max_turns=turns,
                prompt=body, model=meta.get("model") or None, title=title,
                fail_closed=str(meta.get("failClosed", "")).lower() == "true",
                max_event_chars=chars, config_dir=str(folder.resolve()),
                transcript=transcript)


def _says_fail_closed(path: Path) -> bool:
    """Whether a prompt file's front matter says ``failClosed: true``, however broken the
    rest of it is (only its first 64 KiB are read, and only from a regular file)."""
    try:
        head = files.read_bytes(path, 64 * 1024, head=True).decode("utf-8", "replace")
    except Exception:
        return False
    head = head.split("\n---", 2)[0]
    return any(line.replace(" ", "").lower() == "failclosed:true" for line in head.splitlines())


def load_folder(path: Path, source: Source, loaded: Loaded) -> None:
    """Add the hooks of a Cline-style folder to ``loaded``.

    Only the hook names are looked at, so a folder of a million other files costs nothing. A
    FIFO, device or socket under such a name is not run: it is a failure of that event."""
    managed = source.name == "managed"
    for name in files.hook_file_names(CONFIG_EVENTS):
        entry = path / name
        mode = files.file_type(entry)
        if mode is None or stat.S_ISDIR(mode):
            continue
        prompt = name.endswith(".md")
        config_event = CONFIG_EVENTS[name[:-3] if prompt else name]
        event = config_event.trigger.event
        if not stat.S_ISREG(mode):
            loaded.failures.append(LoadFailure(
                source, f"{entry}: is not a regular file ({files.kind(mode)}); not run",
                managed, None if managed else frozenset({event})))
            continue
        if prompt:
            try:
                loaded.hooks.append(_prompt_hook(entry, path, source, len(loaded.hooks)))
            except ConfigError as exc:
                # A broken file that says failClosed still blocks its event.
                marked = _says_fail_closed(entry)
                loaded.failures.append(LoadFailure(
                    source, exc.message, managed or marked,
                    None if managed else frozenset({event})))
            continue
        loaded.hooks.append(Hook(
            source=source, dialect=NAME, config_event=name, index=len(loaded.hooks),
            trigger=config_event.trigger, kind="command", timeout=DEFAULT_TIMEOUT,
            label=str(entry), executable=os.path.abspath(entry),
            config_dir=str(path.resolve()),
        ))
