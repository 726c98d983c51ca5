"""Audit rows from one dispatched event: one per hook that ran (or config that failed).

The hook's name and label, reasons and errors pass through the redaction pass, which also
hides the keys the configs' ``api_key_env`` name; the event input is stored only when the
settings ask for it, redacted and capped.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ..core.hook import shown_url
from ..core.merge import apply_failure_policy
from ..core.result import HookResult
from ..redaction import config_keys, redact

if TYPE_CHECKING:
    from ..config.load_result import Loaded
    from ..core.events import Event
    from ..core.merge import Decision


class _Sources(Protocol):
    @property
    def loaded(self) -> Loaded: ...


class Judged(Protocol):
    """What the log needs of one dispatched event (``api.Outcome`` is one): the log sits
    below the API and is handed the run's outcome, it does not reach up for its type."""

    @property
    def event(self) -> Event: ...

    @property
    def decision(self) -> Decision: ...

    @property
    def config(self) -> _Sources: ...

    @property
    def deadline(self) -> float: ...

MAX_EVENT_INPUT = 256 * 1024  # characters of a stored event input


def now() -> str:
    """UTC time as stored: ISO 8601, milliseconds, Z."""
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1000):03d}Z"


def _model(result: HookResult) -> str | None:
    if result.model or not result.hook.judged:
        return result.model
    # The model modules: only for a judged hook's row (a command-only run never loads them).
    from ..model.endpoint import endpoint_for

    return endpoint_for(result.hook).model  # the model it would have asked


def event_input(event: Event, environ: Mapping[str, str] | None = None,
                keys: Sequence[str] = ()) -> str:
    return redact(event.raw_bytes.decode("utf-8", "replace"), keys, environ,
                  limit=MAX_EVENT_INPUT)


def event_fields(event: Event, run_id: str,
                 environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    # The tool's name, the session and the folder come from the agent's event like any other
    # text, and an MCP tool's name or a session id can hold a token: the same pass as a reason.
    return {"time": now(), "run_id": run_id, "host": event.host, "event": event.name,
            "host_event": _redact(event.host_event, (), environ),
            "tool": _redact(event.tool_name, (), environ),
            "session_id": _redact(event.session_id, (), environ),
            "project": _redact(event.project_dir, (), environ)}


def _redact(text: str | None, keys: Sequence[str],
            environ: Mapping[str, str] | None) -> str | None:
    return None if text is None else redact(text, keys, environ)


def result_row(result: HookResult, base: Mapping[str, Any],
               environ: Mapping[str, str] | None = None,
               keys: Sequence[str] = ()) -> dict[str, Any]:
    effective = apply_failure_policy(result)
    hook = result.hook
    # A stand-in for a config source that did not load ("*"), or that was left out
    # ("*untrusted": not approved; "*managed_only": the managed policy allows only its own).
    stand_in = hook.config_event.startswith("*")
    return {
        **base,
        "hook": hook.command if stand_in else redact(hook.name, keys, environ),
        "hook_label": redact(hook.label, keys, environ), "source": hook.source.name,
        "kind": (hook.config_event[1:] or "config") if stand_in else hook.kind,
        "fail_closed": int(hook.fail_closed),
        "status": result.status, "decision": effective.permission or "none",
        "reason": _redact(effective.reason, keys, environ),
        "duration_ms": round(result.duration * 1000, 3), "model": _model(result),
        "input_tokens": result.input_tokens, "output_tokens": result.output_tokens,
        "cost": _cost(result), "cached": int(result.cached), "replayed": int(result.replayed),
        "error": _redact(result.error, keys, environ),
        # Where an http hook posted, never its headers (they may carry a token).
        "url": _redact(shown_url(hook.url), keys, environ) if hook.url else None,
        "http_status": result.http_status,
        "tool_calls": _tool_calls(result, keys, environ),
    }


def _tool_calls(result: HookResult, keys: Sequence[str],
                environ: Mapping[str, str] | None) -> str | None:
    """An agent hook's tool calls as JSON text (None for other hooks), redacted again here
    with the run's keys."""
    if not result.tool_calls:
        return None
    return redact(json.dumps(list(result.tool_calls), ensure_ascii=False), keys, environ)


def _cost(result: HookResult) -> float | None:
    """The call's own cost, else (for a call the direct path made) litellm's table's price."""
    if result.cost is not None or result.replayed or result.cached or not result.model:
        return result.cost
    from ..model.cost import price  # as in _model

    return price(result.model, result.input_tokens, result.output_tokens)


def rows_for(outcome: Judged, store_events: bool,
             environ: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """The rows of one run (none when no hook applied to the event)."""
    base = event_fields(outcome.event, os.urandom(8).hex(), environ)
    keys = config_keys((h.api_key_env for h in outcome.config.loaded.hooks), environ)
    if any(h.judged for h in outcome.config.loaded.hooks):
        from ..model import keys as key_store  # as in _model

        keys += key_store.values(os.environ if environ is None else environ)
    if store_events:
        base["event_input"] = event_input(outcome.event, environ, keys)
    return [result_row(r, base, environ, keys) for r in outcome.decision.results]
