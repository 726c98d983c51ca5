"""``prompthooks serve``: the warm worker (see :mod:`prompthooks.model.worker`)."""

from __future__ import annotations

import argparse

from ..model.worker import serve


def main(args: argparse.Namespace) -> int:
    return serve(idle=args.idle)
