"""What a model call cost, as a LiteLLM Proxy says it in a response header.

litellm prices a call from its local price map; a proxy's model alias or a self-hosted model
is not in it. A LiteLLM Proxy prices every call itself and sends the price (US dollars) in the
``x-litellm-response-cost`` header: that is the cost recorded when litellm has none. litellm
keeps the response's headers in ``_hidden_params["additional_headers"]``, prefixed
``llm_provider-``; the direct client of pinned managed hooks reads the header itself.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

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
