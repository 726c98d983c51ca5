"""The direct path: an OpenAI chat-completions call on httpx, for managed hooks that pin
``api_base``.

litellm and the HTTP clients under it read the environment in many places (``HTTPS_PROXY``
through httpx and its aiohttp transport, ``OPENAI_BASE_URL`` and dozens of provider variables),
and which ones changes between versions. A managed hook's request must go where its own file
says, so it is made here, by a client that reads nothing from the environment
(``trust_env=False``: no proxy variables, no ``.netrc``, no ``SSL_CERT_FILE``) and goes through
a proxy only when the managed file names one (``prompthooks.proxy``). The request body, the
retry rules and the error messages are the litellm path's (call.py).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
from typing import Any

from ..errors import excerpt
from . import loop
from .call import MIN_ATTEMPT, redact_error
from .cost import from_headers
from .types import ModelError, ModelReply, ModelRequest, ModelTimeout


class HTTPStatusError(Exception):
    """The endpoint answered with an error status."""

    def __init__(self, status: int, body: str) -> None:
        super().__init__(f"{status}: {body}")
        self.status_code = status


class BadReply(Exception):
    """A 200 answer that is not a chat completion."""


def url(api_base: str) -> str:
    """The chat-completions URL under ``api_base`` (as the OpenAI client builds it)."""
    return api_base.rstrip("/") + "/chat/completions"


def body(request: ModelRequest) -> dict[str, Any]:
    """The request body, as litellm sends it to an OpenAI-compatible server."""
    model = request.endpoint.model.removeprefix("openai/")
    data: dict[str, Any] = {"model": model, "messages": [dict(m) for m in request.messages],
                            "temperature": request.temperature,
                            "max_tokens": request.max_tokens}
    if request.json_mode:
        data["response_format"] = {"type": "json_object"}
    return data


def _kind(exc: BaseException) -> tuple[str, bool]:
    """(what went wrong, whether another attempt may help), in call.py's words."""
    import httpx

    if isinstance(exc, (TimeoutError, httpx.TimeoutException)):
        return "the model did not answer in time", True
    if isinstance(exc, HTTPStatusError):
        status = exc.status_code
        if status == 429:
            return "rate limited (429)", True
        if status in (401, 403):
            return "authentication failed; check the API key", False
        if status in (400, 404, 422):
            return "the request was refused", False
        if status >= 500:
            return f"the model endpoint failed ({status})", True
        return "the model call failed", False
    if isinstance(exc, (httpx.TransportError, ConnectionError)):
        return "cannot connect to the model endpoint", True
    return "the model call failed", False


def _reply(data: Any, attempts: int, cost: float | None = None) -> ModelReply:
    try:
        choice = data["choices"][0]
        text = choice["message"]["content"] or ""
    except (KeyError, IndexError, TypeError):
        raise BadReply("the endpoint's answer is not a chat completion") from None
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    return ModelReply(text=str(text), model=str(data.get("model") or ""), attempts=attempts,
                      input_tokens=usage.get("prompt_tokens"),
                      output_tokens=usage.get("completion_tokens"), cost=cost)


async def _complete(request: ModelRequest, deadline: float) -> ModelReply:
    import httpx
    from tenacity import AsyncRetrying, RetryCallState, retry_if_exception
    from tenacity.wait import wait_random_exponential

    endpoint = request.endpoint
    if not endpoint.api_base:
        raise ModelError(f"no api_base to call directly ({endpoint.model})")
    target = url(endpoint.api_base)
    headers = {"Content-Type": "application/json"}
    if endpoint.api_key:
        headers["Authorization"] = f"Bearer {endpoint.api_key}"

    def stop(state: RetryCallState) -> bool:  # no retry may start too close to the deadline
        return time.monotonic() + (state.upcoming_sleep or 0) + MIN_ATTEMPT >= deadline

    attempts = 0
    retrying = AsyncRetrying(retry=retry_if_exception(lambda e: _kind(e)[1]),
                             wait=wait_random_exponential(multiplier=0.25, max=4),
                             stop=stop, reraise=True)
    try:
        async with httpx.AsyncClient(trust_env=False, proxy=endpoint.proxy,
                                     follow_redirects=False) as client:
            async for attempt in retrying:
                with attempt:
                    attempts += 1
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        raise TimeoutError
                    response = await asyncio.wait_for(client.post(
                        target, json=body(request), headers=headers, timeout=remaining),
                        remaining)
                    if response.status_code >= 300:
                        raise HTTPStatusError(response.status_code, response.text)
                    reply = _reply(response.json(), attempts, from_headers(response.headers))
    except Exception as exc:
        what, _ = _kind(exc)
        detail = redact_error(excerpt(str(exc), 300), endpoint)
        tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
        message = f"{what} ({endpoint.model}, {tries})"
        if what == "the model did not answer in time":
            raise ModelTimeout(message) from None
        raise ModelError(f"{message}: {detail}" if detail else message) from None
    return reply


def complete(request: ModelRequest, deadline: float) -> ModelReply:
    """Ask the pinned endpoint, retrying within ``deadline`` (a ``time.monotonic()`` instant)."""
    if time.monotonic() >= deadline:
        raise ModelTimeout(f"the model did not answer in time ({request.endpoint.model})")
    try:
        return loop.run(_complete(request, deadline), deadline - time.monotonic() + loop.SETTLE)
    except concurrent.futures.TimeoutError:
        raise ModelTimeout(f"the model did not answer in time ({request.endpoint.model})") from None


__all__ = ["body", "complete", "url"]
