"""Loading config sources into hooks: a JSON file (Claude Code or Cursor style, told apart by
its shape) or a Cline-style directory of executables named after events.

A source that cannot be loaded does not stop the others: it becomes a :class:`LoadFailure`
that the engine turns into a failed hook, fail-closed when the source is the managed policy
or the file marks any of its hooks ``failClosed``.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..hook import Dialect, Hook, PromptSettings, Source
from ..hosts import claude, cline, cursor
from ..matchers import MATCH_ALL, Matcher, claude_matcher, cursor_matcher
from . import cache

# Per-hook timeouts when the handler gives none (seconds), by dialect: Claude Code's command
# default, and Cline's; Cursor documents none, so it gets Cline's.
DEFAULT_TIMEOUT: dict[str, float] = {"claude": 600.0, "cursor": 30.0, "cline": 30.0}
PROMPT_TIMEOUT = 30.0  # every dialect's prompt hooks (Claude Code's prompt default)
CONFIG_FILE = "hooks.json"
HOOKS_DIR = "hooks"


@dataclass(frozen=True, slots=True)
class LoadFailure:
    """A source that could not be loaded; ``events`` limits a fail-closed failure's reach."""

    source: Source
    message: str
    fail_closed: bool
    events: frozenset[str] | None = None  # canonical events; None = every event
    details: tuple[str, ...] = ()  # every problem, when the file has several


@dataclass
class Loaded:
    hooks: list[Hook] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    failures: list[LoadFailure] = field(default_factory=list)
    # Event keys no host has: their hooks are skipped at run time, an error for `validate`.
    unknown_events: list[str] = field(default_factory=list)
    sources: list[Source] = field(default_factory=list)
    # Run-wide settings (the audit log's): the highest-priority source that sets a key wins.
    audit: dict[str, Any] = field(default_factory=dict)


def json_path(loc: Iterable[int | str]) -> str:
    """``('hooks', 'PreToolUse', 0, 'timeout')`` -> ``hooks.PreToolUse[0].timeout``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def detect_dialect(data: Mapping[str, Any]) -> Dialect:
    """Cursor files have ``version`` or flat handler lists; Claude Code files nest ``hooks``."""
    if "version" in data:
        return "cursor"
    hooks = data.get("hooks")
    if isinstance(hooks, Mapping):
        for key, entries in hooks.items():
            if key in cursor.CONFIG_EVENTS:
                return "cursor"
            if isinstance(entries, list) and entries and isinstance(entries[0], Mapping):
                if "hooks" in entries[0]:
                    return "claude"
                if "command" in entries[0] or "prompt" in entries[0]:
                    return "cursor"
    return "claude"


def _marks_fail_closed(value: Any) -> bool:
    if isinstance(value, Mapping):
        return value.get("failClosed") is True or any(map(_marks_fail_closed, value.values()))
    return isinstance(value, list) and any(map(_marks_fail_closed, value))


def _fail_closed_events(data: Any, dialect: Dialect) -> frozenset[str]:
    """Canonical events of the handlers a (broken) file marks failClosed."""
    events: set[str] = set()
    hooks = data.get("hooks") if isinstance(data, Mapping) else None
    if not isinstance(hooks, Mapping):
        return frozenset()
    table = claude.CONFIG_EVENTS if dialect == "claude" else cursor.CONFIG_EVENTS
    for key, entries in hooks.items():
        if key in table and _marks_fail_closed(entries):
            events.add(table[key].trigger.event)
    return frozenset(events)


def _read_json(path: Path) -> Any:
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise ConfigError(str(path), f"cannot read: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise ConfigError(str(path), "is not UTF-8 text") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        raise ConfigError(str(path), f"not valid JSON: {where}: {exc.msg}") from None


def _extras(model: Any, where: str) -> Iterator[str]:
    """Warnings for keys the lenient models kept but prompthooks does not use."""
    for key in sorted(model.model_extra or {}):
        yield f"{where}: unknown key {key!r} ignored" if where else f"unknown key {key!r} ignored"


def _working_dir(dialect: Dialect, path: Path, project_dir: str) -> str | None:
    """Cursor runs project hooks from the project root and others from their config's folder."""
    if dialect != "cursor":
        return None
    folder = path.parent.resolve()
    project = Path(project_dir).resolve()
    return str(project) if folder == project or project in folder.parents else str(folder)


def _matcher(make: Any, pattern: str | None, path: Path, where: str,
             problems: list[ConfigError]) -> Matcher:
    """The matcher; a pattern that does not compile is added to ``problems`` (the file then
    fails as a whole, so the stand-in returned for it never runs)."""
    try:
        return make(pattern)  # type: ignore[no-any-return]
    except ValueError as exc:
        problems.append(ConfigError(str(path), str(exc), where))
        return MATCH_ALL


def _validate(model: Any, data: Mapping[str, Any], path: Path) -> Any:
    from pydantic import ValidationError

    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ConfigError.of_all([
            ConfigError(str(path), error["msg"].removeprefix("Value error, "),
                        json_path(error["loc"]) or "(top level)")
            for error in exc.errors()]) from None


def _settings(model: Any) -> PromptSettings | None:
    block = model.prompthooks
    if block is None:
        return None
    return PromptSettings(block.model, block.api_base, block.api_key_env, block.max_event_chars,
                          block.verdict_cache_ttl, block.proxy)


def _audit_settings(model: Any, path: Path, loaded: Loaded) -> None:
    block = model.prompthooks.audit if model.prompthooks else None
    if block is None:
        return
    for key, value in block.model_dump(exclude_none=True).items():
        if key == "path":  # relative to the file that says it
            value = str(path.parent.resolve() / os.path.expanduser(value))
        loaded.audit.setdefault(key, value)


def _check_prompt_file(name: str | None, config_dir: str, path: Path, where: str,
                       problems: list[ConfigError]) -> None:
    from ..templates import TemplateError, resolve_prompt_file

    if name:
        try:
            resolve_prompt_file(name, config_dir)
        except TemplateError as exc:
            problems.append(ConfigError(str(path), str(exc), f"{where}.prompt_file"))


def _hook(handler: Any, *, label: str, where: str, path: Path, loaded: Loaded,
          problems: list[ConfigError], **fields: Any) -> Hook | None:
    """The Hook for one handler of a JSON config, or None (with a warning) if we cannot run it."""
    loaded.warnings += [f"{label}: {w}" for w in _extras(handler, "")]
    if handler.type == "prompt":
        _check_prompt_file(handler.prompt_file, fields["config_dir"], path, where, problems)
        return Hook(kind="prompt", label=label, prompt=handler.prompt,
                    prompt_file=handler.prompt_file, model=handler.model,
                    fail_closed=handler.failClosed, max_event_chars=handler.max_event_chars,
                    cache_ttl=handler.cache_ttl, timeout=handler.timeout or PROMPT_TIMEOUT,
                    **fields)
    if handler.type != "command":
        loaded.warnings.append(f"{label}: type {handler.type!r} is not supported; "
                               "this hook is ignored")
        return None
    return Hook(kind="command", label=label, command=handler.command,
                fail_closed=handler.failClosed,
                timeout=handler.timeout or DEFAULT_TIMEOUT[fields["dialect"]], **fields)


def _unknown_event(path: Path, key: str, title: str, loaded: Loaded) -> None:
    loaded.unknown_events.append(f"{path}: hooks.{key}: unknown {title} event; "
                                 "its hooks are ignored")


def _claude_hooks(data: Mapping[str, Any], path: Path, source: Source,
                  loaded: Loaded) -> list[Hook]:
    from .schema import ClaudeFile

    model = _validate(ClaudeFile, data, path)
    settings = _settings(model)
    _audit_settings(model, path, loaded)
    out: list[Hook] = []
    problems: list[ConfigError] = []
    loaded.warnings += [f"{path}: {w}" for w in _extras(model, "")]
    for event_key, groups in model.hooks.items():
        config_event = claude.CONFIG_EVENTS.get(event_key)
        if config_event is None:
            _unknown_event(path, event_key, claude.TITLE, loaded)
            continue
        for gi, group in enumerate(groups):
            where = f"hooks.{event_key}[{gi}]"
            loaded.warnings += [f"{path}: {w}" for w in _extras(group, where)]
            matcher = _matcher(claude_matcher, group.matcher, path, f"{where}.matcher",
                               problems)
            for hi, handler in enumerate(group.hooks):
                hook = _hook(handler, label=f"{path}: {where}.hooks[{hi}]",
                             where=f"{where}.hooks[{hi}]", path=path, loaded=loaded,
                             problems=problems, source=source, dialect="claude",
                             config_event=event_key,
                             index=len(out), trigger=config_event.trigger, matcher=matcher,
                             match_on=config_event.match_on, prompt_settings=settings,
                             config_dir=str(path.parent.resolve()))
                if hook:
                    out.append(hook)
    if problems:
        raise ConfigError.of_all(problems)
    return out


def _cursor_hooks(data: Mapping[str, Any], path: Path, source: Source, loaded: Loaded,
                  project_dir: str) -> list[Hook]:
    from .schema import CursorFile

    model = _validate(CursorFile, data, path)
    settings = _settings(model)
    _audit_settings(model, path, loaded)
    out: list[Hook] = []
    problems: list[ConfigError] = []
    loaded.warnings += [f"{path}: {w}" for w in _extras(model, "")]
    cwd = _working_dir("cursor", path, project_dir)
    for event_key, handlers in model.hooks.items():
        config_event = cursor.CONFIG_EVENTS.get(event_key)
        if config_event is None:
            _unknown_event(path, event_key, cursor.TITLE, loaded)
            continue
        make = functools.partial(cursor_matcher, whole=config_event.match_on == "cursor_tool")
        for i, handler in enumerate(handlers):
            where = f"hooks.{event_key}[{i}]"
            hook = _hook(handler, label=f"{path}: {where}", where=where, path=path,
                         loaded=loaded, problems=problems, source=source, dialect="cursor",
                         config_event=event_key, index=len(out), trigger=config_event.trigger,
                         matcher=_matcher(make, handler.matcher, path, f"{where}.matcher",
                                          problems),
                         match_on=config_event.match_on, loop_limit=handler.loop_limit,
                         prompt_settings=settings, cwd=cwd,
                         config_dir=str(path.parent.resolve()))
            if hook:
                out.append(hook)
    if problems:
        raise ConfigError.of_all(problems)
    return out


def load_file(path: Path, source: Source, project_dir: str, loaded: Loaded,
              data: Any = None) -> None:
    """Add the hooks of one JSON config file to ``loaded`` (or a failure if it is broken).

    ``data`` is the file's content when it was read already (a config inlined in a test
    case file); ``path`` then names where it came from."""
    try:
        if data is None:
            data = _read_json(path)
        if not isinstance(data, dict):
            raise ConfigError(str(path), "the top level must be a JSON object")
        dialect = detect_dialect(data)
        hooks = (_claude_hooks(data, path, source, loaded) if dialect == "claude"
                 else _cursor_hooks(data, path, source, loaded, project_dir))
    except ConfigError as exc:
        managed = source.name == "managed"
        events = None if managed else _fail_closed_events(data, detect_dialect(data)
                                                          if isinstance(data, dict) else "claude")
        loaded.failures.append(LoadFailure(source, exc.message, managed or bool(events), events,
                                           exc.details if len(exc.details) > 1 else ()))
        return
    loaded.hooks += hooks


def _cline_prompt_hook(entry: os.DirEntry[str], folder: Path, source: Source,
                       index: int) -> Hook:
    """``<Hook>.md`` in a Cline-style folder: a prompt hook; its front matter may set
    ``model``, ``timeout``, ``failClosed`` and ``max_event_chars``."""
    from ..templates import parse_front_matter

    path = Path(entry.path)
    try:
        meta, body = parse_front_matter(path.read_text(encoding="utf-8"))
        timeout = float(meta.get("timeout", PROMPT_TIMEOUT))
        chars = int(meta["max_event_chars"]) if "max_event_chars" in meta else None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(str(path), f"cannot read: {exc}") from None
    except ValueError as exc:
        raise ConfigError(str(path), f"bad front matter value: {exc}") from None
    if not body.strip():
        raise ConfigError(str(path), "the prompt is empty")
    config_event = cline.CONFIG_EVENTS[path.stem]
    return Hook(source=source, dialect="cline", config_event=path.stem, index=index,
                trigger=config_event.trigger, kind="prompt", timeout=timeout, label=entry.path,
                prompt=body, model=meta.get("model") or None,
                fail_closed=str(meta.get("failClosed", "")).lower() == "true",
                max_event_chars=chars, config_dir=str(folder.resolve()))


def _says_fail_closed(path: Path) -> bool:
    """Whether a prompt file's front matter says ``failClosed: true``, however broken the
    rest of it is."""
    try:
        head = path.read_text(encoding="utf-8", errors="replace").split("\n---", 2)[0]
    except OSError:
        return False
    return any(line.replace(" ", "").lower() == "failclosed:true" for line in head.splitlines())


def load_dir(path: Path, source: Source, loaded: Loaded) -> None:
    """A Cline-style folder: each file named after a Cline hook is a hook of that event, and
    ``<Hook>.md`` a prompt hook of that event."""
    try:
        entries = sorted(os.scandir(path), key=lambda e: e.name)
    except OSError as exc:
        message = f"{path}: cannot read folder: {exc.strerror}"
        loaded.failures.append(LoadFailure(source, message, source.name == "managed"))
        return
    for entry in entries:
        if entry.is_dir():
            continue
        if entry.name.endswith(".md") and entry.name[:-3] in cline.CONFIG_EVENTS:
            try:
                loaded.hooks.append(_cline_prompt_hook(entry, path, source, len(loaded.hooks)))
            except ConfigError as exc:
                # A broken file that says failClosed still blocks its event.
                event = cline.CONFIG_EVENTS[entry.name[:-3]].trigger.event
                marked = _says_fail_closed(Path(entry.path))
                loaded.failures.append(LoadFailure(
                    source, exc.message, source.name == "managed" or marked,
                    None if source.name == "managed" else frozenset({event})))
            continue
        config_event = cline.CONFIG_EVENTS.get(entry.name)
        if config_event is None:
            continue
        loaded.hooks.append(Hook(
            source=source, dialect="cline", config_event=entry.name, index=len(loaded.hooks),
            trigger=config_event.trigger, kind="command", timeout=DEFAULT_TIMEOUT["cline"],
            label=entry.path, executable=os.path.abspath(entry.path),
            config_dir=str(path.resolve()),
        ))


def load_path(path: Path, source: Source, project_dir: str, loaded: Loaded) -> None:
    """A file, or a folder holding Cline-style hooks and/or ``hooks.json`` and ``hooks/``."""
    loaded.sources.append(source)
    if path.is_dir():
        if (path / CONFIG_FILE).is_file():
            load_file(path / CONFIG_FILE, source, project_dir, loaded)
        if (path / HOOKS_DIR).is_dir():
            load_dir(path / HOOKS_DIR, source, loaded)
        load_dir(path, source, loaded)
    elif path.exists():
        load_file(path, source, project_dir, loaded)
    else:
        loaded.failures.append(LoadFailure(source, f"{path}: no such file or folder",
                                           source.name == "managed"))


def load_sources(sources: Sequence[tuple[Source, Path]], project_dir: str,
                 environ: Mapping[str, str] | None = None) -> Loaded:
    """Load every source, from the cache of validated configs when nothing changed."""
    env = os.environ if environ is None else environ
    key = cache.fingerprint(sources, project_dir)
    # The cache lives in the user's folders, which an agent running as the user can write:
    # a managed policy is always read from its own files.
    managed = any(source.name == "managed" for source, _ in sources)
    cached = None if managed else cache.load(key, env)
    if cached is not None:
        try:
            return _from_cache(cached)
        except (KeyError, TypeError, ValueError):
            pass  # a cache from another layout: rebuild it
    loaded = Loaded()
    for source, path in sources:
        load_path(path, source, project_dir, loaded)
    if not managed:
        cache.store(key, _to_cache(loaded), env)
    return loaded


def _to_cache(loaded: Loaded) -> dict[str, Any]:
    return {
        "hooks": [cache.hook_to_data(h) for h in loaded.hooks],
        "warnings": loaded.warnings,
        "unknown_events": loaded.unknown_events,
        "failures": [{"source": asdict(f.source), "message": f.message,
                      "fail_closed": f.fail_closed,
                      "events": None if f.events is None else sorted(f.events),
                      "details": list(f.details)}
                     for f in loaded.failures],
        "sources": [asdict(s) for s in loaded.sources],
        "audit": loaded.audit,
    }


def _from_cache(data: Mapping[str, Any]) -> Loaded:
    failures = [LoadFailure(Source(**f["source"]), f["message"], f["fail_closed"],
                            None if f["events"] is None else frozenset(f["events"]),
                            tuple(f["details"]))
                for f in data["failures"]]
    return Loaded(hooks=[cache.hook_from_data(h) for h in data["hooks"]],
                  warnings=list(data["warnings"]), failures=failures,
                  unknown_events=list(data["unknown_events"]),
                  sources=[Source(**s) for s in data["sources"]], audit=dict(data["audit"]))
