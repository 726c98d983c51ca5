"""What ``validate`` checks beyond loading: the mistakes that load fine and then never work.

Loading stops at a file's first layer that fails (its values, before its matchers and event
names), and a command that does not exist loads like any other. These checks read every
handler of every JSON file as written, whatever its other values (a dialect's ``raw_handlers``), and
every Cline-style hook file, so that one run names every mistake:

- an event key the dialect does not have, with the closest one it has;
- a matcher that does not compile, names a tool under another host's name (``Shell`` in a
  Claude Code style file), misspells one (``Bsh``), or sits on an event that ignores it;
- a command whose program is missing, not executable, or not on PATH, resolved as the hook
  would run it (``$CLAUDE_PROJECT_DIR`` and the other variables its host sets expanded, a
  relative path from the folder it runs in), and a script an interpreter would be given
  (``python3 ./nope.py``) that is missing;
- a ``prompt_file`` that is not found;
- a Cline-style hook file that is not executable, or whose ``#!`` names a missing program;
- a prompt hook's model that neither the direct client nor litellm can reach (a warning).

Nothing is run: a command is read, never handed to a shell (a config not yet approved may
hold ``$(...)``; see ``shell_words``).
"""

from __future__ import annotations

import os
import re
import shutil
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import files, handlers
from ..config.load_result import Loaded
from ..config.shell_words import ASSIGNMENT, INTERPRETERS, TOO_LONG, Word, first_words
from ..core.events import MCP_PREFIX
from ..core.hook import Hook, PromptSettings, Source, Trigger
from ..core.matchers import Matcher
from ..errors import ConfigError
from ..hosts import FOLDER_DIALECT, HOSTS, file_dialect
from ..model.endpoint import endpoint_for, problem
from ..redaction import redact

if TYPE_CHECKING:
    from ..hosts import Host
    from ..hosts.protocol import ConfigEvent, RawHandler


@dataclass
class Findings:
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


# Words the shell runs itself: nothing on disk to look for.
_BUILTINS = frozenset({
    ":", ".", "[", "[[", "!", "{", "alias", "break", "case", "cd", "continue", "echo", "eval",
    "exit", "export", "false", "for", "getopts", "hash", "if", "local", "printf", "pwd", "read",
    "readonly", "return", "set", "shift", "source", "test", "times", "trap", "true", "type",
    "ulimit", "umask", "unset", "until", "wait", "while"})
# Words that run the command after them (after their own options and, for env, assignments).
_RUNNERS = frozenset({"exec", "command", "nohup", "env", "nice"})
# A regex matcher that is only names (Cursor's "Shell|Read"): each name is checked as one.
_PLAIN_NAMES = re.compile(r"[A-Za-z0-9_:]+(\|[A-Za-z0-9_:]+)*")
_MAX_PATTERN = 4096
_MAX_NAMES = 64
_SUBCOMMAND_RUN = frozenset({"deno", "bun"})  # deno run x.ts, bun run x.ts


def check_sources(loaded: Loaded, project_dir: str, environ: Mapping[str, str]) -> Findings:
    """Every problem of the sources ``loaded`` read (its ``sources``), beyond its own."""
    found = Findings()
    for source in loaded.sources:
        path = Path(source.path)
        if path.is_dir():
            if (path / files.CONFIG_FILE).is_file():
                _check_json(path / files.CONFIG_FILE, source, project_dir, environ, found)
            for folder in (path / files.HOOKS_DIR, path):
                if folder.is_dir():
                    _check_folder(folder, FOLDER_DIALECT, environ, found)
        elif path.is_file():
            _check_json(path, source, project_dir, environ, found)
    for hook in loaded.hooks:  # packs and Cline-style prompt files too
        if hook.judged:
            _check_model(hook, environ, found)
    return found


def _check_json(path: Path, source: Source, project_dir: str, environ: Mapping[str, str],
                found: Findings) -> None:
    try:
        data = handlers.parse_json(handlers.read_text(path), path)
    except (ConfigError, ValueError):
        return  # it does not load at all: loading said why
    if not isinstance(data, dict):
        return
    host = file_dialect(data)
    hooks = data.get("hooks")
    if isinstance(hooks, Mapping):
        found.errors += [handlers.unknown_event_message(path, str(key), host.title,
                                                        host.wire.CONFIG_EVENTS)
                         for key in hooks if key not in host.wire.CONFIG_EVENTS]
    block = data.get("prompthooks")
    settings = _settings(block if isinstance(block, Mapping) else {})
    config_dir = str(path.parent.resolve())
    for raw in host.config.raw_handlers(data, path, project_dir):
        config_event = host.wire.CONFIG_EVENTS.get(raw.event_key)
        if config_event is not None and isinstance(raw.matcher, str):
            _check_matcher(host, config_event, raw, path, found)
        kind = raw.handler.get("type", "command")
        command = raw.handler.get("command")
        if kind == "command" and isinstance(command, str) and command.strip():
            env = {**environ, **raw.env, "PROMPTHOOKS_CONFIG_DIR": config_dir,
                   "PROMPTHOOKS_PROJECT_DIR": project_dir}
            problem = command_problem(command, raw.cwd or project_dir, env)
            if problem is not None:
                level, message = problem
                # A command may carry a secret ("ghp_... ./x.sh" with a quote lost), and
                # validate's output is pasted into CI logs and issues: shown redacted.
                (found.errors if level == "error" else found.warnings).append(
                    f"{path}: {raw.where}.command: {redact(message)}")
        elif kind in ("prompt", "agent"):
            _check_prompt(raw, path, source, host, settings, config_dir, environ, found)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _settings(block: Mapping[str, Any]) -> PromptSettings:
    return PromptSettings(model=_text(block.get("model")), api_base=_text(block.get("api_base")),
                          api_key_env=_text(block.get("api_key_env")))


def _check_prompt(raw: RawHandler, path: Path, source: Source, host: Host,
                  settings: PromptSettings, config_dir: str, environ: Mapping[str, str],
                  found: Findings) -> None:
    problems: list[ConfigError] = []
    prompt_file = _text(raw.handler.get("prompt_file"))
    handlers.check_prompt_file(prompt_file, config_dir, path, raw.where, problems)
    found.errors += [p.message for p in problems]
    # The hook as it would load, as far as its model goes (its other values may be wrong).
    hook = Hook(source=source, dialect=host.name, config_event=raw.event_key, index=0,
                trigger=Trigger(raw.event_key), kind="prompt", timeout=1.0,
                label=f"{path}: {raw.where}", model=_text(raw.handler.get("model")),
                prompt_settings=settings)
    _check_model(hook, environ, found)


def _check_model(hook: Hook, environ: Mapping[str, str], found: Findings) -> None:
    why = problem(endpoint_for(hook, environ), environ)
    if why is not None:
        found.warnings.append(f"{hook.label}: {why}")


# Matchers -----------------------------------------------------------------------------------

def _canonical_tools() -> set[str]:
    """Every tool some host is known to send, in canonical words."""
    return {host.wire.TOOL_NAMES.get(name, name) for host in HOSTS.values()
            for name in host.config.KNOWN_TOOLS}


def _check_matcher(host: Host, config_event: ConfigEvent, raw: RawHandler, path: Path,
                   found: Findings) -> None:
    where = f"{path}: {raw.matcher_where}"
    try:
        matcher = host.config.make_matcher(raw.matcher, config_event.match_on)
    except ValueError as exc:
        found.errors.append(f"{where}: {exc}")
        return
    if matcher.mode == "all":
        return
    if config_event.match_on == "none":
        found.warnings.append(f"{where}: {raw.event_key} ignores matchers: its hooks run on "
                              f"every {raw.event_key} event")
        return
    if config_event.match_on == "subject":
        _check_subject(matcher, config_event.trigger.event, where, found)
        return
    if config_event.match_on not in ("tool", "host_tool"):
        return
    tools = config_event.trigger.tools
    if MCP_PREFIX in tools:
        return  # MCP tools: their names are the user's own servers'
    every = {host.wire.host_tool(tool) for tool in _canonical_tools()}
    seen = {host.wire.host_tool(tool) for tool in tools} if tools else every
    pattern = matcher.pattern
    names = (matcher.names if matcher.mode == "names"
             else pattern.split("|") if len(pattern) <= _MAX_PATTERN
             and _PLAIN_NAMES.fullmatch(pattern) else ())
    if names:
        # A matcher comes from a file an agent may write: a bounded number of names is
        # compared, so that a list of a million cannot hold validate up.
        for name in names[:_MAX_NAMES]:
            _check_tool_name(name, host, raw.event_key, seen, every, where, found,
                             config_event.match_on == "tool")
    elif not any(matcher.matches(name) for name in seen) and "mcp" not in matcher.pattern.lower():
        known = (f"the tools {raw.event_key} is known to see ({', '.join(sorted(seen))})"
                 if len(seen) <= 8 else f"the {len(seen)} tools hosts are known to have")
        found.warnings.append(f"{where}: {matcher.pattern!r} matches none of {known}")


def _check_subject(matcher: Matcher, event: str, where: str, found: Findings) -> None:
    """A matcher on SessionStart, PreCompact, SessionEnd or Notification: its names against
    the values hosts send there."""
    seen = {value for host in HOSTS.values() for value in host.config.KNOWN_SUBJECTS.get(event, ())}
    seen |= {ce.trigger.subject for host in HOSTS.values()
             for ce in host.wire.CONFIG_EVENTS.values()
             if ce.trigger.event == event and ce.trigger.subject}
    if not seen or matcher.mode != "names":
        return
    for name in matcher.names[:_MAX_NAMES]:
        if name in seen:
            continue
        _unknown_name(name, seen, found, f"{where}: {event} is never sent with {name!r}",
                      f"{where}: no host is known to send {event} with {name!r} "
                      f"(known: {', '.join(sorted(seen))})")


def _check_tool_name(name: str, host: Host, event_key: str, seen: set[str], every: set[str],
                     where: str, found: Findings, canonical: bool) -> None:
    """``canonical``: the matcher compares canonical tool names, and so also takes a calling
    host's own name for the tool under that host (``Hook.matches_host_name``)."""
    if name in seen or name.startswith((MCP_PREFIX, "MCP:")):
        return
    if name in every:
        found.errors.append(f"{where}: {name!r} never matches: {event_key} fires for "
                            f"{', '.join(sorted(seen))} only")
        return
    for other in HOSTS.values():
        if name in other.config.KNOWN_TOOLS:
            ours = host.wire.host_tool(other.wire.TOOL_NAMES.get(name, name))
            if canonical and other is not host:
                found.warnings.append(f"{where}: {name!r} is {other.title}'s name: it matches "
                                      f"under {other.title} only; a {host.title} style matcher "
                                      f"says {ours!r} under every host")
            else:
                found.errors.append(f"{where}: {name!r} never matches: it is {other.title}'s "
                                    f"name; a {host.title} style matcher says {ours!r}")
            return
    _unknown_name(name, seen, found, f"{where}: unknown tool {name!r}",
                  f"{where}: no host is known to have a tool {name!r} (an MCP tool is "
                  f"{MCP_PREFIX}<server>__<tool>)")


def _unknown_name(name: str, seen: set[str], found: Findings, error: str, warning: str) -> None:
    """A name no host sends: an error naming the close one it probably means, else a warning
    (a host may send it after all)."""
    suggestion = handlers.did_you_mean(name, seen)
    if suggestion:
        found.errors.append(error + suggestion)
    else:
        found.warnings.append(warning)


# Commands -----------------------------------------------------------------------------------

def _program(words: list[Word]) -> int | None:
    """The index of the word naming the program the command starts (None: none)."""
    i = 0
    while i < len(words):
        word = words[i]
        if word.unresolved is None and ASSIGNMENT.match(word.text):
            i += 1
        elif word.unresolved is None and word.text in _RUNNERS:
            i += 1
            while i < len(words) and words[i].unresolved is None and (
                    words[i].text.startswith("-") or ASSIGNMENT.match(words[i].text)):
                i += 1
        else:
            return i
    return None


def command_problem(command: str, cwd: str, env: Mapping[str, str]) -> tuple[str, str] | None:
    """``("error" | "warning", why)`` when the program ``command`` starts cannot be run from
    ``cwd`` with ``env`` (None: nothing found against it, or nothing can be told)."""
    words = first_words(command, env)
    index = _program(words)
    if index is None:
        return None
    program = words[index]
    if program.unresolved is not None:
        if program.unresolved.endswith("is not set here") or program.unresolved == TOO_LONG:
            return "warning", f"not checked: {program.unresolved}"
        return None
    if program.glob or not program.text or program.text in _BUILTINS:
        return None
    if _unnameable(program.text):
        return "error", f"{program.text!r} cannot name a file: {_UNNAMEABLE}"
    problem = _missing_program(program.text, cwd, env.get("PATH", os.defpath))
    if problem is not None:
        return "error", problem
    name = os.path.basename(program.text)
    if not INTERPRETERS.fullmatch(name):
        return None
    rest = words[index + 1:]
    if name in _SUBCOMMAND_RUN and rest and rest[0].text == "run":
        rest = rest[1:]
    if not rest or rest[0].unresolved is not None or rest[0].glob:
        return None
    script = rest[0].text
    if not script or script.startswith("-"):
        return None  # an option (-c code, -m module...): no script file to look for
    if _unnameable(script):
        return "error", f"{name} would run {script!r}, which cannot name a file: {_UNNAMEABLE}"
    full = os.path.normpath(os.path.join(cwd, script))
    if not os.path.lexists(full):
        return "error", (f"{name} would run {script!r}, which does not exist"
                         f"{_looked_in(script, full, cwd)}")
    return None


_UNNAMEABLE = "it holds a NUL character or an unpaired surrogate"


def _unnameable(text: str) -> bool:
    """Whether ``text`` cannot be a path at all (the hook fails to start, whatever is on
    disk)."""
    if "\0" in text:
        return True
    try:
        os.fsencode(text)
    except UnicodeError:
        return True
    return False


def _looked_in(written: str, full: str, cwd: str) -> str:
    """Where a relative path was looked for (an absolute one says it all)."""
    return "" if os.path.isabs(written) else f" (no {full}: the hook runs in {cwd})"


def _missing_program(program: str, cwd: str, path: str) -> str | None:
    if "/" not in program:
        if shutil.which(program, path=path) is None:
            return f"{program!r} is not on PATH"
        return None
    full = os.path.normpath(os.path.join(cwd, program))
    try:
        mode = os.stat(full).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return f"{program!r} does not exist{_looked_in(program, full, cwd)}"
    except OSError:
        return None  # cannot be looked at from here: the run will say
    if stat.S_ISDIR(mode):
        return f"{program!r} is a folder ({full})"
    if not os.access(full, os.X_OK):
        return (f"{program!r} is not executable ({full}): chmod +x it, or name its "
                "interpreter first (python3 ..., bash ...)")
    return None


# Cline-style folders ------------------------------------------------------------------------

def _check_folder(folder: Path, dialect: Host, environ: Mapping[str, str],
                  found: Findings) -> None:
    for name in files.hook_file_names(dialect.wire.CONFIG_EVENTS):
        entry = folder / name
        if name.endswith(".md"):
            continue
        try:
            mode = os.stat(entry).st_mode
        except OSError:
            continue
        if not stat.S_ISREG(mode):
            continue  # loading refuses it and says so
        if not os.access(entry, os.X_OK):
            found.errors.append(f"{entry}: not executable: a {dialect.title} style hook is run "
                                f"through its #! line (chmod +x {entry})")
            continue
        problem = _shebang_problem(entry, environ)
        if problem is not None:
            found.errors.append(f"{entry}: {problem}")


def _shebang_problem(entry: Path, environ: Mapping[str, str]) -> str | None:
    try:
        head = files.read_bytes(entry, 512, head=True)
    except (OSError, files.UnsafeFile):
        return None
    if not head.startswith(b"#!"):
        return None  # a binary, or a script the kernel cannot start: the run will say
    words = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
    if not words:
        return "its #! line names no program"
    program = words[0]
    if os.path.basename(program) == "env":
        names = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
        if names and shutil.which(names[0], path=environ.get("PATH", os.defpath)) is None:
            return f"its #! line runs {names[0]!r}, which is not on PATH"
        return None
    if not os.access(program, os.X_OK):
        return f"its #! line names {program}, which is not an executable program here"
    return None


def unique(lines: Iterable[str]) -> list[str]:
    """``lines`` without repeats (loading and these checks may both say one), each file's
    together, the files in the order they first come."""
    kept = list(dict.fromkeys(lines))
    order: dict[str, int] = {}
    for line in kept:
        order.setdefault(line.split(": ", 1)[0], len(order))
    return sorted(kept, key=lambda line: order[line.split(": ", 1)[0]])
