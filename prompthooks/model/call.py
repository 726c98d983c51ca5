"""The model call: litellm ``acompletion`` under one deadline, retried by tenacity.

litellm is imported here, on first use, and only when a prompt hook runs. Its own retries are
off (``num_retries=0``, ``max_retries=0``) so that the hook's deadline covers every attempt:
rate limits, timeouts, connection errors and 5xx answers are retried with jittered backoff
while time remains; authentication and bad-request errors are not retried.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import time
from typing import Any

from ..errors import excerpt
from . import loop
from .settings import Endpoint
from .types import ModelError, ModelReply, ModelRequest, ModelTimeout

__all__ = ["ModelError", "ModelReply", "ModelRequest", "ModelTimeout", "complete"]

# No retry starts with less time left than this: it could only time out, and the error would
# then say "did not answer in time" instead of what every earlier attempt ran into.
MIN_ATTEMPT = 0.25


def import_litellm() -> Any:
    """litellm, imported on first use and told to stay quiet and offline."""
    # Set before the import: the first stops a network fetch of the cost map at import, the
    # second stops litellm loading a stray .env file.
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    os.environ["LITELLM_MODE"] = "PRODUCTION"
    import litellm

    litellm.suppress_debug_info = True
    logging.getLogger("LiteLLM").setLevel(logging.CRITICAL)
    return litellm


def redact_error(text: str, endpoint: Endpoint) -> str:
    """A model error's text, fit to show: the redaction pass, the key in use hidden too."""
    from ..redaction import redact

    return redact(text, extra=[endpoint.api_key])


def _connection_failed(exc: BaseException) -> bool:
    """Whether the cause of ``exc`` is a failed connection: litellm reports some (nothing
    listening on the port) as a 500 InternalServerError, which no server sent."""
    link: BaseException | None = exc
    for _ in range(10):
        if link is None:
            return False
        name = type(link).__name__
        if "Timeout" not in name and (isinstance(link, ConnectionError)
                                      or name in ("APIConnectionError", "ConnectError")):
            return True
        link = link.__cause__ or link.__context__
    return False


def _kind(exc: BaseException, litellm: Any) -> tuple[str, bool]:
    """(what went wrong, whether another attempt may help). Timeout is checked before
    APIConnectionError, which some litellm versions make its base class."""
    if isinstance(exc, (TimeoutError, litellm.Timeout)):
        return "the model did not answer in time", True
    if isinstance(exc, litellm.RateLimitError):
        return "rate limited (429)", True
    if (isinstance(exc, (litellm.AuthenticationError, litellm.PermissionDeniedError))
            or "Missing credentials" in str(exc)):
        return "authentication failed; check the API key", False
    if isinstance(exc, (litellm.BadRequestError, litellm.NotFoundError)):
        return "the request was refused", False
    if isinstance(exc, litellm.APIConnectionError) or _connection_failed(exc):
        return "cannot connect to the model endpoint", True
    status = getattr(exc, "status_code", None)
    if isinstance(status, int) and status >= 500:
        return f"the model endpoint failed ({status})", True
    return "the model call failed", False


def _kwargs(request: ModelRequest, litellm: Any) -> dict[str, Any]:
    endpoint = request.endpoint
    kwargs: dict[str, Any] = {
        "model": endpoint.model, "messages": [dict(m) for m in request.messages],
        "temperature": request.temperature, "max_tokens": request.max_tokens,
        "num_retries": 0, "max_retries": 0, "drop_params": True,
    }
    provider = endpoint.model.split("/", 1)[0] if "/" in endpoint.model else None
    if endpoint.api_base:
        kwargs["api_base"] = endpoint.api_base
        if provider not in litellm.provider_list:
            # A bare model name on an OpenAI-compatible server (LiteLLM Proxy, vLLM, Ollama...).
            kwargs["custom_llm_provider"] = "openai"
    if endpoint.api_key:
        kwargs["api_key"] = endpoint.api_key
    elif kwargs.get("custom_llm_provider") == "openai" and not os.environ.get("OPENAI_API_KEY"):
        # Local OpenAI-compatible servers (Ollama, vLLM, an open LiteLLM Proxy) need no key,
        # but the OpenAI client refuses to send a request without one.
        kwargs["api_key"] = "no-key"
    if request.json_mode:
        try:
            supported = litellm.get_supported_openai_params(
                model=endpoint.model,
                custom_llm_provider=kwargs.get("custom_llm_provider")) or []
        except Exception:
            supported = []
        if "response_format" in supported:
            kwargs["response_format"] = {"type": "json_object"}
    return kwargs


async def _complete(request: ModelRequest, deadline: float) -> ModelReply:
    from tenacity import AsyncRetrying, RetryCallState, retry_if_exception
    from tenacity.wait import wait_random_exponential

    litellm = import_litellm()
    kwargs = _kwargs(request, litellm)

    def stop(state: RetryCallState) -> bool:  # no retry may start too close to the deadline
        return time.monotonic() + (state.upcoming_sleep or 0) + MIN_ATTEMPT >= deadline

    attempts = 0
    retrying = AsyncRetrying(retry=retry_if_exception(lambda e: _kind(e, litellm)[1]),
                             wait=wait_random_exponential(multiplier=0.25, max=4),
                             stop=stop, reraise=True)
    try:
        async for attempt in retrying:
            with attempt:
                attempts += 1
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError
                response = await asyncio.wait_for(
                    litellm.acompletion(**kwargs, timeout=remaining), remaining)
    except Exception as exc:
        what, _ = _kind(exc, litellm)
        detail = redact_error(excerpt(str(exc), 300), request.endpoint)
        tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
        message = f"{what} ({request.endpoint.model}, {tries})"
        if isinstance(exc, (TimeoutError, litellm.Timeout)):
            raise ModelTimeout(message) from None
        raise ModelError(f"{message}: {detail}" if detail else message) from None
    choice = response.choices[0]
    usage = getattr(response, "usage", None)
    return ModelReply(text=choice.message.content or "", model=str(response.model),
                      attempts=attempts,
                      input_tokens=getattr(usage, "prompt_tokens", None),
                      output_tokens=getattr(usage, "completion_tokens", None),
                      cost=_cost(response, litellm))


def _cost(response: Any, litellm: Any) -> float | None:
    """What the call cost in US dollars, from litellm's local price map; when the model is
    not in it (a local server, a proxy alias), what a LiteLLM Proxy said in its cost header;
    else None."""
    from .cost import from_litellm

    try:
        cost = litellm.completion_cost(completion_response=response)
    except Exception:
        cost = None
    return float(cost) if cost else from_litellm(response)


def complete(request: ModelRequest, deadline: float) -> ModelReply:
    """Ask the model, retrying within ``deadline`` (a ``time.monotonic()`` instant)."""
    if time.monotonic() >= deadline:  # not even litellm's import: it could only be wasted
        raise ModelTimeout(f"the model did not answer in time ({request.endpoint.model})")
    try:
        return loop.run(_complete(request, deadline), deadline - time.monotonic() + loop.SETTLE)
    except concurrent.futures.TimeoutError:
        raise ModelTimeout(f"the model did not answer in time ({request.endpoint.model})") from None
