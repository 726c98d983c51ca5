"""Terminal output for people, JSON for scripts.

Tables are drawn by ``rich``, imported only by the commands that print them (never by ``run``,
which prints only what the host reads). Colour is off when stdout is not a terminal or when
``NO_COLOR`` is set (https://no-color.org); ``--json`` prints plain JSON instead.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Sequence
from typing import Any


def color_enabled() -> bool:
    """Colour only for a terminal, and never when NO_COLOR is set to anything non-empty."""
    return bool(sys.stdout.isatty() and not os.environ.get("NO_COLOR"))


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()


def _console() -> Any:
    from rich.console import Console

    color = color_enabled()
    # Not a terminal: plain text, wide enough that a row (a path, a reason) stays one line
    # for grep; the table is only as wide as its content.
    return Console(no_color=not color, color_system="auto" if color else None,
                   highlight=False, width=None if color else 1000, force_terminal=False)


def table(columns: Sequence[str], rows: Iterable[Sequence[object]],
          title: str | None = None) -> None:
    """Print rows as a table (None prints as an empty cell)."""
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    color = color_enabled()
    # Plain output (a pipe, a file, NO_COLOR): a header line then one line per row, columns
    # aligned, no rules or trailing blanks, so it reads and greps like classic tool output.
    grid = Table(title=title, title_justify="left", box=box.HEAVY_HEAD if color else None,
                 show_edge=color, pad_edge=color)
    for column in columns:
        grid.add_column(column, overflow="fold")
    for row in rows:
        grid.add_row(*(escape("" if cell is None else str(cell)) for cell in row))
    console = _console()
    if color:
        console.print(grid)
        return
    with console.capture() as captured:
        console.print(grid)
    lines = [text.rstrip() for text in captured.get().splitlines()]
    sys.stdout.write("".join(text + "\n" for text in lines if text))
    sys.stdout.flush()


def line(text: str, style: str | None = None) -> None:
    """One line of text, styled only when colour is on; never read as rich markup."""
    from rich.text import Text

    _console().print(Text(text, style=style or ""))
