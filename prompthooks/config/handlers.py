"""What every JSON config dialect's reader shares: validating a file against its models,
its ``prompthooks`` block, and one handler made into a :class:`Hook`. Each host's own reader
(``hosts/<name>/config.py``) walks its file's shape with these."""

from __future__ import annotations

import ipaddress
import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..core.hook import Hook, PromptSettings, Source, unlisted_variables
from ..core.matchers import MATCH_ALL, Matcher
from ..errors import ConfigError
from ..transcripts.conversation import DEFAULT_ENTRIES
from . import files
from .load_result import Loaded
from .pack_hooks import PROMPT_TIMEOUT as PROMPT_TIMEOUT
from .pack_hooks import pack_hooks

if TYPE_CHECKING:
    from .pack_hooks import Dialect

# Every dialect's http hooks: Claude Code documents none of its own for them, and a policy
# service that has not answered in 30 s is down (the run's budget caps it anyway).
HTTP_TIMEOUT = 30.0
AGENT_TIMEOUT = 60.0  # every dialect's agent hooks (Claude Code's agent default)


def json_path(loc: Iterable[int | str]) -> str:
    """``('hooks', 'PreToolUse', 0, 'timeout')`` -> ``hooks.PreToolUse[0].timeout``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def read_text(path: Path) -> str:
    try:
        return files.read_text(path)
    except files.UnsafeFile as exc:
        raise ConfigError(str(path), str(exc)) from None
    except OSError as exc:
        raise ConfigError(str(path), f"cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(str(path), "is not UTF-8 text") from None


def parse_json(text: str, path: Path) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        raise ConfigError(str(path), f"not valid JSON: {where}: {exc.msg}") from None
    except RecursionError:
        raise ConfigError(str(path), "not valid JSON: nested too deeply") from None
    except ValueError as exc:  # Python's limit on the digits of an integer
        raise ConfigError(str(path), f"not valid JSON: {files.describe(exc)}") from None


def lenient_json(text: str) -> Any:
    """``text`` parsed with numbers too long for Python's int taken as 0: only to tell which
    events a file refused for such a number marks failClosed."""
    limit = sys.get_int_max_str_digits() or 4300
    return json.loads(text, parse_int=lambda s: int(s) if len(s) < limit else 0)


def extras(model: Any, where: str) -> Iterator[str]:
    """Warnings for keys the lenient models kept but prompthooks does not use."""
    for key in sorted(model.model_extra or {}):
        yield f"{where}: unknown key {key!r} ignored" if where else f"unknown key {key!r} ignored"


def matcher(make: Callable[[str | None], Matcher], pattern: str | None, path: Path, where: str,
            problems: list[ConfigError]) -> Matcher:
    """The matcher; a pattern that does not compile is added to ``problems`` (the file then
    fails as a whole, so the stand-in returned for it never runs)."""
    try:
        return make(pattern)
    except ValueError as exc:
        problems.append(ConfigError(str(path), str(exc), where))
        return MATCH_ALL


def validate(model: Any, data: Mapping[str, Any], path: Path) -> Any:
    from pydantic import ValidationError  # pydantic: a load from the cache validates nothing

    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ConfigError.of_all([
            ConfigError(str(path), error["msg"].removeprefix("Value error, "),
                        json_path(error["loc"]) or "(top level)")
            for error in exc.errors()]) from None


def settings(model: Any) -> PromptSettings | None:
    block = model.prompthooks
    if block is None:
        return None
    return PromptSettings(block.model, block.api_base, block.api_key_env, block.max_event_chars,
                          block.verdict_cache_ttl, block.proxy, block.stop_block_cap)


def audit_settings(model: Any, path: Path, loaded: Loaded) -> None:
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


def managed_only(model: Any, path: Path, source: Source, loaded: Loaded,
                 problems: list[ConfigError]) -> None:
    """``prompthooks.allow_managed_hooks_only``: the managed policy's to say, nobody else's."""
    if not (model.prompthooks and model.prompthooks.allow_managed_hooks_only):
        return
    if source.name == "managed":
        loaded.managed_only = True
    else:
        problems.append(ConfigError(str(path), "only the managed policy (/etc/prompthooks) may "
                                    "set this", "prompthooks.allow_managed_hooks_only"))


def file_settings(model: Any, path: Path, source: Source, loaded: Loaded,
                  problems: list[ConfigError]) -> PromptSettings | None:
    """A file's ``prompthooks`` block taken in: its prompt settings (returned), its audit
    settings, ``allow_managed_hooks_only``, and warnings for its unknown top-level keys."""
    audit_settings(model, path, loaded)
    managed_only(model, path, source, loaded, problems)
    loaded.warnings += [f"{path}: {w}" for w in extras(model, "")]
    return settings(model)


def check_prompt_file(name: str | None, config_dir: str, path: Path, where: str,
                       problems: list[ConfigError]) -> None:
    # Only a template hook needs it (a command-only run never reads a template).
    from .templates import TemplateError, resolve_prompt_file

    if name:
        try:
            resolve_prompt_file(name, config_dir)
        except TemplateError as exc:
            problems.append(ConfigError(str(path), str(exc), f"{where}.prompt_file"))


def transcript_entries(value: bool | int | str | None) -> int | None:
    """A handler's ``transcript``: a number of entries, true (the default) or false (0)."""
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


def hook(handler: Any, *, label: str, where: str, path: Path, loaded: Loaded,
         problems: list[ConfigError], default_timeout: float, **fields: Any) -> Hook | None:
    """The Hook for one handler of a JSON config, or None (with a warning) if we cannot run it."""
    loaded.warnings += [f"{label}: {w}" for w in extras(handler, "")]
    if handler.type in ("prompt", "agent"):
        check_prompt_file(handler.prompt_file, fields["config_dir"], path, where, problems)
        agent = handler.type == "agent"
        if agent and handler.cache_ttl is not None:
            loaded.warnings.append(f"{label}: 'cache_ttl' is not used by an agent hook (what "
                                   "it reads in the project changes); its verdicts are not "
                                   "cached")
        return Hook(kind=handler.type, label=label, title=handler.name, prompt=handler.prompt,
                    prompt_file=handler.prompt_file, model=handler.model,
                    fail_closed=handler.failClosed, max_event_chars=handler.max_event_chars,
                    cache_ttl=None if agent else handler.cache_ttl,
                    timeout=handler.timeout or (AGENT_TIMEOUT if agent else PROMPT_TIMEOUT),
                    transcript=transcript_entries(handler.transcript),
                    max_turns=handler.max_turns, **fields)
    if handler.type == "http":
        headers = tuple((handler.headers or {}).items())
        allowed = tuple(handler.allowedEnvVars or ())
        loaded.warnings += [
            f"{label}: header {name!r} names ${var}, which allowedEnvVars does not list: it is "
            "sent empty" for name, var in unlisted_variables(headers, allowed)]
        if not local_or_encrypted(handler.url):
            loaded.warnings.append(f"{label}: url is plain http:// to another machine: the "
                                   "event and the headers cross the network unencrypted")
        return Hook(kind="http", label=label, title=handler.name, url=handler.url,
                    headers=headers, allowed_env_vars=allowed, fail_closed=handler.failClosed,
                    allow_approves=handler.allow_approves, raw_event=handler.raw_event,
                    timeout=handler.timeout or HTTP_TIMEOUT, **fields)
    if handler.type != "command":
        loaded.warnings.append(f"{label}: type {handler.type!r} is not supported; "
                               "this hook is ignored")
        return None
    return Hook(kind="command", label=label, title=handler.name, command=handler.command,
                fail_closed=handler.failClosed, allow_approves=handler.allow_approves,
                raw_event=handler.raw_event,
                timeout=handler.timeout or default_timeout, **fields)


def local_or_encrypted(url: str) -> bool:
    """Whether an http hook's URL is https://, or http:// to this machine (loopback)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.scheme == "https" or host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def unknown_event_message(path: Path, key: str, title: str, known: Iterable[str]) -> str:
    """An event key the dialect does not have, with the closest one it has."""
    return (f"{path}: hooks.{key}: unknown {title} event{did_you_mean(key, known)}; "
            "its hooks are ignored")


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`` (did you mean 'X'?)`` for the known name closest to ``name``, or nothing."""
    if len(name) > 100:  # no event or tool is named that long: nothing to compare
        return ""
    import difflib  # only a misspelt name needs it: `run` never loads it

    choices = sorted(known)
    same_letters = [c for c in choices if c.lower() == name.lower()]
    close = same_letters or difflib.get_close_matches(name, choices, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def unknown_event(path: Path, key: str, title: str, known: Iterable[str],
                  loaded: Loaded) -> None:
    loaded.unknown_events.append(unknown_event_message(path, key, title, known))


def packs(model: Any, path: Path, source: Source, prompt_settings: PromptSettings | None,
          first_index: int, loaded: Loaded, problems: list[ConfigError],
          canonical: Dialect) -> list[Hook]:
    """The hooks of the file's ``prompthooks.packs`` (config.pack_hooks), in ``canonical``'s
    vocabulary (the dialect packs are written in)."""
    if not (model.prompthooks and model.prompthooks.packs):
        return []

    loaded.uses_packs = True
    return pack_hooks(model.prompthooks, path, source, prompt_settings, first_index, os.environ,
                      problems, loaded.pack_checks, canonical)
