"""Claude Code's config dialect: its ``settings.json`` hooks (event -> matcher groups ->
handlers, as pydantic models), their reading, and its matchers.

A matcher missing, ``""`` or ``"*"`` matches everything; a value made only of letters,
digits, ``_``, ``-``, spaces, ``,`` and ``|`` is an exact name or a list of exact names;
anything else is an unanchored regular expression (``Edit.*`` also matches
``NotebookEdit``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field, StrictBool, StrictStr

from ...config import handlers
from ...config.load_result import Loaded
from ...config.schema import Handler, Lenient, PromptHooksBlock
from ...core.hook import Hook, MatchOn, Source
from ...core.matchers import MATCH_ALL, Matcher, check_regex, matches_everything
from ...errors import ConfigError
from ..protocol import RawHandler
from .wire import (
    CONFIG_EVENTS,
    DEFAULT_TIMEOUT,
    FAST_MODEL_NAME,
    FAST_MODEL_VARIABLES,
    NAME,
    TITLE,
    TOOL_NAMES,
)

if TYPE_CHECKING:
    from ..protocol import HostRoles

# Claude Code's built-in tools, past and present (its tools reference), beside the canonical
# ones; MCP tools are mcp__<server>__<tool>.
KNOWN_TOOLS = frozenset({
    *TOOL_NAMES, "Agent", "AskUserQuestion", "BashOutput", "EnterPlanMode", "ExitPlanMode",
    "KillBash", "KillShell", "LS", "LSP", "ListMcpResourcesTool", "NotebookRead",
    "ReadMcpResourceTool", "Skill", "SlashCommand", "TaskCreate", "TaskGet", "TaskList",
    "TaskOutput", "TaskStop", "TaskUpdate", "TodoRead", "TodoWrite", "ToolSearch",
    "WebSearch"})
# The values Claude Code documents for its matchers on non-tool events.
KNOWN_SUBJECTS: dict[str, frozenset[str]] = {
    "SessionStart": frozenset({"startup", "resume", "clear", "compact"}),
    "PreCompact": frozenset({"manual", "auto"}),
    "SessionEnd": frozenset({"clear", "logout", "prompt_input_exit", "other",
                             "bypass_permissions_disabled"}),
    "Notification": frozenset({"permission_prompt", "idle_prompt", "auth_success",
                               "elicitation_dialog"}),
}
EVENT_ALIASES: dict[str, str] = {}
_NAME_LIST = re.compile(r"[A-Za-z0-9_\- ,|]*")


class ClaudeHandler(Handler):
    statusMessage: StrictStr | None = None  # a spinner text: nothing to show it in
    once: StrictBool | None = None  # honoured by Claude Code in skill front matter only
    # false: a prompt hook's block also ends the turn (halt_on_block); unset or true: it goes
    # back to the agent.
    continueOnBlock: StrictBool | None = None
    # Accepted and not honoured, each with its own warning (_NOT_HONOURED says what happens).
    run_async: StrictBool | None = Field(None, alias="async")
    asyncRewake: StrictBool | None = None
    run_if: StrictStr | None = Field(None, alias="if")
    args: list[StrictStr] | None = None
    shell: StrictStr | None = None


class ClaudeMatcherGroup(Lenient):
    matcher: StrictStr | None = None
    hooks: list[ClaudeHandler]


class ClaudeFile(Lenient):
    hooks: dict[str, list[ClaudeMatcherGroup]] = Field(default_factory=dict)
    prompthooks: PromptHooksBlock | None = None


def claude_matcher(pattern: str | None) -> Matcher:
    """A Claude Code matcher; raises ValueError for a regex that does not compile."""
    if pattern is None or matches_everything(pattern):
        return MATCH_ALL
    if _NAME_LIST.fullmatch(pattern):
        names = tuple(n.strip() for n in re.split(r"[|,]", pattern) if n.strip())
        return Matcher("names", pattern, names) if names else MATCH_ALL
    check_regex(pattern)
    return Matcher("search", pattern)


def make_matcher(pattern: str | None, match_on: MatchOn) -> Matcher:
    return claude_matcher(pattern)


def claims_file(data: Mapping[str, Any]) -> bool:
    """Claude Code's nested shape is the default: any JSON file no other dialect claims."""
    return True

# Where Claude Code ends the turn on a prompt hook's ok: false (its default since 2.1.210):
# PreToolUse, PostToolUse and TeammateIdle unless the handler sets continueOnBlock, and
# PostToolBatch, UserPromptSubmit and UserPromptExpansion whatever it sets. A prompthooks
# prompt hook's block goes back to the agent unless the handler asks for Claude Code's
# default with "continueOnBlock": false (docs/security.md: "Decisions where the hosts are silent").
_ENDS_TURN = frozenset({"PreToolUse", "PostToolUse", "TeammateIdle", "PostToolBatch",
                        "UserPromptSubmit", "UserPromptExpansion"})

# A command hook's default timeout where Claude Code lowers it from 600 s.
_TIMEOUTS = {"UserPromptSubmit": 30.0}

# Handler keys of Claude Code's that prompthooks reads but does not honour, and what happens.
_NOT_HONOURED = {
    "run_async": "'async' is not supported: the hook runs before the reply and its answer counts",
    "asyncRewake": "'asyncRewake' is not supported: the hook runs before the reply and its "
                   "answer counts",
    "run_if": "'if' is not evaluated: the hook runs on every event its matcher selects",
    "args": "'args' is not supported: 'command' runs through the shell, without them",
    "shell": "'shell' is not supported: 'command' runs through /bin/sh",
}


def halt_on_block(handler: ClaudeHandler) -> frozenset[str]:
    """The events on which a handler's block also ends the turn, as Claude Code reads it."""
    return _ENDS_TURN if handler.type in ("prompt", "agent") and handler.continueOnBlock is False \
        else frozenset()


def not_honoured(handler: ClaudeHandler) -> list[str]:
    return [text for key, text in _NOT_HONOURED.items() if getattr(handler, key) is not None]


def load_file(data: Mapping[str, Any], path: Path, source: Source, loaded: Loaded,
              project_dir: str, canonical: HostRoles) -> list[Hook]:
    model = handlers.validate(ClaudeFile, data, path)
    out: list[Hook] = []
    problems: list[ConfigError] = []
    settings = handlers.file_settings(model, path, source, loaded, problems)
    for event_key, groups in model.hooks.items():
        config_event = CONFIG_EVENTS.get(event_key)
        if config_event is None:
            handlers.unknown_event(path, event_key, TITLE, CONFIG_EVENTS, loaded)
            continue
        for gi, group in enumerate(groups):
            where = f"hooks.{event_key}[{gi}]"
            loaded.warnings += [f"{path}: {w}" for w in handlers.extras(group, where)]
            matcher = handlers.matcher(claude_matcher, group.matcher, path, f"{where}.matcher",
                                       problems)
            for hi, handler in enumerate(group.hooks):
                loaded.warnings += [f"{path}: {where}.hooks[{hi}]: {w}"
                                    for w in not_honoured(handler)]
                hook = handlers.hook(handler, label=f"{path}: {where}.hooks[{hi}]",
                                     where=f"{where}.hooks[{hi}]", path=path, loaded=loaded,
                                     problems=problems,
                                     default_timeout=_TIMEOUTS.get(event_key, DEFAULT_TIMEOUT),
                                     source=source, dialect=NAME, config_event=event_key,
                                     index=len(out), trigger=config_event.trigger,
                                     matcher=matcher, match_on=config_event.match_on,
                                     prompt_settings=settings,
                                     halt_on_block=halt_on_block(handler),
                                     model_variables=FAST_MODEL_VARIABLES,
                                     fast_model_name=FAST_MODEL_NAME,
                                     config_dir=str(path.parent.resolve()))
                if hook:
                    out.append(hook)
    out += handlers.packs(model, path, source, settings, len(out), loaded, problems, canonical)
    if problems:
        raise ConfigError.of_all(problems)
    return out


def raw_handlers(data: Mapping[str, Any], path: Path,
                 project_dir: str) -> Iterator[RawHandler]:
    """Every handler of the file as written, whatever its values: a hook runs in the event's
    ``cwd``, which is the project folder as far as a check made ahead can tell."""
    hooks = data.get("hooks")
    if not isinstance(hooks, Mapping):
        return
    env = {"CLAUDE_PROJECT_DIR": project_dir}
    for event_key, groups in hooks.items():
        for gi, group in enumerate(groups if isinstance(groups, list) else ()):
            handlers_ = group.get("hooks") if isinstance(group, Mapping) else None
            if not isinstance(handlers_, list):
                continue
            where = f"hooks.{event_key}[{gi}]"
            for hi, handler in enumerate(handlers_):
                if isinstance(handler, Mapping):
                    yield RawHandler(str(event_key), f"{where}.hooks[{hi}]", handler,
                                     group.get("matcher"), f"{where}.matcher", project_dir,
                                     env)
