"""The run path's records (named tuples and plain classes, never dataclasses: see
docs/architecture.md) written out exactly as when they were dataclasses: the config cache and
the keys that hold a source, each record read back as what it was, and a loaded config never
taken for a sequence."""

from __future__ import annotations

import json
from pathlib import Path

from prompthooks._version import __version__
from prompthooks.api import Config, load_config
from prompthooks.config.load_result import Loaded, LoadFailure
from prompthooks.core.hook import Hook, PromptSettings, Source, Trigger
from prompthooks.core.matchers import Matcher
from prompthooks.devtools.pytest_plugin import _beside
from prompthooks.loading import cache, managed

from ..helpers import claude_config

SOURCE = Source("project", "/p/hooks.json", 2)
# Every field set, none to its default.
FULL = Hook(source=SOURCE, dialect="claude", config_event="PreToolUse", index=3,
            trigger=Trigger("PreToolUse", ("Bash", "mcp__"), "resume"), kind="http",
            timeout=7.5, label="/p/hooks.json: hooks.PreToolUse[0].hooks[3]",
            matcher=Matcher("search", "^git", ("Bash", "Edit")), match_on="tool",
            command="./check.sh", executable="/p/hooks/PreToolUse", digest="d" * 64,
            url="https://policy.example/v1?t=1", headers=(("A", "$X"), ("B", "c")),
            allowed_env_vars=("X",), prompt="Block pushes.", prompt_file="no-push",
            model="m1", model_variables=("V1", "V2"), fast_model_name="haiku",
            prompt_settings=PromptSettings("m2", "http://127.0.0.1:9", "KEY_VAR", 100, 5.0,
                                           "http://proxy:3128", 3),
            max_event_chars=9000, cache_ttl=1.5, fail_closed=True, loop_limit=4, cwd="/c",
            config_dir="/p", policy="pack/id", title="The gate", allow_approves=True,
            raw_event=True, transcript=2, halt_on_block=frozenset({"Stop", "PreToolUse"}),
            max_turns=5)
# Every field left to its default.
BARE = Hook(source=Source("user", "/u/hooks.json", 3), dialect="cursor",
            config_event="beforeShellExecution", index=0, trigger=Trigger("PreToolUse"),
            kind="command", timeout=30.0, label="u")


def _loaded() -> Loaded:
    return Loaded(hooks=[FULL, BARE], warnings=["w"],
                  failures=[LoadFailure(source=SOURCE, message="broken", fail_closed=True,
                                        events=frozenset({"Stop", "PreToolUse"}),
                                        details=("a", "b"), kind="untrusted")],
                  unknown_events=["NotAnEvent"], sources=[SOURCE, BARE.source],
                  audit={"path": "/a.db", "store_events": True},
                  pack_checks=[{"repo": "r"}], managed_only=True)


# The cache entry of _loaded() as written when the records were dataclasses.
CACHE_ENTRY = (
    '{"format": 12, "key": "K", "hooks": [{"source": {"name": "project", '
    '"path": "/p/hooks.json", "priority": 2}, "dialect": "claude", '
    '"config_event": "PreToolUse", "index": 3, "trigger": {"event": "PreToolUse", '
    '"tools": ["Bash", "mcp__"], "subject": "resume"}, "kind": "http", "timeout": 7.5, '
    '"label": "/p/hooks.json: hooks.PreToolUse[0].hooks[3]", "matcher": {"mode": "search", '
    '"pattern": "^git", "names": ["Bash", "Edit"]}, "match_on": "tool", '
    '"command": "./check.sh", "executable": "/p/hooks/PreToolUse", '
    '"digest": "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd", '
    '"url": "https://policy.example/v1?t=1", "headers": [["A", "$X"], ["B", "c"]], '
    '"allowed_env_vars": ["X"], "prompt": "Block pushes.", "prompt_file": "no-push", '
    '"model": "m1", "model_variables": ["V1", "V2"], "fast_model_name": "haiku", '
    '"prompt_settings": {"model": "m2", "api_base": "http://127.0.0.1:9", '
    '"api_key_env": "KEY_VAR", "max_event_chars": 100, "verdict_cache_ttl": 5.0, '
    '"proxy": "http://proxy:3128", "stop_block_cap": 3}, "max_event_chars": 9000, '
    '"cache_ttl": 1.5, "fail_closed": true, "loop_limit": 4, "cwd": "/c", '
    '"config_dir": "/p", "policy": "pack/id", "title": "The gate", "allow_approves": true, '
    '"raw_event": true, "transcript": 2, "halt_on_block": ["PreToolUse", "Stop"], '
    '"max_turns": 5}, {"source": {"name": "user", "path": "/u/hooks.json", "priority": 3}, '
    '"dialect": "cursor", "config_event": "beforeShellExecution", "index": 0, '
    '"trigger": {"event": "PreToolUse", "tools": [], "subject": null}, "kind": "command", '
    '"timeout": 30.0, "label": "u", "matcher": {"mode": "all", "pattern": "", "names": []}, '
    '"match_on": "none", "command": null, "executable": null, "digest": null, "url": null, '
    '"headers": [], "allowed_env_vars": [], "prompt": null, "prompt_file": null, '
    '"model": null, "model_variables": [], "fast_model_name": null, "prompt_settings": null, '
    '"max_event_chars": null, "cache_ttl": null, "fail_closed": false, "loop_limit": null, '
    '"cwd": null, "config_dir": null, "policy": null, "title": null, '
    '"allow_approves": false, "raw_event": false, "transcript": null, "halt_on_block": [], '
    '"max_turns": null}], "warnings": ["w"], "unknown_events": ["NotAnEvent"], '
    '"failures": [{"source": {"name": "project", "path": "/p/hooks.json", "priority": 2}, '
    '"message": "broken", "fail_closed": true, "events": ["PreToolUse", "Stop"], '
    '"details": ["a", "b"], "kind": "untrusted"}], "sources": [{"name": "project", '
    '"path": "/p/hooks.json", "priority": 2}, {"name": "user", "path": "/u/hooks.json", '
    '"priority": 3}], "audit": {"path": "/a.db", "store_events": true}, '
    '"pack_checks": [{"repo": "r"}], "managed_only": true}'
)


def test_every_field_of_a_hook_is_set_in_the_full_one() -> None:
    assert all(FULL[i] != BARE._field_defaults.get(name, BARE[i])
               for i, name in enumerate(Hook._fields))


def test_the_cache_entry_is_written_byte_for_byte_as_before(tmp_path: Path) -> None:
    environ = {"XDG_CACHE_HOME": str(tmp_path), "HOME": str(tmp_path)}
    cache.store("K", cache.to_data(_loaded()), environ)
    assert cache.entry_path("K", environ).read_text() == CACHE_ENTRY


def test_an_entry_written_before_reads_back_as_the_same_records(tmp_path: Path) -> None:
    loaded = cache.from_data(json.loads(CACHE_ENTRY))
    assert loaded.hooks == [FULL, BARE] and loaded.sources == [SOURCE, BARE.source]
    assert [type(h.source) for h in loaded.hooks] == [Source, Source]
    assert isinstance(loaded.hooks[0].prompt_settings, PromptSettings)
    assert isinstance(loaded.hooks[0].matcher, Matcher)
    assert isinstance(loaded.hooks[0].trigger, Trigger)
    assert loaded.hooks[0].halt_on_block == frozenset({"Stop", "PreToolUse"})
    environ = {"XDG_CACHE_HOME": str(tmp_path), "HOME": str(tmp_path)}
    cache.store("K", cache.to_data(loaded), environ)
    assert cache.entry_path("K", environ).read_text() == CACHE_ENTRY


def test_the_keys_hold_a_source_as_an_object() -> None:
    source = {"name": "project", "path": "/p/hooks.json", "priority": 2}
    assert cache.fingerprint([(SOURCE, Path("/nonexistent/x"))], "/p") == json.dumps(
        [12, __version__, "/p", [[source, ["/nonexistent/x", None]]]])
    assert managed.key(SOURCE, Path("/nonexistent/m"), "/nonexistent") == json.dumps(
        [1, __version__, source, "/nonexistent/m", "/nonexistent", ["/nonexistent/m", None]])


def test_a_loaded_config_is_not_taken_for_a_list_of_paths(tmp_path: Path) -> None:
    """The pytest plugin takes config paths, a list of them, or a loaded config: the last
    must reach the run as it is (a tuple would be read as a list of paths)."""
    config = load_config([str(claude_config(tmp_path / "hooks.json", "PreToolUse",
                                            {"command": "exit 0"}))], keep_managed=False)
    assert isinstance(config, Config)
    assert _beside(tmp_path, config) is config
