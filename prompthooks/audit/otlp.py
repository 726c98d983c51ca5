"""Audit rows as OpenTelemetry log records, sent over OTLP/HTTP (protobuf).

A decision is an event, not an operation that other work happens inside, so each row is one
log record (``event_name`` ``prompthooks.decision``), not a span. The records are built with
the OpenTelemetry SDK and encoded by its OTLP encoder (the ``otel`` extra), which are imported
here only, and only when an export is configured.

The request itself is one POST made here, by an HTTP client that reads nothing from the
environment: the SDK's own exporter adds headers from ``OTEL_EXPORTER_OTLP_HEADERS`` and a CA
from ``OTEL_EXPORTER_OTLP_CERTIFICATE`` whatever it is given, and its HTTP library follows
``HTTPS_PROXY``. A managed export must go where its file says and nowhere else, as a managed
prompt hook's model call does (see docs/security.md, "Threat model"). One attempt, within the
timeout: a row is not worth a retry that keeps the process past its deadline.
"""

from __future__ import annotations

import http.client
import os
import socket
import time
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any
from urllib.parse import unquote, urlsplit

from .._version import __version__
from .records import ExportError, record
from .settings import OtlpTarget

EVENT_NAME = "prompthooks.decision"
ATTRIBUTE_PREFIX = "prompthooks."
MISSING_EXTRA = ("the OpenTelemetry export needs the otel extra: "
                 "pip install 'prompthooks[otel]'")


def headers(target: OtlpTarget, environ: Mapping[str, str]) -> dict[str, str]:
    """The headers the variable named by ``headers_env`` holds, in the OTLP exporters'
    format: ``key=value`` pairs, comma-separated, values URL-encoded."""
    if not target.headers_env:
        return {}
    text = environ.get(target.headers_env, "")
    out: dict[str, str] = {}
    for pair in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = pair.partition("=")
        value = unquote(value.strip())
        if not sep or not key.strip() or not (key + value).isprintable():
            # Never the value itself in the message: it holds the collector's key.
            raise ExportError(f"{target.headers_env} does not hold key=value headers")
        out[key.strip().lower()] = value
    return out


def _nanoseconds(stamp: Any) -> int:
    try:
        when = datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
        # Whole seconds and microseconds apart: a float of nanoseconds since 1970 is not exact.
        return int(when.replace(microsecond=0).timestamp()) * 10**9 + when.microsecond * 1000
    except ValueError:
        return time.time_ns()


def _severity(row: Mapping[str, Any]) -> tuple[Any, str]:
    from opentelemetry._logs import SeverityNumber  # the optional otel extra, as in encode

    if row.get("status") not in (None, "ok"):
        return SeverityNumber.ERROR, "ERROR"
    if row.get("decision") in ("deny", "ask"):
        return SeverityNumber.WARN, "WARN"
    return SeverityNumber.INFO, "INFO"


def attributes(row: Mapping[str, Any]) -> dict[str, Any]:
    """``prompthooks.<field>`` for every field that has a value (the JSON Lines fields)."""
    return {ATTRIBUTE_PREFIX + key: value for key, value in record(row).items()
            if value is not None}


def encode(rows: Sequence[Mapping[str, Any]]) -> bytes:
    """An ``ExportLogsServiceRequest`` holding one log record per row."""
    # The optional otel extra: imported only when an OTLP export sends.
    from opentelemetry._logs import LogRecord
    from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
    from opentelemetry.sdk._logs import ReadableLogRecord
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope

    # Resource(...) rather than Resource.create(): the latter reads OTEL_RESOURCE_ATTRIBUTES
    # and OTEL_SERVICE_NAME, which anything running as the user can set.
    resource = Resource({"service.name": "prompthooks", "service.version": __version__,
                         "host.name": socket.gethostname()})
    scope = InstrumentationScope("prompthooks", __version__)
    observed = time.time_ns()
    batch = []
    for row in rows:
        severity, text = _severity(row)
        tool = f" {row['tool']}" if row.get("tool") else ""
        body = f"{row.get('decision')} {row.get('event')}{tool} by hook '{row.get('hook')}'"
        batch.append(ReadableLogRecord(
            log_record=LogRecord(timestamp=_nanoseconds(row.get("time")),
                                 observed_timestamp=observed, severity_number=severity,
                                 severity_text=text, body=body, attributes=attributes(row),
                                 event_name=EVENT_NAME),
            resource=resource, instrumentation_scope=scope))
    data: bytes = encode_logs(batch).SerializeToString()
    return data


def _connection(url: str, timeout: float) -> tuple[http.client.HTTPConnection, str]:
    parts = urlsplit(url)
    if parts.scheme == "https":
        import ssl  # only for an https collector (a tenth of a second with its contexts)

        # certifi's bundle when it is there, as httpx uses (OpenSSL's defaults would read
        # SSL_CERT_FILE from the environment).
        try:
            import certifi  # its CA bundle, as httpx uses (a tenth of a second to load)

            context = ssl.create_default_context(cafile=certifi.where())
        except ImportError:
            context = ssl.create_default_context()
        conn: http.client.HTTPConnection = http.client.HTTPSConnection(
            parts.hostname or "", parts.port, timeout=timeout, context=context)
    else:
        conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=timeout)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return conn, path


def send(target: OtlpTarget, rows: Sequence[Mapping[str, Any]], timeout: float,
         environ: Mapping[str, str] | None = None) -> None:
    """POST the rows to the collector, once, within ``timeout`` seconds; ExportError says
    why not."""
    env = os.environ if environ is None else environ
    try:
        body = encode(rows)
    except ImportError:
        raise ExportError(MISSING_EXTRA) from None
    sent = {"Content-Type": "application/x-protobuf", **headers(target, env)}
    # http.client: it reads no proxy variable, follows no redirect, and costs no import time
    # (httpx takes about a second to import on a busy machine, and the host waits for the
    # process to end).
    try:
        conn, path = _connection(target.endpoint, timeout)
        try:
            conn.request("POST", path, body=body, headers=sent)
            status = conn.getresponse().status
        finally:
            conn.close()
    except TimeoutError:
        raise ExportError(f"the collector did not answer within {timeout:.1f} s") from None
    except (OSError, http.client.HTTPException, ValueError) as exc:
        raise ExportError(f"cannot reach the collector ({type(exc).__name__}: {exc})") from None
    if not 200 <= status < 300:
        raise ExportError(f"the collector answered {status}")
