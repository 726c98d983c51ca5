"""Helpers to test policies inside your own test suite (see docs/testing-policies.md, "In your
own pytest suite"); the pytest plugin's fixtures wrap them.

    from prompthooks.testing import event, run, assert_decision

    outcome = run(event("claude", "PreToolUse", tool_name="Bash",
                        tool_input={"command": "rm -rf ~"}),
                  config="hooks.json", cassette="hooks.cassette.yaml")
    assert_decision(outcome, "deny", reason_contains="home")
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .api import Config, Outcome, config_from_data, dispatch, load_config
from .core.merge import failure_line
from .hosts import HOSTS, NAMES
from .model.chain import ModelChain
from .model.recording import Cassette, Mode

__all__ = ["as_config", "assert_decision", "assert_judged", "event", "run", "unjudged"]


def event(host: str, name: str, **fields: Any) -> dict[str, Any]:
    """A host-native event: the host's common fields, the event name, and ``fields`` (for
    Cline, ``fields`` go under the event's own key, as Cline nests them)."""
    if host not in HOSTS:
        raise ValueError(f"unknown host {host!r}; use {', '.join(NAMES)}")
    return HOSTS[host].wire.sample_event(name, fields)


def as_config(config: str | Path | Sequence[str | Path] | Mapping[str, Any] | Config) -> Config:
    if isinstance(config, Config):
        return config
    if isinstance(config, Mapping):
        return config_from_data(config, "<inline config>")
    paths = [config] if isinstance(config, (str, Path)) else list(config)
    # A test leaves nothing behind: not even the config cache in the user's cache folder.
    return load_config([str(p) for p in paths], keep_managed=False,
                       environ={**os.environ, "PROMPTHOOKS_NO_CACHE": "1"})


def run(data: Mapping[str, Any] | bytes | str, *,
        config: str | Path | Sequence[str | Path] | Mapping[str, Any] | Config,
        cassette: str | Path | Cassette | None = None, mode: Mode = "replay",
        host: str | None = None, budget: float = 60.0, model: str | None = None) -> Outcome:
    """Dispatch one event through ``config``; prompt hooks answer from ``cassette`` (a path,
    used in ``mode``, or a :class:`Cassette`), on ``model`` if given, else the model the config
    names (``PROMPTHOOKS_MODEL`` is ignored, so a test replays the same on every machine)."""
    loaded = as_config(config)
    if loaded.errors:
        raise AssertionError(f"config does not load: {loaded.errors[0]}")
    if not isinstance(cassette, Cassette):
        cassette = Cassette(Path(cassette), mode) if cassette else None

    models = ModelChain(cassette=cassette, model=model, suite=True)
    return dispatch(data, host=host, config=loaded, budget=budget, count_stops=False,
                    models=models)


def unjudged(outcome: Outcome) -> list[str]:
    """One line per hook the event selected that gave no verdict (an error, a timeout, a
    prompt hook with no recorded reply)."""
    return [failure_line(r) for r in outcome.decision.results if r.failed]


def assert_judged(outcome: Outcome) -> None:
    """Fail unless every hook the event selected answered: a hook that erred merges to its
    failure policy (usually "allow"), which would otherwise pass for a verdict."""
    failures = unjudged(outcome)
    assert not failures, f"not judged: {'; '.join(failures)}"


def assert_decision(outcome: Outcome, expected: str, reason_contains: str | None = None, *,
                    allow_errors: bool = False) -> None:
    """``expected`` is deny (or block), ask, or allow (no hook objected). Every hook must have
    answered too (see :func:`assert_judged`) unless ``allow_errors`` is true, for testing a
    failure policy."""
    if not allow_errors:
        assert_judged(outcome)
    permission = outcome.decision.permission
    seen = permission if permission in ("deny", "ask") else "allow"
    wanted = "deny" if expected == "block" else expected
    problems = f"; hook problems: {list(outcome.problems)}" if outcome.problems else ""
    assert seen == wanted, f"expected {wanted}, got {seen}{problems}"
    if reason_contains is not None:
        reason = outcome.decision.reason or ""
        assert reason_contains.lower() in reason.lower(), \
            f"reason {reason!r} does not contain {reason_contains!r}"
