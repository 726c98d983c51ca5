"""``prompthooks uninstall --host HOST``: take out exactly what install put in: the glue
entries or files (restoring what they replaced or changed), the starter config while it
is unchanged and no other glue that uses it remains, and the folders install created once
they are empty. ``--dry-run`` and ``--json`` as for install."""

from __future__ import annotations

import argparse
import os

from ..errors import EXIT_OK
from ..install import created_folders, files, launcher, originals
from ..setup import registry, starter
from .install import Report, managed_root


def main(args: argparse.Namespace) -> int:
    host = registry.HOSTS[args.host]
    project = registry.project_dir(args.scope, args.project)
    root = managed_root(args)
    place = registry.location(host, args.scope, project, root)
    report = Report(args.json, args.dry_run)
    folder = starter.folder(args.scope, project, root)
    with files.journal(args.dry_run) as journal:
        host.uninstall(place, report.say)
        runner = project / host.launcher if args.scope == "project" and host.launcher else None
        if runner is not None:
            launcher.remove(runner, report.say)
        starter.remove(folder, registry.others_installed(host, args.scope, project, root),
                       report.say)
        created_folders.prune(
            (place, folder, originals.record(place), *([runner] if runner else [])),
            os.environ, report.say)
    report.finish(journal, f"done: {host.title} no longer calls prompthooks from {place}",
                  host=host.name, scope=args.scope, location=str(place), config=str(folder))
    return EXIT_OK
