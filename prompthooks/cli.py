"""The ``prompthooks`` command: parses arguments, dispatches, and is the one place that turns
errors into a single line on stderr and a documented exit code."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence
from importlib import import_module
from typing import NoReturn

from ._version import __version__
from .errors import EXIT_USAGE, PromptHooksError, reported
from .hosts import NAMES


class _Parser(argparse.ArgumentParser):
    """argparse with prompthooks' usage errors (one line, exit 64, the closest command,
    option or choice named) and help pages (description, examples, exit codes), which are
    loaded only when help is printed: ``run`` builds this parser on every event."""

    def error(self, message: str) -> NoReturn:
        # argparse would exit 2, which Claude Code and Cursor read as "block".
        raise PromptHooksError(f"{message} (see: {self.prog} --help)", EXIT_USAGE)

    def _check_value(self, action: argparse.Action, value: object) -> None:
        # One wording on every Python version, and the choice that was probably meant.
        if action.choices is not None and value not in action.choices:
            # the typo finder (difflib) only for a command line that does not parse
            from .commands.usage import invalid_choice

            raise argparse.ArgumentError(
                None if isinstance(action, argparse._SubParsersAction) else action,
                invalid_choice(action, value))

    def parse_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                   namespace: argparse.Namespace | None = None) -> argparse.Namespace:
        parsed, extra = self.parse_known_args(args, namespace)
        if extra:  # said by the parser of the command they were given to
            from .commands.usage import unrecognized  # as in _check_value

            owner = _command_parser(self, getattr(parsed, "command", None)) or self
            owner.error(unrecognized(extra, owner))
        if getattr(parsed, "command", "") is None:
            self.error("the following arguments are required: COMMAND")
        return parsed

    def format_help(self) -> str:
        # the help pages only when help is printed: no command that runs loads them
        from .commands.usage import Formatter, epilog, page

        found = page(self.prog)
        if found is not None:
            self.formatter_class = Formatter
            self.description = found.description
            self.epilog = epilog(found)
        return super().format_help()


def _command_parser(parser: argparse.ArgumentParser,
                    name: str | None) -> argparse.ArgumentParser | None:
    """The parser of the command ``name``, if ``parser`` has one by that name."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and name in action.choices:
            found: argparse.ArgumentParser = action.choices[name]
            return found
    return None


def _seconds(text: str) -> float:
    """A positive, finite number of seconds (argparse's float takes -1, inf and nan)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < value < 1e6:
        raise argparse.ArgumentTypeError(f"{text!r}: give a number of seconds above 0 "
                                         "(and below 1e6)")
    return value


def _count(text: str) -> int:
    """A whole number above 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give a whole number above 0")
    return value


def _config_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", action="append", metavar="PATH", default=[],
                        help="a config file or folder (repeatable; default: discovery)")


def _json_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true",
                        help="print JSON instead of a table (for scripts)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="prompthooks")  # descriptions: commands/usage.py
    parser.add_argument("--version", action="version", version=f"prompthooks {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    # Required, but checked in _Parser.parse_args: argparse's own check would come before
    # naming the option meant by a mistyped one (`prompthooks --hlep`).
    commands.required = False
    run = commands.add_parser("run", help="run the hooks for one event read from stdin")
    run.add_argument("event", nargs="?", metavar="EVENT",
                     help="the host's event name (default: the one in the input)")
    run.add_argument("--host", choices=NAMES,
                     help="the host that sent the event (default: detected from the input)")
    run.add_argument("--config", action="append", metavar="PATH", default=[],
                     help="a config file or folder; repeatable, first is highest priority; "
                          "replaces discovery")
    run.add_argument("--budget", type=_seconds, metavar="SECONDS",
                     help="answer within this many seconds "
                          "(default: per host, see docs/performance.md)")
    run.add_argument("--managed-dir", metavar="DIR", help=argparse.SUPPRESS)
    tape = run.add_mutually_exclusive_group()
    tape.add_argument("--record", metavar="CASSETTE",
                      help="ask the model and record its replies into CASSETTE")
    tape.add_argument("--replay", metavar="CASSETTE",
                      help="answer prompt hooks from CASSETTE, never from the network")

    validate = commands.add_parser("validate", help="check configs: every problem as "
                                   "'file: json.path: message'; exit 1 on any error")
    _config_option(validate)
    _json_option(validate)

    for name, text in (("install", "wire prompthooks into a host's own config"),
                       ("uninstall", "remove exactly what install added")):
        glue = commands.add_parser(name, help=text)
        glue.add_argument("--host", choices=NAMES, required=True,
                          help="the host whose own config holds the glue")
        glue.add_argument("--scope", choices=("project", "local", "user", "managed"),
                          default="project",
                          help="the project's host config (default), the project's "
                               "uncommitted personal one (Claude Code), the user's, or the "
                               "host's own managed settings (Claude Code, Cursor)")
        glue.add_argument("--managed-root", metavar="DIR", help=argparse.SUPPRESS)
        glue.add_argument("--project", metavar="DIR",
                          help="the project folder (default: the current directory)")
        glue.add_argument("--dry-run", action="store_true",
                          help="say what would change; write nothing")
        glue.add_argument("--json", action="store_true",
                          help="print what changed as JSON (for scripts)")
        if name == "install":
            glue.add_argument("--events", nargs="+", metavar="EVENT",
                              help="the host's event names to cover (default: see docs/hosts.md)")
            glue.add_argument("--warm-start", action="store_true",
                              help="also cover the host's session start, which starts the "
                                   "warm worker early for prompt hooks on litellm's path")
            glue.add_argument("--offline", action="store_true",
                              help="do not try the starter's model with one tiny request")
            glue.add_argument("--force", action="store_true",
                              help="replace a Cline hook file prompthooks did not write")
            glue.add_argument("--glue", choices=("auto", "absolute", "bare", "launcher"),
                              default="auto",
                              help="how the glue names prompthooks. auto (the default): "
                                   "a project's committed files run a launcher in the project "
                                   "that finds prompthooks at run time; one user's files say "
                                   "'prompthooks run' when a desktop-started host finds this "
                                   "installation on its PATH, else its absolute path. "
                                   "absolute: always that path (not in a project's files). "
                                   "bare: always 'prompthooks run'. launcher: the project "
                                   "launcher (project scope only)")

    explain = commands.add_parser("explain", help="dry run: the sources, the hooks that would "
                                  "run and why, and each prompt as it would be sent")
    explain.add_argument("event", nargs="?", metavar="EVENT",
                         help="the host's event name (default: the one in the input)")
    explain.add_argument("--host", choices=NAMES,
                         help="the host that sent the event (default: detected from the input)")
    _config_option(explain)
    _json_option(explain)
    explain.add_argument("--managed-dir", metavar="DIR", help=argparse.SUPPRESS)

    doctor = commands.add_parser("doctor", help="versions, config sources, models and whether "
                                 "they answer, the warm worker, the installed host glue")
    doctor.add_argument("--offline", action="store_true",
                        help="do not send the one tiny request per model")
    doctor.add_argument("--project", metavar="DIR",
                        help="the project folder (default: the current directory)")
    _config_option(doctor)
    _json_option(doctor)
    doctor.add_argument("--managed-dir", metavar="DIR", help=argparse.SUPPRESS)

    trust = commands.add_parser("trust", help="show the hooks of the project's or user's "
                                "config and what changed since approved, then approve it as it "
                                "is now (new or changed configs do not run until approved)")
    trust.add_argument("--project", metavar="DIR",
                       help="the project folder (default: the current directory)")
    trust.add_argument("--user", action="store_true",
                       help="the user's config ($XDG_CONFIG_HOME/prompthooks)")
    change = trust.add_mutually_exclusive_group()
    change.add_argument("--revoke", action="store_true", help="take the approval back")
    change.add_argument("--list", action="store_true",
                        help="every source and approval with its state")
    trust.add_argument("--force", action="store_true",
                       help="approve a config even though it fails validation")
    _json_option(trust)

    log = commands.add_parser("log", help="recent decisions from the audit log; "
                              "'log stats' for counts, block rates and latency per hook")
    log.add_argument("view", nargs="?", choices=("stats",), metavar="stats",
                     help="summarise per hook instead of listing decisions")
    log.add_argument("--since", metavar="WHEN",
                     help="only newer rows: a duration (30m, 12h, 7d) or an ISO date/time")
    log.add_argument("--decision", choices=("allow", "ask", "deny", "none", "error"),
                     help="only rows with this decision")
    log.add_argument("--hook", metavar="TEXT", help="only hooks whose name contains TEXT")
    log.add_argument("--limit", type=int, default=None, metavar="N",
                     help="at most N rows, the newest (default 50, or 10 with --follow; "
                          "0: all)")
    log.add_argument("--db", metavar="PATH", help="the audit database (default: see docs/cli.md)")
    log.add_argument("--format", choices=("table", "json", "jsonl"),
                     help="a table (default), a JSON array, or JSON Lines: one object per "
                          "row, oldest first")
    log.add_argument("--follow", "-f", action="store_true",
                     help="keep printing rows as they are written (until Ctrl-C)")
    _json_option(log)

    serve = commands.add_parser("serve", help="run the warm worker for prompt hooks "
                                "(started on demand by run; by hand for a fixed setup)")
    serve.add_argument("--idle", type=_seconds, metavar="SECONDS",
                       help="exit after this long without a request (default 600, or "
                            "PROMPTHOOKS_WORKER_IDLE)")
    serve.add_argument("--system", action="store_true",
                       help="the system resident process for managed events (run by root; "
                            "socket /run/prompthooks/socket; see docs/security.md)")

    keys = commands.add_parser("keys", help="store model keys for prompt hooks (used when "
                               "the environment has none), list or remove them")
    keys.add_argument("action", choices=("set", "list", "remove"))
    keys.add_argument("name", nargs="?", metavar="PROVIDER",
                      help="anthropic, openai, gemini... (set reads the key from a prompt "
                           "or stdin)")
    _json_option(keys)
    aliases = commands.add_parser("aliases", help="short names for models: 'aliases set fast "
                                  "openai/gpt-4.1-mini', then \"model\": \"fast\"")
    aliases.add_argument("action", choices=("set", "list", "remove"))
    aliases.add_argument("name", nargs="?", metavar="ALIAS")
    aliases.add_argument("model", nargs="?", metavar="MODEL")
    _json_option(aliases)

    commands.add_parser("demo", help="run example events from every host through the example "
                        "hooks, offline on recorded model replies")

    test = commands.add_parser("test", help="run policy test cases offline (YAML case files)")
    test.add_argument("paths", nargs="*", metavar="PATH", help="case files or folders")
    test.add_argument("--library", action="store_true",
                      help="also run the shipped policy library's own suites")
    refresh = test.add_mutually_exclusive_group()
    refresh.add_argument("--record", action="store_true",
                         help="ask the model and refresh the recorded replies (reference "
                              "verdicts too)")
    refresh.add_argument("--rerecord", action="store_true",
                         help="ask the model again and report drifted verdicts; write nothing")
    refresh.add_argument("--write-references", action="store_true",
                         help="write the cases' expected verdicts as reference entries (not "
                              "a model's output) for the prompt hooks with no recording")
    test.add_argument("--replace-references", action="store_true",
                      help="with --write-references: rewrite earlier reference entries too "
                           "(model recordings are never overwritten)")
    test.add_argument("--model", metavar="MODEL",
                      help="run every prompt hook on MODEL (default: the case file's 'model', "
                           "else its config's; PROMPTHOOKS_MODEL is not used)")
    _json_option(test)

    completion = commands.add_parser("completion", help="print a shell completion script "
                                     "(bash, zsh or fish; see docs/cli.md for loading it)")
    completion.add_argument("shell", choices=("bash", "zsh", "fish"), metavar="SHELL",
                            help="bash, zsh or fish")

    pk = commands.add_parser("packs", help="fetch the policy packs the configs pin into the "
                             "user's cache ('run' never fetches), or list them")
    pk.add_argument("action", choices=("fetch", "list"))
    _config_option(pk)
    _json_option(pk)

    mg = commands.add_parser("managed", help="compile the managed policy (as its folder's "
                             "owner) so events load it without validating it again")
    mg.add_argument("action", choices=("compile",))
    # Another managed folder than /etc/prompthooks (as run's): hidden, like run's.
    mg.add_argument("--managed-dir", metavar="DIR", help=argparse.SUPPRESS)

    update = commands.add_parser("autoupdate", help="move each pinned pack to its newest tag "
                                 "and rewrite the config (like pre-commit autoupdate)")
    update.add_argument("--freeze", action="store_true",
                        help="pin the commit SHA of the newest tag instead of its name")
    _config_option(update)
    _json_option(update)

    tp = commands.add_parser("try-pack", help="run a policy pack's test suites without "
                             "using it (a folder, or a git URL or path)")
    tp.add_argument("pack", metavar="PATH|URL")
    tp.add_argument("--rev", metavar="REV", help="the revision to fetch (default: HEAD; a "
                    "folder given without --rev is used as it is)")
    tp.add_argument("--policy", action="append", default=[], metavar="ID",
                    help="only this policy's suites (repeatable)")
    again = tp.add_mutually_exclusive_group()
    again.add_argument("--record", action="store_true",
                       help="ask the model and refresh the recorded replies (a folder's own "
                            "cassettes; a fetched copy's are thrown away)")
    again.add_argument("--rerecord", action="store_true",
                       help="ask the model again and report drifted verdicts; write nothing")
    tp.add_argument("--model", metavar="MODEL", help="run every policy on MODEL")
    _json_option(tp)

    ev = commands.add_parser("eval", help="measure hooks on a labeled dataset (JSON Lines), "
                             "or the shipped policies on their benchmarks (--library)")
    ev.add_argument("dataset", metavar="DATASET", nargs="?")
    ev.add_argument("--library", action="store_true",
                    help="measure every shipped policy on its benchmark, beside a regex "
                    "baseline (exit 1 below a benchmark's thresholds)")
    ev.add_argument("--policy", action="append", metavar="NAME",
                    help="with --library: only this shipped policy; repeat for more")
    ev.add_argument("--limit", type=_count, metavar="N",
                    help="with --library: at most N cases per policy, the same every run "
                    "(a bounded run, said so in its report)")
    _config_option(ev)
    ev.add_argument("--model", action="append", metavar="MODEL",
                    help="run every prompt hook on MODEL; repeat to compare models")
    ev.add_argument("--concurrency", type=int, default=4, metavar="N",
                    help="rows run at once (default 4)")
    ev.add_argument("--budget", type=_seconds, default=60.0, metavar="SECONDS",
                    help="each row's run answers within this many seconds (default 60)")
    _json_option(ev)
    tape = ev.add_mutually_exclusive_group()
    tape.add_argument("--replay", metavar="CASSETTE", help="answer from CASSETTE only")
    tape.add_argument("--record", metavar="CASSETTE",
                      help="replay what CASSETTE has, record what it lacks")
    gate = ev.add_argument_group("thresholds (exit 1 when one is missed)")
    gate.add_argument("--min-precision", type=float, metavar="RATIO",
                      help="the lowest precision allowed")
    gate.add_argument("--min-recall", type=float, metavar="RATIO",
                      help="the lowest recall allowed")
    gate.add_argument("--max-fpr", type=float, metavar="RATIO",
                      help="the highest false-positive rate allowed")
    gate.add_argument("--max-errors", type=int, default=0, metavar="N",
                      help="errored rows (no verdict) allowed (default 0)")
    ev.add_argument("--report", metavar="PATH",
                    help="write a report: HTML if PATH ends in .html, else Markdown")
    return parser


def _leave(code: int) -> NoReturn:
    """End the `run` process now: the reply is written and the audit rows are stored, and the
    host waits for the exit. The interpreter's own teardown takes about a second once litellm
    is loaded, and would let a hook thread still being stopped hold the process."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a reader that went away, a closed stream
            stream.flush()
    os._exit(code)


def _work_left_running() -> bool:
    """Whether a background thread still runs: the model calls' loop, or a call given up at its
    deadline (still importing litellm, say). The interpreter's teardown stops such a thread
    where it stands, and one stopped inside native code aborts the process (exit -6 instead of
    the command's code), so the process then ends the way `run` does."""
    # A command that never imported threading started no thread (nor does --help pay for it).
    threading = sys.modules.get("threading")
    return threading is not None and any(thread.daemon and thread.is_alive()
                                         for thread in threading.enumerate())


def _standard_streams() -> None:
    """A closed stdin, stdout or stderr becomes /dev/null: otherwise Python leaves the stream
    None (``print(file=None)`` writes to stdout: error lines around the JSON reply), and the
    next file opened would take its number."""
    for fd, name, mode in ((0, "stdin", "r"), (1, "stdout", "w"), (2, "stderr", "w")):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
            setattr(sys, name, open(fd, mode, closefd=False))  # noqa: SIM115
            continue
        if getattr(sys, name) is None:
            setattr(sys, name, open(fd, mode, closefd=False))  # noqa: SIM115


def main(argv: Sequence[str] | None = None) -> int:
    """The command line ``argv`` (None: the process's own, where ``run`` counts its budget from
    the spawn, as the host does, under a supervisor)."""
    debug = os.environ.get("PROMPTHOOKS_DEBUG") == "1"
    if argv is None:  # the process's own streams: not a call from Python
        _standard_streams()

    def command() -> int:
        parser = build_parser()
        args = parser.parse_args(argv)
        args.entry = argv is None  # not a call from Python
        args.parser = parser  # what `completion` describes: commands never import the CLI
        module = import_module(f".commands.{args.command.replace('-', '_')}", __package__)
        code = int(module.main(args))
        if argv is None and (args.command == "run" or _work_left_running()):
            _leave(code)
        return code

    return reported(command, debug)
