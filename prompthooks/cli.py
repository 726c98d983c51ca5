"""The ``prompthooks`` command: parses arguments, dispatches, and is the one place that turns
errors into a single line on stderr and a documented exit code."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from . import __version__
from .errors import EXIT_ERROR, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_USAGE, PromptHooksError


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # argparse would exit 2, which Claude Code and Cursor read as "block".
        raise PromptHooksError(f"{message} (see: {self.prog} --help)", EXIT_USAGE)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="prompthooks",
                     description="Run command and prompt hooks for Claude Code, Cursor and Cline.")
    parser.add_argument("--version", action="version", version=f"prompthooks {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True
    run = commands.add_parser("run", help="run the hooks for one event read from stdin")
    run.add_argument("event", nargs="?", metavar="EVENT",
                     help="the host's event name (default: the one in the input)")
    run.add_argument("--host", choices=("claude", "cursor", "cline"),
                     help="the host that sent the event (default: detected from the input)")
    run.add_argument("--config", action="append", metavar="PATH", default=[],
                     help="a config file or folder; repeatable, first is highest priority; "
                          "replaces discovery")
    run.add_argument("--budget", type=float, metavar="SECONDS",
                     help="answer within this many seconds (default: per host, see README)")
    run.add_argument("--managed-dir", metavar="DIR", help=argparse.SUPPRESS)
    tape = run.add_mutually_exclusive_group()
    tape.add_argument("--record", metavar="CASSETTE",
                      help="ask the model and record its replies into CASSETTE")
    tape.add_argument("--replay", metavar="CASSETTE",
                      help="answer prompt hooks from CASSETTE, never from the network")

    validate = commands.add_parser("validate", help="check configs: every problem as "
                                   "'file: json.path: message'; exit 1 on any error")
    validate.add_argument("--config", action="append", metavar="PATH", default=[],
                          help="a config file or folder (repeatable; default: discovery)")

    serve = commands.add_parser("serve", help="run the warm worker for prompt hooks "
                                "(started on demand by run; by hand for a fixed setup)")
    serve.add_argument("--idle", type=float, metavar="SECONDS",
                       help="exit after this long without a request (default 600, or "
                            "PROMPTHOOKS_WORKER_IDLE)")

    commands.add_parser("demo", help="run example events from every host through the example "
                        "hooks, offline on recorded model replies")

    test = commands.add_parser("test", help="run policy test cases offline (YAML case files)")
    test.add_argument("paths", nargs="+", metavar="PATH", help="case files or folders")
    refresh = test.add_mutually_exclusive_group()
    refresh.add_argument("--record", action="store_true",
                         help="ask the model and refresh the recorded replies")
    refresh.add_argument("--rerecord", action="store_true",
                         help="ask the model again and report drifted verdicts; write nothing")

    ev = commands.add_parser("eval", help="measure hooks on a labeled dataset (JSON Lines)")
    ev.add_argument("dataset", metavar="DATASET")
    ev.add_argument("--config", action="append", metavar="PATH", default=[],
                    help="config file or folder (repeatable; default: discovery)")
    ev.add_argument("--model", action="append", metavar="MODEL",
                    help="run every prompt hook on MODEL; repeat to compare models")
    ev.add_argument("--concurrency", type=int, default=4, metavar="N")
    ev.add_argument("--budget", type=float, default=60.0, metavar="SECONDS")
    ev.add_argument("--json", action="store_true", help="print the report as JSON")
    tape = ev.add_mutually_exclusive_group()
    tape.add_argument("--replay", metavar="CASSETTE", help="answer from CASSETTE only")
    tape.add_argument("--record", metavar="CASSETTE",
                      help="replay what CASSETTE has, record what it lacks")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    debug = os.environ.get("PROMPTHOOKS_DEBUG") == "1"
    try:
        args = build_parser().parse_args(argv)
        from importlib import import_module

        command = import_module(f".commands.{args.command}", __package__)
        return int(command.main(args))
    except PromptHooksError as exc:
        if debug:
            raise
        print(f"prompthooks: {exc.message}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`prompthooks demo | head`): nothing left to say to it.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_ERROR
    except Exception as exc:
        if debug:
            raise
        print(f"prompthooks: internal error: {exc!r} (set PROMPTHOOKS_DEBUG=1 for the traceback)",
              file=sys.stderr)
        return EXIT_INTERNAL
