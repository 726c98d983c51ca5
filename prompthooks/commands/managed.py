"""``prompthooks managed compile [--managed-dir DIR]``: validate the managed policy and write
it, compiled, into its folder (``loading.managed``), as that folder's owner."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..config.discovery import MANAGED_DIR
from ..core.hook import Source
from ..errors import EXIT_OK, PromptHooksError
from ..loading.managed import compile_folder
from . import output


def main(args: argparse.Namespace) -> int:
    folder = Path(args.managed_dir) if args.managed_dir else MANAGED_DIR
    if not folder.is_dir():
        raise PromptHooksError(f"no managed policy folder: {folder}")
    # The source as a run's discovery names it: hooks carry it, so it is part of the key.
    source = Source("managed", str(folder), 0)
    try:
        path = compile_folder(source, folder)
    except (ValueError, OSError) as exc:
        raise PromptHooksError(str(exc)) from None
    output.line(f"compiled {path}: events load the managed policy from it until the policy "
                "or prompthooks changes (then run this again)")
    return EXIT_OK
