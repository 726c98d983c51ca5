"""The model call through litellm (every provider the direct path of endpoint.py does not
take): ``acompletion`` under one deadline, retried by tenacity.

litellm is imported here, on first use, and only when a prompt hook on its path runs;
:func:`prepare` also loads what its first call would (start-up, not the hook's time). Its own
retries are off (``num_retries=0``, ``max_retries=0``) so that the hook's deadline covers every
attempt; what is retried, and the one line a failure reads as, are failures.py's, as on the
direct path.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import os
import re
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from . import failures, verdict
from .cost import from_litellm
from .endpoint import ModelError, ModelReply, ModelRequest, ModelTimeout, tool_calls_of
from .failures import MIN_ATTEMPT, Failure

__all__ = ["MIN_ATTEMPT", "ModelError", "ModelReply", "ModelRequest", "ModelTimeout",
           "complete", "describe", "import_litellm"]


def import_litellm() -> Any:
    """litellm, imported on first use and told to stay quiet and offline."""
    # Set before the import: the first stops a network fetch of the cost map at import, the
    # second stops litellm loading a stray .env file.
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    os.environ["LITELLM_MODE"] = "PRODUCTION"
    import litellm  # after the settings above, and only on its path (seconds of imports)

    litellm.suppress_debug_info = True
    logging.getLogger("LiteLLM").setLevel(logging.CRITICAL)
    return litellm


_warmed: set[str] = set()  # the providers whose first-call imports are done in this process


async def _warm(litellm: Any, kwargs: dict[str, Any]) -> None:
    """Load what litellm loads lazily on its first call (the OpenAI SDK's resources and types,
    the provider's code: hundreds of modules, seconds on a busy machine) with a call that
    never leaves the process (``mock_response``)."""
    with contextlib.suppress(Exception):
        import openai  # what litellm loads on its first call, loaded ahead: this function's work

        client = openai.AsyncOpenAI(api_key="warm-up", base_url="http://127.0.0.1:9")
        client.chat.completions  # noqa: B018 (the access is what imports the resources)
    with contextlib.suppress(Exception):
        await litellm.acompletion(**{**kwargs, "mock_response": "{}"})


def prepare(request: ModelRequest | None = None, within: float = 60.0) -> Any:
    """litellm, imported and warmed for ``request``'s provider (or an OpenAI-compatible one)
    in at most ``within`` seconds more: the start-up a first call would otherwise spend out
    of its hook's deadline."""
    litellm = import_litellm()
    model = request.endpoint.model if request else "openai/warm-up"
    provider = model.split("/", 1)[0] if "/" in model else ""
    if provider in _warmed:
        return litellm
    if request is None:
        kwargs: dict[str, Any] = {"model": model, "api_key": "warm-up",
                                  "messages": [{"role": "user", "content": "warm-up"}]}
    else:
        kwargs = _kwargs(request, litellm)
    with contextlib.suppress(concurrent.futures.TimeoutError):
        failures.run_on_loop(_warm(litellm, kwargs), within)
        _warmed.add(provider)
    return litellm


def _status_body(exc: BaseException) -> tuple[int | None, str, Any]:
    """The HTTP status, body text and headers behind a litellm exception, where it has them."""
    status = getattr(exc, "status_code", None)
    response = getattr(exc, "response", None)
    headers = getattr(exc, "litellm_response_headers", None) or getattr(response, "headers",
                                                                        None)
    text = str(getattr(exc, "message", "") or exc)
    return (status if isinstance(status, int) else None), text, headers


def describe(exc: BaseException, litellm: Any) -> Failure:
    """What went wrong, in failures.py's words. Timeout is checked before APIConnectionError,
    which some litellm versions make its base class; litellm reports some failed connections
    (nothing listening on the port) as a 500 that no server sent."""
    if isinstance(exc, (TimeoutError, litellm.Timeout)):
        return Failure(failures.TIMEOUT, True)
    text = str(exc)
    if ("Missing credentials" in text or "api_key client option must be set" in text
            or re.search(r"Missing \w+ API Key", text)):  # litellm's own check, as a 401
        return Failure("authentication failed; no API key is set for this model")
    if "LLM Provider NOT provided" in str(exc):
        return Failure(f"{failures.UNKNOWN_MODEL}: give it a provider prefix (anthropic/, "
                       "openai/, gemini/...)")
    if isinstance(exc, litellm.APIConnectionError) or _connection_failed(exc):
        found = failures.connection_failure(exc)
        if found.dead or _connection_failed(exc):
            return found
    status, text, headers = _status_body(exc)
    if status is not None and status >= 400 and not _connection_failed(exc):
        return failures.from_status(status, text, headers)
    if isinstance(exc, litellm.APIConnectionError):
        return Failure("cannot connect to the model endpoint", True,
                       detail=failures.server_message(text))
    return Failure("the model call failed", detail=failures.server_message(text))


def _connection_failed(exc: BaseException) -> bool:
    """Whether the cause of ``exc`` is a failed connection."""
    link: BaseException | None = exc
    for _ in range(10):
        if link is None:
            return False
        name = type(link).__name__
        if "Timeout" not in name and (isinstance(link, ConnectionError)
                                      or name in ("ConnectError", "ClientConnectorError",
                                                  "ClientConnectorDNSError")):
            return True
        link = link.__cause__ or link.__context__
    return False


def _compatible(request: ModelRequest, litellm: Any) -> bool:
    """Whether the model is a bare name on an OpenAI-compatible server (LiteLLM Proxy, vLLM,
    Ollama...): an ``api_base`` and no provider litellm knows."""
    model = request.endpoint.model
    provider = model.split("/", 1)[0] if "/" in model else None
    return bool(request.endpoint.api_base) and provider not in litellm.provider_list


def _kwargs(request: ModelRequest, litellm: Any) -> dict[str, Any]:
    endpoint = request.endpoint
    kwargs: dict[str, Any] = {
        "model": endpoint.model, "messages": request.payload_messages(),
        "temperature": request.temperature, "max_tokens": request.max_tokens,
        "num_retries": 0, "max_retries": 0, "drop_params": True,
    }
    if endpoint.api_base:
        kwargs["api_base"] = endpoint.api_base
        if _compatible(request, litellm):
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
            kwargs["response_format"] = verdict.response_format(request)
    if request.tools:
        kwargs["tools"] = [dict(t) for t in request.tools]
        # Ours are function tools, never MCP ones: litellm's check for its MCP gateway imports
        # its proxy's dependencies (the ``mcp`` package), which are not installed.
        kwargs["_skip_mcp_handler"] = True
    return kwargs


def _takes_schema(request: ModelRequest, litellm: Any) -> bool:
    """Whether to send the verdict's schema through litellm: unless its model table says the
    model cannot take one (a model it does not know, as on a local server, is tried; a
    refusal is remembered, see verdict.py)."""
    provider = "openai" if _compatible(request, litellm) else None
    try:
        info = litellm.get_model_info(request.endpoint.model, custom_llm_provider=provider)
    except Exception:  # not in its table
        return True
    return info.get("supports_response_schema") is not False


async def _complete(request: ModelRequest, deadline: float, attempts: list[int]) -> Any:
    litellm = import_litellm()
    kwargs = _kwargs(request, litellm)
    async for attempt in failures.retrying(lambda e: describe(e, litellm), deadline):
        with attempt:
            attempts[0] += 1
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            response = await asyncio.wait_for(
                litellm.acompletion(**kwargs, timeout=remaining), remaining)
    choice = response.choices[0]
    usage = getattr(response, "usage", None)
    return ModelReply(text=choice.message.content or "", model=str(response.model),
                      attempts=attempts[0], tool_calls=tool_calls_of(choice.message),
                      input_tokens=getattr(usage, "prompt_tokens", None),
                      output_tokens=getattr(usage, "completion_tokens", None),
                      cost=_cost(response, litellm))


async def _described(request: ModelRequest, deadline: float, attempts: list[int], name: str,
                     environ: Mapping[str, str] | None) -> Any:
    litellm = import_litellm()
    if request.structured and not _takes_schema(request, litellm):
        request = replace(request, structured=False)

    def refusal(exc: Exception) -> bool:
        status, text, _ = _status_body(exc)
        return verdict.refused(status, text)

    try:
        return await verdict.asked(
            request, name, environ, lambda asked: _complete(asked, deadline, attempts),
            refusal)
    except Exception as exc:
        raise failures.Failed(describe(exc, litellm)) from None


def _cost(response: Any, litellm: Any) -> float | None:
    """What the call cost in US dollars, from litellm's local price map; when the model is
    not in it (a local server, a proxy alias), what a LiteLLM Proxy said in its cost header;
    else None."""
    try:
        cost = litellm.completion_cost(completion_response=response)
    except Exception:
        cost = None
    return float(cost) if cost else from_litellm(response)


def complete(request: ModelRequest, deadline: float,
             environ: Mapping[str, str] | None = None) -> ModelReply:
    """Ask the model, retrying within ``deadline`` (a ``time.monotonic()`` instant).
    ``environ`` is where the dead-endpoint memory lives (None: not used)."""

    endpoint = request.endpoint
    name = failures.endpoint_name(endpoint.api_base, endpoint.model)
    return failures.settled(name, endpoint, deadline, environ,
                            lambda attempts: _described(request, deadline, attempts, name,
                                                        environ))
