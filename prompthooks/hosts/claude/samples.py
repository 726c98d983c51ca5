"""A Claude Code event as the host would send it, for tests of policies."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

COMMON: dict[str, Any] = {"session_id": "test-session",
                          "transcript_path": "/tmp/transcript.jsonl", "cwd": "/tmp",
                          "permission_mode": "default"}


def sample_event(name: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    return {**COMMON, "hook_event_name": name, **fields}
