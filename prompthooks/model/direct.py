"""The direct path: an OpenAI chat-completions call without litellm.

Used for every endpoint that speaks the OpenAI chat API (route.py decides which), and for
managed hooks that pin ``api_base``. The call goes out on the small HTTP/1.1 client of
http_client.py when no proxy applies, else on httpx, which follows the proxy settings; either
keeps its connections open between calls, on the shared model loop (loop.py), one client per
process (httpx's: per proxy setting). The retry rules and the error lines are the litellm
path's (failures.py).

A managed hook's request must go where its own file says, so its client reads nothing from
the environment (``trust_env=False``: no proxy variables, no ``.netrc``, no ``SSL_CERT_FILE``)
and goes through a proxy only when the managed file names one (``prompthooks.proxy``). Other
hooks' clients follow the proxy variables, as litellm's would.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from . import dead, failures, http_client, loop, structured
from .cost import from_headers
from .route import Direct, pinned_route
from .types import ModelReply, ModelRequest

# (event loop, trust_env, proxy, TLS context, the proxy variables it read) -> the client kept
# open for them.
_clients: dict[tuple[int, bool, str | None, int, tuple[tuple[str, str], ...]], Any] = {}
# event loop -> the small client's connections kept open on it.
_pools: dict[int, http_client.Pool] = {}


class HTTPStatusError(Exception):
    """The endpoint answered with an error status."""

    def __init__(self, status: int, body: str, headers: Mapping[str, str]) -> None:
        super().__init__(f"{status}: {body[:300]}")
        self.status_code = status
        self.body = body
        self.headers = headers


class BadReply(Exception):
    """A 200 answer that is not a chat completion."""


def _httpx() -> Any:
    """httpx, without its command-line client: ``import httpx`` also imports ``httpx._main``,
    which loads rich and pygments when they are installed (a tenth of a second on every cold
    prompt hook); marking it absent makes httpx fall back to its stub ``main``."""
    import sys

    if "httpx" not in sys.modules:
        sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
    import httpx

    return httpx


def prepare(route: Direct | None = None) -> None:
    """Import what a direct call needs and make ``route``'s kept-open client or TLS context
    (which takes a while): start-up time, see model/chain.py."""
    import tenacity  # noqa: F401

    small = _small(route) if route is not None else None
    if route is not None and small is not None:
        if small.tls:
            _verify(route)
        return
    _httpx()
    if route is not None and _key(route, loop.shared()) not in _clients:
        async def make() -> None:
            _client(route)

        loop.run(make(), 60.0)


def url(api_base: str) -> str:
    """The chat-completions URL under ``api_base`` (as the OpenAI client builds it)."""
    return api_base.rstrip("/") + "/chat/completions"


def body(request: ModelRequest, route: Direct | None = None) -> dict[str, Any]:
    """The request body, as litellm sends it to an OpenAI-compatible server (OpenAI's
    reasoning models take no temperature and name their cap ``max_completion_tokens``)."""
    target = route or pinned_route(request.endpoint)
    data: dict[str, Any] = {"model": target.model,
                            "messages": [dict(m) for m in request.messages]}
    if not target.reasoning:
        data["temperature"] = request.temperature
    data["max_completion_tokens" if target.openai else "max_tokens"] = request.max_tokens
    response_format = structured.response_format(request)
    if response_format is not None:
        data["response_format"] = response_format
    return data


def describe(exc: BaseException) -> failures.Failure:
    """(what went wrong, whether another attempt may help), in failures.py's words."""
    httpx = sys.modules.get("httpx")  # not imported by a call on the small client
    if isinstance(exc, TimeoutError) or (httpx and isinstance(exc, httpx.TimeoutException)):
        return failures.Failure(failures.TIMEOUT, True)
    if isinstance(exc, HTTPStatusError):
        return failures.from_status(exc.status_code, exc.body, exc.headers)
    if isinstance(exc, BadReply):
        return failures.Failure("the endpoint's answer is not a chat completion", True)
    if isinstance(exc, http_client.ConnectFailed) or (httpx and isinstance(exc,
                                                                           httpx.ConnectError)):
        return failures.connection_failure(exc)
    if isinstance(exc, (http_client.Broken, ConnectionError)) or (
            httpx and isinstance(exc, httpx.TransportError)):
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
                      output_tokens=usage.get("completion_tokens"), cost=cost)


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
    import importlib

    import tenacity  # noqa: F401

    _httpx()  # for a proxy: a process's first call may need either client
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


def _proxy_variables() -> tuple[tuple[str, str], ...]:
    """The environment's proxy settings, as a client made now would read them (urllib reads
    a ``*_proxy`` variable whatever the case of its name)."""
    return tuple(sorted((name, value) for name, value in os.environ.items()
                        if name[-6:].lower() == "_proxy"))


def _small(route: Direct) -> http_client.Target | None:
    """Where the small client sends ``route``'s calls; None when they go through httpx: a
    proxy named for it, a proxy setting for a route that reads the environment
    (:func:`proxied`), or a base URL the small client leaves to httpx."""
    if route.proxy is not None or (route.trust_env and proxied()):
        return None
    return http_client.target(url(route.base))


def proxied() -> bool:
    """Whether a client that reads the environment would go through a proxy for some URL, as
    urllib (and so httpx) reads the settings: a ``*_proxy`` variable in any case of its name
    (``no_proxy`` aside) with a value, else on macOS and Windows the system's settings."""
    if any(name[-6:].lower() == "_proxy" and name.lower() != "no_proxy" and value
           for name, value in os.environ.items()):
        return True
    return sys.platform in ("darwin", "win32") and _system_proxied()


@functools.cache
def _system_proxied() -> bool:
    """Whether the system's settings name a proxy (read once per process: asking macOS or the
    Windows registry on every call would cost each prompt hook)."""
    import urllib.request

    return any(scheme != "no" for scheme in urllib.request.getproxies())


def _pool() -> http_client.Pool:
    running = id(asyncio.get_running_loop())
    pool = _pools.get(running)
    if pool is None:
        pool = _pools[running] = http_client.Pool()
    return pool


def warm_client(within: float = 5.0) -> bool:
    """Start the model loop and send one chat completion, by the code a real call runs, to a
    stand-in on the loopback that this process serves for the purpose: a run's work process,
    forked ahead of its run, does this while it waits, so that the first real call does not
    pay for the first use of that code in a new process (a forked process copies each page it
    first writes to). The client is the one an endpoint without a managed pin gets in this
    process's environment: the small one, or with a proxy variable set, httpx (whose kept
    client is made; the stand-in's request then goes through a client of its own that reads
    no proxy setting, so it never leaves the machine). The stand-in's connection is not kept.
    Whether its answer came back within ``within`` seconds (nothing is said if not: the first
    call then pays as it did)."""
    from .settings import Endpoint

    async def make() -> bool:
        server = await asyncio.start_server(_stand_in, "127.0.0.1", 0)
        try:
            base = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1"
            request = ModelRequest(Endpoint("-", base), ({"role": "user", "content": "-"},))
            route = Direct(base, "-", None)
            if _small(route) is not None:
                reply = await _complete(request, time.monotonic() + within, route, [0])
            else:  # a proxy applies here: httpx
                _client(route)
                async with _httpx().AsyncClient(trust_env=False,
                                                verify=_context(False)) as client:
                    response = await client.post(url(base), json=body(request),
                                                 timeout=within)
                    reply = _reply(response.json(), 1, from_headers(response.headers))
        finally:
            server.close()
        return reply.text == '{"ok": true}'

    try:
        return loop.run(make(), within)
    except Exception:
        return False


_STAND_IN_REPLY = (b'{"model": "-", "choices": [{"message": {"content": "{\\"ok\\": true}"}}]}')


async def _stand_in(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """The loopback stand-in's one answer: a chat completion. Its one peer is this process's
    own client, which closes the connection when it is done or gives up."""
    with contextlib.suppress(Exception):
        head = await reader.readuntil(b"\r\n\r\n")
        size = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                     if line.lower().startswith(b"content-length:")), 0)
        await reader.readexactly(size)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close"
                     b"\r\nContent-Length: %d\r\n\r\n%s" % (len(_STAND_IN_REPLY),
                                                             _STAND_IN_REPLY))
        await writer.drain()
    writer.close()


def _verify(route: Direct) -> Any:
    """The TLS context for ``route``: a managed hook's reads nothing from the environment;
    another's follows SSL_CERT_FILE and SSL_CERT_DIR as httpx would."""
    return _context(route.trust_env)


def _key(route: Direct, running: asyncio.AbstractEventLoop
         ) -> tuple[int, bool, str | None, int, tuple[tuple[str, str], ...]]:
    """What a kept-open client is made for: the loop it runs on, and every setting it reads
    when it is made."""
    return (id(running), route.trust_env, route.proxy, id(_verify(route)),
            _proxy_variables() if route.trust_env else ())


def _client(route: Direct) -> Any:
    """The kept-open client for ``route``'s settings, on the running (shared) loop."""
    httpx = _httpx()

    key = _key(route, asyncio.get_running_loop())
    client = _clients.get(key)
    if client is None:
        verify = _verify(route)
        client = _clients[key] = httpx.AsyncClient(
            verify=verify, trust_env=route.trust_env, proxy=route.proxy,
            follow_redirects=False,
            limits=httpx.Limits(max_keepalive_connections=20, keepalive_expiry=30.0))
    return client


async def _complete(request: ModelRequest, deadline: float, route: Direct,
                    attempts: list[int]) -> ModelReply:
    target = url(route.base)
    headers = {"Content-Type": "application/json"}
    if route.key:
        headers["Authorization"] = f"Bearer {route.key}"
    small = _small(route)
    post = (_small_post(small, route, headers) if small is not None
            else _httpx_post(target, route, headers))
    payload = body(request, route)
    async for attempt in failures.retrying(describe, deadline):
        with attempt:
            attempts[0] += 1
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            status, text, answer_headers = await asyncio.wait_for(post(payload, remaining),
                                                                  remaining)
            if status >= 300:
                raise HTTPStatusError(status, text, answer_headers)
            try:
                data = json.loads(text)
            except ValueError:
                raise BadReply("the endpoint's answer is not JSON") from None
            reply = _reply(data, attempts[0], from_headers(answer_headers))
    return reply


# A POST of the payload within so many seconds: (status, body text, headers).
_Post = Callable[[dict[str, Any], float], Awaitable[tuple[int, str, Mapping[str, str]]]]


def _small_post(small: http_client.Target, route: Direct, headers: dict[str, str]) -> _Post:
    pool, tls = _pool(), _verify(route) if small.tls else None

    async def post(payload: dict[str, Any], remaining: float
                   ) -> tuple[int, str, Mapping[str, str]]:
        data = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
        response = await pool.post(small, data, headers, tls)
        return response.status, response.body.decode("utf-8", "replace"), response.headers

    return post


def _httpx_post(target: str, route: Direct, headers: dict[str, str]) -> _Post:
    client = _client(route)

    async def post(payload: dict[str, Any], remaining: float
                   ) -> tuple[int, str, Mapping[str, str]]:
        response = await client.post(target, json=payload, headers=headers, timeout=remaining)
        return response.status_code, response.text, response.headers

    return post


def complete(request: ModelRequest, deadline: float, route: Direct | None = None,
             environ: Mapping[str, str] | None = None) -> ModelReply:
    """Ask ``route``'s endpoint (a managed hook's pinned one when None), retrying within
    ``deadline`` (a ``time.monotonic()`` instant). ``environ`` is where the dead-endpoint
    memory lives (None: not used, as for a managed hook)."""

    target = route or pinned_route(request.endpoint)
    name = dead.address(target.base, request.endpoint.model)
    return failures.settled(name, request.endpoint, deadline, environ,
                            lambda attempts: _counted(request, deadline, target, attempts,
                                                      name, environ))


async def _counted(request: ModelRequest, deadline: float, route: Direct,
                   attempts: list[int], name: str,
                   environ: Mapping[str, str] | None) -> ModelReply:
    """The call (with the verdict's schema where the endpoint takes it: structured.py), its
    failure described on the loop (where the exception is)."""
    try:
        return await structured.asked(
            request, name, environ, lambda asked: _complete(asked, deadline, route, attempts),
            lambda exc: isinstance(exc, HTTPStatusError)
            and structured.refused(exc.status_code, exc.body))
    except Exception as exc:
        raise failures.Failed(describe(exc)) from None


__all__ = ["body", "complete", "describe", "prepare", "url"]
