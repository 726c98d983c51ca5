"""Which model the starter policy uses: one the user can actually call, found the way a person
would look: prompthooks' own variables, a LiteLLM Proxy's, a provider's key in the environment
or the key store, an Ollama answering on its port. Nothing found is said in plain words by
install, with the command that fixes it: a gate must never look on while it is off.

The looks over the network are bounded (an Ollama or proxy that does not answer at once is
not there); none sends a key anywhere but to the endpoint it belongs to.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass

from ..model import keys
from ..model.endpoint import DEFAULT_MODEL

LOOK_SECONDS = 1.5  # an Ollama or a proxy on this machine or network answers well within it
OLLAMA = "127.0.0.1:11434"
# Providers with one key, in the order looked at, and the fast model the starter names.
_FAST = (("anthropic", None), ("openai", "gpt-4.1-mini"), ("gemini", "gemini/gemini-2.5-flash"))


@dataclass(frozen=True, slots=True)
class Choice:
    """The starter's model: ``model`` and ``api_base`` for its ``prompthooks`` block (None:
    none written, the environment's or the default model), and what it was chosen by."""

    model: str | None
    api_base: str | None
    why: str

    @property
    def shown(self) -> str:
        return self.model or "the default model"


def _get_json(url: str, key: str | None = None) -> object:
    """A bounded GET of a JSON document on a local or configured endpoint (no proxy: the
    address is the user's own), or None."""
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {key}"}
                                     if key else {})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=LOOK_SECONDS) as answer:
            return json.loads(answer.read(1 << 20))
    except (OSError, ValueError):
        return None


def ollama_models(environ: Mapping[str, str]) -> tuple[str, list[str]]:
    """Ollama's address (``OLLAMA_HOST`` or its default) and the models it has pulled ([]:
    none, or nothing answers there)."""
    host = (environ.get("OLLAMA_HOST") or OLLAMA).removeprefix("http://").rstrip("/")
    if host.startswith("0.0.0.0"):  # a server's listening address, not one to call
        host = "127.0.0.1" + host[len("0.0.0.0"):]
    found = _get_json(f"http://{host}/api/tags")
    names = [str(m.get("name")) for m in found.get("models", [])
             if isinstance(m, dict) and m.get("name")] if isinstance(found, dict) else []
    return f"http://{host}", names


def _proxy_model(environ: Mapping[str, str]) -> str | None:
    """The first model a LiteLLM Proxy (``LITELLM_PROXY_API_BASE``) serves, or None."""
    base = environ.get("LITELLM_PROXY_API_BASE", "").rstrip("/")
    if not base:
        return None
    found = _get_json(f"{base}/models", environ.get("LITELLM_PROXY_API_KEY"))
    data = found.get("data") if isinstance(found, dict) else None
    ids = [str(m["id"]) for m in data or [] if isinstance(m, dict) and m.get("id")]
    return f"litellm_proxy/{ids[0]}" if ids else None


def find(environ: Mapping[str, str]) -> Choice | None:
    """The model the starter should use, or None when nothing the user could call was found."""
    chosen = [n for n in ("PROMPTHOOKS_MODEL", "PROMPTHOOKS_API_BASE") if environ.get(n)]
    if chosen:
        return Choice(None, None, f"{' and '.join(chosen)} set")
    proxy = _proxy_model(environ)
    if proxy:
        return Choice(proxy, None, "LITELLM_PROXY_API_BASE set")
    try:
        stored = keys.read(environ)
    except keys.KeyStoreError:
        stored = {}  # a store run cannot use either: `prompthooks keys list` says why
    for name, model in _FAST:
        var = keys.variable(name)
        if environ.get(var):
            return Choice(model, None, f"{var} set")
        if stored.get(name):
            return Choice(model, None, f"a stored key for {name}")
    base, models = ollama_models(environ)
    if models:
        return Choice(models[0], f"{base}/v1", f"Ollama answers at {base}")
    return None


def settings(choice: Choice | None) -> dict[str, str] | None:
    """The starter's ``prompthooks`` block for a choice (None: no block)."""
    if choice is None or choice.model is None:
        return None
    block = {"model": choice.model}
    if choice.api_base:
        block["api_base"] = choice.api_base
    return block


# What a user with no model runs next: a key for the hosted default (the other ways are named
# beside it).
NEXT = "prompthooks keys set anthropic"

__all__ = ["DEFAULT_MODEL", "NEXT", "Choice", "find", "ollama_models", "settings"]
