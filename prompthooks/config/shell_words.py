"""The words of a shell command's first simple command, expanded as ``/bin/sh`` would expand
them, without running anything.

``validate`` reads configs nobody has approved yet, so it must never hand a command to a
shell: ``$(...)`` would run. This reads quotes, backslashes, ``$NAME``, ``${NAME}`` and a
leading ``~`` itself, and gives up (saying why) on anything whose value only running it can
tell: a command substitution, a variable that is not set, a glob.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

MAX_READ = 8192
TOO_LONG = f"the command is longer than the {MAX_READ} characters read"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# A word that sets a variable for the command (``FOO=1 ./x.sh``), not the program.
ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
# Programs that run the file named by their first argument that is not an option (shells,
# the scripting runtimes, and the shell's own ``source`` and ``.``): what both validate and
# trust look for behind such a program.
INTERPRETERS = re.compile(r"(?:[a-z]*sh|python[0-9.]*|pypy[0-9.]*|node(?:js)?|ruby|perl|php|"
                          r"deno|bun|tsx|ts-node|Rscript|lua|osascript|source|\.)")
# Where the first simple command ends: a list, a pipe, a redirection, a subshell.
_ENDS = frozenset(";&|<>()\n")
_GLOB = frozenset("*?[")
_BLANKS = re.compile(r"[ \t\n]+")


class Unresolved(Exception):
    """A word whose value only running the command can tell; the message says why."""


class Word:
    """One word as the reader builds it."""

    __slots__ = ("glob", "text", "unresolved")

    def __init__(self, text: str, glob: bool = False, unresolved: str | None = None) -> None:
        self.text = text
        self.glob = glob  # holds an unquoted *, ? or [: the shell would expand it
        # Why its value cannot be told without running the command (None: it can).
        self.unresolved = unresolved


class _Reader:
    def __init__(self, text: str, env: Mapping[str, str]) -> None:
        self.text, self.env, self.i = text, env, 0

    def peek(self, offset: int = 0) -> str:
        j = self.i + offset
        return self.text[j] if j < len(self.text) else ""

    def variable(self) -> str:
        """The value of the ``$...`` at the reader (which is on the ``$``)."""
        self.i += 1
        if self.peek() == "{":
            end = self.text.find("}", self.i)
            name = self.text[self.i + 1:end] if end != -1 else ""
            if not _NAME.fullmatch(name):
                raise Unresolved(f"${{{name}...}} is expanded only when it runs")
            self.i = end + 1
        else:
            match = _NAME.match(self.text, self.i)
            if match is None:
                shown = self.text[self.i - 1:self.i + 1]
                raise Unresolved(f"{shown!r} is expanded only when it runs")
            name = match.group()
            self.i = match.end()
        if name not in self.env:
            raise Unresolved(f"${name} is not set here")
        return self.env[name]

    def double_quoted(self) -> str:
        out: list[str] = []
        self.i += 1
        while self.i < len(self.text):
            c = self.peek()
            if c == '"':
                self.i += 1
                return "".join(out)
            if c == "\\" and self.peek(1) in ('"', "\\", "$", "`", "\n"):
                out.append(self.peek(1))
                self.i += 2
            elif c == "$":
                out.append(self.variable())
            elif c == "`":
                raise Unresolved("a command substitution is expanded only when it runs")
            else:
                out.append(c)
                self.i += 1
        raise Unresolved("a double quote is not closed")

    def words(self, limit: int) -> list[Word]:
        words: list[Word] = []
        current: Word | None = None
        while self.i < len(self.text) and len(words) < limit:
            c = self.peek()
            if c in " \t":
                if current is not None:
                    words.append(current)
                    current = None
                self.i += 1
                continue
            if c in _ENDS or (c == "#" and current is None):
                break
            current = current or Word("")
            try:
                if c == "$":
                    # Unquoted, a variable's value is split into words at its blanks, as
                    # "$CLAUDE_PROJECT_DIR" quoted is not: /my project/x.sh is two words.
                    first, *rest = _BLANKS.split(self.variable())
                    current.text += first
                    for piece in rest:
                        words.append(current)
                        current = Word(piece)
                else:
                    self.part(c, current)
            except Unresolved as exc:
                current.unresolved = str(exc)
                break  # what follows cannot be read with certainty either
        if current is not None and len(words) < limit:
            words.append(current)
        return [w for w in words if w.text or w.unresolved][:limit]

    def part(self, c: str, current: Word) -> None:
        """Read the next part of the word (a quoted string, an escape...)."""
        if c == "'":
            end = self.text.find("'", self.i + 1)
            if end == -1:
                raise Unresolved("a single quote is not closed")
            current.text += self.text[self.i + 1:end]
            self.i = end + 1
        elif c == '"':
            current.text += self.double_quoted()
        elif c == "\\":
            current.text += self.peek(1)
            self.i += 2
        elif c == "`":
            raise Unresolved("a command substitution is expanded only when it runs")
        elif c == "~" and not current.text and self.peek(1) in ("/", "", " ", "\t"):
            if "HOME" not in self.env:
                raise Unresolved("~ needs HOME, which is not set here")
            current.text += self.env["HOME"]
            self.i += 1
        else:
            current.glob = current.glob or c in _GLOB
            current.text += c
            self.i += 1


def first_words(command: str, env: Mapping[str, str], limit: int = 8) -> list[Word]:
    """Up to ``limit`` words of ``command``'s first simple command, expanded with ``env``; the
    last one is marked ``unresolved`` when it needs more than reading to expand (the words
    after it are left out).

    Only the first :data:`MAX_READ` characters are read (a command comes from a file an
    agent may write; a program's path is never that long): a word they cut is unresolved."""
    reader = _Reader(command[:MAX_READ], env)
    words = reader.words(limit)
    if len(command) > MAX_READ and words and reader.i >= MAX_READ:
        words[-1].unresolved = words[-1].unresolved or TOO_LONG
    return words
