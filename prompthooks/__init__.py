"""prompthooks: command and prompt hooks for AI coding agents (Claude Code, Cursor, Cline).

The public API is re-exported here lazily, so ``import prompthooks`` stays cheap::

    from prompthooks import dispatch, load_config
"""

from __future__ import annotations

from ._version import __version__

# Not typing's: `prompthooks run` imports this package first, and typing costs more than the
# whole thin client (mypy reads any TYPE_CHECKING as true).
TYPE_CHECKING = False

_EXPORTS = {
    "dispatch": "api", "adispatch": "api", "load_config": "api", "parse_event": "api",
    "Config": "api", "Outcome": "api", "Decision": "core.merge",
    "HookResult": "core.result", "Event": "core.events", "Hook": "core.hook",
    "PromptHooksError": "errors", "InputError": "errors", "ConfigError": "errors",
}
__all__ = [
    "Config", "ConfigError", "Decision", "Event", "Hook", "HookResult", "InputError", "Outcome",
    "PromptHooksError", "__version__", "adispatch", "dispatch", "load_config", "parse_event",
]

if TYPE_CHECKING:
    from typing import Any

    from .api import Config, Outcome, adispatch, dispatch, load_config, parse_event
    from .core.events import Event
    from .core.hook import Hook
    from .core.merge import Decision
    from .core.result import HookResult
    from .errors import ConfigError, InputError, PromptHooksError


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'prompthooks' has no attribute {name!r}")
    # only when a name is asked for: the thin client imports this package and nothing more
    from importlib import import_module

    return getattr(import_module(f".{module}", __name__), name)
