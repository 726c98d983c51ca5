"""The optional verdict cache: the same model asked the same rendered prompt within a TTL gets
the same verdict without a call. Off unless a config asks for it (``cache_ttl`` on a handler,
or ``verdict_cache_ttl`` in the file's ``prompthooks`` block, which leaves Stop and SubagentStop
hooks out: whether work is done changes even when the words do not). Entries live under the
user's cache folder, one JSON file per key (the cassette key: model, messages with the nonce
normalized, parameters)."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path

from .. import paths
from .verdicts import Verdict


def _path(key: str, environ: Mapping[str, str]) -> Path:
    return paths.cache_home(environ) / "verdicts" / f"{key}.json"


def lookup(key: str, ttl: float, environ: Mapping[str, str]) -> tuple[Verdict, float] | None:
    """The cached verdict and its age in seconds, if one younger than ``ttl`` exists."""
    try:
        # read_state: a FIFO, link or huge file planted here is a miss (BadStateFile is an
        # OSError), never a wait
        data = json.loads(paths.read_state(_path(key, environ)) or b"null")
        age = time.time() - float(data["time"])
        verdict = Verdict(**data["verdict"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if verdict.permission not in (None, "allow", "ask", "deny") or not (
            verdict.reason is None or isinstance(verdict.reason, str)):
        return None  # not something we wrote
    return (verdict, age) if 0 <= age < ttl else None


def store(key: str, verdict: Verdict, environ: Mapping[str, str]) -> None:
    folder = _path(key, environ).parent
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        body = json.dumps({"time": time.time(), "verdict": asdict(verdict)}).encode()
        paths.atomic_write(_path(key, environ), body)
    except OSError:
        pass  # a cache that cannot be written is not used
