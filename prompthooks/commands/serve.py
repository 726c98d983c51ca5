"""``prompthooks serve``: the warm worker (see :mod:`prompthooks.dispatcher.resident`)."""

from __future__ import annotations

import argparse
import os

from ..dispatcher.resident import IDLE_SECONDS, serve


def main(args: argparse.Namespace) -> int:
    idle = args.idle
    if idle is None:
        try:
            idle = float(os.environ.get("PROMPTHOOKS_WORKER_IDLE") or IDLE_SECONDS)
        except ValueError:
            idle = IDLE_SECONDS
    return serve(idle=idle, system=bool(getattr(args, "system", False)))
