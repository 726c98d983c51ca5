"""``prompthooks test PATH...``: run policy test cases offline from recorded model replies.

A table of cases (PASS/FAIL, name, decision, time, file, what went wrong), the drifted
replies for ``--rerecord``, then ``N passed, N failed``; exit 1 on any failure. ``--record``
asks the model and refreshes the cassettes; ``--rerecord`` asks the model again and reports
which verdicts drifted, without writing anything. ``--json`` prints all of it as JSON.
"""

from __future__ import annotations

import argparse
from typing import Any

from .. import output
from ..cases import case_files, run_file, verdict_change
from ..errors import EXIT_ERROR, EXIT_OK
from ..recording.cassette import Mode


def main(args: argparse.Namespace) -> int:
    mode: Mode = "record" if args.record else "rerecord" if args.rerecord else "replay"
    cases: list[dict[str, Any]] = []
    drift: list[dict[str, str]] = []
    for path in case_files(args.paths):
        run = run_file(path, mode)
        cases += [{"file": str(path), "name": r.case.name, "passed": r.passed,
                   "decision": r.decision, "seconds": round(r.seconds, 3),
                   "detail": None if r.passed else r.detail} for r in run.results]
        drift += [{"file": str(path), "hook": d.hook, "change": verdict_change(d), "key": d.key}
                  for d in run.drift]
    passed = sum(c["passed"] for c in cases)
    failed = len(cases) - passed
    if args.json:
        output.print_json({"cases": cases, "drift": drift, "passed": passed, "failed": failed})
        return EXIT_ERROR if failed else EXIT_OK
    if cases:
        output.table(("result", "case", "decision", "time", "file", "detail"),
                     (["PASS" if c["passed"] else "FAIL", c["name"], c["decision"],
                       f"{c['seconds']:.2f}s", c["file"], c["detail"]] for c in cases))
    if drift:
        output.table(("drifted hook", "change", "key", "file"),
                     ([d["hook"], d["change"], d["key"], d["file"]] for d in drift))
    if mode == "rerecord":
        output.line(f"{len(drift)} recorded repl{'y' if len(drift) == 1 else 'ies'} drifted")
    output.line(f"{passed} passed, {failed} failed", "red" if failed else "green")
    return EXIT_ERROR if failed else EXIT_OK
