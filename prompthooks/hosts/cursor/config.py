"""Cursor's config dialect: its ``hooks.json`` (``version``, then event -> a flat list of
handlers, as pydantic models), its reading, and its matchers.

A Cursor matcher is a regular expression searched for anywhere in what the event's key
compares (the tool type, ``Shell`` or ``MCP:<tool>``; a shell command string; a subagent
type), as Cursor's own ``new RegExp(matcher).test(value)`` does: ``MCP:*`` fires on every MCP
tool, ``Write`` on ``TabWrite`` too, ``curl|wget`` on any command holding either.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field, StrictStr

from ...config import handlers
from ...config.load_result import Loaded
from ...config.schema import Handler, Lenient, PromptHooksBlock
from ...core.hook import Hook, MatchOn, Source
from ...core.matchers import MATCH_ALL, Matcher, check_regex, matches_everything
from ...errors import ConfigError
from ..protocol import RawHandler
from .wire import CONFIG_EVENTS, DEFAULT_TIMEOUT, FROM_CURSOR, NAME, TITLE

if TYPE_CHECKING:
    from ..protocol import HostRoles

KNOWN_TOOLS = frozenset(FROM_CURSOR)  # the tool types Cursor sends (MCP tools: MCP:<tool>)
KNOWN_SUBJECTS: dict[str, frozenset[str]] = {}  # its matchers see tools, commands, agents
EVENT_ALIASES: dict[str, str] = {}
# Events whose matcher Cursor compares with a fixed word: it selects every such event or none.
FIXED_SUBJECTS = {"beforeSubmitPrompt": "UserPromptSubmit", "stop": "Stop",
                  "afterAgentResponse": "AgentResponse", "afterAgentThought": "AgentThought"}


class CursorHandler(Handler):
    matcher: StrictStr | None = None
    loop_limit: Annotated[int, Field(ge=0, strict=True)] | None = 5


class CursorFile(Lenient):
    version: Annotated[int, Field(strict=True)] = 1
    hooks: dict[str, list[CursorHandler]] = Field(default_factory=dict)
    prompthooks: PromptHooksBlock | None = None


def fixed_subject_missed(key: str, matcher: Matcher) -> str | None:
    """The word ``matcher`` is compared with under ``key`` when it never matches it (the
    handler never runs), else None."""
    word = FIXED_SUBJECTS.get(key)
    return word if word is not None and not matcher.matches(word) else None


def cursor_matcher(pattern: str | None) -> Matcher:
    """A Cursor matcher (RE2, searched); ValueError for a pattern that does not compile."""
    if matches_everything(pattern):
        return MATCH_ALL
    assert pattern is not None
    check_regex(pattern)
    return Matcher("search", pattern)


def make_matcher(pattern: str | None, match_on: MatchOn) -> Matcher:
    return cursor_matcher(pattern)


def claims_file(data: Mapping[str, Any]) -> bool:
    """Cursor files have ``version``, Cursor event keys or flat handler lists; the first
    entry that tells decides (a Claude Code file nests ``hooks`` in matcher groups)."""
    if "version" in data:
        return True
    hooks = data.get("hooks")
    if isinstance(hooks, Mapping):
        for key, entries in hooks.items():
            if key in CONFIG_EVENTS:
                return True
            if isinstance(entries, list) and entries and isinstance(entries[0], Mapping):
                if "hooks" in entries[0]:
                    return False
                if "command" in entries[0] or "prompt" in entries[0]:
                    return True
    return False


def working_dir(path: Path, project_dir: str) -> str:
    """Cursor runs project hooks from the project root and others from their config's folder."""
    folder = path.parent.resolve()
    project = Path(project_dir).resolve()
    return str(project) if folder == project or project in folder.parents else str(folder)


def load_file(data: Mapping[str, Any], path: Path, source: Source, loaded: Loaded,
              project_dir: str, canonical: HostRoles) -> list[Hook]:
    model = handlers.validate(CursorFile, data, path)
    out: list[Hook] = []
    problems: list[ConfigError] = []
    settings = handlers.file_settings(model, path, source, loaded, problems)
    cwd = working_dir(path, project_dir)
    for event_key, entries in model.hooks.items():
        config_event = CONFIG_EVENTS.get(event_key)
        if config_event is None:
            handlers.unknown_event(path, event_key, TITLE, CONFIG_EVENTS, loaded)
            continue
        for i, handler in enumerate(entries):
            where = f"hooks.{event_key}[{i}]"
            matcher = handlers.matcher(cursor_matcher, handler.matcher, path,
                                       f"{where}.matcher", problems)
            word = fixed_subject_missed(event_key, matcher)
            if word is not None:
                # Cursor never runs it; said like an unknown event key, not run silently.
                loaded.unknown_events.append(
                    f"{path}: {where}.matcher: {handler.matcher!r} is compared with "
                    f"{word!r} on {event_key}, which it does not match; this hook never runs")
                continue
            hook = handlers.hook(handler, label=f"{path}: {where}", where=where, path=path,
                                 loaded=loaded, problems=problems,
                                 default_timeout=DEFAULT_TIMEOUT, source=source, dialect=NAME,
                                 config_event=event_key, index=len(out),
                                 trigger=config_event.trigger, matcher=matcher,
                                 match_on=config_event.match_on,
                                 loop_limit=handler.loop_limit, prompt_settings=settings,
                                 cwd=cwd, config_dir=str(path.parent.resolve()))
            if hook:
                out.append(hook)
    out += handlers.packs(model, path, source, settings, len(out), loaded, problems, canonical)
    if problems:
        raise ConfigError.of_all(problems)
    return out


def raw_handlers(data: Mapping[str, Any], path: Path,
                 project_dir: str) -> Iterator[RawHandler]:
    """Every handler of the file as written, whatever its values."""
    hooks = data.get("hooks")
    if not isinstance(hooks, Mapping):
        return
    project = str(Path(project_dir).resolve())
    cwd = working_dir(path, project_dir)
    env = {"CURSOR_PROJECT_DIR": project, "CLAUDE_PROJECT_DIR": project}
    for event_key, entries in hooks.items():
        for i, handler in enumerate(entries if isinstance(entries, list) else ()):
            if isinstance(handler, Mapping):
                where = f"hooks.{event_key}[{i}]"
                yield RawHandler(str(event_key), where, handler, handler.get("matcher"),
                                 f"{where}.matcher", cwd, env)
