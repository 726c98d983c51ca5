"""Terminal output for people, JSON for scripts.

Tables are drawn by ``rich``, imported only by the commands that print them (never by ``run``,
which prints only what the host reads). Colour is on for a terminal, off when stdout is not
one; ``FORCE_COLOR`` (https://force-color.org) turns it on anyway (CI logs, ``less -R``) and
``NO_COLOR`` (https://no-color.org) off, and wins over it. ``--json`` prints plain JSON.

At a terminal (or with colour forced) a table fits the width: boxed when it fits whole,
else unboxed, its long cells wrapped at words and the least needed columns left out. A pipe
gets one row per line, whatever its length: the rows stay whole for grep; so does a terminal
too narrow even for the columns never left out.
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
    # a bidi override would reorder the line; a lone surrogate cannot be written at all
    return f"\\u{code:04x}" if char in _BIDI or 0xD800 <= code <= 0xDFFF else char


def printable(text: str, newlines: bool = False) -> str:
    """``text`` with control characters (C0, DEL, C1), bidi overrides and lone surrogates
    written as escapes (``\\x1b``, ``\\u202e``, ``\\ud800``): text from the agent or the log
    must not drive the terminal, nor stop the output. ``newlines`` keeps line breaks and tabs
    (for multi-line text, not for one-line cells)."""
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


def _console() -> Any:
    # rich (some 50 ms) only for what a person reads: --json output never loads it
    from rich.console import Console

    color = color_enabled()
    # A terminal, or colour forced: as wide as the terminal (COLUMNS, else its own size; on a
    # pipe, COLUMNS or 80, rich's rule), with "standard" colours when forced, since rich
    # would detect none without a terminal. Otherwise plain text, wide enough that a row (a
    # path, a reason) stays one line for grep; a table is only as wide as its content.
    forced = color and not sys.stdout.isatty()
    fitted = color or sys.stdout.isatty()
    return Console(no_color=not color,
                   color_system=("standard" if forced else "auto") if color else None,
                   highlight=False, width=None if fitted else 1000, force_terminal=color)


# The style of a verdict or result cell, by its first word.
_VERDICT = {"deny": "red", "block": "red", "fail": "red", "error": "red",
            "allow": "green", "pass": "green", "ok": "green",
            "ask": "yellow", "warn": "yellow", "warning": "yellow"}


def verdict_style(cell: str) -> str:
    """The colour of a verdict (deny, FAIL...), or "" for any other text."""
    first = cell.split(maxsplit=1)[0].lower() if cell.strip() else ""
    return _VERDICT.get(first, "")


def _longest_word(cells: Iterable[str]) -> int:
    return max((len(word) for cell in cells for word in cell.split()), default=0)


def fit(widths: Sequence[int], words: Sequence[int], optional: Sequence[int],
        room: int) -> tuple[list[int], list[int]]:
    """The columns kept and each one's width for a table ``room`` characters wide, columns
    two apart. ``widths``: each column's widest line; ``words``: its longest word;
    ``optional``: the columns that may be left out, the first first. A column up to
    ``_SHORT`` wide is never wrapped; a longer one wraps at words, down to its longest word.
    Columns are left out until the rest fit; if they still do not, long words (paths) fold,
    but not below ``_SHORT`` characters. The room left widens the wrapped columns toward
    their widest line. Returns (the kept columns, their widths)."""
    least = [w if w <= _SHORT else max(10, min(words[i], w)) for i, w in enumerate(widths)]
    kept = list(range(len(widths)))
    queue = [i for i in optional if i in kept]

    def need() -> int:
        return sum(least[i] for i in kept) + 2 * (len(kept) - 1)

    while need() > room and queue:
        kept.remove(queue.pop(0))
    if need() > room:
        least = [min(w, _SHORT) for w in least]
    spare = max(0, room - need())
    wrapped = [i for i in kept if least[i] < widths[i]]
    wanted = sum(widths[i] - least[i] for i in wrapped)
    given = {i: least[i] for i in kept}
    for i in wrapped:
        more = widths[i] - least[i]
        given[i] += more if wanted <= spare else spare * more // wanted
    left = spare - sum(given[i] - least[i] for i in wrapped)
    for i in wrapped:  # what rounding down left over
        more = min(left, widths[i] - given[i])
        given[i] += more
        left -= more
    return kept, [given[i] for i in kept]


def _grid(columns: Sequence[str], cells: list[list[str]], widths: Sequence[int | None],
          natural: Sequence[int], title: str | None, boxed: bool, styled: Sequence[bool]
          ) -> Any:
    from rich import box  # as in _console
    from rich.table import Table
    from rich.text import Text

    grid = Table(title=title, title_justify="left", box=box.HEAVY_HEAD if boxed else None,
                 show_edge=boxed, pad_edge=boxed)
    for column, width, whole in zip(columns, widths, natural, strict=True):
        # A column as wide as its widest line is never wrapped; a narrower one wraps at
        # words, and folds only a word longer than the column.
        grid.add_column(column, overflow="fold", no_wrap=width is None or width >= whole,
                        width=width, min_width=width)
    for row in cells:
        grid.add_row(*(Text(cell, style=verdict_style(cell) if colour else "")
                       for cell, colour in zip(row, styled, strict=True)))
    return grid


_ANSI = {"red": "\x1b[31m", "green": "\x1b[32m", "yellow": "\x1b[33m"}


def paint(text: str, style: str) -> str:
    """``text`` in ``style`` (red, green or yellow) when colour is on, for text printed
    without rich. ``text`` must be printable already (:func:`printable`): the only escapes
    in the result are these."""
    start = _ANSI.get(style)
    return f"{start}{text}\x1b[0m" if start and color_enabled() else text


def row_line(cells: Sequence[str], verdict: int | None = None) -> str:
    """One row as a line, cells two spaces apart, for rows printed as they come (``log
    --follow``); cell ``verdict`` coloured when colour is on."""
    if verdict is not None:
        cells = [*cells[:verdict], paint(cells[verdict], verdict_style(cells[verdict])),
                 *cells[verdict + 1:]]
    return "  ".join(cells) + "\n"


def table(columns: Sequence[str], rows: Iterable[Sequence[object]],
          title: str | None = None, optional: Sequence[str] = (),
          verdicts: Sequence[str] = ()) -> None:
    """Print rows as a table (None prints as an empty cell; control characters as escapes,
    line breaks and tabs kept). At a terminal it fits the terminal's width: ``optional``
    names the columns left out when it is too narrow, the first first (a line says which);
    the cells of the ``verdicts`` columns are coloured by their first word (deny red, allow
    green, ask yellow) when colour is on."""
    cells = [["" if cell is None else printable(str(cell), newlines=True) for cell in row]
             for row in rows]
    # A cell over several lines is as wide as its longest line.
    widths = [max(len(line) for text in (column, *(row[i] for row in cells))
                  for line in text.split("\n"))
              for i, column in enumerate(columns)]
    styled = [column in verdicts for column in columns]
    console = _console()
    if color_enabled() or sys.stdout.isatty():
        room = console.width
        if color_enabled() and sum(w + 3 for w in widths) + 1 <= room:
            # Everything fits boxed, nothing wrapped.
            console.print(_grid(columns, cells, [None] * len(widths), widths, title, True,
                                styled))
            return
        words = [_longest_word([column, *(row[i] for row in cells)])
                 for i, column in enumerate(columns)]
        kept, given = fit(widths, words, [columns.index(c) for c in optional], room)
        if sum(given) + 2 * (len(kept) - 1) > room:
            _plain(columns, cells, widths, title, styled)  # hardly a terminal: whole rows
            return
        grid = _grid([columns[i] for i in kept], [[row[i] for i in kept] for row in cells],
                     given, [widths[i] for i in kept], title, False, [styled[i] for i in kept])
        with console.capture() as captured:
            console.print(grid)
        sys.stdout.write("".join(text + "\n" for text in map(_trim, captured.get().splitlines())
                                 if text))
        left_out = [columns[i] for i in range(len(columns)) if i not in kept]
        if left_out:
            line(f"not shown at {room} columns: {', '.join(left_out)}", "dim")
        sys.stdout.flush()
        return
    _plain(columns, cells, widths, title, styled)


def _plain(columns: Sequence[str], cells: list[list[str]], widths: Sequence[int],
           title: str | None, styled: Sequence[bool]) -> None:
    """A header line then one line per row, columns aligned, no rules or trailing blanks,
    like classic tool output: for a pipe or a file, and a terminal too narrow for even the
    columns that are never left out (it wraps each row's line as a whole)."""
    from rich.console import Console  # as in _console

    color = color_enabled()
    console = Console(no_color=not color, color_system="standard" if color else None,
                      highlight=False, width=1000, force_terminal=color)
    with console.capture() as captured:
        console.print(_grid(columns, cells, [None] * len(widths), widths, title, False,
                            styled))
    lines = [_trim(text) for text in captured.get().splitlines()]
    sys.stdout.write("".join(text + "\n" for text in lines if text))
    sys.stdout.flush()


_RESET = "\x1b[0m"


def _trim(text: str) -> str:
    """A line without trailing blanks, also those inside its last style (rich pads a title
    or header cell to the column before ending its style)."""
    text = text.rstrip()
    while text.endswith(_RESET) and text[: -len(_RESET)].endswith(" "):
        text = text[: -len(_RESET)].rstrip() + _RESET
    return text


def line(text: str, style: str | None = None) -> None:
    """One line of text, styled only when colour is on; never read as rich markup, and its
    control characters shown as escapes."""
    from rich.text import Text  # as in _console

    _console().print(Text(printable(text, newlines=True), style=style or ""))
