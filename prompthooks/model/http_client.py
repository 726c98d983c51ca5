"""A small HTTP/1.1 client on asyncio streams, for the direct path's POSTs to one endpoint.

A prompt hook's call is one POST with a JSON body and a JSON answer of a few hundred bytes.
httpx spends some 3 ms of CPU per call on it (its request and response models, cookies, the
connection pool's bookkeeping, anyio's cancel scopes); fifty prompt hooks on one event queue
behind that on the one model loop. This client writes the request, reads the status line, the
headers and the body (``Content-Length``, chunked, or up to the end of the connection), and
keeps connections open per endpoint for the next call. It is used when no proxy applies (see
:func:`usable`); a proxy, and a base URL with credentials or a query in it, go through httpx.

Errors: :class:`ConnectFailed` (the connection or its TLS handshake could not be made: the
original error is its cause, so a refusal, a name that does not resolve and an untrusted
certificate are told apart as with httpx), :class:`Broken` (the connection broke or the answer
is not HTTP). Time limits are the caller's (``asyncio.wait_for``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

from .._version import __version__

# Connections kept open per endpoint, and for how long an idle one is kept (as httpx was set).
MAX_IDLE = 20
IDLE_EXPIRY = 30.0
# Connections open at once per endpoint: more calls wait for one (httpx's default limit).
MAX_OPEN = 100
_MAX_HEAD = 1 << 20
_MAX_BODY = 64 << 20


class ConnectFailed(Exception):
    """The connection (or its TLS handshake) could not be made."""


class Broken(Exception):
    """The connection broke, or what came back is not an HTTP answer."""


@dataclass(frozen=True)
class Response:
    status: int
    headers: dict[str, str]  # names lower-cased; a repeated header's values joined by ", "
    body: bytes


@dataclass(frozen=True)
class Target:
    """Where a URL's requests go: scheme, host, port and the request's path."""

    tls: bool
    host: str
    port: int
    path: str

    @property
    def authority(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.tls else 80
        return host if self.port == default else f"{host}:{self.port}"


def target(url: str) -> Target | None:
    """``url`` as this client sends to it; None for what it leaves to httpx (another scheme,
    credentials, a query or a fragment, a port that is not a number, a host name that is not
    ASCII)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if (parts.scheme not in ("http", "https") or not parts.hostname or parts.username
            or parts.password or parts.query or parts.fragment
            or not parts.hostname.isascii()):  # an internationalised name: httpx encodes it
        return None
    tls = parts.scheme == "https"
    path = quote(parts.path or "/", safe="/%:@!$&'()*+,;=-._~")  # as httpx sends it
    return Target(tls, parts.hostname, port or (443 if tls else 80), path)


class _Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.idle_since = 0.0

    def usable(self) -> bool:
        return (not self.reader.at_eof() and not self.writer.is_closing()
                and not _buffered(self.reader)
                and time.monotonic() - self.idle_since < IDLE_EXPIRY)

    def close(self) -> None:
        self.writer.close()


class Pool:
    """Connections to endpoints, kept open between calls; one per event loop."""

    def __init__(self) -> None:
        self._idle: dict[tuple[bool, str, int, int], list[_Connection]] = {}
        self._open: dict[tuple[bool, str, int, int], asyncio.Semaphore] = {}

    async def post(self, url: Target, body: bytes, headers: Mapping[str, str],
                   tls: Any = None) -> Response:
        """POST ``body`` to ``url``; ``tls``: the SSL context for an https URL."""
        key = (url.tls, url.host, url.port, id(tls))
        request = _request(url, body, headers)
        async with self._open.setdefault(key, asyncio.Semaphore(MAX_OPEN)):
            idle = self._idle.setdefault(key, [])
            while idle:
                conn = idle.pop()
                if not conn.usable():
                    conn.close()
                    continue
                with contextlib.suppress(_Stale):  # closed by the server as we sent: anew
                    return await self._exchange(conn, request, idle)
            try:
                return await self._exchange(await _connect(url, tls), request, idle)
            except _Stale:
                raise Broken("the server closed the connection without answering") from None

    async def _exchange(self, conn: _Connection, request: bytes,
                        idle: list[_Connection]) -> Response:
        """One request on ``conn``; :class:`_Stale` when it ended before any byte of the
        answer came."""
        try:
            try:
                conn.writer.write(request)
                await conn.writer.drain()
                head = await conn.reader.readuntil(b"\r\n\r\n")
            except asyncio.IncompleteReadError as exc:
                if exc.partial:
                    raise Broken("the server closed the connection in the middle of its "
                                 "answer") from None
                raise _Stale from None
            except ConnectionError:
                raise _Stale from None
            except asyncio.LimitOverrunError:
                raise Broken("the answer's headers are too long") from None
            except OSError as exc:  # a broken TLS record, say
                raise Broken(f"the connection failed: {exc}") from None
            response, keep = await _read_response(conn.reader, head)
        except BaseException:
            conn.close()
            raise
        # Bytes past the answer (a second answer, a body a 204 should not have) would be
        # read as the next request's answer: such a connection is not used again.
        if keep and not _buffered(conn.reader) and len(idle) < MAX_IDLE:
            conn.idle_since = time.monotonic()
            idle.append(conn)
        else:
            conn.close()
        return response

    def close(self) -> None:
        for conns in self._idle.values():
            for conn in conns:
                conn.close()
        self._idle.clear()


def _buffered(reader: asyncio.StreamReader) -> int:
    """How many bytes ``reader`` holds unread (asyncio has no public way to ask)."""
    return len(getattr(reader, "_buffer", b""))


class _Stale(Exception):
    """A kept connection ended before any byte of the answer: the request was not taken."""


async def _connect(url: Target, tls: Any) -> _Connection:
    try:
        reader, writer = await asyncio.open_connection(
            url.host, url.port, ssl=tls if url.tls else None,
            server_hostname=url.host if url.tls else None, limit=_MAX_HEAD)
    except (OSError, EOFError) as exc:  # ssl.SSLError is an OSError
        raise ConnectFailed(str(exc) or type(exc).__name__) from exc
    return _Connection(reader, writer)


def _request(url: Target, body: bytes, headers: Mapping[str, str]) -> bytes:
    lines = [f"POST {url.path} HTTP/1.1", f"Host: {url.authority}",
             f"User-Agent: prompthooks/{__version__}", "Accept: application/json",
             "Accept-Encoding: gzip, deflate", "Connection: keep-alive",
             f"Content-Length: {len(body)}"]
    for name, value in headers.items():
        if "\r" in name or "\n" in name or "\r" in value or "\n" in value:
            raise ValueError(f"header {name!r} has a line break")
        lines.append(f"{name}: {value}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


async def _read_response(reader: asyncio.StreamReader, head: bytes) -> tuple[Response, bool]:
    """The answer whose head (status line and headers) is ``head``, and whether the
    connection can carry the next request."""
    try:
        status, version, headers = _head(head)
        while 100 <= status < 200 and status != 101:  # an interim answer: the real one follows
            await asyncio.sleep(0)  # (a flood of them does not hold the loop)
            status, version, headers = _head(await reader.readuntil(b"\r\n\r\n"))
        tokens = {t.strip() for t in headers.get("connection", "").lower().split(",")}
        keep = "close" not in tokens if version == "HTTP/1.1" else "keep-alive" in tokens
        if status in (204, 304):
            body = b""
        elif "transfer-encoding" in headers:
            if headers["transfer-encoding"].strip().lower() != "chunked":
                raise Broken("the answer is in a transfer coding this client does not read: "
                             + headers["transfer-encoding"])
            body = await _chunked(reader)
        elif "content-length" in headers:
            size = _number(headers["content-length"])
            if size > _MAX_BODY:
                raise Broken("the answer is too large")
            body = await reader.readexactly(size)
        else:
            body, keep = await _to_end(reader), False
    except (asyncio.IncompleteReadError, ConnectionError):
        raise Broken("the server closed the connection in the middle of its answer") from None
    except OSError as exc:
        raise Broken(f"the connection failed: {exc}") from None
    except asyncio.LimitOverrunError:
        raise Broken("the answer's headers or chunk sizes are too long") from None
    return Response(status, headers, _decoded(body, headers.get("content-encoding", ""))), keep


def _head(head: bytes) -> tuple[int, str, dict[str, str]]:
    status_line, *header_lines = head[:-4].decode("latin-1").split("\r\n")
    version, _, rest = status_line.partition(" ")
    if not version.startswith("HTTP/1."):
        raise Broken("the answer is not HTTP/1.x")
    code = rest[:3]
    if not (len(code) == 3 and code.isascii() and code.isdigit() and "100" <= code <= "599"
            and rest[3:4] in ("", " ")):
        raise Broken("the answer's status line is malformed")
    status = int(code)
    headers: dict[str, str] = {}
    for line in header_lines:
        name, colon, value = line.partition(":")
        if not colon:
            raise Broken("the answer's headers are malformed")
        name, value = name.strip().lower(), value.strip()
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return status, version, headers


def _number(text: str) -> int:
    values = {v.strip() for v in text.split(",")}  # repeated: all alike, or it is no answer
    if len(values) != 1:
        raise Broken("the answer's Content-Length values disagree")
    (value,) = values
    if not (value.isascii() and value.isdigit()):
        raise Broken("the answer's Content-Length is not a number")
    return int(value)


async def _chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    total = 0
    count = 0
    while True:
        count += 1
        if count % 64 == 0:  # a flood of tiny chunks does not hold the loop that long
            await asyncio.sleep(0)
        line = await reader.readuntil(b"\r\n")
        digits = line.split(b";", 1)[0].strip()
        if not digits or digits.strip(b"0123456789abcdefABCDEF"):
            raise Broken("the answer's chunk sizes are malformed")
        size = int(digits, 16)
        if size == 0:
            while await reader.readuntil(b"\r\n") != b"\r\n":  # trailers
                count += 1
                if count % 64 == 0:
                    await asyncio.sleep(0)
            return b"".join(parts)
        total += size
        if size < 0 or total > _MAX_BODY:
            raise Broken("the answer is too large")
        parts.append(await reader.readexactly(size))
        if await reader.readexactly(2) != b"\r\n":
            raise Broken("the answer's chunks are malformed")


async def _to_end(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    total = 0
    while chunk := await reader.read(1 << 16):
        total += len(chunk)
        if total > _MAX_BODY:
            raise Broken("the answer is too large")
        parts.append(chunk)
    return b"".join(parts)


def _decoded(body: bytes, encoding: str) -> bytes:
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return body
    if encoding in ("gzip", "x-gzip"):
        return _inflate(body, 16 + zlib.MAX_WBITS, encoding)
    if encoding == "deflate":  # zlib-wrapped, or raw as some servers send it
        try:
            return _inflate(body, zlib.MAX_WBITS, encoding)
        except Broken:
            return _inflate(body, -zlib.MAX_WBITS, encoding)
    raise Broken(f"the answer is in an encoding this client does not read: {encoding}")


def _inflate(body: bytes, wbits: int, encoding: str) -> bytes:
    inflater = zlib.decompressobj(wbits)
    try:
        data = inflater.decompress(body, _MAX_BODY + 1)
    except zlib.error:
        raise Broken(f"the answer's {encoding} encoding is broken") from None
    if len(data) > _MAX_BODY:
        raise Broken("the answer is too large")
    return data
