"""The direct path: an OpenAI chat-completions call without litellm.

Used for every endpoint that speaks the OpenAI chat API (endpoint.py decides which), and for
managed hooks that pin ``api_base``. Every call goes out on httpx (its HTTP/1.1 framing is
h11's), proxied or not, on the shared model loop (failures.py), one client per process and per
setting it reads (proxy variables, CA source). The retry rules and the error lines are the
litellm path's (failures.py).

One deadline holds per call whatever the server does: httpx's own timeouts for each step,
``asyncio.wait_for`` over the whole exchange (a server that trickles its answer byte by byte
never restarts it), and a cap on the body while it streams in (:data:`MAX_BODY`, counted after
decompression). Each call has its own connection, closed after its answer: h11 would read bytes
a server sent past one answer as the next request's answer on a kept connection, and a
resident run's work process is new for each event anyway, so keeping connections would save
little (docs/performance.md, "The direct path").

A managed hook's request must go where its own file says, so its client reads nothing from
the environment (``trust_env=False``: no proxy variables, no ``SSL_CERT_FILE``) and goes
through a proxy only when the managed file names one (``prompthooks.proxy``). Other hooks'
clients follow the proxy variables, as litellm's would.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import os
import ssl
import sys
import time
from collections.abc import Mapping
from typing import Any

from . import failures, verdict
from .cost import from_headers
from .endpoint import Direct, Endpoint, ModelReply, ModelRequest, pinned_route, tool_calls_of

# (event loop, trust_env, proxy, TLS context, the proxy variables it read) -> the client made
# for them.
_clients: dict[tuple[int, bool, str | None, int, tuple[tuple[str, str], ...]], Any] = {}
# Bytes of an answer's body read at most (after decompression): a verdict of 300 tokens is a
# few kilobytes, an error page some more; a server sending more is refused, not buffered.
MAX_BODY = 4 << 20


class HTTPStatusError(Exception):
    """The endpoint answered with an error status."""

    def __init__(self, status: int, body: str, headers: Mapping[str, str]) -> None:
        super().__init__(f"{status}: {body[:300]}")
        self.status_code = status
        self.body = body
        self.headers = headers


class BadReply(Exception):
    """A 200 answer that is not a chat completion."""


class TooLarge(Exception):
    """An answer whose body is larger than :data:`MAX_BODY`."""


def _httpx() -> Any:
    """httpx, without its command-line client: ``import httpx`` also imports ``httpx._main``,
    which loads rich and pygments when they are installed (a tenth of a second on every cold
    prompt hook); marking it absent makes httpx fall back to its stub ``main``."""
    if "httpx" not in sys.modules:
        sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
    import httpx  # after the stub above, and only for a call: see model/chain.py

    return httpx


def prepare(route: Direct | None = None) -> None:
    """Import what a direct call needs and make ``route``'s client with its TLS context (which
    takes a while): start-up time, see model/chain.py."""
    import tenacity  # noqa: F401  # loaded ahead of the call's retry loop: this function's work

    _httpx()
    if route is not None and _key(route, failures.shared_loop()) not in _clients:
        async def make() -> None:
            _client(route)

        failures.run_on_loop(make(), 60.0)


def url(api_base: str) -> str:
    """The chat-completions URL under ``api_base`` (as the OpenAI client builds it)."""
    return api_base.rstrip("/") + "/chat/completions"


def body(request: ModelRequest, route: Direct | None = None) -> dict[str, Any]:
    """The request body, as litellm sends it to an OpenAI-compatible server (OpenAI's
    reasoning models take no temperature and name their cap ``max_completion_tokens``)."""
    target = route or pinned_route(request.endpoint)
    data: dict[str, Any] = {"model": target.model, "messages": request.payload_messages()}
    if not target.reasoning:
        data["temperature"] = request.temperature
    data["max_completion_tokens" if target.openai else "max_tokens"] = request.max_tokens
    response_format = verdict.response_format(request)
    if response_format is not None:
        data["response_format"] = response_format
    if request.tools:
        data["tools"] = [dict(t) for t in request.tools]
    return data


def describe(exc: BaseException) -> failures.Failure:
    """(what went wrong, whether another attempt may help), in failures.py's words."""
    httpx = _httpx()
    if isinstance(exc, (TimeoutError, httpx.TimeoutException)):
        return failures.Failure(failures.TIMEOUT, True)
    if isinstance(exc, HTTPStatusError):
        return failures.from_status(exc.status_code, exc.body, exc.headers)
    if isinstance(exc, BadReply):
        return failures.Failure("the endpoint's answer is not a chat completion", True)
    if isinstance(exc, TooLarge):  # the same server sends the same again: not retried
        return failures.Failure(f"the endpoint's answer is larger than {MAX_BODY >> 20} MB")
    if isinstance(exc, httpx.ConnectError):
        return failures.connection_failure(exc)
    if isinstance(exc, httpx.UnsupportedProtocol):
        return failures.Failure("the endpoint's URL is not http or https")
    if isinstance(exc, httpx.LocalProtocolError):  # a key with a line break, say: never sent
        return failures.Failure("the request could not be sent: a header holds a character "
                                "HTTP does not allow (check the API key)")
    if isinstance(exc, httpx.DecodingError):
        return failures.Failure("the endpoint's answer is not readable (its content encoding "
                                "is broken)", True)
    if isinstance(exc, (httpx.TransportError, ConnectionError)):
        return failures.Failure("the connection to the model endpoint broke", True)
    return failures.Failure("the model call failed")


def _reply(data: Any, attempts: int, cost: float | None = None) -> ModelReply:
    try:
        choice = data["choices"][0]
        text = choice["message"]["content"] or ""
    except (KeyError, IndexError, TypeError):
        raise BadReply("the endpoint's answer is not a chat completion") from None
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    return ModelReply(text=str(text), model=str(data.get("model") or ""), attempts=attempts,
                      input_tokens=usage.get("prompt_tokens"),
                      output_tokens=usage.get("completion_tokens"), cost=cost,
                      tool_calls=tool_calls_of(choice["message"]))


# TLS contexts, built once per CA source (loading a CA bundle costs a tenth of a second): a
# resident process builds the ones for its own environment before it forks its runs, which
# then share them. Keyed by where the certificates come from and, for a bundle file, by the
# file's identity and change time, so an edited or replaced bundle is read again.
_tls: dict[tuple[object, ...], Any] = {}


def _ca_source(trust_env: bool) -> tuple[object, ...] | None:
    """Where a client's CA certificates come from, as httpx decides it (SSL_CERT_FILE, then
    SSL_CERT_DIR, when it trusts the environment; else certifi's bundle); None when the named
    file cannot be looked at (httpx then reads it, and says what is wrong)."""
    cafile = os.environ.get("SSL_CERT_FILE") if trust_env else None
    if cafile:
        try:
            st = os.stat(cafile)
        except OSError:
            return None
        return ("file", cafile, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    capath = os.environ.get("SSL_CERT_DIR") if trust_env else None
    if capath:  # OpenSSL looks certificates up in the folder when it verifies, not before
        return ("dir", capath)
    return ("default",)


def _context(trust_env: bool) -> Any:
    source = _ca_source(trust_env)
    context = _tls.get(source) if source is not None else None
    if context is None:
        context = _httpx().create_ssl_context(trust_env=trust_env)
        if source is not None:
            _tls[source] = context
    return context


def preload() -> None:
    """What a first call would load, done ahead: the resident process calls it before forking
    runs. That is httpx and the retry and loop modules, the TLS contexts for this process's
    environment, and what httpx imports only when its first client is made or connects
    (httpcore with h11 and h2, and anyio's asyncio backend): some 300 ms a forked run would
    otherwise pay."""
    import tenacity  # noqa: F401  # as in prepare

    _httpx()
    for name in _FIRST_CALL_MODULES:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    for trust_env in (False, True):
        with contextlib.suppress(OSError):  # an unreadable bundle: said when a call uses it
            _context(trust_env)


# What httpx imports on its first client and first connection (httpcore's pools and its
# anyio backend).
_FIRST_CALL_MODULES = ("httpcore", "httpcore._backends.auto", "httpcore._backends.anyio",
                       "anyio._backends._asyncio", "sniffio")


def warm(within: float = 5.0) -> bool:
    """After a fork, ahead of a run: start the model loop, make the client an endpoint without
    a managed pin gets in this environment, and pass one chat completion through the code a
    call runs (httpx's request and response, httpcore's connection, h11's framing, the body
    read and the reply's parse) on in-memory transports, never a socket: a forked process
    copies each page it first writes to, which the run's first call would otherwise pay for.
    Whether it was done within ``within`` seconds (if not, that first call pays as it would)."""
    httpx = _httpx()
    import httpcore  # httpx's connection layer, which httpx loads on its first client too

    async def make() -> bool:
        base = "http://127.0.0.1:9/v1"
        route = Direct(base, "-", None)
        _client(route)
        head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
        backend = httpcore.AsyncMockBackend([head % len(_WARM_REPLY), _WARM_REPLY])
        async with httpcore.AsyncConnectionPool(network_backend=backend) as pool:
            await pool.request("POST", url(base), content=b"{}")
        request = ModelRequest(Endpoint("-", base), ({"role": "user", "content": "-"},))
        transport = httpx.MockTransport(lambda _: httpx.Response(200, content=_WARM_REPLY))
        async with httpx.AsyncClient(transport=transport) as client:
            _, text, headers = await _post(client, url(base), body(request, route),
                                           {"Content-Type": "application/json"}, within)
        return _reply(json.loads(text), 1, from_headers(headers)).text == '{"ok": true}'

    try:
        return failures.run_on_loop(make(), within)
    except Exception:
        return False


_WARM_REPLY = b'{"model": "-", "choices": [{"message": {"content": "{\\"ok\\": true}"}}]}'


def _proxy_variables() -> tuple[tuple[str, str], ...]:
    """The environment's proxy settings, as a client made now would read them (urllib reads
    a ``*_proxy`` variable whatever the case of its name)."""
    return tuple(sorted((name, value) for name, value in os.environ.items()
                        if name[-6:].lower() == "_proxy"))


def _verify(route: Direct) -> Any:
    """The TLS context for ``route``: a managed hook's reads nothing from the environment;
    another's follows SSL_CERT_FILE and SSL_CERT_DIR as httpx would. A route that cannot meet
    TLS (an http URL, no proxy anywhere) gets a context trusting no certificate at all instead:
    loading the CA bundle would cost a cold event a tenth of a second or more for nothing, and
    should TLS happen after all, every certificate is refused."""
    if (route.base.lower().startswith("http://") and route.proxy is None
            and not (route.trust_env and any(value for _, value in _proxy_variables()))):
        global _plain
        if _plain is None:
            _plain = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # verifies, against no CA
        return _plain
    return _context(route.trust_env)


_plain: Any = None


def _key(route: Direct, running: asyncio.AbstractEventLoop
         ) -> tuple[int, bool, str | None, int, tuple[tuple[str, str], ...]]:
    """What a kept-open client is made for: the loop it runs on, and every setting it reads
    when it is made."""
    return (id(running), route.trust_env, route.proxy, id(_verify(route)),
            _proxy_variables() if route.trust_env else ())


def _client(route: Direct) -> Any:
    """The client for ``route``'s settings, on the running (shared) loop."""
    httpx = _httpx()

    key = _key(route, asyncio.get_running_loop())
    client = _clients.get(key)
    if client is None:
        verify = _verify(route)
        client = _clients[key] = httpx.AsyncClient(
            verify=verify, trust_env=route.trust_env, proxy=route.proxy,
            follow_redirects=False,
            # no connection is used for a second answer (see the module's docstring)
            limits=httpx.Limits(max_keepalive_connections=0))
    return client


async def _complete(request: ModelRequest, deadline: float, route: Direct,
                    attempts: list[int]) -> ModelReply:
    target = url(route.base)
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if route.key:
        headers["Authorization"] = f"Bearer {route.key}"
    client = _client(route)
    payload = body(request, route)
    async for attempt in failures.retrying(describe, deadline):
        with attempt:
            attempts[0] += 1
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            status, text, answer_headers = await asyncio.wait_for(
                _post(client, target, payload, headers, remaining), remaining)
            if status >= 300:
                raise HTTPStatusError(status, text, answer_headers)
            try:
                data = json.loads(text)
            except ValueError:
                raise BadReply("the endpoint's answer is not JSON") from None
            reply = _reply(data, attempts[0], from_headers(answer_headers))
    return reply


async def _post(client: Any, target: str, payload: dict[str, Any], headers: dict[str, str],
                remaining: float) -> tuple[int, str, Mapping[str, str]]:
    """One POST: (status, body text, headers), the body read up to :data:`MAX_BODY`."""
    async with client.stream("POST", target, json=payload, headers=headers,
                             timeout=remaining) as response:
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > MAX_BODY:
            raise TooLarge
        parts: list[bytes] = []
        size = 0
        async for part in response.aiter_bytes():
            size += len(part)
            if size > MAX_BODY:
                raise TooLarge
            parts.append(part)
        return (response.status_code, b"".join(parts).decode("utf-8", "replace"),
                response.headers)


def complete(request: ModelRequest, deadline: float, route: Direct | None = None,
             environ: Mapping[str, str] | None = None) -> ModelReply:
    """Ask ``route``'s endpoint (a managed hook's pinned one when None), retrying within
    ``deadline`` (a ``time.monotonic()`` instant). ``environ`` is where the dead-endpoint
    memory lives (None: not used, as for a managed hook)."""

    target = route or pinned_route(request.endpoint)
    name = failures.endpoint_name(target.base, request.endpoint.model)
    return failures.settled(name, request.endpoint, deadline, environ,
                            lambda attempts: _counted(request, deadline, target, attempts,
                                                      name, environ))


async def _counted(request: ModelRequest, deadline: float, route: Direct,
                   attempts: list[int], name: str,
                   environ: Mapping[str, str] | None) -> ModelReply:
    """The call (with the verdict's schema where the endpoint takes it: verdict.py), its
    failure described on the loop (where the exception is)."""
    try:
        return await verdict.asked(
            request, name, environ, lambda asked: _complete(asked, deadline, route, attempts),
            lambda exc: isinstance(exc, HTTPStatusError)
            and verdict.refused(exc.status_code, exc.body))
    except Exception as exc:
        raise failures.Failed(describe(exc)) from None


__all__ = ["body", "complete", "describe", "prepare", "url"]
