"""``prompthooks run [EVENT]``: one event on stdin, the host's reply on stdout.

The thin client (:mod:`prompthooks.dispatcher.client`) parses the command lines a host writes
and goes straight to the runner; this module serves the others (an abbreviated option, say)
once the full parser has read them, and calls from Python (``cli.main([...])``), where the
same work runs in this process, with the same answer for an event that cannot be judged: a
block when a managed or fail-closed hook could apply to it.
"""

from __future__ import annotations

import argparse
import sys
import time

from ..errors import EXIT_ERROR, EXIT_INTERNAL
from ..runner.channel import Channel
from ..runner.fallback import answer_unjudged, guess_event
from ..runner.job import Job, process_start
from ..runner.judge import Case, case_of, judge
from ..runner.supervisor import run_in_process


def _in_process(case: Case) -> int:
    """The work in this process (a call from Python): no supervisor, so no deadline for a
    hang, but the same answers."""
    channel = Channel()
    judge(case, channel)
    report = channel.report
    if report.reply is not None:
        stdout, code = report.reply
        if stdout:
            sys.stdout.write(stdout + "\n")
            sys.stdout.flush()
        return code
    problem, kind = report.failed or ("internal error: the run ended before it answered",
                                      "internal")
    code = EXIT_ERROR if kind == "input" else EXIT_INTERNAL
    return answer_unjudged(problem, kind, guess_event(case.data, case.host, case.event), report,
                           case.managed, code, time.monotonic() + 5.0)


def main(args: argparse.Namespace) -> int:
    job = Job(b"", process_start() if args.entry else time.monotonic(), host=args.host,
              event=args.event, config=args.config or (), budget=args.budget,
              managed_dir=args.managed_dir, record=args.record, replay=args.replay,
              partial=True)
    if args.entry:
        return run_in_process(job)
    job.data = sys.stdin.buffer.read()
    return _in_process(case_of(job))
