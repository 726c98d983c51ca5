"""A real OTLP/HTTP logs collector on 127.0.0.1 that records what it receives.

It decodes each request with OpenTelemetry's own protobuf classes, so a test sees the log
records as any collector would. ``status`` and ``delay`` script a failing or silent one.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from .fake_model import run_server


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    def records(self) -> list[dict[str, Any]]:
        """Every log record: its attributes, body, severity, event name and resource."""
        from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
            ExportLogsServiceRequest,
        )

        request = ExportLogsServiceRequest.FromString(self.body)
        out = []
        for resource_logs in request.resource_logs:
            resource = {a.key: _value(a.value) for a in resource_logs.resource.attributes}
            for scope_logs in resource_logs.scope_logs:
                for record in scope_logs.log_records:
                    out.append({"attributes": {a.key: _value(a.value)
                                               for a in record.attributes},
                                "body": _value(record.body),
                                "severity": record.severity_text,
                                "event_name": record.event_name,
                                "time_unix_nano": record.time_unix_nano,
                                "scope": scope_logs.scope.name, "resource": resource})
        return out


def _value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    return None if kind is None else getattr(value, kind)


@dataclass
class Collector:
    received: list[Received] = field(default_factory=list)
    status: int = 200
    delay: float = 0.0  # seconds before answering (a collector that hangs)
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)
    url: str = ""

    def records(self) -> list[dict[str, Any]]:
        with self.lock:
            return [r for request in self.received for r in request.records()]


def collect() -> Iterator[Collector]:
    """Run a collector for the duration of a fixture."""
    state = Collector()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with state.lock:
                state.received.append(Received(self.path, {k.lower(): v for k, v
                                                           in self.headers.items()}, body))
            if state.delay:
                state.stopping.wait(state.delay)
            try:
                self.send_response(state.status)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()
            except (BrokenPipeError, ConnectionResetError):
                pass

    yield from run_server(Handler, state)
