"""Which path a model call takes: the direct OpenAI-compatible client, or litellm.

Direct (model/direct.py, httpx, no litellm import) for every endpoint that speaks the OpenAI
chat-completions API:

- an ``api_base`` with a model named ``openai/M``, ``litellm_proxy/M``, ``hosted_vllm/M`` or
  plain ``M`` (no ``/``): a LiteLLM Proxy, vLLM, Ollama's ``/v1``, LM Studio...; ``M`` is sent;
- OpenAI itself: ``openai/M``, or a bare OpenAI chat model name (``gpt-4.1-mini``, ``o4-mini``)
  with no ``api_base``: ``OPENAI_BASE_URL`` (or ``OPENAI_API_BASE``) when set, else
  https://api.openai.com/v1;
- ``litellm_proxy/M`` without ``api_base``: ``LITELLM_PROXY_API_BASE`` when set.

Everything else goes through litellm: other providers (``anthropic/``, ``gemini/``...), a model
name with a ``/`` and another prefix, and ``ollama/`` and ``ollama_chat/``, which litellm sends
to Ollama's own API (``/api/generate``, ``/api/chat``, under ``http://localhost:11434``, not
``/v1``). ``PROMPTHOOKS_DIRECT=0`` sends every non-managed call through litellm.

The key is the endpoint's (``PROMPTHOOKS_API_KEY``, ``api_key_env``), else the variable litellm
would read for that prefix (``OPENAI_API_KEY``, ``LITELLM_PROXY_API_KEY``,
``HOSTED_VLLM_API_KEY``); with none, no ``Authorization`` header is sent.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from .settings import Endpoint

OPENAI_BASE = "https://api.openai.com/v1"
# The prefixes whose models speak the OpenAI chat API, and the variable holding their key.
_PREFIX_KEYS = {"openai": "OPENAI_API_KEY", "litellm_proxy": "LITELLM_PROXY_API_KEY",
                "hosted_vllm": "HOSTED_VLLM_API_KEY"}
# OpenAI's chat models, as litellm knows them without a prefix (not the completion-only
# ``*-instruct`` models, nor audio, realtime or image ones).
_OPENAI_CHAT = re.compile(r"^(gpt-[0-9]|chatgpt-|o[1-9](-|$))")
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
    return bool(_OPENAI_CHAT.match(model)) and not any(w in model for w in _NOT_CHAT)


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


__all__ = ["OPENAI_BASE", "Direct", "direct_route", "pinned_route"]
