"""A Cursor event as the host would send it, for tests of policies."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

COMMON: dict[str, Any] = {"conversation_id": "test-conversation",
                          "generation_id": "test-generation", "model": "test",
                          "cursor_version": "1.7.2", "workspace_roots": ["/tmp"],
                          "user_email": None, "transcript_path": None}


def sample_event(name: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    return {**COMMON, "hook_event_name": name, **fields}
