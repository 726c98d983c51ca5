"""The direct path's HTTP (httpx) against a real socket server that answers with scripted
bytes: the framings servers use, and hostile or broken answers (bytes past an answer, a trickle,
a huge or compressed-huge body, an answer cut off, a key that would split a header), each
bounded by the call's one deadline and told in the words the direct path uses."""

from __future__ import annotations

import contextlib
import gzip
import json
import socket
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from prompthooks.model import direct
from prompthooks.model.endpoint import Direct, Endpoint, ModelError, ModelRequest, ModelTimeout

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

    answers: list[bytes | Callable[[socket.socket], None] | None]
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
                    if callable(answer):
                        with contextlib.suppress(OSError):  # the client gave up
                            answer(conn)
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


def _request(base: str) -> ModelRequest:
    return ModelRequest(Endpoint("m", base), ({"role": "user", "content": "rm -rf /"},))


def _ask(server: RawServer, within: float = 30, key: str | None = None) -> str:
    return direct.complete(_request(server.url), time.monotonic() + within,
                           Direct(server.url, "m", key)).text


@pytest.mark.parametrize("answer", [
    _length(COMPLETION),
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    + b"".join(b"%x;ext=1\r\n%s\r\n" % (len(part), part)
               for part in (COMPLETION[:10], COMPLETION[10:]))
    + b"0\r\nX-Trailer: yes\r\n\r\n",
    _length(gzip.compress(COMPLETION), "Content-Encoding: gzip"),
    b"HTTP/1.1 100 Continue\r\n\r\n" + _length(COMPLETION),
    b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + COMPLETION,
], ids=["length", "chunked", "gzip", "interim", "to-the-end"])
def test_each_framing_is_read(answer: bytes) -> None:
    for server in RawServer([answer], close_after={0}).serve():
        assert "raw says no" in _ask(server)
        ((_, request),) = server.requests
        assert request.startswith(b"POST /v1/chat/completions HTTP/1.1\r\n")
        assert f"Host: {server.url.split('/')[2]}\r\n".encode() in request


@pytest.mark.parametrize("extra", [_length(b'{"choices": [{"message": {"content": "not yours"}}]}'),
                                   b"\r\n"], ids=["a-second-answer", "a-stray-line-end"])
def test_bytes_past_an_answer_never_become_the_next_calls_answer(extra: bytes) -> None:
    """A server that sends more than one answer's bytes at once: h11 would read them as the
    next request's answer on that connection, so no connection carries a second call."""
    second = _length(COMPLETION.replace(b"raw says no", b"the real second answer"))
    for server in RawServer([_length(COMPLETION) + extra, second]).serve():
        assert "raw says no" in _ask(server)
        time.sleep(0.1)  # the extra bytes have arrived
        assert "the real second answer" in _ask(server)
        assert [number for number, _ in server.requests] == [0, 1]  # the canary: asked twice


def _trickle(conn: socket.socket) -> None:
    """An answer whose bytes come one at a time, 0.2 s apart, for far longer than any
    deadline: each byte would restart a per-read timeout."""
    for byte in _length(COMPLETION + b" " * 10_000):
        conn.sendall(bytes([byte]))
        time.sleep(0.2)


def test_a_server_that_trickles_is_cut_off_by_the_calls_one_deadline() -> None:
    for server in RawServer([_trickle]).serve():
        start = time.monotonic()
        with pytest.raises(ModelTimeout, match="did not answer in time"):
            _ask(server, within=3)
        assert server.requests  # the canary: the request reached the server
        assert time.monotonic() - start < 3 + 10  # the deadline, and a generous margin


_HUGE = direct.MAX_BODY + 1024


def _stream_huge(conn: socket.socket) -> None:
    """A chunked answer with no end, 64 KiB at a time, until the client hangs up."""
    conn.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
    chunk = b"x" * 65536
    for _ in range(10 * _HUGE // len(chunk)):
        conn.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))


def _bomb() -> bytes:
    squeeze = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    return squeeze.compress(b" " * (4 * _HUGE)) + squeeze.flush()


@pytest.mark.parametrize("answer", [
    b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n{" % (1 << 40),
    _stream_huge,
    _length(_bomb(), "Content-Encoding: gzip"),
], ids=["declared", "streamed", "gzip-bomb"])
def test_a_huge_answer_is_refused_while_it_streams_and_not_retried(
        answer: bytes | Callable[[socket.socket], None]) -> None:
    for server in RawServer([answer], close_after={0}).serve():
        with pytest.raises(ModelError, match=r"answer is larger than \d+ MB.*1 attempt"):
            _ask(server)
        assert len(server.requests) == 1  # the canary: it answered; and no second attempt


@pytest.mark.parametrize("answer", [
    _length(COMPLETION)[:-20],
    b"SSH-2.0-OpenSSH_9.6\r\n\r\n",
    _length(b"\x1f\x8b not gzip", "Content-Encoding: gzip"),
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 40\r\n\r\n{}",
    b"",
], ids=["cut", "not-http", "bad-gzip", "bad-chunk", "two-lengths", "nothing"])
def test_an_answer_that_breaks_off_or_is_not_http_is_said_in_one_line(answer: bytes) -> None:
    """Retried while time remains (every attempt gets the same), then one line."""
    for server in RawServer([answer], close_after=set(range(50))).serve():
        with pytest.raises(ModelError) as caught:
            _ask(server, within=3)
        assert server.requests  # the canary
        line = str(caught.value)
        assert "\n" not in line and "Traceback" not in line
        assert line.startswith(("the connection to the model endpoint broke",
                                "the model did not answer in time",
                                "the endpoint's answer is not")), line


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
    with pytest.raises(ModelError, match=r"connection refused.*1 attempt"):
        direct.complete(_request(base), time.monotonic() + 20, Direct(base, "m", None))
    assert time.monotonic() - start < 10  # not retried into the deadline


def test_a_key_with_a_line_break_is_never_sent() -> None:
    """A header value cannot smuggle a second header or request into the connection."""
    for server in RawServer([_length(COMPLETION)]).serve():
        assert "raw says no" in _ask(server, key="clean")  # the canary: this server is asked
        with pytest.raises(ModelError, match="a header holds a character HTTP does not allow"):
            _ask(server, key="k\r\nX-Evil: 1")
        assert len(server.requests) == 1
        assert b"X-Evil" not in server.requests[0][1]


def test_no_netrc_credentials_are_sent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/prompt-hooks.md says the direct client reads no ``~/.netrc``: a key goes in the
    variables."""
    for server in RawServer([_length(COMPLETION)]).serve():
        host = server.url.split("/")[2].split(":")[0]
        (tmp_path / ".netrc").write_text(f"machine {host} login user password secret\n")
        (tmp_path / ".netrc").chmod(0o600)
        monkeypatch.setenv("HOME", str(tmp_path))
        monkeypatch.delenv("NETRC", raising=False)
        assert "raw says no" in _ask(server)
        ((_, request),) = server.requests
        assert b"authorization:" not in request.lower()


def test_a_route_that_cannot_meet_tls_loads_no_ca_bundle_and_would_trust_nothing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An http URL with no proxy anywhere: its client's context trusts no certificate (had TLS
    come up after all, it would be refused); https, or any proxy setting, gets the CA bundle."""
    import os
    import ssl

    for name in [n for n in os.environ if n.lower().endswith("_proxy")]:
        monkeypatch.delenv(name)
    plain = direct._verify(Direct("http://127.0.0.1:9/v1", "m", None))
    assert plain.verify_mode == ssl.CERT_REQUIRED and plain.check_hostname
    assert plain.get_ca_certs() == [] and plain.cert_store_stats()["x509"] == 0
    secure = direct._verify(Direct("https://127.0.0.1:9/v1", "m", None))
    assert secure is not plain and secure.cert_store_stats()["x509"] > 0  # certifi's bundle
    assert direct._verify(Direct("http://127.0.0.1:9/v1", "m", None,
                                 proxy="http://proxy.invalid:3128")) is not plain
    monkeypatch.setenv("Https_Proxy", "http://proxy.invalid:3128")
    assert direct._verify(Direct("http://127.0.0.1:9/v1", "m", None)) is not plain
    # a managed hook reads no proxy variable: still plain
    assert direct._verify(Direct("http://127.0.0.1:9/v1", "m", None, trust_env=False)) is plain
