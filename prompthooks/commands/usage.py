"""Usage errors that name what was probably meant: the closest command, option or choice.

Loaded only when a command line does not parse.
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Iterable, Sequence


def closest(word: str, candidates: Iterable[str]) -> str | None:
    """The candidate ``word`` is most likely a typo of, if one is close enough."""
    found = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return found[0] if found else None


def _meant(word: str, candidates: Iterable[str]) -> str:
    match = closest(word, candidates)
    return f"; did you mean {match!r}?" if match else ""


def invalid_choice(action: argparse.Action, value: object) -> str:
    """The line for a value not among ``action``'s choices (a command, ``--host foo``)."""
    choices = [str(choice) for choice in action.choices or ()]
    if isinstance(action, argparse._SubParsersAction):
        meant = _meant(str(value), choices)
        return f"unknown command {value!r}" + (meant or f" (one of: {', '.join(choices)})")
    listed = ", ".join(repr(choice) for choice in choices)
    return f"invalid choice: {value!r} (choose from {listed}){_meant(str(value), choices)}"


def unrecognized(words: Sequence[str], parser: argparse.ArgumentParser) -> str:
    """The line for arguments ``parser`` does not take, naming the closest option of each."""
    options = [flag for action in parser._actions for flag in action.option_strings
               if action.help != argparse.SUPPRESS]
    names = [word.partition("=")[0] for word in words if word.startswith("-")]
    text = f"unrecognized arguments: {' '.join(words)}"
    early = [name for name in names if name in options]
    if early:  # the command's own option, given before the command (`prompthooks --json log`)
        return text + f"; give {', '.join(early)} after the command: {parser.prog} {early[0]}"
    typos = {name: match for name in names if (match := closest(name, options)) is not None}
    if len(typos) == 1:
        return text + f"; did you mean {next(iter(typos.values()))!r}?"
    if typos:
        return text + "; did you mean " + ", ".join(f"{match!r} for {name!r}"
                                                    for name, match in typos.items()) + "?"
    return text
