"""``prompthooks test PATH...``: run policy test cases offline from recorded model replies.

A table of cases (PASS/FAIL/ERROR, name, decision, time, file, what went wrong), the drifted
replies for ``--rerecord``, where the verdicts came from (model recordings, reference
verdicts, the model asked now), then ``N passed, N failed, N errors``. A case whose hooks did
not all answer is an ERROR, not a PASS. Exit 1 on any failure, error or failed model call.
``--record`` asks the model and refreshes the cassettes; ``--rerecord`` asks the model again
and reports which verdicts drifted, without writing anything. ``--json`` prints all of it as
JSON.

``--write-references`` writes, for the prompt hooks of the cases that have no recording, the
expected verdicts as reference entries (:mod:`..devtools.cases`), then prints one line per
case and ``N reference verdicts written, N cases already recorded, N skipped``. Exit 1 when a
config does not load or a case does not pass with what was written.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..api import Config
from ..config.templates import library_dir
from ..devtools.cases import case_files, run_file, verdict_change, write_file
from ..errors import EXIT_ERROR, EXIT_OK, EXIT_USAGE, PromptHooksError
from ..model.recording import Mode, sources_line
from . import output

LABEL = {"pass": "PASS", "fail": "FAIL", "error": "ERROR"}


def _plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def _shown(path: str) -> str:
    """A case file as a table shows it: relative to the current folder when inside it (the
    JSON keeps the path as found)."""
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return path
    return path if relative.startswith("..") else relative


def main(args: argparse.Namespace) -> int:
    if args.replace_references and not args.write_references:
        raise PromptHooksError("test: --replace-references goes with --write-references",
                               EXIT_USAGE)
    if args.write_references:
        return write_references(args)
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
    unrecorded: list[dict[str, str]] = []  # each said on stderr as it happened
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
        unrecorded += [{"file": str(path), "line": line} for line in run.unrecorded]
        calls += run.calls
        for source, count in run.sources.items():
            sources[source] = sources.get(source, 0) + count
    counts = {status: sum(c["status"] == status for c in cases)
              for status in ("pass", "fail", "error")}
    # A recording asked for and not written fails the run, though each verdict stood.
    bad = bool(counts["fail"] or counts["error"] or failed_calls or unrecorded)
    code = EXIT_ERROR if bad else EXIT_OK
    if as_json:
        output.print_json({"cases": cases, "drift": drift, "passed": counts["pass"],
                           "failed": counts["fail"], "errors": counts["error"],
                           "model_calls": calls, "failed_calls": failed_calls,
                           "unrecorded": unrecorded, "sources": sources})
        return code
    if cases:
        output.table(("result", "case", "decision", "time", "file", "detail"),
                     ([LABEL[c["status"]], c["name"], c["decision"], f"{c['seconds']:.2f}s",
                       _shown(c["file"]), c["detail"]] for c in cases),
                     optional=("time", "file", "decision"), verdicts=("result", "decision"))
    if drift:
        output.table(("drifted hook", "change", "key", "file"),
                     ([d["hook"], d["change"], d["key"], _shown(d["file"])] for d in drift),
                     optional=("key", "file"))
    for failure in failed_calls:
        output.line(f"model call failed: {failure['call']} ({failure['file']})", "red")
    if mode != "replay":
        output.line(f"{_plural(calls, 'model call', 'model calls')}, "
                    f"{len(failed_calls)} failed", "red" if failed_calls else None)
    if unrecorded:
        output.line(f"{_plural(len(unrecorded), 'reply', 'replies')} not recorded", "red")
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
    folder = library_dir()
    suites = folder / "tests" if folder else None
    if suites is None or not suites.is_dir():
        raise PromptHooksError("test --library: the shipped policy suites are not installed "
                               "with this copy of prompthooks")
    return suites


WRITE_LABEL = {"written": "WRITTEN", "recorded": "RECORDED", "skipped": "SKIPPED",
               "error": "ERROR"}
REMINDER = ("Reference verdicts are the cases' expectations, not a model's output: `test` "
            "counts them apart, and `prompthooks test --record` with your model replaces "
            "them with its replies.")


def write_references(args: argparse.Namespace) -> int:
    """``test --write-references PATH...``: see :mod:`..devtools.cases`."""
    if args.library:
        raise PromptHooksError("test --write-references: name your own case files; the "
                               "shipped suites are recorded already", EXIT_USAGE)
    if not args.paths:
        raise PromptHooksError("test --write-references: name case files or folders")
    done = [w for path in case_files(args.paths)
            for w in write_file(path, args.model, args.replace_references)]
    counts = {status: sum(w.status == status for w in done)
              for status in ("written", "recorded", "skipped", "error")}
    written = sum(w.written for w in done)
    code = EXIT_ERROR if counts["error"] else EXIT_OK
    if args.json:
        output.print_json({"cases": [{"file": str(w.file), "name": w.case, "status": w.status,
                                      "written": w.written, "already_recorded": w.kept,
                                      "detail": w.detail} for w in done],
                           "written": written, "already_recorded": counts["recorded"],
                           "skipped": counts["skipped"], "errors": counts["error"]})
        return code
    if done:
        output.table(("reference", "case", "file", "detail"),
                     ([WRITE_LABEL[w.status], w.case, _shown(str(w.file)), w.detail]
                      for w in done),
                     optional=("file",), verdicts=("reference",))
    errors = f", {_plural(counts['error'], 'error', 'errors')}" if counts["error"] else ""
    output.line(f"{_plural(written, 'reference verdict', 'reference verdicts')} written, "
                f"{_plural(counts['recorded'], 'case', 'cases')} already recorded, "
                f"{counts['skipped']} skipped{errors}", "red" if errors else None)
    output.line(REMINDER)
    return code
