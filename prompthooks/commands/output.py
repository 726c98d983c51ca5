"""Terminal output for people, JSON for scripts.

Tables are drawn by ``rich``, imported only by the commands that print them (never by ``run``,
which prints only what the host reads). Colour is on for a terminal, off when stdout is not
one; ``FORCE_COLOR`` (https://force-color.org) turns it on anyway (CI logs, ``less -R``) and
``NO_COLOR`` (https://no-color.org) off, and wins over it. ``--json`` prints plain JSON.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Sequence
from typing import Any

_SHORT = 24  # characters: a column never wider than this is never folded
# Bidirectional overrides and isolates: they reorder what a terminal shows ("Trojan Source").
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
                  "\u2066\u2067\u2068\u2069")


def _visible(char: str, newlines: bool) -> str:
    code = ord(char)
    if (code < 0x20 and not (newlines and char in "\n\t")) or 0x7F <= code <= 0x9F:
        return {"\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(char, f"\\x{code:02x}")
    return f"\\u{code:04x}" if char in _BIDI else char


def printable(text: str, newlines: bool = False) -> str:
    """``text`` with control characters (C0, DEL, C1) and bidi overrides written as escapes
    (``\\x1b``, ``\\u202e``): text from the agent or the log must not drive the terminal.
    ``newlines`` keeps line breaks and tabs (for multi-line text, not for one-line cells)."""
    if text.isprintable() and not any(c in _BIDI for c in text):
        return text  # the common case, at C speed
    return "".join(_visible(c, newlines) for c in text)


def color_enabled() -> bool:
    """Colour for a terminal or when FORCE_COLOR is set, never when NO_COLOR is (each counts
    when set to anything non-empty)."""
    if os.environ.get("NO_COLOR"):
        return False
    return bool(os.environ.get("FORCE_COLOR")) or sys.stdout.isatty()


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()


def _console(plain: bool = False) -> Any:
    from rich.console import Console

    color = color_enabled() and not plain
    # Not a terminal: plain text, wide enough that a row (a path, a reason) stays one line
    # for grep; the table is only as wide as its content. Colour forced onto a pipe: the
    # terminal's width is unknown, so COLUMNS or 80 (rich's rule); "standard" colours, since
    # rich would detect none without a terminal.
    forced = color and not sys.stdout.isatty()
    return Console(no_color=not color,
                   color_system=("standard" if forced else "auto") if color else None,
                   highlight=False, width=None if color else 1000, force_terminal=color)


def _grid(columns: Sequence[str], cells: list[list[str]], widths: list[int], title: str | None,
          boxed: bool) -> Any:
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    grid = Table(title=title, title_justify="left", box=box.HEAVY_HEAD if boxed else None,
                 show_edge=boxed, pad_edge=boxed)
    for column, widest in zip(columns, widths, strict=True):
        # A short column (a decision, a count, a time) is never broken inside a word; a long
        # one (a reason, a path) folds, but not below _SHORT characters.
        grid.add_column(column, overflow="fold", no_wrap=widest <= _SHORT,
                        min_width=min(widest, _SHORT))
    for row in cells:
        grid.add_row(*(escape(cell) for cell in row))
    return grid


def table(columns: Sequence[str], rows: Iterable[Sequence[object]],
          title: str | None = None) -> None:
    """Print rows as a table (None prints as an empty cell; control characters as escapes,
    line breaks and tabs kept)."""
    cells = [["" if cell is None else printable(str(cell), newlines=True) for cell in row]
             for row in rows]
    # A cell over several lines is as wide as its longest line.
    widths = [max([len(column), *(len(text) for row in cells for text in row[i].split("\n"))])
              for i, column in enumerate(columns)]
    console = _console()
    if color_enabled():
        # The boxed table only where it fits: each column at its minimum, plus padding and
        # rules. Else rich would crop columns, or fold cells a letter wide.
        if sum(min(w, _SHORT) + 3 for w in widths) + 1 <= console.width:
            console.print(_grid(columns, cells, widths, title, boxed=True))
            return
        console = _console(plain=True)
    # Plain output (a pipe, a file, NO_COLOR, a narrow terminal): a header line then one line
    # per row, columns aligned, no rules or trailing blanks, like classic tool output.
    with console.capture() as captured:
        console.print(_grid(columns, cells, widths, title, boxed=False))
    lines = [text.rstrip() for text in captured.get().splitlines()]
    sys.stdout.write("".join(text + "\n" for text in lines if text))
    sys.stdout.flush()


def line(text: str, style: str | None = None) -> None:
    """One line of text, styled only when colour is on; never read as rich markup, and its
    control characters shown as escapes."""
    from rich.text import Text

    _console().print(Text(printable(text, newlines=True), style=style or ""))


def stdin_hint(command: str) -> None:
    """One line for a person who ran the command at a terminal, which would otherwise wait in
    silence for input (a host always pipes the event in)."""
    try:
        interactive = os.isatty(0)
    except OSError:
        return
    if interactive:
        print(f"prompthooks {command}: reading the event as JSON from stdin (end it with "
              f"Ctrl-D), e.g. prompthooks {command} < event.json", file=sys.stderr, flush=True)
