"""What a model call cost, in US dollars: from a LiteLLM Proxy's response header, else from the
price table litellm ships, read without importing litellm."""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

# --- A proxy's price -----------------------------------------------------------------------------
# What a model call cost, as a LiteLLM Proxy says it in a response header.
#
# litellm prices a call from its local price map; a proxy's model alias or a self-hosted model
# is not in it. A LiteLLM Proxy prices every call itself and sends the price (US dollars) in the
# ``x-litellm-response-cost`` header: that is the cost recorded when litellm has none. litellm
# keeps the response's headers in ``_hidden_params["additional_headers"]``, prefixed
# ``llm_provider-``; the direct client of pinned managed hooks reads the header itself.

COST_HEADER = "x-litellm-response-cost"
_LITELLM_KEY = "llm_provider-" + COST_HEADER
# No call costs this much: a larger value is a broken or hostile header, not a price.
_MOST = 1_000_000.0


def parse(value: Any) -> float | None:
    """The header's value as dollars; None when it is missing or not a sane price."""
    if value is None or isinstance(value, bool):
        return None
    try:
        cost = float(str(value).strip())
    except ValueError:
        return None
    return cost if math.isfinite(cost) and 0 <= cost < _MOST else None


def from_headers(headers: Mapping[str, Any] | None) -> float | None:
    """The cost in a response's headers (an ``httpx.Headers`` or a lower-cased dict)."""
    return parse(headers.get(COST_HEADER)) if headers else None


def from_litellm(response: Any) -> float | None:
    """The proxy's cost carried by a litellm response, or None."""
    hidden = getattr(response, "_hidden_params", None)
    extra = hidden.get("additional_headers") if isinstance(hidden, Mapping) else None
    if isinstance(extra, Mapping) and extra.get(_LITELLM_KEY) is not None:
        return parse(extra[_LITELLM_KEY])
    raw = getattr(response, "_response_headers", None)
    return from_headers(raw) if isinstance(raw, Mapping) else None


# --- litellm's price table -----------------------------------------------------------------------
# What a call cost by litellm's own price table, read without importing litellm.
#
# The direct path (direct.py) does not load litellm, so it does not price its calls; a LiteLLM
# Proxy's ``x-litellm-response-cost`` header is all it records by itself. The audit log prices
# the rest after the reply (never delaying it) from the table litellm ships
# (``model_prices_and_context_window_backup.json``, read once per process): the same price the
# litellm path gives for a model litellm knows, and None for one it does not (a local model, a
# proxy's alias).

_TABLE = "model_prices_and_context_window_backup.json"


@functools.cache
def _table() -> dict[str, tuple[float, float]]:
    """Model name -> (input, output) dollars per token, for the entries that give both; only
    those two numbers are kept (the table itself is megabytes: a resident process keeps this
    in the process its runs are forked from)."""
    import importlib.util  # finds litellm's table without importing litellm

    try:
        spec = importlib.util.find_spec("litellm")
        folders = list(spec.submodule_search_locations or []) if spec else []
        data = json.loads((Path(folders[0]) / _TABLE).read_bytes()) if folders else {}
    except (ImportError, OSError, ValueError, IndexError):
        return {}
    if not isinstance(data, dict):
        return {}
    table = {}
    for name, entry in data.items():
        try:
            table[name] = (float(entry["input_cost_per_token"]),
                           float(entry["output_cost_per_token"]))
        except (KeyError, TypeError, ValueError):
            continue
    return table


def price(model: str | None, input_tokens: int | None,
          output_tokens: int | None) -> float | None:
    """US dollars for that many tokens of ``model`` (or of its name without a provider
    prefix), or None when the table does not price it."""
    if not model or input_tokens is None or output_tokens is None:
        return None
    table = _table()
    rates = table.get(model) or table.get(model.split("/", 1)[-1])
    if rates is None:
        return None
    cost = rates[0] * input_tokens + rates[1] * output_tokens
    return cost if math.isfinite(cost) and cost > 0 else None


def preload() -> None:
    """Read the table now (a resident process, before it forks its runs)."""
    _table()
