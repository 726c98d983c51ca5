"""``prompthooks log [stats]``: recent decisions from the audit log (a table, JSON, or JSON
Lines; ``--follow`` keeps printing them as they are written), or a summary per hook.

The database is ``--db``, else the one the discovered config names, else the default (see
docs/cli.md, "Audit log"). A log that does not exist yet is not an error: nothing was recorded.
Every cell printed has its control characters escaped (a stored ``ESC[2J`` must not clear the
screen), and hook names pass the redaction pass again (rows written by older versions kept
the command's text as it was).
"""

from __future__ import annotations

import argparse
import re
import signal
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any

from .. import paths
from ..api import load_config
from ..audit.follow import follow
from ..audit.records import line
from ..audit.settings import resolve
from ..audit.stats import summarise
from ..audit.store import AuditError, read
from ..audit.unjudged import recent, summary
from ..errors import EXIT_OK, EXIT_USAGE, PromptHooksError, excerpt
from ..redaction import redact
from . import output

COLUMNS = ("time (UTC)", "host", "event", "tool", "hook", "decision", "reason / error", "ms")
_DURATION = re.compile(r"^(\d+(?:\.\d+)?)([smhdw])$")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def since_iso(text: str) -> str:
    """``30m``/``12h``/``7d`` before now, or an ISO date/time, as the log's UTC timestamp."""
    match = _DURATION.match(text.strip())
    if match:
        t = time.time() - float(match[1]) * _UNIT[match[2]]
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t))
    try:
        when = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise PromptHooksError(f"--since {text!r}: expected a duration like 30m, 12h or 7d, "
                               "or an ISO date such as 2026-11-01", EXIT_USAGE) from None
    if when.tzinfo is None:
        when = when.astimezone()  # a local time, as a person would mean it
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S")


def _database(args: argparse.Namespace) -> Path:
    if args.db:
        return Path(args.db)
    return resolve(load_config(None, paths.project_dir()).loaded.audit).path


def _filters(args: argparse.Namespace) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    if args.since:
        clauses.append("time >= ?")
        params.append(since_iso(args.since))
    if args.decision == "error":
        clauses.append("status != 'ok'")
    elif args.decision:
        clauses.append("decision = ?")
        params.append(args.decision)
    if args.hook:
        clauses.append("instr(lower(hook), lower(?)) > 0")
        params.append(args.hook)
    return " AND ".join(clauses), params


def _short(stamp: str) -> str:
    return stamp.replace("T", " ")[:19]


def _format(args: argparse.Namespace) -> str:
    if args.json and args.format not in (None, "json"):
        raise PromptHooksError(f"--json and --format {args.format} say different things",
                               EXIT_USAGE)
    fmt: str = "json" if args.json else args.format or "table"
    if args.view == "stats" and fmt == "jsonl":
        raise PromptHooksError("log stats prints a table, or JSON with --json", EXIT_USAGE)
    if args.follow and (fmt == "json" or args.view == "stats"):
        raise PromptHooksError("--follow prints rows as they come: use it with --format jsonl "
                               "or the table, not with JSON or stats", EXIT_USAGE)
    return fmt


def _limit(args: argparse.Namespace) -> int | None:
    """How many of the newest rows: None for all (``--limit 0``)."""
    if args.limit is None:
        return 10 if args.follow else 50
    if args.limit < 0:
        raise PromptHooksError("--limit must be 0 (all) or more", EXIT_USAGE)
    return args.limit or None


def _scrub(row: dict[str, Any]) -> dict[str, Any]:
    # Rows written by older versions kept the command's text as it was.
    for column in ("hook", "hook_label"):
        if isinstance(row.get(column), str):
            row[column] = redact(row[column])
    return row


def main(args: argparse.Namespace) -> int:
    fmt = _format(args)
    limit = _limit(args)
    path = _database(args)
    where, params = _filters(args)
    if args.follow:
        return _follow(path, where, params, limit, fmt)
    if not path.exists():
        if fmt == "json":
            output.print_json([] if args.view is None else {})
        elif fmt == "table":
            output.line(f"no audit log at {path} yet: `prompthooks run` writes one row per "
                        "hook per event")
        return EXIT_OK
    try:
        rows = read(path, where, params, None if args.view else limit)
    except AuditError as exc:
        raise PromptHooksError(str(exc)) from None
    if args.view == "stats":
        return _stats(rows, fmt == "json")
    rows = [_scrub(row) for row in rows]
    if fmt == "json":
        output.print_json(rows)
    elif fmt == "jsonl":
        sys.stdout.write("".join(line(row) for row in reversed(rows)))
    else:
        _unjudged_first(path)
        output.table(
            COLUMNS, (_row_cells(r) for r in rows),
            title=output.printable(f"{len(rows)} decision{'s' * (len(rows) != 1)} from "
                                   f"{path}"),
            optional=("host", "ms", "tool", "event", "time (UTC)"), verdicts=("decision",))
    return EXIT_OK


def _unjudged_first(path: Path) -> None:
    """Above the rows: the prompt hooks that could not judge in the last day for a reason of
    set-up, each one line, and where to look. A gate that is off must not hide in a table."""
    found = recent(path)
    for item in found:
        output.line(f"not judged: {redact(summary(item))}", "bold red")
    if found:
        output.line("fix: prompthooks doctor (each hook's model, tried); the last error: "
                    f"{redact(found[0].error)}", "red")


def _row_cells(r: dict[str, Any]) -> list[str]:
    return _cells([_short(r["time"]), r["host"], r["event"], r["tool"], excerpt(r["hook"], 40),
                   r["decision"] if r["status"] == "ok" else f"{r['decision']} ({r['status']})",
                   excerpt(r["reason"] or r["error"] or "", 80),
                   f"{r['duration_ms'] or 0:.0f}"])


def _stop(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _follow(path: Path, where: str, params: list[Any], backlog: int | None, fmt: str) -> int:
    """Print rows as they are written until Ctrl-C or SIGTERM, which end it cleanly (exit 0:
    stopping is how a follow ends)."""
    signal.signal(signal.SIGTERM, _stop)
    rows = follow(path, where, params, backlog)
    decision = COLUMNS.index("decision")
    try:
        for row in rows:
            row = _scrub(row)
            text = line(row) if fmt == "jsonl" else output.row_line(_row_cells(row), decision)
            sys.stdout.write(text)
            sys.stdout.flush()  # a pipe would otherwise hold rows back
    except KeyboardInterrupt:
        return EXIT_OK
    except AuditError as exc:
        raise PromptHooksError(str(exc)) from None
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second one while closing
        rows.close()
    return EXIT_OK


def _cells(values: list[Any]) -> list[str]:
    """One row's cells, each one line with no control characters (a newline in a tool name
    would fake a row)."""
    return [output.printable("" if v is None else str(v)) for v in values]


def _stats(rows: list[dict[str, Any]], as_json: bool) -> int:
    summary = summarise(rows)
    for hook in summary["hooks"]:
        hook["hook"] = redact(hook["hook"])
    if as_json:
        output.print_json(summary)
        return EXIT_OK
    output.table(
        ("hook", "source", "runs", "deny", "ask", "allow", "none", "errors", "block rate",
         "p50 ms", "p95 ms", "max ms", "tokens", "cost $"),
        (_cells([s["hook"], s["source"], s["runs"], s["deny"], s["ask"], s["allow"], s["none"],
                 s["errors"], f"{s['block_rate']:.1%}", f"{s['p50_ms']:.0f}",
                 f"{s['p95_ms']:.0f}", f"{s['max_ms']:.0f}", s["tokens"] or "",
                 f"{s['cost']:.4f}" if s["cost"] else ""])
         for s in summary["hooks"]),
        title=f"{summary['runs']} hook runs, {summary['events']} events",
        optional=("p50 ms", "max ms", "source", "tokens", "cost $", "none", "ask", "allow",
                  "p95 ms"))
    return EXIT_OK
