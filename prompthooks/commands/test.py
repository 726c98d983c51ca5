"""``prompthooks test PATH...``: run policy test cases offline from recorded model replies.

A table of cases (PASS/FAIL/ERROR, name, decision, time, file, what went wrong), the drifted
replies for ``--rerecord``, where the verdicts came from (model recordings, reference
verdicts, the model asked now), then ``N passed, N failed, N errors``. A case whose hooks did
not all answer is an ERROR, not a PASS. Exit 1 on any failure, error or failed model call.
``--record`` asks the model and refreshes the cassettes; ``--rerecord`` asks the model again
and reports which verdicts drifted, without writing anything. ``--json`` prints all of it as
JSON.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .. import output
from ..api import Config
from ..cases import case_files, run_file, verdict_change
from ..errors import EXIT_ERROR, EXIT_OK, PromptHooksError
from ..recording.cassette import Mode

LABEL = {"pass": "PASS", "fail": "FAIL", "error": "ERROR"}


def _plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def main(args: argparse.Namespace) -> int:
    mode: Mode = "record" if args.record else "rerecord" if args.rerecord else "replay"
    paths = list(args.paths)
    if args.library:
        paths.append(str(library_suites()))
    if not paths:
        raise PromptHooksError("test: name case files or folders, or --library for the "
                               "shipped policies' suites")
    return run_suites([(path, None) for path in case_files(paths)], mode, args.model,
                      args.json)


def run_suites(suites: Sequence[tuple[Path, Config | None]], mode: Mode, model: str | None,
               as_json: bool) -> int:
    """Run case files (each with its own config, or the one given) and report them; the exit
    code. ``try-pack`` runs a pack's suites through here too."""
    cases: list[dict[str, Any]] = []
    drift: list[dict[str, str]] = []
    failed_calls: list[dict[str, str]] = []
    calls = 0
    sources: dict[str, int] = {}
    for path, config in suites:
        run = run_file(path, mode, model, config)
        cases += [{"file": str(path), "name": r.case.name, "status": r.status,
                   "passed": r.passed, "decision": r.decision, "seconds": round(r.seconds, 3),
                   "detail": None if r.passed else r.detail} for r in run.results]
        drift += [{"file": str(path), "hook": d.hook, "change": verdict_change(d), "key": d.key}
                  for d in run.drift]
        failed_calls += [{"file": str(path), "call": line} for line in run.failed_calls]
        calls += run.calls
        for source, count in run.sources.items():
            sources[source] = sources.get(source, 0) + count
    counts = {status: sum(c["status"] == status for c in cases)
              for status in ("pass", "fail", "error")}
    bad = bool(counts["fail"] or counts["error"] or failed_calls)
    code = EXIT_ERROR if bad else EXIT_OK
    if as_json:
        output.print_json({"cases": cases, "drift": drift, "passed": counts["pass"],
                           "failed": counts["fail"], "errors": counts["error"],
                           "model_calls": calls, "failed_calls": failed_calls,
                           "sources": sources})
        return code
    if cases:
        output.table(("result", "case", "decision", "time", "file", "detail"),
                     ([LABEL[c["status"]], c["name"], c["decision"], f"{c['seconds']:.2f}s",
                       c["file"], c["detail"]] for c in cases))
    if drift:
        output.table(("drifted hook", "change", "key", "file"),
                     ([d["hook"], d["change"], d["key"], d["file"]] for d in drift))
    for failure in failed_calls:
        output.line(f"model call failed: {failure['call']} ({failure['file']})", "red")
    if mode != "replay":
        output.line(f"{_plural(calls, 'model call', 'model calls')}, "
                    f"{len(failed_calls)} failed", "red" if failed_calls else None)
    if mode == "rerecord":
        answered = calls - len(failed_calls)
        output.line(f"{_plural(len(drift), 'recorded reply', 'recorded replies')} drifted "
                    f"(of {answered} answered)")
    output.line(sources_line(sources))
    output.line(f"{counts['pass']} passed, {counts['fail']} failed, "
                f"{_plural(counts['error'], 'error', 'errors')}", "red" if bad else "green")
    return code


def library_suites() -> Path:
    """The shipped policies' case files: ``tests/`` beside the installed library."""
    from ..templates import library_dir

    folder = library_dir()
    suites = folder / "tests" if folder else None
    if suites is None or not suites.is_dir():
        raise PromptHooksError("test --library: the shipped policy suites are not installed "
                               "with this copy of prompthooks")
    return suites


def sources_line(sources: dict[str, int]) -> str:
    """Where the verdicts came from, so reference verdicts are never taken for a model's."""
    parts = [f"{sources.get('recording', 0)} from model recordings",
             f"{sources.get('reference', 0)} from reference verdicts (not a model's output)"]
    if sources.get("model"):
        parts.append(f"{sources['model']} from the model now")
    return "verdicts: " + ", ".join(parts)
