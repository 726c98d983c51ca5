"""What a call cost by litellm's own price table, read without importing litellm.

The direct path (direct.py) does not load litellm, so it does not price its calls; a LiteLLM
Proxy's ``x-litellm-response-cost`` header is all it records by itself. The audit log prices
the rest after the reply (never delaying it) from the table litellm ships
(``model_prices_and_context_window_backup.json``, read once per process): the same price the
litellm path gives for a model litellm knows, and None for one it does not (a local model, a
proxy's alias).
"""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path

_TABLE = "model_prices_and_context_window_backup.json"


@functools.cache
def _table() -> dict[str, tuple[float, float]]:
    """Model name -> (input, output) dollars per token, for the entries that give both; only
    those two numbers are kept (the table itself is megabytes: a resident process keeps this
    in the process its runs are forked from)."""
    import importlib.util

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


__all__ = ["preload", "price"]
