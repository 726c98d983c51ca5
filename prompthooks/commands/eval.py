"""``prompthooks eval DATASET --config PATH [--model A --model B] [--json]``."""

from __future__ import annotations

import argparse
from pathlib import Path

from .. import output
from ..api import load_config
from ..errors import EXIT_ERROR, EXIT_OK
from ..evaluation import COLUMNS, evaluate, progress_bar, read_dataset, table_rows
from ..recording.cassette import Cassette, activate


def main(args: argparse.Namespace) -> int:
    rows = read_dataset(Path(args.dataset))
    config = load_config(args.config or None, keep_managed=False)
    if config.errors:
        print(f"prompthooks: config {config.errors[0]}")
        return EXIT_ERROR
    if args.replay or args.record:
        activate(Cassette(Path(args.replay or args.record), "replay" if args.replay else "auto"))
    reports = [evaluate(rows, config, model, args.concurrency, args.budget,
                        None if args.json else progress_bar)
               for model in (args.model or [None])]
    if args.json:
        output.print_json([r.as_dict() for r in reports])
        return EXIT_OK
    for report in reports:
        output.table(COLUMNS, table_rows(report),
                     title=f"model: {report.model or '(as configured)'}")
    return EXIT_OK
