"""The README stays short enough to read, and every relative link of the docs lands somewhere.

A link is checked as GitHub renders it: a file relative to the linking one, and a ``#anchor``
that one of the target's headings makes (lower case, punctuation dropped, spaces as hyphens,
``-1``, ``-2`` ... for repeated headings). Links inside code blocks are text, not links.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .helpers import REPO

README_MAX_LINES = 400
_FENCE = re.compile(r"^```.*?^```[^\n]*$", re.DOTALL | re.MULTILINE)
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6} +(.+?) *#*$", re.MULTILINE)


def _docs() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def _prose(text: str) -> str:
    return _FENCE.sub("", text)


def anchors(text: str) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    for heading in _HEADING.findall(_prose(text)):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def broken_links(doc: Path) -> tuple[int, list[str]]:
    """How many relative links ``doc`` holds, and those that point nowhere."""
    checked, broken = 0, []
    for target in _LINK.findall(_prose(doc.read_text())):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):
            continue  # https:, mailto: ...: not ours to check
        checked += 1
        path, _, anchor = target.partition("#")
        file = (doc.parent / path).resolve() if path else doc
        if not file.is_file():
            broken.append(f"{target}: no such file")
        elif anchor and anchor not in anchors(file.read_text()):
            broken.append(f"{target}: no such heading in {file.name}")
    return checked, broken


def test_readme_is_short() -> None:
    lines = (REPO / "README.md").read_text().count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines; the reference goes in docs/"


def test_the_docs_are_there() -> None:
    names = {doc.name for doc in _docs()}
    assert {"README.md", "config.md", "prompt-hooks.md", "security.md"} <= names


@pytest.mark.parametrize("doc", _docs(), ids=lambda doc: doc.name)
def test_every_relative_link_points_somewhere(doc: Path) -> None:
    checked, broken = broken_links(doc)
    assert broken == [], f"{doc.name}: {broken}"
    if doc.name == "README.md":
        assert checked >= 10  # the map of the docs alone has more: the links were seen


def test_a_broken_link_is_caught(tmp_path: Path) -> None:
    (tmp_path / "there.md").write_text("# There\n\n## A `b` (c)\n\n## A `b` (c)\n")
    doc = tmp_path / "doc.md"
    doc.write_text("# Doc\n\n[ok](there.md#a-b-c-1) [ok](#doc) [gone](gone.md)\n"
                   "[bad](there.md#nowhere) [web](https://example.com/x)\n"
                   "```\n[in code](nowhere.md)\n```\n")
    assert broken_links(doc) == (4, ["gone.md: no such file",
                                     "there.md#nowhere: no such heading in there.md"])
