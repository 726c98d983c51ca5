"""Where the audit log lives and what it keeps.

On by default, in ``$XDG_DATA_HOME/prompthooks/audit.db`` (``~/.local/share/...``). A config
file's ``prompthooks.audit`` block changes it; the highest-priority source that sets a key
wins, so a managed policy can keep the log on and in place. There is deliberately no
environment variable for it: an agent could set one to hide what it did.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from .. import paths

DB_NAME = "audit.db"


def default_path(environ: Mapping[str, str] | None = None) -> Path:
    return paths.data_home(os.environ if environ is None else environ) / DB_NAME


JSONL_MAX_MB = 64.0  # an export file's size before it is rotated to ``<file>.1``
EXPORT_TIMEOUT = 3.0  # seconds an export may take after the reply (never past the deadline)
# The most a config may give it: the host waits for the process to end, on every event.
EXPORT_TIMEOUT_MAX = 5.0


class JsonlTarget(NamedTuple):
    """Every row appended to a JSON Lines file, one line per row."""

    path: Path
    max_bytes: int = int(JSONL_MAX_MB * 1024 * 1024)


class OtlpTarget(NamedTuple):
    """Every row sent as an OpenTelemetry log record, OTLP over HTTP."""

    endpoint: str  # the logs URL: ``.../v1/logs``
    headers_env: str | None = None  # the variable holding the headers, never the headers
    timeout: float = EXPORT_TIMEOUT


class AuditSettings(NamedTuple):
    enabled: bool
    path: Path
    store_events: bool = False  # the event input, redacted; off: inputs can hold secrets
    jsonl: JsonlTarget | None = None  # export targets: each is used whether the database is
    otlp: OtlpTarget | None = None  # on or not (a project cannot stop a managed export)

    @property
    def exporting(self) -> bool:
        return self.jsonl is not None or self.otlp is not None


def logs_url(endpoint: str) -> str:
    """The collector's logs URL: ``/v1/logs`` under a base URL, as OTLP/HTTP clients do
    with ``OTEL_EXPORTER_OTLP_ENDPOINT``; a URL already ending in it is used as written."""
    return endpoint if endpoint.rstrip("/").endswith("/v1/logs") else (
        endpoint.rstrip("/") + "/v1/logs")


def _targets(export: Any) -> tuple[JsonlTarget | None, OtlpTarget | None]:
    if not isinstance(export, Mapping):
        return None, None
    jsonl = otlp = None
    if isinstance(export.get("jsonl"), Mapping) and export["jsonl"].get("path"):
        spec = export["jsonl"]
        mb = float(spec.get("max_mb") or JSONL_MAX_MB)
        jsonl = JsonlTarget(Path(spec["path"]), int(mb * 1024 * 1024))
    if isinstance(export.get("otlp"), Mapping) and export["otlp"].get("endpoint"):
        spec = export["otlp"]
        otlp = OtlpTarget(logs_url(str(spec["endpoint"])), spec.get("headers_env"),
                          min(float(spec.get("timeout") or EXPORT_TIMEOUT),
                              EXPORT_TIMEOUT_MAX))
    return jsonl, otlp


def _clash(db: Path, jsonl: JsonlTarget | None) -> bool:
    """Whether the database (or one of SQLite's files beside it) is the export's file: a
    project naming a managed export's file as its database would have SQLite overwrite the
    exported lines. The export wins; the database is not written."""
    if jsonl is None:
        return False
    exported = {os.path.realpath(p) for p in (jsonl.path, f"{jsonl.path}.1")}
    sqlite_files = {os.path.realpath(f"{db}{suffix}")
                    for suffix in ("", "-wal", "-shm", "-journal", ".pending")}
    return bool(exported & sqlite_files)


def resolve(values: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> AuditSettings:
    """Settings from a loaded config's merged ``audit`` values."""
    path = values.get("path")
    jsonl, otlp = _targets(values.get("export"))
    db = Path(path) if path else default_path(environ)
    return AuditSettings(enabled=bool(values.get("enabled", True)) and not _clash(db, jsonl),
                         path=db,
                         store_events=bool(values.get("store_events", False)),
                         jsonl=jsonl, otlp=otlp)
