"""``prompthooks run [EVENT]``: one event on stdin, the host's reply on stdout.

Run as the process a host starts, the work happens in a child watched by a supervisor that
answers by the deadline whatever becomes of it (see ``prompthooks.runner``). Called from
Python (``cli.main([...])``), the same work runs in this process, with the same answer for an
event that cannot be judged: a block when a managed or fail-closed hook could apply to it.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..config.discovery import managed_dirs
from ..runner.channel import Channel
from ..runner.fallback import answer_unjudged, guess
from ..runner.judge import Job, judge
from ..runner.started import process_start
from . import output

if TYPE_CHECKING:
    from ..model.chain import Models


def _models(args: argparse.Namespace) -> Models:
    """The run's model client: a missing warm worker is started in the background (library
    callers never get one), and ``--record``/``--replay`` name the cassette."""
    from ..model.chain import Models

    cassette = None
    if args.record or args.replay:
        from ..model.cassette import ENV_MODEL_OPTION, Cassette

        path = Path(args.record or args.replay)
        cassette = Cassette(path, "record" if args.record else "replay",
                            model_option=ENV_MODEL_OPTION)
    return Models(cassette=cassette, start_worker=True)


def _in_process(job: Job) -> int:
    """The work in this process (a call from Python): no supervisor, so no deadline for a
    hang, but the same answers."""
    channel = Channel()
    judge(job, channel)
    report = channel.report
    if report.reply is not None:
        stdout, code = report.reply
        if stdout:
            sys.stdout.write(stdout + "\n")
            sys.stdout.flush()
        return code
    from ..errors import EXIT_ERROR, EXIT_INTERNAL

    problem, kind = report.failed or ("internal error: the run ended before it answered",
                                      "internal")
    code = EXIT_ERROR if kind == "input" else EXIT_INTERNAL
    return answer_unjudged(problem, kind, guess(job.data, job.host, job.event), report,
                           job.managed, code, time.monotonic() + 5.0)


def main(args: argparse.Namespace) -> int:
    output.stdin_hint("run")
    debug = os.environ.get("PROMPTHOOKS_DEBUG") == "1"
    managed = managed_dirs(args.managed_dir)
    handed = args.handed
    started = (handed.started if handed is not None and handed.started is not None
               else process_start() if args.entry else time.monotonic())
    job = Job(b"", args.host, args.event, tuple(args.config or ()), managed, started,
              args.budget, debug, models=_models(args))
    if args.entry:
        from ..runner.supervisor import supervise

        return supervise(job, managed, handed)
    return _in_process(replace(job, data=sys.stdin.buffer.read()))
