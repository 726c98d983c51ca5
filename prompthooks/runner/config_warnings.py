"""Config warnings that ``run`` says once per config change: event keys no host has (a typo
such as ``PreToolUSe``, whose hooks never fire) and config files in formats prompthooks does
not read (``hooks.yaml``). ``validate`` reports both every time; ``run`` is what a user sees
when they never run ``validate``, but it runs on every event, and a host may show its stderr
to the user, so each warning is said once per config (remembered by the config's
fingerprint in the user's data folder), not once per event.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from .. import digests
from ..paths import atomic_write, data_home, read_state

STATE = "warned.json"
KEEP = 64  # the fingerprints remembered (a few configs per project, a few projects)


def _state(environ: Mapping[str, str]) -> Path:
    return data_home(environ) / STATE


def _said(environ: Mapping[str, str]) -> list[str]:
    try:
        # read_state: a FIFO or link planted here is no record (the warnings are said, and
        # the record written anew), never a wait
        data = json.loads(read_state(_state(environ)) or b"null")
    except (OSError, ValueError):
        return []
    keys = data.get("said") if isinstance(data, dict) else None
    return [k for k in keys if isinstance(k, str)] if isinstance(keys, list) else []


def _remember(keys: list[str], environ: Mapping[str, str]) -> bool:
    path = _state(environ)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, json.dumps({"said": keys[-KEEP:]}).encode("utf-8"))
    except OSError:
        return False
    return True


def to_say(fingerprint: str, warnings: Sequence[str],
           environ: Mapping[str, str] | None = None) -> list[str]:
    """The warnings to say now: all of them the first time this config (and these warnings)
    are seen, none after that. Where nothing can be remembered, they are said every time:
    better repeated than never seen."""
    if not warnings:
        return []
    env = os.environ if environ is None else environ
    key = digests.sha256(json.dumps([fingerprint, sorted(warnings)]).encode()).hexdigest()
    said = _said(env)
    if key in said:
        return []
    _remember([k for k in said if k != key] + [key], env)
    return list(warnings)
