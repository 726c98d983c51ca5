"""How a table is fitted to a terminal's width: which columns stay and how wide each is."""

from __future__ import annotations

import pytest

from prompthooks.commands.output import fit, verdict_style


@pytest.mark.parametrize("widths, words, optional, room, kept, given", [
    # Everything fits: each column as wide as its widest line.
    ([5, 30, 4], [5, 8, 4], [], 80, [0, 1, 2], [5, 30, 4]),
    # The long column wraps at words, given all the room the others leave.
    ([5, 60, 4], [5, 8, 4], [], 40, [0, 1, 2], [5, 27, 4]),
    # Never below its longest word: the optional columns go first, the first first.
    ([19, 60, 6, 14], [10, 30, 6, 14], [2, 0], 50, [1, 3], [34, 14]),
    # Two long columns share the room in proportion to what they lack, all of it.
    ([4, 44, 84], [4, 10, 10], [], 64, [0, 1, 2], [4, 22, 34]),
    # Nothing left to leave out: a long word (a path) folds, its column down to 24 at
    # least, then widened by the room there is.
    ([6, 50], [6, 50], [], 40, [0, 1], [6, 32]),
    ([6, 50], [6, 50], [], 20, [0, 1], [6, 24]),
    # A column no wider than 24 is never wrapped, even when that overflows.
    ([20, 20, 20], [20, 20, 20], [], 30, [0, 1, 2], [20, 20, 20]),
])
def test_fit(widths: list[int], words: list[int], optional: list[int], room: int,
             kept: list[int], given: list[int]) -> None:
    assert fit(widths, words, optional, room) == (kept, given)


@pytest.mark.parametrize("cell, style", [
    ("deny", "red"), ("block", "red"), ("FAIL", "red"), ("ERROR", "red"),
    ("error (timeout)", "red"), ("allow", "green"), ("PASS", "green"), ("OK", "green"),
    ("ask", "yellow"), ("WARN", "yellow"), ("warning", "yellow"),
    ("none", ""), ("SKIP", ""), ("", ""), ("denied by a rule", ""),
])
def test_verdict_style(cell: str, style: str) -> None:
    assert verdict_style(cell) == style
