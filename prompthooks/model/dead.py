"""Endpoints that refused the connection or whose host name did not resolve, remembered for
:data:`DEAD_SECONDS`.

A stopped Ollama or an offline laptop would otherwise cost every tool call a connection
attempt, or a DNS lookup that can take seconds. While an endpoint is remembered, a call to it
fails at once with the same message, and the hook's failure policy applies as for any model
error (a fail-closed hook still blocks). A success forgets it.

One small file per endpoint, ``dead-<hash>.json`` in the user's runtime folder (see
``paths.runtime_home``), named by a hash of the endpoint's address alone (a URL with its
credentials and query removed, or litellm's provider name); it holds the time it was seen dead
and the reason, never a key. A managed hook neither reads nor writes it: it is a file the user,
and so an agent, can write, and a managed hook must not be turned off by one.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

from .. import paths

DEAD_SECONDS = 10.0
_LIMIT = 4096  # bytes: a record is a time and one line


def address(base: str | None, model: str) -> str:
    """What names an endpoint: its URL's scheme, host, port and path, or for litellm's own
    provider defaults the provider's name."""
    if not base:
        return "litellm:" + (model.split("/", 1)[0] if "/" in model else model)
    parts = urlsplit(base)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path.rstrip('/')}"


def _file(name: str, environ: Mapping[str, str]) -> Path:
    digest = hashlib.sha256(name.encode()).hexdigest()[:20]
    return paths.runtime_home(environ) / f"dead-{digest}.json"


def recall(name: str, environ: Mapping[str, str]) -> tuple[str, float] | None:
    """(the reason, seconds since) when ``name`` was seen dead within DEAD_SECONDS."""
    try:
        # read_state: a FIFO, link or huge file planted here is not a memory (BadStateFile
        # is an OSError): the endpoint is tried, so nothing planted can hold the run
        data = json.loads(paths.read_state(_file(name, environ), _LIMIT) or b"null")
        age = time.time() - float(data["time"])
        why = str(data["why"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return (why, age) if 0 <= age < DEAD_SECONDS else None


def remember(name: str, why: str, environ: Mapping[str, str]) -> None:
    path = _file(name, environ)
    with contextlib.suppress(OSError):  # a memory that cannot be written is not used
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        body = json.dumps({"time": time.time(), "why": why}).encode()
        paths.atomic_write(path, body)


def forget(name: str, environ: Mapping[str, str]) -> None:
    with contextlib.suppress(OSError):
        os.unlink(_file(name, environ))


__all__ = ["DEAD_SECONDS", "address", "forget", "recall", "remember"]
