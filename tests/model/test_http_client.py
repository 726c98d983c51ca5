"""The direct path's small HTTP/1.1 client against a real socket server that answers with
scripted bytes: the body framings servers use (length, chunks, to the end of the connection),
compressed answers, interim answers, kept connections the server closed meanwhile, and answers
that break off or are not HTTP, each told in the words the direct path uses."""

from __future__ import annotations

import asyncio
import gzip
import json
import socket
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from prompthooks.model import direct, http_client, loop
from prompthooks.model.route import Direct
from prompthooks.model.settings import Endpoint
from prompthooks.model.types import ModelError, ModelRequest

COMPLETION = json.dumps({"model": "m", "choices": [{"message": {
    "content": '{"ok": false, "reason": "raw says no"}'}}]}).encode()


def _length(body: bytes, *headers: str) -> bytes:
    head = "".join(f"{h}\r\n" for h in headers)
    return (f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n{head}"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


@dataclass
class RawServer:
    """Answers the n-th request with ``answers[n]`` (bytes, then the connection stays open;
    None: the connection is closed without an answer), noting each request and which
    connection (a number) it came on."""

    answers: list[bytes | None]
    requests: list[tuple[int, bytes]] = field(default_factory=list)
    close_after: set[int] = field(default_factory=set)  # close the connection after answer n
    url: str = ""

    def serve(self) -> Iterator[RawServer]:
        listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
        lock = threading.Lock()

        def connection(conn: socket.socket, number: int) -> None:
            data = b""
            with conn:
                while True:
                    while b"\r\n\r\n" not in data:
                        chunk = conn.recv(65536)
                        if not chunk:
                            return
                        data += chunk
                    head, _, data = data.partition(b"\r\n\r\n")
                    size = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                                if line.lower().startswith(b"content-length:"))
                    while len(data) < size:
                        data += conn.recv(65536)
                    with lock:
                        n = len(self.requests)
                        self.requests.append((number, head + b"\r\n\r\n" + data[:size]))
                    data = data[size:]
                    answer = self.answers[n] if n < len(self.answers) else None
                    if answer is None:
                        return
                    conn.sendall(answer)
                    if n in self.close_after:
                        return

        def accept() -> None:
            number = 0
            while True:
                try:
                    conn, _ = listener.accept()
                except OSError:
                    return
                threading.Thread(target=connection, args=(conn, number), daemon=True).start()
                number += 1

        threading.Thread(target=accept, daemon=True).start()
        try:
            yield self
        finally:
            listener.close()


def _post(server: RawServer, pool: http_client.Pool) -> http_client.Response:
    target = http_client.target(server.url + "/chat/completions")
    assert target is not None
    return loop.run(pool.post(target, b'{"model": "m"}', {"Content-Type": "application/json"}),
                    30)


@pytest.fixture
def pool() -> Iterator[http_client.Pool]:
    kept = http_client.Pool()
    yield kept

    async def close() -> None:
        kept.close()

    loop.run(close(), 10)


@pytest.mark.parametrize("answer", [
    _length(COMPLETION),
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    + b"".join(b"%x;ext=1\r\n%s\r\n" % (len(part), part)
               for part in (COMPLETION[:10], COMPLETION[10:]))
    + b"0\r\nX-Trailer: yes\r\n\r\n",
    _length(gzip.compress(COMPLETION), "Content-Encoding: gzip"),
    b"HTTP/1.1 100 Continue\r\n\r\n" + _length(COMPLETION),
], ids=["length", "chunked", "gzip", "interim"])
def test_each_framing_is_read_and_the_connection_kept(pool: http_client.Pool,
                                                      answer: bytes) -> None:
    for server in RawServer([answer, answer]).serve():
        assert _post(server, pool).body == COMPLETION
        assert _post(server, pool).body == COMPLETION
        assert [number for number, _ in server.requests] == [0, 0]  # one connection, reused
        request = server.requests[0][1]
        assert request.startswith(b"POST /v1/chat/completions HTTP/1.1\r\n")
        assert f"Host: {server.url.split('/')[2]}\r\n".encode() in request
        assert request.endswith(b'\r\n\r\n{"model": "m"}')


@pytest.mark.parametrize("answer", [
    b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + COMPLETION,  # to the end
    b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(COMPLETION), COMPLETION),
], ids=["to-the-end", "http-1.0"])
def test_a_connection_the_answer_ends_is_not_kept(pool: http_client.Pool,
                                                  answer: bytes) -> None:
    for server in RawServer([answer, answer], close_after={0, 1}).serve():
        assert _post(server, pool).body == COMPLETION
        assert _post(server, pool).body == COMPLETION
        assert [number for number, _ in server.requests] == [0, 1]


def test_a_kept_connection_the_server_closed_meanwhile_is_replaced(
        pool: http_client.Pool) -> None:
    """The server closes an idle connection (its keep-alive timeout) without saying so in the
    answer: the next call goes on a new connection, unnoticed by the caller."""
    for server in RawServer([_length(COMPLETION), _length(COMPLETION)],
                            close_after={0}).serve():
        assert _post(server, pool).status == 200
        time.sleep(0.2)
        assert _post(server, pool).body == COMPLETION
        assert [number for number, _ in server.requests] == [0, 1]


@pytest.mark.parametrize("answer, words", [
    (_length(COMPLETION)[:-20], "in the middle of its answer"),
    (b"SSH-2.0-OpenSSH_9.6\r\n\r\n", "not HTTP"),
    (_length(b"\x1f\x8b not gzip", "Content-Encoding: gzip"), "gzip encoding is broken"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "chunk sizes"),
    (b"", "closed the connection without answering"),
], ids=["cut", "not-http", "bad-gzip", "bad-chunk", "nothing"])
def test_an_answer_that_breaks_off_or_is_not_http_is_said(
        pool: http_client.Pool, answer: bytes, words: str) -> None:
    for server in RawServer([answer], close_after={0}).serve():
        with pytest.raises(http_client.Broken, match=words):
            _post(server, pool)


@pytest.mark.parametrize("answer, words", [
    (b"HTTP/1.1 20 OK\r\nContent-Length: 0\r\n\r\n", "status line"),
    (b"HTTP/1.1 -99 OK\r\nContent-Length: 0\r\n\r\n", "status line"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\n{}", "not a number"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 40\r\n\r\n{}", "disagree"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0x2\r\n{}\r\n0\r\n\r\n",
     "chunk sizes"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
     "transfer coding"),
], ids=["short-status", "negative-status", "plus-length", "two-lengths", "0x-chunk",
        "gzip-transfer"])
def test_an_answer_framed_ambiguously_is_refused(pool: http_client.Pool, answer: bytes,
                                                 words: str) -> None:
    """Framing two readers could read differently is no answer (else the rest of it would
    be read as the next call's)."""
    for server in RawServer([answer], close_after={0}).serve():
        with pytest.raises(http_client.Broken, match=words):
            _post(server, pool)


@pytest.mark.parametrize("extra", [_length(b'{"ok": true, "note": "not yours"}'), b"\r\n"],
                         ids=["a-second-answer", "a-stray-line-end"])
def test_bytes_past_an_answer_never_become_the_next_calls_answer(
        pool: http_client.Pool, extra: bytes) -> None:
    """A server that sends more than one answer's bytes: the connection is not used again,
    and the next call gets the answer the server gives it."""
    second = _length(COMPLETION.replace(b"raw says no", b"the real second answer"))
    for server in RawServer([_length(COMPLETION) + extra, second]).serve():
        assert _post(server, pool).body == COMPLETION
        time.sleep(0.1)  # the extra bytes have arrived
        assert b"the real second answer" in _post(server, pool).body
        assert [number for number, _ in server.requests] == [0, 1]


def _request(base: str) -> ModelRequest:
    return ModelRequest(Endpoint("m", base), ({"role": "user", "content": "rm -rf /"},))


def test_the_direct_path_retries_a_broken_answer_and_gets_the_verdict() -> None:
    """An answer cut off is "the connection broke": retried within the deadline, and the
    second attempt's verdict is the reply."""
    for server in RawServer([_length(COMPLETION)[:-5], _length(COMPLETION)],
                            close_after={0}).serve():
        reply = direct.complete(_request(server.url), time.monotonic() + 30,
                                Direct(server.url, "m", None))
        assert "raw says no" in reply.text and reply.attempts == 2


def test_a_refused_connection_is_said_and_not_retried() -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    base = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    listener.close()  # nothing listens there now
    start = time.monotonic()
    with pytest.raises(ModelError, match="connection refused"):
        direct.complete(_request(base), time.monotonic() + 20, Direct(base, "m", None))
    assert time.monotonic() - start < 10  # not retried into the deadline


def test_a_key_with_a_line_break_is_never_sent(pool: http_client.Pool) -> None:
    """A header value cannot smuggle a second header or request into the connection."""
    for server in RawServer([_length(COMPLETION)]).serve():
        target = http_client.target(server.url + "/chat/completions")
        assert target is not None
        with pytest.raises(ValueError, match="line break"):
            loop.run(pool.post(target, b"{}", {"Authorization": "Bearer k\r\nX-Evil: 1"}), 30)
        assert server.requests == []


@pytest.mark.parametrize("url", [
    "ftp://host/v1/chat/completions", "http://user:secret@host/v1/chat/completions",
    "http://host/v1/chat/completions?api-version=1", "http://host:port/v1/chat/completions",
    "http://bücher.example/v1/chat/completions",
])
def test_what_the_small_client_leaves_to_httpx(url: str) -> None:
    assert http_client.target(url) is None


def test_a_path_is_sent_percent_encoded() -> None:
    target = http_client.target("http://[::1]:8000/my models/v1/chat/completions")
    assert target is not None and target.host == "::1" and target.authority == "[::1]:8000"
    assert target.path == "/my%20models/v1/chat/completions"


def test_the_small_client_steps_aside_for_any_proxy_setting(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever would send httpx's call through a proxy sends the call to httpx: a proxy
    variable in any case of its name (urllib reads them so), and on macOS and Windows the
    system's proxy settings; ``no_proxy`` alone does not."""
    import os
    import urllib.request

    route = Direct("http://127.0.0.1:9/v1", "m", None)
    for name in [n for n in os.environ if n.lower().endswith("_proxy")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("NO_PROXY", "example.com")
    assert direct._small(route) is not None
    monkeypatch.setenv("Https_Proxy", "http://proxy.invalid:3128")
    assert urllib.request.getproxies()["https"] == "http://proxy.invalid:3128"  # as httpx
    assert direct._small(route) is None
    monkeypatch.setenv("Https_Proxy", "")  # empty: no proxy, for urllib too
    assert direct._small(route) is not None
    # a managed hook reads no proxy variable, and goes through the proxy its file names only
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.invalid:3128")
    pinned = Direct("http://127.0.0.1:9/v1", "m", None, trust_env=False)
    assert direct._small(pinned) is not None
    assert direct._small(Direct("http://127.0.0.1:9/v1", "m", None, trust_env=False,
                                proxy="http://proxy.invalid:3128")) is None
    monkeypatch.delenv("HTTPS_PROXY")
    # the system's settings, where urllib reads them (macOS, Windows)
    system: dict[str, str] = {"https": "http://corporate.invalid:8080"}
    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.setattr(urllib.request, "getproxies", lambda: system)
    direct._system_proxied.cache_clear()  # read once per process
    try:
        assert direct._small(route) is None
        system.clear()
        direct._system_proxied.cache_clear()
        assert direct._small(route) is not None
    finally:
        direct._system_proxied.cache_clear()


def test_the_pool_waits_for_a_free_connection_beyond_its_limit(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """More calls at once than MAX_OPEN: the rest wait for a connection, none fails."""
    monkeypatch.setattr(http_client, "MAX_OPEN", 2)
    for server in RawServer([_length(COMPLETION)] * 6).serve():
        target = http_client.target(server.url + "/chat/completions")
        assert target is not None

        async def six(to: http_client.Target) -> list[http_client.Response]:
            pool = http_client.Pool()
            try:
                return list(await asyncio.gather(*(pool.post(to, b"{}", {})
                                                   for _ in range(6))))
            finally:
                pool.close()

        assert [r.status for r in loop.run(six(target), 30)] == [200] * 6
        assert len({number for number, _ in server.requests}) <= 2


def test_no_netrc_credentials_are_sent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/prompt-hooks.md says the small client reads no ``~/.netrc``: a key goes in the variables."""
    for server in RawServer([_length(COMPLETION)]).serve():
        host = server.url.split("/")[2].split(":")[0]
        (tmp_path / ".netrc").write_text(f"machine {host} login user password secret\n")
        (tmp_path / ".netrc").chmod(0o600)
        monkeypatch.setenv("HOME", str(tmp_path))
        monkeypatch.delenv("NETRC", raising=False)
        reply = direct.complete(_request(server.url), time.monotonic() + 30,
                                Direct(server.url, "m", None))
        assert "raw says no" in reply.text
        ((_, request),) = server.requests
        assert b"authorization:" not in request.lower()
