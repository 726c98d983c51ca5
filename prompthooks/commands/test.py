"""``prompthooks test PATH...``: run policy test cases offline from recorded model replies.

One line per case (PASS/FAIL, name, decision, time), then ``N passed, N failed``; exit 1 on any
failure. ``--record`` asks the model and refreshes the cassettes; ``--rerecord`` asks the model
again and reports which verdicts drifted, without writing anything.
"""

from __future__ import annotations

import argparse
import sys

from ..cases import case_files, run_file, verdict_change
from ..errors import EXIT_ERROR, EXIT_OK
from ..recording.cassette import Mode


def main(args: argparse.Namespace) -> int:
    mode: Mode = "record" if args.record else "rerecord" if args.rerecord else "replay"
    passed = failed = 0
    drifted = 0
    for path in case_files(args.paths):
        run = run_file(path, mode)
        for result in run.results:
            status = "PASS" if result.passed else "FAIL"
            print(f"{status}  {result.case.name}  {result.decision}  {result.seconds:.2f}s"
                  f"  [{path}]")
            if not result.passed:
                print(f"      {result.detail}")
            passed += result.passed
            failed += not result.passed
        for drift in run.drift:
            drifted += 1
            print(f"DRIFT  {drift.hook}  {verdict_change(drift)}  (key {drift.key})  [{path}]")
    print(f"{passed} passed, {failed} failed")
    if mode == "rerecord":
        print(f"{drifted} recorded repl{'y' if drifted == 1 else 'ies'} drifted")
    sys.stdout.flush()
    return EXIT_ERROR if failed else EXIT_OK
