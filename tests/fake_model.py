"""A real OpenAI-compatible HTTP server on 127.0.0.1, scripted per test.

litellm talks to it over HTTP, so the real client code runs. Each request takes the next
scripted answer (the last one repeats); every request is recorded with its JSON body.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol, TypeVar


@dataclass
class Answer:
    """One scripted answer: a chat reply ``content``, or a raw ``status``/``body``."""

    content: str | None = None
    status: int = 200
    body: str | None = None
    delay: float = 0.0
    content_type: str = "application/json"
    finish_reason: str = "stop"  # "length": the reply reached max_tokens and was cut there
    # OpenAI tool calls the reply makes (an agent hook's turn): [{"name", "arguments"}, ...]
    tool_calls: list[dict[str, Any]] | None = None


# The response_format of a verdict request with max_tokens 300 (a stop hook's adds
# "impossible"), as an OpenAI-compatible server receives it: written out, not computed.
VERDICT_FORMAT: dict[str, Any] = {
    "type": "json_schema",
    "json_schema": {"name": "verdict", "strict": True, "schema": {
        "type": "object",
        "properties": {"ok": {"type": "boolean"},
                       "reason": {"type": "string", "maxLength": 400}},
        "required": ["ok", "reason"], "additionalProperties": False}}}


def verdict(ok: bool, reason: str | None = None, **extra: Any) -> Answer:
    data: dict[str, Any] = {"ok": ok, **extra}
    if reason is not None:
        data["reason"] = reason
    return Answer(json.dumps(data))


def calls(*wanted: tuple[str, Any]) -> Answer:
    """A reply that calls tools: ``(name, arguments)`` each, arguments a dict (sent as JSON)
    or a string (sent as it is, however malformed)."""
    return Answer(None, tool_calls=[
        {"id": f"call_{i}", "type": "function",
         "function": {"name": name,
                      "arguments": args if isinstance(args, str) else json.dumps(args)}}
        for i, (name, args) in enumerate(wanted)], finish_reason="tool_calls")


def error(status: int, message: str = "scripted error") -> Answer:
    return Answer(status=status, body=json.dumps({"error": {"message": message,
                                                            "type": "test", "code": status}}))


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def user(self) -> str:
        return str(next(m["content"] for m in self.body["messages"] if m["role"] == "user"))

    @property
    def system(self) -> str:
        return str(next(m["content"] for m in self.body["messages"] if m["role"] == "system"))


@dataclass
class FakeModel:
    """The server's state: what it will answer and what it was asked."""

    answers: list[Answer] = field(default_factory=lambda: [verdict(True)])
    # When set, answers each request from its JSON body instead of the script.
    responder: Callable[[dict[str, Any]], Answer] | None = None
    requests: list[Recorded] = field(default_factory=list)
    stopping: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""

    def script(self, *answers: Answer) -> None:
        with self.lock:
            self.answers = list(answers)

    def _next(self) -> Answer:
        with self.lock:
            return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]


def _handler(state: FakeModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw)
            except ValueError:
                body = {"unparsed": raw.decode("utf-8", "replace")}
            with state.lock:
                state.requests.append(Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
            answer = state.responder(body) if state.responder else state._next()
            if answer.delay:
                state.stopping.wait(answer.delay)
            if answer.body is not None:
                payload = answer.body.encode()
            else:
                payload = json.dumps({
                    "id": "chatcmpl-test", "object": "chat.completion",
                    "created": int(time.time()), "model": body.get("model", "test-model"),
                    "choices": [{"index": 0, "finish_reason": answer.finish_reason,
                                 "message": {"role": "assistant", "content": answer.content,
                                             **({"tool_calls": answer.tool_calls}
                                                if answer.tool_calls else {})}}],
                    "usage": {"prompt_tokens": 120, "completion_tokens": 12,
                              "total_tokens": 132},
                }).encode()
            try:
                self.send_response(answer.status)
                self.send_header("Content-Type", answer.content_type)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a deadline test)

    return Handler


class _Listening(ThreadingHTTPServer):
    """A backlog like a real model server's (uvicorn's is 2048): socketserver's default of 5
    drops most of a burst of connections (fifty prompt hooks on one event), and each dropped
    one is retried by the kernel a second later."""

    request_queue_size = 1024


class _Served(Protocol):
    url: str
    stopping: threading.Event


S = TypeVar("S", bound=_Served)
POLL = 0.02  # seconds between serve_forever's looks for shutdown()


def run_server(handler: type[BaseHTTPRequestHandler], state: S, path: str = "") -> Iterator[S]:
    """Serve ``handler`` on a free 127.0.0.1 port for the duration of a fixture; ``state.url``
    is its address (plus ``path``). Shared by every local stand-in server of the suite."""
    server = _Listening(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}{path}"
    # serve_forever looks for shutdown() every poll_interval: the default half second would be
    # every test's teardown.
    thread = threading.Thread(target=server.serve_forever, args=(POLL,), daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.stopping.set()
        server.shutdown()
        server.server_close()


def serve() -> Iterator[FakeModel]:
    """Run a fake model server for the duration of a ``with``/fixture."""
    state = FakeModel()
    yield from run_server(_handler(state), state, "/v1")


def scripted(*answers: Answer) -> Iterator[FakeModel]:
    """:func:`serve`, answering ``answers`` in turn: for a fixture to ``yield from``."""
    for state in serve():
        state.script(*answers)
        yield state


@dataclass
class Listing(FakeModel):
    """A fake model that also lists its models, as Ollama (``GET /api/tags``) and a LiteLLM
    Proxy (``GET /v1/models``) do; each listing asked for is noted with its headers."""

    listed: list[str] = field(default_factory=list)
    listings: list[Recorded] = field(default_factory=list)


def serve_listing(*models: str) -> Iterator[Listing]:
    """:func:`serve`, answering model listings with ``models``."""
    state = Listing(listed=list(models))

    class Handler(_handler(state)):  # type: ignore[misc]
        def do_GET(self) -> None:
            with state.lock:
                state.listings.append(Recorded(
                    self.path, {k.lower(): v for k, v in self.headers.items()}, {}))
            if self.path.endswith("/api/tags"):
                data: Any = {"models": [{"name": m} for m in state.listed]}
            elif self.path.endswith("/models"):
                data = {"object": "list", "data": [{"id": m} for m in state.listed]}
            else:
                self.send_error(404)
                return
            payload = json.dumps(data).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    yield from run_server(Handler, state, "/v1")


def serve_with_headers(headers: dict[str, str]) -> Iterator[FakeModel]:
    """:func:`serve`, with ``headers`` added to every answer (a LiteLLM Proxy's
    ``x-litellm-response-cost``, say)."""
    state = FakeModel()

    class Handler(_handler(state)):  # type: ignore[misc]
        def end_headers(self) -> None:
            for name, value in headers.items():
                self.send_header(name, value)
            super().end_headers()

    yield from run_server(Handler, state, "/v1")


@dataclass
class KeptAlive(FakeModel):
    """A fake model that keeps connections open (HTTP/1.1) and notes the client port of each
    request: one port for many requests is one connection reused."""

    ports: list[int] = field(default_factory=list)


def serve_kept_alive() -> Iterator[KeptAlive]:
    """:func:`serve` over HTTP/1.1 keep-alive, noting each request's client port."""
    state = KeptAlive()

    class Handler(_handler(state)):  # type: ignore[misc]
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            with state.lock:
                state.ports.append(self.client_address[1])
            super().do_POST()

    yield from run_server(Handler, state, "/v1")


def serve_tls(certfile: str, keyfile: str) -> Iterator[FakeModel]:
    """:func:`serve` over HTTPS with the given certificate; ``url`` starts with https://."""
    import ssl

    state = FakeModel()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certfile, keyfile)

    class Handler(_handler(state)):  # type: ignore[misc]
        refused = False
        request: socket.socket

        def setup(self) -> None:
            try:
                self.request = context.wrap_socket(self.request, server_side=True)
            except (ssl.SSLError, OSError):  # a client that does not trust us hangs up
                self.refused = True
                return
            super().setup()

        def handle(self) -> None:
            if not self.refused:
                super().handle()

        def finish(self) -> None:
            if not self.refused:
                super().finish()

    for served in run_server(Handler, state, "/v1"):
        served.url = served.url.replace("http://", "https://", 1)
        yield served
