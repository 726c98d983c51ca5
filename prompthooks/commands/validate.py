"""``prompthooks validate [--config PATH]...``: load every config and report each problem as
``file: json.path: message`` (errors, then warnings for keys it ignores); exit 1 on any error.
"""

from __future__ import annotations

import argparse
import os

from ..api import load_config
from ..errors import EXIT_ERROR, EXIT_OK


def main(args: argparse.Namespace) -> int:
    project = (os.environ.get("CLAUDE_PROJECT_DIR") or os.environ.get("CURSOR_PROJECT_DIR")
               or os.getcwd())
    env = {**os.environ, "PROMPTHOOKS_NO_CACHE": "1"}  # validate the files themselves
    config = load_config(args.config or None, project, env)
    errors = [*config.errors, *config.unknown_events]
    for line in errors:
        print(f"error: {line}")
    for line in config.warnings:
        print(f"warning: {line}")
    sources = ", ".join(s.path for s in config.loaded.sources) or "none found"
    count = len(config.hooks)
    print(f"{count} hook{'s' * (count != 1)} from {sources}; "
          f"{len(errors)} error{'s' * (len(errors) != 1)}, "
          f"{len(config.warnings)} warning{'s' * (len(config.warnings) != 1)}")
    return EXIT_ERROR if errors else EXIT_OK
