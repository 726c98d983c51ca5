"""``prompthooks install --host HOST``: write the glue that makes the host call
``prompthooks run`` into the host's own config, and a starter prompthooks config where the
scope has none. Every check (events, JSON, foreign files) comes before the first write."""

from __future__ import annotations

import argparse
import shlex

from ..errors import EXIT_OK
from ..install import registry, starter
from ..install.glue import current_glue_command
from ..install.host import choose_events


def main(args: argparse.Namespace) -> int:
    host = registry.HOSTS[args.host]
    events = choose_events(host, args.events)
    project = registry.project_dir(args.scope, args.project)
    host.install(registry.location(host, args.scope, project), events, current_glue_command(),
                 args.force, print)
    folder = starter.folder(args.scope, project)
    starter.write(folder, print, args.scope)
    print(f"next: prompthooks validate --config {shlex.quote(str(folder))} checks your hooks; "
          "prompthooks explain shows what an event would run")
    return EXIT_OK
