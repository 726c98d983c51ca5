"""Where the audit log lives and what it keeps.

On by default, in ``$XDG_DATA_HOME/prompthooks/audit.db`` (``~/.local/share/...``). A config
file's ``prompthooks.audit`` block changes it; the highest-priority source that sets a key
wins, so a managed policy can keep the log on and in place. There is deliberately no
environment variable for it: an agent could set one to hide what it did.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import paths

DB_NAME = "audit.db"


def default_path(environ: Mapping[str, str] | None = None) -> Path:
    return paths.data_home(os.environ if environ is None else environ) / DB_NAME


@dataclass(frozen=True, slots=True)
class AuditSettings:
    enabled: bool
    path: Path
    store_events: bool = False  # the event input, redacted; off: inputs can hold secrets


def resolve(values: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> AuditSettings:
    """Settings from a loaded config's merged ``audit`` values."""
    path = values.get("path")
    return AuditSettings(enabled=bool(values.get("enabled", True)),
                         path=Path(path) if path else default_path(environ),
                         store_events=bool(values.get("store_events", False)))
