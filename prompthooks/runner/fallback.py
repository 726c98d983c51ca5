"""The answer for an event that could not be judged: a block when a managed or fail-closed
hook could apply to it (a gate never fails open), otherwise one line and a non-blocking exit
code. Used by the supervisor whenever the work did not reply: it failed, hung, or was killed.

It never repeats the work that failed: it uses what the work reported (the guard, sent once the
config was loaded) or, when the work never got that far, a load of the managed policy alone,
given only the time that is left.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from .. import hosts
from ..config import discovery
from ..errors import EXIT_ERROR
from ..hosts import Host
from ..loading.sources import load_sources
from ..redaction import redact
from .channel import Report

if TYPE_CHECKING:
    from ..loading.loader import Loaded


class EventGuess(NamedTuple):
    """What can be told of an event without judging it."""

    host: Host | None
    host_event: str | None
    canonical: str | None  # None: not known, so every event
    unknown: bool  # the event is known not to exist: no hook can be configured for it


def print_redacted(line: str) -> None:
    """One line on stderr (which hosts log), after the redaction pass."""
    print(redact(line), file=sys.stderr, flush=True)


def guess_event(data: bytes, host_name: str | None, event_name: str | None) -> EventGuess:
    """The host and canonical event of ``data``, as far as they can be told."""
    host, name = hosts.sender(data, host_name, event_name)
    if host is None or not name:
        return EventGuess(host, name, None, False)
    canonical = host.wire.HOST_EVENTS.get(name)
    return EventGuess(host, name, canonical, canonical is None)


def gate_could_apply(loaded: Loaded, canonical: str | None) -> bool:
    """Whether a managed or fail-closed hook (or a source that failed to load and blocks)
    could apply to ``canonical`` (None: to some event). Matchers are not consulted: a hook
    that could apply counts."""
    def could(event: str) -> bool:
        return canonical is None or event == canonical

    if any((h.fail_closed or h.source.name == "managed") and could(h.trigger.event)
           for h in loaded.hooks):
        return True
    return any(f.fail_closed and (canonical is None or f.events is None or canonical in f.events)
               for f in loaded.failures)


def managed_guard(canonical: str | None, managed: Sequence[Path],
                  by: float) -> tuple[bool, dict[str, Any]]:
    """The guard and audit settings from the managed policy alone, loaded by ``by`` (a
    ``time.monotonic()`` instant); if it cannot be loaded by then, a managed folder that
    exists guards every event."""
    found: list[tuple[bool, dict[str, Any]]] = []

    def load() -> None:
        sources = discovery.explicit([], managed)
        loaded = load_sources(sources, os.getcwd())
        found.append((gate_could_apply(loaded, canonical), loaded.audit))

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(max(0.0, by - time.monotonic()))
    if found:
        return found[0]
    return any(folder.is_dir() for folder in managed), {}


def answer_unjudged(problem: str, kind: str, found: EventGuess, report: Report,
                    managed: Sequence[Path], exit_code: int, by: float,
                    guarded_if_unknown: bool = False) -> int:
    """:func:`answer`, guarded by what the work reported, or else by the managed policy alone
    (loaded by ``by``), or else, with ``guarded_if_unknown``, guarded."""
    guard, audit = report.guard, report.audit or {}
    if guard is None:
        guard, audit = managed_guard(found.canonical, managed, by)
        guard = guard or guarded_if_unknown
    return answer(problem, kind, found, guard, audit, exit_code, by)


def answer(problem: str, kind: str, found: EventGuess, guard: bool, audit: dict[str, Any],
           exit_code: int, by: float) -> int:
    """Answer an event that was not judged: print what the host reads, log one audit row, and
    return the exit code."""
    if found.unknown:
        print_redacted(f"prompthooks: {problem}")
        return EXIT_ERROR  # no hook is configured for an event that does not exist
    if not guard:
        print_redacted(f"prompthooks: {problem}")
        _log(audit, kind, found, None, problem, by)
        return exit_code
    message = ("Blocked by prompthooks: a managed or fail-closed hook could not judge this "
               f"event ({problem})")
    print_redacted(f"prompthooks: {message}")
    reply = (found.host or hosts.CANONICAL).wire.block_reply(message)
    if reply.stdout:
        try:
            sys.stdout.write(reply.stdout + "\n")
            sys.stdout.flush()
        except (OSError, ValueError):
            pass  # a reader that went away: the exit code still says it
    _log(audit, kind, found, message, problem, by)
    return reply.exit_code


def _log(settings: dict[str, Any], kind: str, found: EventGuess, reason: str | None, error: str,
         by: float) -> None:
    """One audit row for an event that was not judged (blocked, or let through)."""
    try:
        # Only where the work gave no answer: a run that answers loads the audit modules in
        # its work process, after the reply.
        from .. import audit
        from ..audit.rows import now
    except Exception as exc:  # the log never changes the answer, which is out already
        print_redacted(f"prompthooks: audit log: cannot write: {exc!r}")
        return
    hook = "(unreadable event)" if kind == "input" else "(internal error)"
    row = {"time": now(), "run_id": os.urandom(8).hex(),
           "host": found.host.name if found.host else "?", "event": found.canonical or "?",
           "host_event": redact(found.host_event) if found.host_event else "?",
           "hook": hook, "hook_label": "stdin",
           "source": "input", "kind": kind, "fail_closed": int(reason is not None),
           "status": "error", "decision": "deny" if reason else "none",
           "reason": redact(reason) if reason else None, "error": redact(error), "cached": 0,
           "replayed": 0}
    said: list[str | None] = []

    def write() -> None:
        try:
            said.append(audit.record_rows(audit.resolve(settings), [row], by=by))
        except Exception as exc:  # the log never changes the answer
            said.append(f"audit log: {exc!r}")

    # The answer is out; the row may not keep the process past its deadline.
    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    writer.join(max(0.05, by - time.monotonic()))
    trouble = said[0] if said else "audit log: the row was not written before the deadline"
    if trouble:
        print_redacted(f"prompthooks: {trouble}")
