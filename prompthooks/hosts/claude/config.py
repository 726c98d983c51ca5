"""Reading Claude Code's ``settings.json`` hooks: event -> matcher groups -> handlers."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...config import handlers
from ...config.loaded import Loaded
from ...core.hook import Hook, Source
from ...errors import ConfigError
from .matchers import claude_matcher
from .wire import (
    CONFIG_EVENTS,
    DEFAULT_TIMEOUT,
    FAST_MODEL_NAME,
    FAST_MODEL_VARIABLES,
    NAME,
    TITLE,
)

if TYPE_CHECKING:
    from ..protocol import Host


def load_file(data: Mapping[str, Any], path: Path, source: Source, loaded: Loaded,
              project_dir: str, canonical: Host) -> list[Hook]:
    from .schema import ClaudeFile

    model = handlers.validate(ClaudeFile, data, path)
    out: list[Hook] = []
    problems: list[ConfigError] = []
    settings = handlers.file_settings(model, path, source, loaded, problems)
    for event_key, groups in model.hooks.items():
        config_event = CONFIG_EVENTS.get(event_key)
        if config_event is None:
            handlers.unknown_event(path, event_key, TITLE, loaded)
            continue
        for gi, group in enumerate(groups):
            where = f"hooks.{event_key}[{gi}]"
            loaded.warnings += [f"{path}: {w}" for w in handlers.extras(group, where)]
            matcher = handlers.matcher(claude_matcher, group.matcher, path, f"{where}.matcher",
                                       problems)
            for hi, handler in enumerate(group.hooks):
                hook = handlers.hook(handler, label=f"{path}: {where}.hooks[{hi}]",
                                     where=f"{where}.hooks[{hi}]", path=path, loaded=loaded,
                                     problems=problems, default_timeout=DEFAULT_TIMEOUT,
                                     source=source, dialect=NAME, config_event=event_key,
                                     index=len(out), trigger=config_event.trigger,
                                     matcher=matcher, match_on=config_event.match_on,
                                     prompt_settings=settings,
                                     model_variables=FAST_MODEL_VARIABLES,
                                     fast_model_name=FAST_MODEL_NAME,
                                     config_dir=str(path.parent.resolve()))
                if hook:
                    out.append(hook)
    out += handlers.packs(model, path, source, settings, len(out), loaded, problems, canonical)
    if problems:
        raise ConfigError.of_all(problems)
    return out
