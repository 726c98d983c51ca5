from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpcore  # noqa: F401
import httpx  # noqa: F401
import pytest

from .fake_model import FakeModel, serve

# Loaded before any test: pytester's in-process runs drop the modules first imported inside
# them, and an httpcore imported again after that has new exception classes, which httpx's
# table (made once, of the first ones) no longer maps: a refused connection then escapes as
# httpcore's error in every later test of that worker.

pytest_plugins = ["pytester"]

# Folders whose every test is slow: the resident process and its client, the supervisor, the
# fault matrix, load and bursts, the live model. Marked here, beside the rest of the fast
# tier's rules.
SLOW_FOLDERS = ("bench", "dispatcher", "faults", "live", "runner")
# Slow files and tests of tests/model, listed here rather than marked in its files (the rest
# of tests/model runs in the fast tier and covers the model package).
SLOW_FILES = (
    "model/test_cassette_miss.py",
    "model/test_cassettes.py",
    "model/test_cold_start.py",
    "model/test_direct_proxy.py",
    "model/test_direct_tls.py",
    "model/test_recording_keys.py",
)
SLOW_TESTS: dict[str, tuple[str, ...]] = {
    "model/test_direct_path.py": (
        "test_a_bare_openai_model_name_goes_to_openai_base_url",
        "test_an_openai_compatible_endpoint_is_called_directly_and_litellm_never_loads",
        "test_prefixed_models_go_direct_with_the_prefix_dropped_and_their_own_key",
        "test_the_litellm_path_still_reaches_the_same_server",
    ),
    "model/test_direct_http.py": (
        "test_a_server_that_trickles_is_cut_off_by_the_calls_one_deadline",
        "test_an_answer_that_breaks_off_or_is_not_http_is_said_in_one_line",
    ),
    "model/test_fail_fast.py": (
        "test_a_host_that_does_not_resolve_is_tried_once",
        "test_a_managed_hook_never_reads_the_dead_endpoint_memory",
        "test_a_planted_dead_endpoint_memory_cannot_open_a_gate",
        "test_a_refused_connection_is_tried_once_and_remembered",
        "test_a_remembered_dead_endpoint_answers_the_next_process_with_the_same_policy",
        "test_a_retry_after_past_the_deadline_is_not_waited_for",
        "test_a_retry_after_that_fits_is_waited_for",
        "test_an_html_gateway_page_is_not_quoted",
        "test_each_error_status_reads_as_one_accurate_line",
    ),
    "model/test_managed_network.py": (
        "test_a_managed_hook_naming_no_key_variable_sends_no_key",
        "test_a_managed_hook_without_api_base_refuses_a_redirecting_environment",
        "test_a_pinned_managed_hook_gets_no_such_warning",
        "test_a_pinned_managed_hook_never_imports_litellm",
        "test_direct_path_answers_a_slow_endpoint_by_the_deadline",
        "test_direct_path_errors_read_like_the_litellm_path",
        "test_direct_path_retries_a_server_error_within_the_deadline",
        "test_doctor_says_to_pin_api_base_for_an_unpinned_managed_hook",
        "test_proxy_and_base_url_variables_do_not_redirect_a_pinned_managed_hook",
        "test_the_proxy_the_managed_file_names_is_used",
    ),
    "model/test_model_names.py": (
        "test_a_managed_hook_takes_no_alias_and_no_stored_key",
        "test_an_alias_is_called_as_the_model_it_stands_for",
        "test_claude_codes_fast_model_on_a_real_run",
    ),
    "model/test_proxy_cost.py": (
        "test_direct_path_of_a_pinned_managed_hook_records_it",
        "test_eval_adds_up_the_proxys_costs",
        "test_litellm_path_records_the_proxys_cost",
    ),
    "model/test_structured.py": (
        "test_a_managed_hook_never_takes_the_refusal_from_the_user_s_file",
        "test_a_refused_schema_is_asked_again_without_it_and_remembered_across_runs",
        "test_a_verdict_request_carries_the_schema_and_a_stop_hook_s_has_impossible",
        "test_the_litellm_path_sends_the_schema_and_falls_back_the_same",
        "test_the_shipped_cassettes_still_replay",
    ),
    "model/test_verdict_cache.py": (
        "test_a_hit_skips_the_model_and_is_reported",
        "test_entries_expire",
        "test_off_unless_asked",
        "test_stop_hooks_are_left_out_by_default",
    ),
    "model/test_warm_start.py": (
        "test_a_session_start_starts_the_worker_for_a_later_prompt_event",
    ),
    "model/test_worker.py": (
        "test_a_bad_worker_idle_setting_does_not_break_run",
        "test_a_second_serve_leaves_the_running_worker_alone",
        "test_a_socket_path_too_long_for_unix_sockets_means_in_process",
        "test_a_worker_too_busy_to_answer_is_a_timeout_not_a_missing_worker",
        "test_a_worker_whose_socket_is_gone_exits",
        "test_an_open_folder_is_not_trusted",
        "test_clients_started_at_once_start_exactly_one_worker",
        "test_idle_worker_exits",
        "test_no_worker_means_one_is_started_and_this_call_goes_through_it",
        "test_run_uses_a_running_worker_and_never_imports_litellm",
        "test_worker_refuses_another_version_or_environment",
    ),
}
_TESTS = Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)  # before xdist's, which reads the group marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The `slow` marker for SLOW_FOLDERS, SLOW_FILES, SLOW_TESTS and every test that builds a
    wheel. The wheel builds also share one worker under pytest-xdist (`-n 2 --dist loadgroup`):
    pip builds in the checkout's own build/ folder, which two builds at once would share."""
    slow = pytest.mark.slow
    for item in items:
        wheel = item.get_closest_marker("wheel") is not None
        if wheel:
            item.add_marker(pytest.mark.xdist_group("wheel"))
        try:
            where = item.path.resolve().relative_to(_TESTS)
        except ValueError:  # a pytester run's own files
            continue
        file = where.as_posix()
        if (where.parts[0] in SLOW_FOLDERS or file in SLOW_FILES or wheel
                or getattr(item, "originalname", item.name) in SLOW_TESTS.get(file, ())):
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
    # A resident process a test has started on demand (a first event's starter may start one
    # after the test has ended) ends 30 s after its last run, not 600: the suite leaves none
    # behind for long. Tests that mean another set their own.
    monkeypatch.setenv("PROMPTHOOKS_WORKER_IDLE", "30")
    # A managed event is never handed to a system resident process this machine may run;
    # tests/dispatcher/test_system*.py name their own.
    monkeypatch.setenv("PROMPTHOOKS_SYSTEM_SOCKET", str(home / "system" / "socket"))
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
