"""A Cline event as the host would send it, for tests of policies."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

COMMON: dict[str, Any] = {"clineVersion": "3.36.0", "timestamp": "0", "taskId": "test-task",
                          "workspaceRoots": ["/tmp"], "userId": "test-user"}


def sample_event(name: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    """The common fields, the hook name, and ``fields`` under the event's own key, as Cline
    nests them."""
    return {**COMMON, "hookName": name, name[:1].lower() + name[1:]: dict(fields)}
