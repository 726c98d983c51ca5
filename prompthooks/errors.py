"""The one user-facing error type and the exit codes it maps to.

Exit code 2 means "block" to Claude Code and Cursor, so prompthooks never uses it for its own
errors: only a fail-closed hook may turn an error into a block.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence

# Documented exit codes of the `prompthooks` command (see docs/hosts.md, "Exit codes of
# `prompthooks run`").
EXIT_OK = 0
EXIT_ERROR = 1  # bad input, bad config, unknown event: a non-blocking error for every host
EXIT_BLOCK = 2  # only ever used to block on behalf of a fail-closed hook
EXIT_INTERNAL = 3  # a bug in prompthooks; rerun with PROMPTHOOKS_DEBUG=1 for the traceback
EXIT_USAGE = 64  # bad command-line arguments
EXIT_INTERRUPTED = 130


def excerpt(data: str | bytes, limit: int = 200) -> str:
    """A short one-line sample of text for error messages (whitespace folded, cut with ...)."""
    if isinstance(data, bytes):
        data = data.decode("utf-8", "replace")
    flat = " ".join(data.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


class PromptHooksError(Exception):
    """An error meant for the user: one line, and the exit code to leave with."""

    def __init__(self, message: str, exit_code: int = EXIT_ERROR) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code

    def __str__(self) -> str:
        return self.message


class InputError(PromptHooksError):
    """The event on stdin cannot be read (not JSON, not an object, unknown event...)."""


class ConfigError(PromptHooksError):
    """A config file cannot be loaded; the message names the file and the JSON path."""

    def __init__(self, path: str, message: str, json_path: str = "") -> None:
        where = f"{path}: {json_path}: " if json_path else f"{path}: "
        super().__init__(where + message)
        self.path = path
        self.json_path = json_path
        self.detail = message
        self.details: tuple[str, ...] = (self.message,)  # every problem, when a file has several

    @classmethod
    def of_all(cls, problems: Sequence[ConfigError]) -> ConfigError:
        """One error for a file's problems: the first, counting the others, carrying all."""
        first = problems[0]
        if len(problems) == 1:
            return first
        more = len(problems) - 1
        error = cls(first.path, f"{first.detail} (and {more} more problem{'s' * (more > 1)})",
                    first.json_path)
        error.details = tuple(p.message for p in problems)
        return error


def reported(call: Callable[[], int], debug: bool) -> int:
    """``call()``'s exit code, or the one handler's for what it raised: one line on stderr
    (a traceback only when ``debug``) and a documented exit code."""
    try:
        return call()
    except PromptHooksError as exc:
        if debug:
            raise
        from .redaction import redact  # only on a failure: the thin client imports us

        print(f"prompthooks: {redact(exc.message)}", file=sys.stderr)
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
        from .redaction import redact  # only on a failure: the thin client imports us

        print(f"prompthooks: internal error: {redact(repr(exc))} (set PROMPTHOOKS_DEBUG=1 for "
              "the traceback)", file=sys.stderr)
        return EXIT_INTERNAL
