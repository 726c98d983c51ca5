"""``prompthooks eval DATASET --config PATH [--model A --model B] [--json]``, and
``prompthooks eval --library [--policy NAME] [--model M] [--limit N]``: every shipped policy
(or those named) on its benchmark (``prompts/bench/``; at most N of its cases with
``--limit``), its regex baseline beside it, failing below the thresholds each benchmark file
declares (or the command line's); bad options exit 64.

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

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from ..api import load_config
from ..devtools.eval_report import (
    LIBRARY_HEAD,
    bounded_note,
    html_page,
    library_cells,
    library_html,
    library_markdown,
    library_svg,
    markdown,
)
from ..devtools.evaluation import (
    COLUMNS,
    PolicyRun,
    Report,
    Row,
    Thresholds,
    evaluate,
    evaluate_bench,
    library_benchmarks,
    missed,
    read_dataset,
    table_rows,
)
from ..errors import EXIT_ERROR, EXIT_OK, EXIT_USAGE, PromptHooksError
from ..model.recording import Cassette, sources_line
from . import output


@contextmanager
def progress(total: int, label: str, show: bool) -> Iterator[Callable[[int, int], None] | None]:
    """A rich progress bar with ETA on stderr, only when stderr is a terminal."""
    if not (show and sys.stderr.isatty()):
        yield None
        return
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(label, total=total)
        yield lambda done, total: bar.update(task, completed=done, total=total)


def _tape(args: argparse.Namespace) -> Cassette | None:
    if args.replay or args.record:
        return Cassette(Path(args.replay or args.record), "replay" if args.replay else "auto")
    return None


def _unrecorded(tape: Cassette | None) -> list[str]:
    if tape is not None and tape.unrecorded:  # each said on stderr as it happened
        # The metrics stand (the verdicts were the model's), but the cassette is not filled.
        return [f"{len(tape.unrecorded)} of the model's replies not recorded in {tape.path}"]
    return []


def _write(path: str, text: str) -> None:
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise PromptHooksError(f"{path}: cannot write the report: "
                               f"{exc.strerror or exc}") from None


def main(args: argparse.Namespace) -> int:
    if args.library:
        if args.dataset or args.config:
            raise PromptHooksError("eval --library measures the shipped policies on their "
                                   "benchmarks: name no DATASET and no --config", EXIT_USAGE)
        return library(args)
    if args.policy or args.limit:
        raise PromptHooksError(f"eval: {'--policy' if args.policy else '--limit'} goes with "
                               "--library", EXIT_USAGE)
    if not args.dataset:
        raise PromptHooksError("eval: name a DATASET (JSON Lines), or --library for the "
                               "shipped policies' benchmarks", EXIT_USAGE)
    rows: list[Row] = read_dataset(Path(args.dataset))
    config = load_config(args.config or None, keep_managed=False)
    if config.errors:  # one line on stderr, as every error
        raise PromptHooksError(f"config {config.errors[0]}")
    tape = _tape(args)
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
    misses += _unrecorded(tape)
    if args.report:
        render = html_page if args.report.endswith((".html", ".htm")) else markdown
        _write(args.report, render(reports, args.dataset))
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


def library(args: argparse.Namespace) -> int:
    """``eval --library``: each shipped policy on its benchmark, per ``--model``; exit 1 when
    one misses a threshold (its benchmark's, or the command line's where given)."""
    paths = library_benchmarks()
    if args.policy:
        known = {path.stem: path for path in paths}
        unknown = [name for name in args.policy if name not in known]
        if unknown:
            raise PromptHooksError(f"eval --library: no benchmark for {unknown[0]!r}; the "
                                   f"shipped policies are {', '.join(known)}", EXIT_USAGE)
        paths = [known[name] for name in dict.fromkeys(args.policy)]
    tape = _tape(args)
    limits = Thresholds(args.min_precision, args.min_recall, args.max_fpr, args.max_errors)
    runs: list[PolicyRun] = []
    for model in args.model or [None]:
        for path in paths:
            before = dict(tape.sources) if tape else {}
            with progress(1, f"{model or 'eval'} {path.stem}", not args.json) as tick:
                run = evaluate_bench(path, model, limits, args.concurrency, args.budget,
                                     tick, tape, args.limit)
            if tape:  # this run's share of the cassette's counts
                run.model.sources = {source: count - before.get(source, 0)
                                     for source, count in tape.sources.items()
                                     if count > before.get(source, 0)}
            runs.append(run)
    misses = [line for run in runs for line in run.misses] + _unrecorded(tape)
    if args.report:
        _library_report(args.report, runs)
    if args.json:
        output.print_json([run.as_dict() for run in runs])
    else:
        for model in dict.fromkeys(run.model.model or "(as configured)" for run in runs):
            group = [run for run in runs if (run.model.model or "(as configured)") == model]
            output.table(LIBRARY_HEAD, (library_cells(run) for run in group),
                         title=f"model: {model}",
                         optional=("timeouts", "median cost $", "thresholds", "median s"),
                         verdicts=("result",))
        if args.limit:
            output.line(bounded_note(args.limit))
    for line in misses:
        print(f"prompthooks: eval: {line}", file=sys.stderr)
    return EXIT_ERROR if misses else EXIT_OK


def _library_report(path: str, runs: list[PolicyRun]) -> None:
    """HTML with the plot inline, or Markdown with the plot beside it (``<name>.svg``)."""
    if path.endswith((".html", ".htm")):
        _write(path, library_html(runs))
        return
    plot = Path(path).with_suffix(".svg")
    _write(str(plot), library_svg(runs))
    _write(path, library_markdown(runs, plot.name))
