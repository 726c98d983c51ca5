"""``prompthooks run [EVENT]``: one event on stdin, the host's reply on stdout.

When the event cannot be read, the reply is a non-blocking error (exit 1), unless a
fail-closed hook could have applied to it: then the event is blocked, because a fail-closed
gate must never fail open.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from pathlib import Path

from .. import hosts
from ..api import dispatch, load_config
from ..config import discovery
from ..errors import EXIT_ERROR, EXIT_INTERNAL, InputError
from ..hosts import Host


def _say(line: str) -> None:
    """One line on stderr (which hosts log), after the redaction pass."""
    from ..redaction import redact

    print(redact(line), file=sys.stderr)


def _process_start() -> float:
    """When this process started, as a ``time.monotonic()`` instant: the host's clock for its
    timeout starts at the spawn, before the interpreter and our modules load (seconds on a
    busy machine). Now, where /proc cannot tell."""
    now = time.monotonic()
    try:
        with open("/proc/self/stat", "rb") as stat:
            ticks = int(stat.read().rsplit(b")", 1)[1].split()[19])  # field 22, starttime
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return now
    return now - min(max(age, 0.0), 60.0)  # a sane age only: a clock can be off


def _write(text: str) -> None:
    if text:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()


def _guess(data: bytes, args: argparse.Namespace) -> tuple[Host | None, str | None, bool]:
    """(host, canonical event, the event is known to be unknown) from unreadable input."""
    host = hosts.get(args.host) if args.host else None
    raw = None
    try:
        value = json.loads(data.removeprefix(b"\xef\xbb\xbf"))
        raw = value if isinstance(value, dict) else None
    except (ValueError, RecursionError):
        pass
    if host is None and raw is not None:
        try:
            host = hosts.detect(raw)
        except InputError:
            host = None
    name = args.event  # as the hosts' parsers read it: an empty name is no name
    if not name and raw is not None and host is not None:
        name = next((raw[key] for key in ("hook_event_name", "hookName")
                     if isinstance(raw.get(key), str) and raw[key]), None)
    if host is None or not name:
        return host, None, False
    canonical = host.HOST_EVENTS.get(name)
    return host, canonical, canonical is None


def _unjudged(problem: str, kind: str, data: bytes, args: argparse.Namespace,
              exit_code: int) -> int:
    """The event could not be judged (``kind`` "input": it cannot be read; "internal": a bug
    in prompthooks). One line on stderr saying so and ``exit_code``, a non-blocking error for
    every host; but when a fail-closed hook could have applied to the event, the block that
    says so instead: a fail-closed gate never fails open."""
    host, canonical, unknown = _guess(data, args)
    if unknown:
        _say(f"prompthooks: {problem}")
        return EXIT_ERROR  # no hook is configured for an event that does not exist
    project = (os.environ.get("CLAUDE_PROJECT_DIR") or os.environ.get("CURSOR_PROJECT_DIR")
               or os.getcwd())
    managed = Path(args.managed_dir) if args.managed_dir else discovery.MANAGED_DIR
    loaded = load_config(args.config or None, project, managed_dir=managed).loaded
    guarded = any(h.fail_closed and canonical in (None, h.trigger.event) for h in loaded.hooks)
    guarded = guarded or any(f.fail_closed and (canonical is None or f.events is None
                                                or canonical in f.events)
                             for f in loaded.failures)
    if not guarded:
        _say(f"prompthooks: {problem}")
        return exit_code
    message = f"Blocked by prompthooks: a fail-closed hook could not judge this event ({problem})"
    _say(f"prompthooks: {message}")
    reply = (host or hosts.HOSTS["claude"]).block_reply(message)
    _write(reply.stdout)
    _audit_unjudged(loaded.audit, kind, host, canonical, args.event, message, problem)
    return reply.exit_code


def _audit_unjudged(settings: dict[str, object], kind: str, host: Host | None,
                    canonical: str | None, host_event: str | None, reason: str,
                    error: str) -> None:
    """A fail-closed block of an event that could not be judged is logged as one row."""
    from .. import audit
    from ..audit.rows import now
    from ..redaction import redact

    hook = "(unreadable event)" if kind == "input" else "(internal error)"
    row = {"time": now(), "run_id": os.urandom(8).hex(), "host": host.NAME if host else "?",
           "event": canonical or "?", "host_event": host_event or "?",
           "hook": hook, "hook_label": "stdin", "source": "input",
           "kind": kind, "fail_closed": 1, "status": "error", "decision": "deny",
           "reason": redact(reason), "error": redact(error), "cached": 0, "replayed": 0}
    trouble = audit.record_rows(audit.resolve(settings), [row])
    if trouble:
        _say(f"prompthooks: {trouble}")


def _use_cassette(args: argparse.Namespace) -> None:
    if args.record or args.replay:
        from ..recording.cassette import Cassette, activate

        path = Path(args.record or args.replay)
        activate(Cassette(path, "record" if args.record else "replay"))


def main(args: argparse.Namespace) -> int:
    started = _process_start() if args.entry else None
    debug = os.environ.get("PROMPTHOOKS_DEBUG") == "1"
    data = sys.stdin.buffer.read()
    _use_cassette(args)
    from .. import model

    model.autostart = True
    try:
        # Only the reply may reach stdout: anything a library prints goes to stderr.
        with contextlib.redirect_stdout(sys.stderr):
            outcome = dispatch(
                data, host=args.host, event_name=args.event, config_paths=args.config or None,
                budget=args.budget, started=started,
                managed_dir=Path(args.managed_dir) if args.managed_dir else discovery.MANAGED_DIR,
            )
    except InputError as exc:
        return _unjudged(exc.message, "input", data, args, EXIT_ERROR)
    except Exception as exc:
        if debug:
            raise
        problem = f"internal error: {exc!r} (set PROMPTHOOKS_DEBUG=1 for the traceback)"
        return _unjudged(problem, "internal", data, args, EXIT_INTERNAL)
    if debug:
        for warning in outcome.config.warnings:
            _say(f"prompthooks: warning: {warning}")
    for problem in outcome.problems:
        _say(f"prompthooks: {problem}")
    for result in outcome.decision.results:
        if result.cached:
            _say(f"prompthooks: hook '{result.hook.name}': verdict from the verdict cache")
    _write(outcome.stdout)
    from .. import audit

    trouble = audit.record(outcome)  # after the reply: the host is never kept waiting for it
    if trouble:
        _say(f"prompthooks: {trouble}")
    return outcome.exit_code
