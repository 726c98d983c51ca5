"""``prompthooks doctor``: is everything in place? Versions, config sources, the model each
prompt hook would use and whether it answers (one tiny request each, skipped with
``--offline``), the warm worker, the audit log and the host glue. Exit 1 if a check failed.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from .. import paths
from ..api import load_config
from ..config import discovery
from ..devtools.doctor import run_checks
from ..errors import EXIT_ERROR, EXIT_OK, PromptHooksError
from . import output


def main(args: argparse.Namespace) -> int:
    project = Path(args.project or paths.project_dir()).absolute()
    if not project.is_dir():
        raise PromptHooksError(f"no such project folder: {project}")
    managed = discovery.managed_dirs(args.managed_dir)
    env = {**os.environ, "PROMPTHOOKS_NO_CACHE": "1"}  # check the files themselves
    config = load_config(args.config or None, str(project), env, managed)
    checks = run_checks(config, project, args.offline)
    failed = sum(c["status"] == "fail" for c in checks)
    if args.json:
        output.print_json({"checks": checks, "failed": failed})
    else:
        output.table(("check", "status", "detail"),
                     ([c["check"], c["status"].upper(), c["detail"]] for c in checks),
                     title=f"prompthooks doctor: {project}", verdicts=("status",))
        output.line(f"{failed} check{'s' * (failed != 1)} failed" if failed
                    else "no check failed", "red" if failed else "green")
    return EXIT_ERROR if failed else EXIT_OK
