"""Which model and endpoint a prompt hook uses.

Model: the handler's ``model`` > ``PROMPTHOOKS_MODEL`` > the config's ``prompthooks.model`` >
the host's own variable for its fast model, for hooks in its dialect (Claude Code's
``ANTHROPIC_DEFAULT_HAIKU_MODEL``, then ``ANTHROPIC_SMALL_FAST_MODEL``, as it picks the model
of its own prompt hooks) > :data:`DEFAULT_MODEL`; a name that is one of the user's aliases
(aliases.py) is the model it stands for, and Claude Code's own "haiku" is that fast model.
Endpoint: ``PROMPTHOOKS_API_BASE`` > the config's ``api_base``. Key: ``PROMPTHOOKS_API_KEY`` >
the variable the config's ``api_key_env`` names > the provider's own variable
(``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY``...), which litellm reads itself > the key
``prompthooks keys set`` stored for that provider (keys.py; only for the provider's own
address).

A test suite (``prompthooks test``, ``eval``, the pytest helpers) runs on the model its config
names: a suite's ``Models(suite=True)`` (model/chain.py) leaves ``PROMPTHOOKS_MODEL`` out, so
a recorded suite replays the same on every machine; only an explicit option (``--model``)
changes it.

A managed hook takes its whole network path from the managed file only, since anything
running as the user (an agent included) can set environment variables: the model, the
endpoint, the proxy (``prompthooks.proxy``) and the key, read from the variable the file's
``api_key_env`` names (never ``PROMPTHOOKS_API_KEY``; with no ``api_key_env``, no key of ours:
a pinned endpoint is called without one, an unpinned one gets the provider's own variable,
read by litellm). How the call is made is in pinned.py.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from ..core.hook import Hook
from . import aliases, keys

# A fast hosted model, as Claude Code uses Haiku for its prompt hooks (needs ANTHROPIC_API_KEY).
DEFAULT_MODEL = "claude-haiku-4-5"
MAX_TOKENS = 300


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where and how to call the model. ``api_key`` is never logged or stored."""

    model: str
    api_base: str | None = None
    api_key: str | None = None
    proxy: str | None = None  # a managed file's own proxy (it may hold credentials: not shown)

    def __repr__(self) -> str:
        key = "set" if self.api_key else "unset"
        return f"Endpoint(model={self.model!r}, api_base={self.api_base!r}, api_key={key})"


def _fast_model(hook: Hook, machine: Mapping[str, str]) -> str:
    """The fast model of the host of the hook's dialect: its variable, else ours."""
    return next((machine[v] for v in hook.model_variables if machine.get(v)), DEFAULT_MODEL)


def endpoint_for(hook: Hook, environ: Mapping[str, str] | None = None,
                 override: str | None = None, suite: bool = False) -> Endpoint:
    """``hook``'s endpoint; ``override`` replaces every non-managed hook's model (``eval
    --model``), ``suite`` leaves ``PROMPTHOOKS_MODEL`` out (see the module's docstring)."""
    env = os.environ if environ is None else environ
    settings = hook.prompt_settings
    overrides: Mapping[str, str] = {} if hook.managed else env
    machine: Mapping[str, str] = {} if suite else overrides  # this machine's own settings
    model = ((None if hook.managed else override) or hook.model
             or machine.get("PROMPTHOOKS_MODEL")
             or (settings.model if settings else None)
             or _fast_model(hook, machine))
    if machine:
        model = aliases.resolve(model, env)
    if model == hook.fast_model_name:  # Claude Code's "haiku", unless the user's alias
        model = _fast_model(hook, machine)
    api_base = (overrides.get("PROMPTHOOKS_API_BASE")
                or (settings.api_base if settings else None))
    key_var = settings.api_key_env if settings else None
    named_key = env.get(key_var) if key_var else None
    if hook.managed:
        return Endpoint(model, api_base or None, named_key or None,
                        settings.proxy if settings else None)
    api_key = (env.get("PROMPTHOOKS_API_KEY") or named_key
               or keys.key_for(model, api_base or None, env))
    return Endpoint(model, api_base or None, api_key or None)
