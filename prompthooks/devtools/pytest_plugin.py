"""The pytest plugin (registered through an entry point), in pytest-recording's idiom.

    import pytest
    from prompthooks.testing import assert_decision

    pytestmark = pytest.mark.prompthooks(config="hooks.json")   # beside this file

    def test_home_wipe_is_blocked(prompthooks_event, prompthooks_run):
        outcome = prompthooks_run(prompthooks_event("claude", "PreToolUse", tool_name="Bash",
                                                    tool_input={"command": "rm -rf ~"}))
        assert_decision(outcome, "deny")

Paths are relative to the test file; the cassette defaults to
``cassettes/<module>/<test>.yaml`` beside it. ``--prompthooks-record-mode`` (or the ini's
``prompthooks_record_mode``) is one of none (the default: replay only), once, new_episodes,
all, rewrite (the recorder, below). The ini's ``prompthooks_cases``
globs collect case files as tests, one per case.

Only pytest is imported here: the plugin loads in every pytest run of every project that has
prompthooks installed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

import pytest

if TYPE_CHECKING:
    from ..api import Outcome
    from ..model.recording import Cassette, Mode

INI = "prompthooks_record_mode"
CASES_INI = "prompthooks_cases"
MARKER_KEYS = ("config", "cassette", "model")

# The recorder -------------------------------------------------------------------------------
# The record modes, in pytest-recording's words, mapped onto the cassette's own modes, and the
# stash key where the session's recorder is kept (read by the fixtures and by the case-file
# items alike). ``none`` (the default) replays and never asks the model; ``once`` records the
# cassettes that do not exist yet when the run starts and replays the rest; ``new_episodes``
# replays what a cassette has and records what it lacks; ``all`` asks the model for every call
# and replaces the entries it gets (keeping the others); ``rewrite`` deletes each cassette at
# its first use in the run and records it afresh. A cassette's mode is decided once per run,
# at its first use: tests that share one cassette all record under ``once`` when it was
# missing, and ``rewrite`` never deletes what an earlier test of the same run recorded.

RecordMode = Literal["none", "once", "new_episodes", "all", "rewrite"]
RECORD_MODES: tuple[RecordMode, ...] = ("none", "once", "new_episodes", "all", "rewrite")
OPTION = "--prompthooks-record-mode"
# How a test picks a prompt hook's model: the marker, prompthooks_run, or a case file.
MODEL_OPTION = ('model="{model}" (in the prompthooks marker or prompthooks_run; a case file\'s '
                "model: {model})")


class Recorder:
    """The cassettes of one test run, each in the mode ``record_mode`` gives it."""

    def __init__(self, record_mode: RecordMode) -> None:
        self.record_mode = record_mode
        # Per cassette: its mode in this run, and whether it existed at its first use.
        self._modes: dict[Path, tuple[Mode, bool]] = {}
        self._lock = threading.Lock()

    def cassette(self, path: Path) -> Cassette:
        from ..model.recording import Cassette  # the cassette code: only once a test records

        path = path.resolve()  # one cassette, however a test spells its path
        with self._lock:
            seen = self._modes.get(path)
            if seen is None:
                existed = path.exists()
                seen = self._modes[path] = self._first_use(path), existed
        mode, existed = seen
        return Cassette(path, mode, hint=_hint(existed), model_option=MODEL_OPTION)

    def _first_use(self, path: Path) -> Mode:
        if self.record_mode == "none":
            return "replay"
        if self.record_mode == "once":
            return "replay" if path.exists() else "auto"
        if self.record_mode == "all":
            return "record"
        if self.record_mode == "rewrite":
            path.unlink(missing_ok=True)
        return "auto"


def _hint(existed: bool) -> str:
    """What to run when a replay misses: ``once`` cannot add to a cassette that exists."""
    if existed:
        return (f"record it with {OPTION}=new_episodes (once records only the cassettes that "
                "do not exist yet)")
    return f"record it with {OPTION}=once (or new_episodes)"


recorder_key = pytest.StashKey[Recorder]()


# The hooks and fixtures --------------------------------------------------------------------

def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("prompthooks", "prompthooks policy tests")
    group.addoption(OPTION, choices=RECORD_MODES, default=None, dest="prompthooks_record_mode",
                    help="when prompt hooks ask the model: none (replay only, the default), "
                         "once, new_episodes, all, rewrite (as pytest-recording's --record-mode)")
    parser.addini(INI, f"default for {OPTION} (none, once, new_episodes, all, rewrite)",
                  default="none")
    parser.addini(CASES_INI, "glob patterns of prompthooks case files to collect as tests, "
                             "one test per case (e.g. *.cases.yaml)", type="linelist", default=[])


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "prompthooks(config=..., cassette=..., model=...): the hooks config, "
                   "cassette and model for prompthooks_run, relative to the test file")
    mode = config.getoption("prompthooks_record_mode") or str(config.getini(INI)).strip()
    if mode not in RECORD_MODES:
        raise pytest.UsageError(f"{INI} must be one of {', '.join(RECORD_MODES)}, not {mode!r}")
    config.stash[recorder_key] = Recorder(cast(RecordMode, mode))


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.suffix not in (".yaml", ".yml") or ".cassette." in file_path.name:
        return None
    patterns = parent.config.getini(CASES_INI)
    if not any(file_path.match(pattern) for pattern in patterns):
        return None
    from .pytest_cases import PolicyCases  # see the module's docstring: only pytest at load

    recorder = parent.config.stash[recorder_key]
    return cast(pytest.Collector, PolicyCases.from_parent(parent, path=file_path,
                                                          cassette_for=recorder.cassette))


@pytest.fixture
def prompthooks_event() -> Callable[..., dict[str, Any]]:
    """Build a host-native event: ``prompthooks_event(host, event_name, **fields)``."""
    from ..testing import event  # see the module's docstring: only pytest at load

    return event


@pytest.fixture
def prompthooks_cassette(request: pytest.FixtureRequest) -> Path:
    """The test's cassette when neither the call nor a marker names one:
    ``cassettes/<module>/<test>.yaml`` beside the test file, as pytest-recording names them."""
    name = request.node.name
    if request.cls is not None:
        name = f"{request.cls.__name__}.{name}"
    for char in "<>?%*:|\"'/\\":
        name = name.replace(char, "-")
    return request.path.parent / "cassettes" / request.path.stem / f"{name}.yaml"


@pytest.fixture
def prompthooks_run(request: pytest.FixtureRequest,
                    prompthooks_cassette: Path) -> Callable[..., Outcome]:
    """Run an event through a config with a cassette in the run's record mode; returns the
    outcome, whose ``decision`` holds the merged decision and ``stdout`` the host's reply.

    ``prompthooks_run(event, config=None, cassette=None, host=None, budget=60.0, model=None)``:
    ``config``, ``cassette`` and ``model`` default to the ``prompthooks`` marker's."""
    marked = _marked(request.node)
    here = request.path.parent
    recorder = request.config.stash[recorder_key]

    def run(data: Mapping[str, Any] | bytes | str, *, config: Any = None,
            cassette: str | Path | None = None, host: str | None = None, budget: float = 60.0,
            model: str | None = None) -> Outcome:
        from ..testing import run as run_event  # as in prompthooks_event

        config = config if config is not None else marked.get("config")
        if config is None:
            pytest.fail("prompthooks_run: no hooks config; pass config=... or mark the test "
                        "with @pytest.mark.prompthooks(config=...)", pytrace=False)
        tape = cassette if cassette is not None else marked.get("cassette")
        tape_path = here / tape if tape is not None else prompthooks_cassette
        used = recorder.cassette(tape_path)
        outcome = run_event(data, config=_beside(here, config), cassette=used, host=host,
                            budget=budget,
                            model=model if model is not None else marked.get("model"))
        if used.unrecorded:
            # The verdicts stood, but the run asked for a recording that is not there: the
            # next replay would miss it. As `prompthooks test --record`, a failure.
            pytest.fail("prompthooks_run: " + "; ".join(used.unrecorded), pytrace=False)
        return outcome

    return run


def _marked(node: pytest.Item) -> dict[str, Any]:
    """The ``prompthooks`` markers' settings, the closest (the test's own) winning."""
    settings: dict[str, Any] = {}
    for marker in reversed(list(node.iter_markers("prompthooks"))):
        unknown = sorted(set(marker.kwargs) - set(MARKER_KEYS))
        if marker.args or unknown:
            pytest.fail(f"@pytest.mark.prompthooks takes only the keywords "
                        f"{', '.join(MARKER_KEYS)}; got "
                        f"{', '.join(unknown) or 'a positional argument'}", pytrace=False)
        settings.update(marker.kwargs)
    return settings


def _beside(folder: Path, config: Any) -> Any:
    """Config paths relative to the test file's folder; inline configs as they are."""
    if isinstance(config, (str, Path)):
        return folder / config
    if isinstance(config, Sequence):
        return [folder / path for path in config]
    return config
