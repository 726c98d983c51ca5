"""What an exported row is: its fields in order, as a JSON record or a JSON Lines line, and
the error an export target gives (shared by the JSON Lines file, the OTLP exporter and `log`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .store import COLUMNS

# The fields of a JSON Lines record, in order: the database's columns (``id`` first, only
# when the row was read from the database).
FIELDS = COLUMNS


class ExportError(Exception):
    """An export target cannot take the rows; the message says which and why."""


def _clean(value: Any) -> Any:
    # A hook's reply can carry lone surrogates: they are not text any reader accepts.
    return value.encode("utf-8", "replace").decode("utf-8") if isinstance(value, str) else value


def record(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row as a JSON Lines record: every field, in a fixed order, null when unset."""
    out: dict[str, Any] = {"id": row["id"]} if "id" in row else {}
    out.update((name, _clean(row.get(name))) for name in FIELDS)
    return out


def line(row: Mapping[str, Any]) -> str:
    """One JSON Lines line (ASCII, so no byte in it can be a terminal's or a parser's
    surprise), ending in a newline."""
    return json.dumps(record(row), ensure_ascii=True, separators=(",", ":")) + "\n"


__all__ = ["FIELDS", "ExportError", "line", "record"]
