"""The user's stored model keys, and which provider's key a model needs.

``prompthooks keys set anthropic`` keeps a key in ``keys.json`` in the user's config folder
(the file 0600, its folder 0700), as ``llm keys set`` does: a host started from the desktop
never sees an ``export`` in a shell profile. A stored key stands in for the provider's own
variable (``ANTHROPIC_API_KEY``...) when the environment has none, and goes only to that
provider's own endpoint: never to an ``api_base`` of the user's, which has its own key
(``PROMPTHOOKS_API_KEY``, ``api_key_env``), and never for a managed hook, whose key source is
its file's alone. The file is read with :func:`paths.read_state` (a link, FIFO or huge file in
its place is refused), never logged, never recorded.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path

from .. import paths

FILE = "keys.json"
LIMIT = 64 << 10  # bytes: a few dozen keys
NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
# A provider's own key variable, where litellm's is not NAME_API_KEY.
_VARIABLES = {"together_ai": "TOGETHERAI_API_KEY", "gemini": "GEMINI_API_KEY"}
# Providers that answer at a fixed hosted address and refuse a call without a key: a hook on
# one of them with no key at all is not called (the reason is known before any request).
HOSTED = frozenset({"anthropic", "openai", "gemini", "mistral", "groq", "deepseek", "xai",
                    "openrouter", "together_ai", "fireworks_ai", "cohere"})
# Prefixes whose credentials are not one API key (cloud roles, local servers).
_NO_KEY = frozenset({"ollama", "ollama_chat", "bedrock", "vertex_ai", "sagemaker",
                     "lm_studio", "hosted_vllm"})
OPENAI_CHAT = re.compile(r"^(gpt-[0-9]|chatgpt-|o[1-9](-|$))")


class KeyStoreError(OSError):
    """The key store cannot be read or written; one line naming the file."""


def variable(name: str) -> str:
    """The environment variable a provider's key is read from (``ANTHROPIC_API_KEY``)."""
    return _VARIABLES.get(name, f"{name.upper()}_API_KEY")


def store_path(environ: Mapping[str, str]) -> Path:
    return paths.config_home(environ) / FILE


def provider(model: str, api_base: str | None) -> str | None:
    """The provider whose key ``model`` is called with, for a stored key: its prefix
    (``anthropic/...``), or the maker of a bare Claude, OpenAI or Gemini name; None for an
    ``api_base`` (its key is the endpoint's own, whatever the model's prefix) and for
    providers without one API key. A LiteLLM Proxy's stored key goes only to
    ``LITELLM_PROXY_API_BASE``, the proxy's own address."""
    prefix, _, rest = model.partition("/")
    if rest:
        if prefix in _NO_KEY or not NAME.match(prefix):
            return None
        return None if api_base else prefix
    if api_base:
        return None
    if model.startswith("claude-"):
        return "anthropic"
    if OPENAI_CHAT.match(model):
        return "openai"
    if model.startswith("gemini-"):
        return "gemini"
    return None


def read(environ: Mapping[str, str]) -> dict[str, str]:
    """The stored keys by provider name ({} when there is no store). Raises KeyStoreError
    for a store that is there but unreadable or not one prompthooks wrote."""
    path = store_path(environ)
    try:
        raw = paths.read_state(path, LIMIT)
    except OSError as exc:
        raise KeyStoreError(str(exc) if isinstance(exc, paths.BadStateFile)
                            else f"{path}: {exc.strerror or exc}") from None
    if raw is None:
        return {}
    try:
        data = json.loads(raw)
    except ValueError:
        raise KeyStoreError(f"{path}: not JSON; remove it and set the keys again") from None
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                             for k, v in data.items()):
        raise KeyStoreError(f"{path}: not a key store; remove it and set the keys again")
    return {k: v for k, v in data.items() if NAME.match(k) and v}


def stored(name: str, environ: Mapping[str, str]) -> str | None:
    """The stored key of provider ``name``, or None (also for a store that cannot be read:
    the hook then says it has no key, and ``keys list`` says why)."""
    try:
        return read(environ).get(name)
    except KeyStoreError:
        return None


def values(environ: Mapping[str, str]) -> list[str]:
    """Every stored key, to hide wherever text is kept (the audit log)."""
    try:
        return list(read(environ).values())
    except KeyStoreError:
        return []


def key_for(model: str, api_base: str | None, environ: Mapping[str, str]) -> str | None:
    """The stored key a non-managed hook's call uses: its provider's, when the environment
    does not set that provider's variable (the environment wins, as for every setting)."""
    name = provider(model, api_base)
    if name is None or environ.get(variable(name)):
        return None
    return stored(name, environ)


def missing(model: str, api_base: str | None, api_key: str | None,
            environ: Mapping[str, str]) -> str | None:
    """The provider whose key a call would need and that no setting gives, or None: a hosted
    provider at its own address, with no key in the endpoint, the environment or the store."""
    name = provider(model, api_base)
    if name is None or name not in HOSTED or api_key or environ.get(variable(name)):
        return None
    upper = name.upper()
    if any(environ.get(f"{upper}{suffix}") for suffix in ("_BASE_URL", "_API_BASE")):
        return None  # another address: whether it needs a key is its business
    return None if stored(name, environ) else name


def _write(path: Path, keys: Mapping[str, str]) -> None:
    folder = path.parent
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(folder, 0o700)  # an existing folder too: the keys' folder is the user's alone
    data = (json.dumps(dict(sorted(keys.items())), indent=2) + "\n").encode()
    paths.atomic_write(path, data, mode=0o600, durable=True)


def set_key(name: str, key: str, environ: Mapping[str, str]) -> Path:
    """Store ``key`` for provider ``name``; the store's path."""
    keys = read(environ)
    keys[name] = key
    path = store_path(environ)
    _write(path, keys)
    return path


def remove_key(name: str, environ: Mapping[str, str]) -> bool:
    """Remove provider ``name``'s key; whether there was one."""
    keys = read(environ)
    if keys.pop(name, None) is None:
        return False
    _write(store_path(environ), keys)
    return True


__all__ = ["FILE", "HOSTED", "KeyStoreError", "key_for", "missing", "provider", "read",
           "remove_key", "set_key", "store_path", "stored", "values", "variable"]
