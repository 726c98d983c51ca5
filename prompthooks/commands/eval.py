"""``prompthooks eval DATASET --config PATH [--model A --model B] [--json]``.

Errored rows (no verdict) are counted apart. Exit 1 when a threshold is missed
(``--min-precision``, ``--min-recall``, ``--max-fpr``, ``--max-errors``, default 0 errors), one
line per missed threshold; ``--report PATH`` writes a Markdown or HTML report. With a cassette,
each model run also says where its verdicts came from (model recordings, reference verdicts,
the model asked now), in the table, ``--json`` (``sources``) and the report.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ..api import load_config
from ..devtools.evaluation import (
    COLUMNS,
    Report,
    Row,
    Thresholds,
    evaluate,
    missed,
    read_dataset,
    table_rows,
)
from ..errors import EXIT_ERROR, EXIT_OK, PromptHooksError
from ..model.cassette import Cassette, sources_line
from . import output


@contextmanager
def progress(total: int, label: str, show: bool) -> Iterator[Callable[[int, int], None] | None]:
    """A rich progress bar with ETA on stderr, only when stderr is a terminal."""
    if not (show and sys.stderr.isatty()):
        yield None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(label, total=total)
        yield lambda done, _total: bar.update(task, completed=done)


def main(args: argparse.Namespace) -> int:
    rows: list[Row] = read_dataset(Path(args.dataset))
    config = load_config(args.config or None, keep_managed=False)
    if config.errors:  # one line on stderr, as every error
        raise PromptHooksError(f"config {config.errors[0]}")
    tape = None
    if args.replay or args.record:
        tape = Cassette(Path(args.replay or args.record), "replay" if args.replay else "auto")
    reports: list[Report] = []
    for model in args.model or [None]:
        before = dict(tape.sources) if tape else {}
        with progress(len(rows), model or "eval", not args.json) as tick:
            report = evaluate(rows, config, model, args.concurrency, args.budget, tick, tape)
        if tape:  # this run's share of the cassette's counts
            report.sources = {source: count - before.get(source, 0)
                              for source, count in tape.sources.items()
                              if count > before.get(source, 0)}
        reports.append(report)
    limits = Thresholds(args.min_precision, args.min_recall, args.max_fpr, args.max_errors)
    misses = [line for report in reports for line in missed(report, limits)]
    if tape is not None and tape.unrecorded:  # each said on stderr as it happened
        # The metrics stand (the verdicts were the model's), but the cassette is not filled.
        misses.append(f"{len(tape.unrecorded)} of the model's replies not recorded in "
                      f"{tape.path}")
    if args.report:
        from ..devtools.eval_report import html_page, markdown

        render = html_page if args.report.endswith((".html", ".htm")) else markdown
        try:
            Path(args.report).write_text(render(reports, args.dataset), encoding="utf-8")
        except OSError as exc:
            raise PromptHooksError(f"{args.report}: cannot write the report: "
                                   f"{exc.strerror or exc}") from None
    if args.json:
        output.print_json([r.as_dict() for r in reports])
    else:
        for report in reports:
            output.table(COLUMNS, table_rows(report),
                         title=f"model: {report.model or '(as configured)'}",
                         optional=("p50 s", "tokens", "cost $", "tn", "tp", "fn", "fp"))
            if tape:
                output.line(sources_line(report.sources))
    for line in misses:
        print(f"prompthooks: eval: {line}", file=sys.stderr)
    return EXIT_ERROR if misses else EXIT_OK
