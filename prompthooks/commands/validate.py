"""``prompthooks validate [--config PATH]...``: load every config, check what loading does
not (``loading.checks``: commands, events, tools, matchers, models), and report every problem
of every file as ``file: json.path: message`` (errors, then warnings), then a summary line;
exit 1 on any error. A project or user config is checked whether approved or not (nothing
runs), and its approval state is shown: ``prompthooks trust`` approves it.
"""

from __future__ import annotations

import argparse
import os

from .. import paths
from ..api import load_config
from ..errors import EXIT_ERROR, EXIT_OK
from ..loading.checks import check_sources, unique
from ..loading.ignored_files import unread_in_sources
from ..loading.managed import compiled_notes
from ..model.chain import unpinned_warnings
from . import output


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' * (count != 1)}"


def _printable(line: str) -> str:
    """``line`` with what cannot be printed as UTF-8 (an unpaired surrogate a JSON file can
    hold in a key) written as its escape."""
    return line.encode("utf-8", "backslashreplace").decode("utf-8")


def main(args: argparse.Namespace) -> int:
    project = paths.project_dir()
    env = {**os.environ, "PROMPTHOOKS_NO_CACHE": "1"}  # validate the files themselves
    config = load_config(args.config or None, project, env, trusted_only=False)

    failures = config.loaded.failures
    found = check_sources(config.loaded, project, env)
    errors = unique(map(_printable, [*(d for f in failures if f.kind == "config"
                                       for d in (f.details or (f.message,))),
                                     *config.unknown_events, *found.errors]))
    warnings = unique(map(_printable, [*config.warnings, *unpinned_warnings(config.hooks),
                                       *unread_in_sources(config.loaded.sources),
                                       *found.warnings]))
    # Sources left out on purpose (the managed policy allows managed hooks only): not errors.
    left_out = [f.message for f in failures if f.kind != "config"]
    # A folder with nothing prompthooks loads in it (left by hand, or by an editor) is no
    # source of hooks: not listed, nothing to approve.
    empty = {t.source for t in config.loaded.trust if t.state == "empty"}
    trust = [t for t in config.loaded.trust if t.state != "empty"]
    sources = [s.path for s in config.loaded.sources if s not in empty]
    # Not a problem: the managed policy is then validated on every event.
    notes = compiled_notes(config.loaded.sources)
    if args.json:
        output.print_json({"errors": errors, "warnings": warnings,
                           "hooks": len(config.hooks), "sources": sources,
                           "trust": [{"source": t.source.name, "path": t.source.path,
                                      "state": t.state, "trusted": t.trusted}
                                     for t in trust],
                           "left_out": left_out, "notes": notes})
        return EXIT_ERROR if errors else EXIT_OK
    problems = [("error", e) for e in errors] + [("warning", w) for w in warnings]
    if problems:
        output.table(("level", "problem"), problems, verdicts=("level",))
    for state in trust:
        advice = "" if state.trusted else f"; its hooks do not run; {state.advice()}"
        output.line(f"trust: {state.source.name} {state.source.path}: {state.describe()}"
                    f"{advice}",
                    None if state.trusted else "yellow")
    for message in left_out:
        output.line(f"left out: {message}", "yellow")
    for note in notes:
        output.line(f"note: {note}")
    output.line(f"{_plural(len(config.hooks), 'hook')} from {', '.join(sources) or 'none found'}"
                f"; {_plural(len(errors), 'error')}, {_plural(len(warnings), 'warning')}",
                "red" if errors else "green")
    return EXIT_ERROR if errors else EXIT_OK
