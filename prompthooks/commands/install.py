"""``prompthooks install --host HOST``: write the glue that makes the host call
``prompthooks run`` into the host's own config, and a starter prompthooks config where the
scope has none. Every check (events, JSON, foreign files) comes before the first write.

``--scope managed`` writes into the host's own managed config (Claude Code's managed settings,
Cursor's enterprise hooks file), which no project or user config can remove, names this
installation by absolute path (a PATH the user controls cannot swap in another program), and
leaves the files readable by every user and writable by their owner only."""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import stat
import sys
from pathlib import Path

from ..errors import EXIT_OK
from ..install import registry, starter
from ..install.glue import current_glue_command, glue_command
from ..install.host import choose_events


def managed_root(args: argparse.Namespace) -> Path:
    given = getattr(args, "managed_root", None)
    return Path(given) if given else registry.ROOT


def _readable_by_all(path: Path) -> None:
    """A managed file every user's host can read and only its owner can change."""
    with contextlib.suppress(OSError):
        mode = stat.S_IMODE(path.stat().st_mode)
        os.chmod(path, (mode | 0o444) & ~0o022)
        folder = stat.S_IMODE(path.parent.stat().st_mode)
        os.chmod(path.parent, (folder | 0o555) & ~0o022)


def main(args: argparse.Namespace) -> int:
    host = registry.HOSTS[args.host]
    events = choose_events(host, args.events)
    project = registry.project_dir(args.scope, args.project)
    root = managed_root(args)
    place = registry.location(host, args.scope, project, root)
    managed = args.scope == "managed"
    glue = glue_command(None, sys.executable, sys.argv[0]) if managed else current_glue_command()
    host.install(place, events, glue, args.force, print)
    folder = starter.folder(args.scope, project, root)
    config = starter.write(folder, print, args.scope)
    if managed:
        for path in (place, config):
            if path.is_file():
                _readable_by_all(path)
    print(f"next: prompthooks validate --config {shlex.quote(str(folder))} checks your hooks; "
          "prompthooks explain shows what an event would run")
    return EXIT_OK
