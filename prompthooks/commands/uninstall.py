"""``prompthooks uninstall --host HOST``: take out exactly what install put in: the glue
entries or files (restoring what they replaced or changed), and the starter config while it
is unchanged and no other host's glue of the same scope uses it."""

from __future__ import annotations

import argparse

from ..errors import EXIT_OK
from ..install import registry, starter
from .install import managed_root


def main(args: argparse.Namespace) -> int:
    host = registry.HOSTS[args.host]
    project = registry.project_dir(args.scope, args.project)
    root = managed_root(args)
    place = registry.location(host, args.scope, project, root)
    host.uninstall(place, print)
    starter.remove(starter.folder(args.scope, project, root),
                   registry.others_installed(host, args.scope, project, root), print)
    print(f"done: {host.title} no longer calls prompthooks from {place}")
    return EXIT_OK
