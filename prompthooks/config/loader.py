"""Loading config sources into hooks: a JSON file (Claude Code or Cursor style, told apart by
its shape) or a Cline-style directory of executables named after events.

A source that cannot be loaded does not stop the others: it becomes a :class:`LoadFailure`
that the engine turns into a failed hook, fail-closed when the source is the managed policy
or the file marks any of its hooks ``failClosed``. That holds whatever goes wrong: a hostile
file (a 5000-digit number, JSON nested 100,000 deep, a FIFO, a terabyte) or a folder that
cannot be read is one failure of its source, never an exception out of a load. Which sources
are loaded at all (trust, the cache) is ``config.sources``.
"""

from __future__ import annotations

import functools
import json
import os
import stat
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.events import EVENTS, Event
from ..core.hook import Dialect, Hook, PromptSettings, Source, Trigger, check_name
from ..core.matchers import MATCH_ALL, Matcher, claude_matcher, cursor_matcher
from ..core.result import HookResult
from ..errors import ConfigError
from ..hosts import claude, cline, cursor
from . import files, trust
from .files import CONFIG_FILE as CONFIG_FILE
from .files import HOOKS_DIR as HOOKS_DIR

# Per-hook timeouts when the handler gives none (seconds), by dialect: Claude Code's command
# default, and Cline's; Cursor documents none, so it gets Cline's.
DEFAULT_TIMEOUT: dict[str, float] = {"claude": 600.0, "cursor": 30.0, "cline": 30.0}
PROMPT_TIMEOUT = 30.0  # every dialect's prompt hooks (Claude Code's prompt default)


@dataclass(frozen=True, slots=True)
class LoadFailure:
    """A source that could not be loaded; ``events`` limits a fail-closed failure's reach."""

    source: Source
    message: str
    fail_closed: bool
    events: frozenset[str] | None = None  # canonical events; None = every event
    details: tuple[str, ...] = ()  # every problem, when the file has several
    # "config": it is broken; "untrusted": not approved (config.trust); "managed_only": the
    # managed policy allows managed hooks only. The last two never block.
    kind: str = "config"

    def stand_in(self, event: Event) -> HookResult:
        """This source as one failed hook for ``event`` (fail-closed where it reaches)."""
        fail_closed = self.fail_closed and (self.events is None or event.name in self.events)
        # config_event "*" marks a broken source's stand-in, "*untrusted" an unapproved one
        # (see audit.rows and merge.failure_line).
        marker = "*" if self.kind == "config" else f"*{self.kind}"
        hook = Hook(source=self.source, dialect="claude", config_event=marker, index=-1,
                    trigger=Trigger(event.name), kind="command", timeout=0.0,
                    label=self.source.path, command=f"<{self.kind} {self.source.name}>",
                    fail_closed=fail_closed)
        return HookResult(hook=hook, status="error", error=self.message)


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
    # The approval state of each project and user source, checked on every load.
    trust: list[trust.TrustState] = field(default_factory=list)
    managed_only: bool = False  # a managed file says "allow_managed_hooks_only"
    # What the load depended on (config.cache); changes whenever a loaded file does.
    fingerprint: str = ""
    # A file uses policy packs: what a cached load must check again (config.packs), and
    # whether any is used (a load whose packs failed is not cached: a fetch would not be seen).
    uses_packs: bool = False
    pack_checks: list[dict[str, Any]] = field(default_factory=list)


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


def _read_text(path: Path) -> str:
    try:
        return files.read_text(path)
    except files.UnsafeFile as exc:
        raise ConfigError(str(path), str(exc)) from None
    except OSError as exc:
        raise ConfigError(str(path), f"cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(str(path), "is not UTF-8 text") from None


def _parse_json(text: str, path: Path) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        raise ConfigError(str(path), f"not valid JSON: {where}: {exc.msg}") from None
    except RecursionError:
        raise ConfigError(str(path), "not valid JSON: nested too deeply") from None
    except ValueError as exc:  # Python's limit on the digits of an integer
        raise ConfigError(str(path), f"not valid JSON: {files.describe(exc)}") from None


def _lenient_json(text: str) -> Any:
    """``text`` parsed with numbers too long for Python's int taken as 0: only to tell which
    events a file refused for such a number marks failClosed."""
    limit = sys.get_int_max_str_digits() or 4300
    return json.loads(text, parse_int=lambda s: int(s) if len(s) < limit else 0)


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
                          block.verdict_cache_ttl, block.proxy, block.stop_block_cap)


def _audit_settings(model: Any, path: Path, loaded: Loaded) -> None:
    block = model.prompthooks.audit if model.prompthooks else None
    if block is None:
        return
    folder = path.parent.resolve()
    for key, value in block.model_dump(exclude_none=True).items():
        if key == "path":  # relative to the file that says it
            value = str(folder / os.path.expanduser(value))
        if key == "export":
            # Each target on its own: a higher file's target cannot be removed or
            # redirected by a lower one, which can still add a target of another kind.
            export = loaded.audit.setdefault("export", {})
            for kind, target in value.items():
                if kind == "jsonl":
                    target["path"] = str(folder / os.path.expanduser(target["path"]))
                export.setdefault(kind, target)
            continue
        loaded.audit.setdefault(key, value)


def _managed_only(model: Any, path: Path, source: Source, loaded: Loaded,
                  problems: list[ConfigError]) -> None:
    """``prompthooks.allow_managed_hooks_only``: the managed policy's to say, nobody else's."""
    if not (model.prompthooks and model.prompthooks.allow_managed_hooks_only):
        return
    if source.name == "managed":
        loaded.managed_only = True
    else:
        problems.append(ConfigError(str(path), "only the managed policy (/etc/prompthooks) may "
                                    "set this", "prompthooks.allow_managed_hooks_only"))


def _check_prompt_file(name: str | None, config_dir: str, path: Path, where: str,
                       problems: list[ConfigError]) -> None:
    from ..model.templates import TemplateError, resolve_prompt_file

    if name:
        try:
            resolve_prompt_file(name, config_dir)
        except TemplateError as exc:
            problems.append(ConfigError(str(path), str(exc), f"{where}.prompt_file"))


def transcript_entries(value: bool | int | str | None) -> int | None:
    """A handler's ``transcript``: a number of entries, true (the default) or false (0)."""
    from ..transcripts.conversation import DEFAULT_ENTRIES

    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    if isinstance(value, str):  # a Cline prompt file's front matter
        if value.strip().lower() not in ("true", "false"):
            number = int(value)
            if number < 0:
                raise ValueError(f"transcript must be a number of entries, true or false, "
                                 f"not {value}")
            return number
        value = value.strip().lower() == "true"
    return DEFAULT_ENTRIES if value else 0


def _hook(handler: Any, *, label: str, where: str, path: Path, loaded: Loaded,
          problems: list[ConfigError], **fields: Any) -> Hook | None:
    """The Hook for one handler of a JSON config, or None (with a warning) if we cannot run it."""
    loaded.warnings += [f"{label}: {w}" for w in _extras(handler, "")]
    if handler.type == "prompt":
        _check_prompt_file(handler.prompt_file, fields["config_dir"], path, where, problems)
        return Hook(kind="prompt", label=label, title=handler.name, prompt=handler.prompt,
                    prompt_file=handler.prompt_file, model=handler.model,
                    fail_closed=handler.failClosed, max_event_chars=handler.max_event_chars,
                    cache_ttl=handler.cache_ttl, timeout=handler.timeout or PROMPT_TIMEOUT,
                    transcript=transcript_entries(handler.transcript), **fields)
    if handler.type != "command":
        loaded.warnings.append(f"{label}: type {handler.type!r} is not supported; "
                               "this hook is ignored")
        return None
    return Hook(kind="command", label=label, title=handler.name, command=handler.command,
                fail_closed=handler.failClosed,
                timeout=handler.timeout or DEFAULT_TIMEOUT[fields["dialect"]], **fields)


def _unknown_event(path: Path, key: str, title: str, loaded: Loaded) -> None:
    loaded.unknown_events.append(f"{path}: hooks.{key}: unknown {title} event; "
                                 "its hooks are ignored")


def claude_hooks(data: Mapping[str, Any], path: Path, source: Source,
                  loaded: Loaded) -> list[Hook]:
    from .schema import ClaudeFile

    model = _validate(ClaudeFile, data, path)
    settings = _settings(model)
    _audit_settings(model, path, loaded)
    out: list[Hook] = []
    problems: list[ConfigError] = []
    _managed_only(model, path, source, loaded, problems)
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
    out += _packs(model, path, source, settings, len(out), loaded, problems)
    if problems:
        raise ConfigError.of_all(problems)
    return out


def _packs(model: Any, path: Path, source: Source, settings: PromptSettings | None,
           first_index: int, loaded: Loaded, problems: list[ConfigError]) -> list[Hook]:
    """The hooks of the file's ``prompthooks.packs`` (config.pack_hooks)."""
    if not (model.prompthooks and model.prompthooks.packs):
        return []
    from .pack_hooks import pack_hooks

    loaded.uses_packs = True
    return pack_hooks(model.prompthooks, path, source, settings, first_index, os.environ,
                      problems, loaded.pack_checks)


def _cursor_hooks(data: Mapping[str, Any], path: Path, source: Source, loaded: Loaded,
                  project_dir: str) -> list[Hook]:
    from .schema import CursorFile

    model = _validate(CursorFile, data, path)
    settings = _settings(model)
    _audit_settings(model, path, loaded)
    out: list[Hook] = []
    problems: list[ConfigError] = []
    _managed_only(model, path, source, loaded, problems)
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
    out += _packs(model, path, source, settings, len(out), loaded, problems)
    if problems:
        raise ConfigError.of_all(problems)
    return out


def load_file(path: Path, source: Source, project_dir: str, loaded: Loaded,
              data: Any = None) -> None:
    """Add the hooks of one JSON config file to ``loaded`` (or a failure if it is broken).

    ``data`` is the file's content when it was read already (a config inlined in a test
    case file); ``path`` then names where it came from."""
    text = None
    try:
        if data is None:
            text = _read_text(path)
            data = _parse_json(text, path)
        if not isinstance(data, dict):
            raise ConfigError(str(path), "the top level must be a JSON object")
        dialect = detect_dialect(data)
        hooks = (claude_hooks(data, path, source, loaded) if dialect == "claude"
                 else _cursor_hooks(data, path, source, loaded, project_dir))
    except Exception as exc:  # whatever it is, it is this file's failure alone
        error = (exc if isinstance(exc, ConfigError)
                 else ConfigError(str(path), files.describe(exc)))
        managed = source.name == "managed"
        events = None if managed else _told_events(data, text)
        loaded.failures.append(LoadFailure(source, error.message, managed or bool(events),
                                           events,
                                           error.details if len(error.details) > 1 else ()))
        return
    loaded.hooks += hooks


def _told_events(data: Any, text: str | None) -> frozenset[str]:
    """The events a broken file marks failClosed, as far as that can still be told."""
    try:
        if data is None and text is not None:
            data = _lenient_json(text)
        if not isinstance(data, dict):
            return frozenset()
        events = _fail_closed_events(data, detect_dialect(data))
        if not (isinstance(data.get("prompthooks"), dict) and "packs" in data["prompthooks"]):
            return events
        from .pack_hooks import fail_closed_events

        pack_events, every = fail_closed_events(data)
        if every:  # a failClosed pack policy whose events cannot be told: every event
            return frozenset(EVENTS)
        return events | pack_events
    except Exception:  # the file cannot even be read that far: nothing to tell
        return frozenset()


def _cline_prompt_hook(path: Path, folder: Path, source: Source, index: int) -> Hook:
    """``<Hook>.md`` in a Cline-style folder: a prompt hook; its front matter may set
    ``name``, ``model``, ``timeout``, ``failClosed``, ``max_event_chars`` and ``transcript``."""
    from ..model.templates import parse_front_matter

    try:
        meta, body = parse_front_matter(files.read_text(path))
        timeout = float(meta.get("timeout", PROMPT_TIMEOUT))
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
    config_event = cline.CONFIG_EVENTS[path.stem]
    return Hook(source=source, dialect="cline", config_event=path.stem, index=index,
                trigger=config_event.trigger, kind="prompt", timeout=timeout, label=str(path),
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


def file_type(path: Path) -> int | None:
    """The mode of what ``path`` names (a symlink followed), None if nothing is there; a
    symlink to nothing is a file (it fails when run, as it would in Cline)."""
    try:
        return os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        try:
            os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        return stat.S_IFREG


def load_dir(path: Path, source: Source, loaded: Loaded) -> None:
    """A Cline-style folder: each file named after a Cline hook is a hook of that event, and
    ``<Hook>.md`` a prompt hook of that event.

    Only those names are looked at, so a folder of a million other files costs nothing. A FIFO,
    device or socket under such a name is not run: it is a failure of that event."""
    managed = source.name == "managed"
    for name in files.hook_file_names():
        entry = path / name
        mode = file_type(entry)
        if mode is None or stat.S_ISDIR(mode):
            continue
        prompt = name.endswith(".md")
        config_event = cline.CONFIG_EVENTS[name[:-3] if prompt else name]
        event = config_event.trigger.event
        if not stat.S_ISREG(mode):
            loaded.failures.append(LoadFailure(
                source, f"{entry}: is not a regular file ({files.kind(mode)}); not run",
                managed, None if managed else frozenset({event})))
            continue
        if prompt:
            try:
                loaded.hooks.append(_cline_prompt_hook(entry, path, source, len(loaded.hooks)))
            except ConfigError as exc:
                # A broken file that says failClosed still blocks its event.
                marked = _says_fail_closed(entry)
                loaded.failures.append(LoadFailure(
                    source, exc.message, managed or marked,
                    None if managed else frozenset({event})))
            continue
        loaded.hooks.append(Hook(
            source=source, dialect="cline", config_event=name, index=len(loaded.hooks),
            trigger=config_event.trigger, kind="command", timeout=DEFAULT_TIMEOUT["cline"],
            label=str(entry), executable=os.path.abspath(entry),
            config_dir=str(path.resolve()),
        ))


def _load_path(path: Path, source: Source, project_dir: str, loaded: Loaded) -> None:
    if path.is_dir():
        mode = file_type(path / CONFIG_FILE)
        if mode is not None and not stat.S_ISDIR(mode):  # a FIFO there fails, unread
            load_file(path / CONFIG_FILE, source, project_dir, loaded)
        if (path / HOOKS_DIR).is_dir():
            load_dir(path / HOOKS_DIR, source, loaded)
        load_dir(path, source, loaded)
    elif path.exists():
        load_file(path, source, project_dir, loaded)
    else:
        loaded.failures.append(LoadFailure(source, f"{path}: no such file or folder",
                                           source.name == "managed"))


def load_path(path: Path, source: Source, project_dir: str, loaded: Loaded) -> None:
    """A file, or a folder holding Cline-style hooks and/or ``hooks.json`` and ``hooks/``.

    Nothing raises out of here: whatever fails (a folder that cannot be read, say) is one
    failure of this source, fail-closed when it is the managed policy."""
    loaded.sources.append(source)
    try:
        _load_path(path, source, project_dir, loaded)
    except Exception as exc:
        loaded.failures.append(LoadFailure(source, f"{path}: {files.describe(exc)}",
                                           source.name == "managed"))
