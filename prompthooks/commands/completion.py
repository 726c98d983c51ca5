"""``prompthooks completion bash|zsh|fish``: print the shell's completion script, generated
from this version's own command line (see :mod:`prompthooks.commands.shell_completion`)."""

from __future__ import annotations

import argparse
import sys

from ..errors import EXIT_OK
from .shell_completion import script


def main(args: argparse.Namespace) -> int:
    sys.stdout.write(script(args.shell, args.parser))
    sys.stdout.flush()
    return EXIT_OK
