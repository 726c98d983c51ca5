from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .fake_model import FakeModel, serve

pytest_plugins = ["pytester"]

# Folders whose every test is slow: the resident process and its client, the supervisor, the
# fault matrix, load and bursts. Marked here, beside the rest of the fast tier's rules.
SLOW_FOLDERS = ("bench", "dispatcher", "faults", "runner")
# Slow files of folders whose own files are not edited for it (the rest of tests/model runs
# in the fast tier and covers the model package).
SLOW_FILES: tuple[str, ...] = ()
_TESTS = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The `slow` marker for SLOW_FOLDERS, SLOW_FILES and every test that builds a wheel.
    The wheel builds also share one worker under pytest-xdist (`-n 2 --dist loadgroup`): pip
    builds in the checkout's own build/ folder, which two builds at once would share."""
    slow = pytest.mark.slow
    for item in items:
        wheel = item.get_closest_marker("wheel") is not None
        if wheel:
            item.add_marker(pytest.mark.xdist_group("wheel"))
        try:
            where = item.path.resolve().relative_to(_TESTS)
        except ValueError:  # a pytester run's own files
            continue
        if where.parts[0] in SLOW_FOLDERS or where.as_posix() in SLOW_FILES or wheel:
            item.add_marker(slow)


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory,
                  monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """No test reads or writes the real user's config: HOME and XDG dirs are temporary."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))  # the audit log
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(home / "run"))
    # No background workers from the suite; test_worker.py turns them on where it means to.
    monkeypatch.setenv("PROMPTHOOKS_WORKER", "0")
    for var in ("CLAUDE_PROJECT_DIR", "CURSOR_PROJECT_DIR", "PROMPTHOOKS_DEBUG",
                "PROMPTHOOKS_MODEL", "PROMPTHOOKS_API_BASE", "PROMPTHOOKS_API_KEY",
                # install tries the model it finds: never a hosted one from the suite
                "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY",
                "LITELLM_PROXY_API_BASE"):
        monkeypatch.delenv(var, raising=False)
    # Nor an Ollama of the machine's: its port here is one where nothing listens.
    monkeypatch.setenv("OLLAMA_HOST", "127.0.0.1:9")
    yield home


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeModel]:
    """A scripted OpenAI-compatible server; prompt hooks are pointed at it by environment."""
    server = serve()
    state = next(server)
    monkeypatch.setenv("PROMPTHOOKS_API_BASE", state.url)
    monkeypatch.setenv("PROMPTHOOKS_API_KEY", "test-key-not-a-secret")
    monkeypatch.setenv("PROMPTHOOKS_MODEL", "test-model")
    yield state
    next(server, None)


@pytest.fixture(autouse=True)
def uncoloured(monkeypatch: pytest.MonkeyPatch) -> None:
    """Output is asserted as a pipe gets it: a FORCE_COLOR in the shell that runs the suite
    would colour it (tests that mean colour set it themselves)."""
    monkeypatch.delenv("FORCE_COLOR", raising=False)
