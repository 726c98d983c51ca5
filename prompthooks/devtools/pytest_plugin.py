"""pytest fixtures for testing prompthooks policies (registered through an entry point).

    def test_home_wipe_is_blocked(prompthooks_event, prompthooks_run):
        outcome = prompthooks_run(
            prompthooks_event("claude", "PreToolUse", tool_name="Bash",
                              tool_input={"command": "rm -rf ~"}),
            config="hooks.json", cassette="hooks.cassette.yaml")
        assert_decision(outcome, "deny")
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest


@pytest.fixture
def prompthooks_event() -> Callable[..., dict[str, Any]]:
    """Build a host-native event: ``prompthooks_event(host, event_name, **fields)``."""
    from .testing import event

    return event


@pytest.fixture
def prompthooks_run() -> Iterator[Callable[..., Any]]:
    """Run an event through a config with a cassette (replay by default); returns the outcome,
    whose ``decision`` holds the merged decision and ``stdout`` the host's reply."""
    from ..model.cassette import activate
    from .testing import run

    yield run
    activate(None)
