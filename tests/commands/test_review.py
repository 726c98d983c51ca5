"""The unified diff a review prints: applied to the old lines it gives the new ones, with
hunks that name their lines as `diff -u` does, and a one-line change in a long file of
repeated lines is one small hunk."""

from __future__ import annotations

import difflib
import random

from prompthooks.commands.review import unified


def _apply(old: list[str], patch: list[str]) -> list[str]:
    out: list[str] = []
    at = 0
    for text in patch[2:]:
        if text.startswith("@@"):
            where = text.split()[1][1:]
            start, _, length = where.partition(",")
            begin = int(start) - (1 if length != "0" else 0)
            out += old[at:begin]
            at = begin
        elif text[0] == " ":
            assert old[at] == text[1:]
            out.append(old[at])
            at += 1
        elif text[0] == "-":
            assert old[at] == text[1:]
            at += 1
        else:
            out.append(text[1:])
    return out + old[at:]


def test_the_diff_turns_the_old_lines_into_the_new_ones() -> None:
    rng = random.Random(7)
    for _ in range(500):
        old = [rng.choice("abcde") for _ in range(rng.randint(0, 30))]
        new = list(old)
        for _ in range(rng.randint(0, 4)):
            pick = rng.random()
            if pick < 0.3 and new:
                new.pop(rng.randrange(len(new)))
            elif pick < 0.6:
                new.insert(rng.randint(0, len(new)), rng.choice("abcdefg"))
            elif new:
                new[rng.randrange(len(new))] = rng.choice("xyz")
        patch = unified(old, new, "a/f", "b/f")
        assert (patch == []) == (old == new)
        assert _apply(old, patch) == new
        if old != new:
            assert patch[:2] == ["--- a/f", "+++ b/f"]


def test_one_changed_line_among_many_repeated_ones_is_one_small_hunk() -> None:
    old = ["#!/bin/sh", "echo one", *["# filler"] * 5000]
    new = ["#!/bin/sh", "echo two", *["# filler"] * 5000]
    # difflib alone takes the repeated line for noise and replaces the whole file
    assert len(list(difflib.unified_diff(old, new, lineterm=""))) > 5000
    assert unified(old, new, "a/f", "b/f") == [
        "--- a/f", "+++ b/f", "@@ -1,5 +1,5 @@", " #!/bin/sh", "-echo one", "+echo two",
        " # filler", " # filler", " # filler"]
