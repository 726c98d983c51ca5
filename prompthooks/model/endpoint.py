"""The endpoint a prompt hook calls and what is exchanged with it: which model, address and key
a hook uses (its handler, ``PROMPTHOOKS_*``, its file, the user's aliases and stored keys),
which path a call takes (the direct OpenAI-compatible client or litellm), whether the model
can be reached at all, told without calling it, and the request, reply (with the verdict read
from it) and errors every path shares."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import paths
from ..core.hook import Hook
from ..core.result import Permission
from . import keys

# --- Model aliases -------------------------------------------------------------------------------
# Model aliases: short names the user gives models (``prompthooks aliases set fast
# openai/gpt-4.1-mini``), as ``llm aliases`` keeps them: ``aliases.json`` in the user's config
# folder, read with :func:`paths.read_state`. A hook's model (its handler's, ``PROMPTHOOKS_MODEL``
# or its file's) that is an alias is called as the model it names; one level, never a chain. A
# managed hook's model is its file's as written: the user's aliases do not reach it.

ALIASES_FILE = "aliases.json"
ALIASES_LIMIT = 64 << 10
ALIAS_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class AliasError(OSError):
    """The aliases file cannot be read or written; one line naming the file."""


def aliases_path(environ: Mapping[str, str]) -> Path:
    return paths.config_home(environ) / ALIASES_FILE


def read_aliases(environ: Mapping[str, str]) -> dict[str, str]:
    """The aliases ({} when there are none). Raises AliasError for a file that is there but
    is not one prompthooks wrote."""
    path = aliases_path(environ)
    try:
        raw = paths.read_state(path, ALIASES_LIMIT)
        data = json.loads(raw) if raw is not None else {}
    except paths.BadStateFile as exc:
        raise AliasError(str(exc)) from None
    except OSError as exc:
        raise AliasError(f"{path}: {exc.strerror or exc}") from None
    except ValueError:
        raise AliasError(f"{path}: not JSON; remove it and set the aliases again") from None
    if not isinstance(data, dict):
        raise AliasError(f"{path}: not an aliases file; remove it and set the aliases again")
    return {k: v for k, v in data.items()
            if isinstance(k, str) and isinstance(v, str) and ALIAS_NAME.match(k) and v}


def resolve_alias(model: str, environ: Mapping[str, str]) -> str:
    """The model ``model`` names: itself, or what the alias of that name stands for (a file
    that cannot be read names nothing: the hook calls the model as written, and ``aliases
    list`` says what is wrong)."""
    try:
        return read_aliases(environ).get(model, model)
    except AliasError:
        return model


def write_aliases(aliases: Mapping[str, str], environ: Mapping[str, str]) -> Path:
    path = aliases_path(environ)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    data = (json.dumps(dict(sorted(aliases.items())), indent=2) + "\n").encode()
    paths.atomic_write(path, data, mode=0o600, durable=True)
    return path


# --- Which model and endpoint --------------------------------------------------------------------
# Which model and endpoint a prompt hook uses.
#
# Model: the handler's ``model`` > ``PROMPTHOOKS_MODEL`` > the config's ``prompthooks.model`` >
# the host's own variable for its fast model, for hooks in its dialect (Claude Code's
# ``ANTHROPIC_DEFAULT_HAIKU_MODEL``, then ``ANTHROPIC_SMALL_FAST_MODEL``, as it picks the model
# of its own prompt hooks) > :data:`DEFAULT_MODEL`; a name that is one of the user's aliases
# (above) is the model it stands for, and Claude Code's own "haiku" is that fast model.
# Endpoint: ``PROMPTHOOKS_API_BASE`` > the config's ``api_base``. Key: ``PROMPTHOOKS_API_KEY`` >
# the variable the config's ``api_key_env`` names > the provider's own variable
# (``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY``...), which litellm reads itself > the key
# ``prompthooks keys set`` stored for that provider (keys.py; only for the provider's own
# address).
#
# A test suite (``prompthooks test``, ``eval``, the pytest helpers) runs on the model its config
# names: a suite's ``ModelChain(suite=True)`` (model/chain.py) leaves ``PROMPTHOOKS_MODEL`` out, so
# a recorded suite replays the same on every machine; only an explicit option (``--model``)
# changes it.
#
# A managed hook takes its whole network path from the managed file only, since anything
# running as the user (an agent included) can set environment variables: the model, the
# endpoint, the proxy (``prompthooks.proxy``) and the key, read from the variable the file's
# ``api_key_env`` names (never ``PROMPTHOOKS_API_KEY``; with no ``api_key_env``, no key of ours:
# a pinned endpoint is called without one, an unpinned one gets the provider's own variable,
# read by litellm). How the call is made is in chain.py.

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
        model = resolve_alias(model, env)
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


# --- The request, the reply and the errors: light types shared by every path ---------------------

@dataclass(frozen=True, slots=True)
class ModelRequest:
    """Everything that decides the model's reply."""

    endpoint: Endpoint
    messages: tuple[Mapping[str, str], ...]
    nonce: str = ""  # the fence boundary in the messages: random, so never part of a key
    temperature: float = 0.0
    max_tokens: int = MAX_TOKENS
    json_mode: bool = True
    # Not part of a cassette key (model/verdict.py): the verdict's JSON schema is asked for
    # where the endpoint takes it, and the schema holds "impossible" on a stop hook's request.
    structured: bool = True
    # After a refusal of the schema: JSON mode carrying it as ``{"type": "json_object",
    # "schema": ...}``, llama-cpp-python's form (a server that ignores the key sees JSON mode).
    schema_in_json_mode: bool = False
    impossible: bool = False
    # Tool calling (agent hooks): the tools offered, in the OpenAI format, and the turns
    # after ``messages`` (the model's tool calls and the tool results), as the API takes them.
    tools: tuple[Mapping[str, Any], ...] = ()
    turns: tuple[Mapping[str, Any], ...] = ()

    def payload_messages(self) -> list[dict[str, Any]]:
        """The messages as the chat API takes them: ``messages`` then ``turns``."""
        return [dict(m) for m in self.messages] + [dict(t) for t in self.turns]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call a model asked for: its id, the tool's name, its arguments (JSON text,
    as the model wrote it: it may not parse)."""

    id: str
    name: str
    arguments: str


def tool_calls_of(message: Any) -> tuple[ToolCall, ...]:
    """The tool calls of a chat completion's message (a dict from the direct path, an object
    from litellm); none when it has none or they are not in the OpenAI shape."""
    def get(value: Any, key: str) -> Any:
        return value.get(key) if isinstance(value, Mapping) else getattr(value, key, None)

    calls = get(message, "tool_calls")
    out: list[ToolCall] = []
    for call in calls if isinstance(calls, (list, tuple)) else ():
        function = get(call, "function")
        name = get(function, "name")
        arguments = get(function, "arguments")
        out.append(ToolCall(str(get(call, "id") or f"call_{len(out)}"),
                            name if isinstance(name, str) else "",
                            arguments if isinstance(arguments, str)
                            else "" if arguments is None else _dumped(arguments)))
    return tuple(out)


def _dumped(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the model decided, in the terms of a hook result."""

    permission: Permission | None
    reason: str | None = None
    impossible: bool = False
    system_message: str | None = None
    halt: bool = False
    stop_reason: str | None = None


@dataclass(frozen=True, slots=True)
class ModelReply:
    text: str
    model: str
    attempts: int = 1
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost: float | None = None  # US dollars: litellm's price, else a LiteLLM Proxy's header
    replayed: bool = False  # read from a cassette, not asked
    verdict: Verdict | None = None  # already parsed (by the warm worker)
    tool_calls: tuple[ToolCall, ...] = ()  # the tools the model asked to call (agent hooks)


class ModelError(Exception):
    """The model could not be asked; the message says why, without any key."""


class ModelTimeout(ModelError):
    """No answer before the hook's deadline."""


# --- Which path a call takes ---------------------------------------------------------------------
# Which path a model call takes: the direct OpenAI-compatible client, or litellm.
#
# Direct (model/direct.py, httpx, no litellm import) for every endpoint that speaks the OpenAI
# chat-completions API:
#
# - an ``api_base`` with a model named ``openai/M``, ``litellm_proxy/M``, ``hosted_vllm/M`` or
#   plain ``M`` (no ``/``): a LiteLLM Proxy, vLLM, Ollama's ``/v1``, LM Studio...; ``M`` is sent;
# - OpenAI itself: ``openai/M``, or a bare OpenAI chat model name (``gpt-4.1-mini``, ``o4-mini``)
#   with no ``api_base``: ``OPENAI_BASE_URL`` (or ``OPENAI_API_BASE``) when set, else
#   https://api.openai.com/v1;
# - ``litellm_proxy/M`` without ``api_base``: ``LITELLM_PROXY_API_BASE`` when set.
#
# Everything else goes through litellm: other providers (``anthropic/``, ``gemini/``...), a model
# name with a ``/`` and another prefix, and ``ollama/`` and ``ollama_chat/``, which litellm sends
# to Ollama's own API (``/api/generate``, ``/api/chat``, under ``http://localhost:11434``, not
# ``/v1``). ``PROMPTHOOKS_DIRECT=0`` sends every non-managed call through litellm.
#
# The key is the endpoint's (``PROMPTHOOKS_API_KEY``, ``api_key_env``), else the variable litellm
# would read for that prefix (``OPENAI_API_KEY``, ``LITELLM_PROXY_API_KEY``,
# ``HOSTED_VLLM_API_KEY``); with none, no ``Authorization`` header is sent.

OPENAI_BASE = "https://api.openai.com/v1"
# The prefixes whose models speak the OpenAI chat API, and the variable holding their key.
_PREFIX_KEYS = {"openai": "OPENAI_API_KEY", "litellm_proxy": "LITELLM_PROXY_API_KEY",
                "hosted_vllm": "HOSTED_VLLM_API_KEY"}
# OpenAI's chat models, as litellm knows them without a prefix (not the completion-only
# ``*-instruct`` models, nor audio, realtime or image ones).
_NOT_CHAT = ("instruct", "realtime", "audio", "transcribe", "tts", "image", "embedding",
             "search")
# Reasoning models take no temperature and count their output in max_completion_tokens.
_REASONING = re.compile(r"^(o[1-9]|gpt-5)")


@dataclass(frozen=True, slots=True)
class Direct:
    """Where and how the direct client calls. ``key`` is never logged or stored."""

    base: str
    model: str  # as sent in the body (the routing prefix dropped)
    key: str | None
    openai: bool = False  # OpenAI itself: its parameter names for reasoning models
    trust_env: bool = True  # the proxy variables apply (not for a managed hook)
    proxy: str | None = None

    def __repr__(self) -> str:
        return (f"Direct(base={self.base!r}, model={self.model!r}, "
                f"key={'set' if self.key else 'unset'})")

    @property
    def reasoning(self) -> bool:
        return self.openai and bool(_REASONING.match(self.model))


def _openai_chat(model: str) -> bool:
    return bool(keys.OPENAI_CHAT.match(model)) and not any(w in model for w in _NOT_CHAT)


def direct_route(endpoint: Endpoint, environ: Mapping[str, str]) -> Direct | None:
    """The direct call for a non-managed hook's endpoint, or None: litellm's path."""
    if environ.get("PROMPTHOOKS_DIRECT") == "0":
        return None
    prefix, _, rest = endpoint.model.partition("/")
    if not rest:
        prefix, rest = "", endpoint.model
    elif prefix not in _PREFIX_KEYS:
        return None  # another provider, or a name litellm reads its own way
    key_var = _PREFIX_KEYS.get(prefix or "openai", "OPENAI_API_KEY")
    key = endpoint.api_key or environ.get(key_var) or None
    base = endpoint.api_base
    if not base:
        if prefix == "litellm_proxy":
            base = environ.get("LITELLM_PROXY_API_BASE")
        elif prefix == "openai" or (not prefix and _openai_chat(rest)):
            base = environ.get("OPENAI_BASE_URL") or environ.get("OPENAI_API_BASE") or OPENAI_BASE
        if not base:
            return None
    openai = base.rstrip("/") == OPENAI_BASE
    return Direct(base=base, model=rest, key=key, openai=openai)


def pinned_route(endpoint: Endpoint) -> Direct:
    """The direct call of a managed hook that pins ``api_base``: nothing from the environment
    (no proxy variable, no provider key), only what its file says."""
    assert endpoint.api_base
    model = endpoint.model.removeprefix("openai/")
    return Direct(base=endpoint.api_base, model=model, key=endpoint.api_key,
                  openai=endpoint.api_base.rstrip("/") == OPENAI_BASE, trust_env=False,
                  proxy=endpoint.proxy)


# --- Whether the model can be reached ------------------------------------------------------------
# Whether a prompt hook's model can be reached at all, told without calling it: for
# ``validate``, which runs nothing and sends nothing.
#
# Only what is certain to fail is named: OpenAI with no key, a provider whose key variable is
# unset, a model name no path knows without an ``api_base``. A model behind an ``api_base`` (a
# LiteLLM Proxy, vLLM, Ollama's ``/v1``) may need no key, and providers that sign requests with
# cloud credentials (Bedrock, Vertex AI) are not judged; ``prompthooks doctor`` asks the model.

# litellm's providers reached with a key from the environment: the variables it reads.
_PROVIDER_KEYS: dict[str, tuple[str, ...]] = {
    "anthropic": ("ANTHROPIC_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "mistral": ("MISTRAL_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY", "OR_API_KEY"),
    "together_ai": ("TOGETHERAI_API_KEY", "TOGETHER_API_KEY", "TOGETHER_AI_TOKEN"),
    "cohere": ("COHERE_API_KEY", "CO_API_KEY"),
    "fireworks_ai": ("FIREWORKS_API_KEY", "FIREWORKS_AI_API_KEY", "FIREWORKSAI_API_KEY"),
    "perplexity": ("PERPLEXITYAI_API_KEY", "PERPLEXITY_API_KEY"),
    "cerebras": ("CEREBRAS_API_KEY",),
    "azure": ("AZURE_API_KEY", "AZURE_OPENAI_API_KEY"),
}
# Providers that need no key of ours (a local server, cloud credentials): not judged.
_OTHER_PROVIDERS = frozenset({
    "ollama", "ollama_chat", "lm_studio", "vllm", "bedrock", "bedrock_converse", "vertex_ai",
    "vertex_ai_beta", "sagemaker", "sagemaker_chat", "huggingface", "watsonx", "databricks",
    "cloudflare", "github", "github_copilot", "nvidia_nim", "llamafile", "triton",
})
# Bare model names litellm sends to a provider it tells from the name.
_BARE_PREFIXES = {"claude-": "anthropic"}


def _provider(model: str) -> str | None:
    prefix, _, rest = model.partition("/")
    if rest:
        return prefix
    return next((p for start, p in _BARE_PREFIXES.items() if model.startswith(start)), None)


def problem(endpoint: Endpoint, environ: Mapping[str, str]) -> str | None:
    """Why neither the direct client nor litellm can reach ``endpoint`` (None: nothing seen
    against it)."""
    model = endpoint.model
    route = direct_route(endpoint, environ)
    if route is not None:
        if route.openai and not route.key:
            return (f"model {model!r} is OpenAI's and no key is set: set OPENAI_API_KEY (or "
                    "PROMPTHOOKS_API_KEY, or name the variable with prompthooks.api_key_env)")
        return None
    if endpoint.api_base:
        return None  # wherever it points, the endpoint decides what it needs
    provider = _provider(model)
    if provider is None or not (provider in _PROVIDER_KEYS or provider in _OTHER_PROVIDERS):
        what = (f"no provider is known for {model!r}" if provider is None
                else f"the provider prefix {provider!r} of {model!r} is not one prompthooks "
                     "knows")
        return (f"{what} and no api_base is set: name the provider (anthropic/..., "
                "gemini/..., openai/...), or set prompthooks.api_base to your endpoint")
    keys = _PROVIDER_KEYS.get(provider, ())
    if keys and not endpoint.api_key and not any(environ.get(k) for k in keys):
        return (f"model {model!r} needs a key for {provider} and none is set: run prompthooks "
                f"keys set {provider} (or set {keys[0]}, or PROMPTHOOKS_API_KEY, or name the "
                "variable with prompthooks.api_key_env)")
    return None
