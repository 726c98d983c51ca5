"""``prompthooks validate [--config PATH]...``: load every config and report each problem as
``file: json.path: message`` (errors, then warnings for keys it ignores); exit 1 on any error.
"""

from __future__ import annotations

import argparse
import os

from .. import output
from ..api import load_config
from ..errors import EXIT_ERROR, EXIT_OK


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' * (count != 1)}"


def main(args: argparse.Namespace) -> int:
    project = (os.environ.get("CLAUDE_PROJECT_DIR") or os.environ.get("CURSOR_PROJECT_DIR")
               or os.getcwd())
    env = {**os.environ, "PROMPTHOOKS_NO_CACHE": "1"}  # validate the files themselves
    config = load_config(args.config or None, project, env)
    from ..model.pinned import unpinned_warnings

    errors = [*config.errors, *config.unknown_events]
    warnings = [*config.warnings, *unpinned_warnings(config.hooks)]
    sources = [s.path for s in config.loaded.sources]
    if args.json:
        output.print_json({"errors": errors, "warnings": warnings,
                           "hooks": len(config.hooks), "sources": sources})
        return EXIT_ERROR if errors else EXIT_OK
    problems = [("error", e) for e in errors] + [("warning", w) for w in warnings]
    if problems:
        output.table(("level", "problem"), problems)
    output.line(f"{_plural(len(config.hooks), 'hook')} from {', '.join(sources) or 'none found'}"
                f"; {_plural(len(errors), 'error')}, {_plural(len(warnings), 'warning')}",
                "red" if errors else "green")
    return EXIT_ERROR if errors else EXIT_OK
