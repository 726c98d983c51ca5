from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory,
                  monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """No test reads or writes the real user's config: HOME and XDG dirs are temporary."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    for var in ("CLAUDE_PROJECT_DIR", "CURSOR_PROJECT_DIR", "PROMPTHOOKS_DEBUG"):
        monkeypatch.delenv(var, raising=False)
    yield home
