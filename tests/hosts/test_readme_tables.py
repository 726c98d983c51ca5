"""The mapping tables of docs/config.md are the registry's: regenerate them with
``python -m prompthooks.hosts.tables`` when this fails."""

from __future__ import annotations

import re

import pytest

from prompthooks.hosts.tables import event_table, tool_table

from ..helpers import REPO


@pytest.mark.parametrize(("name", "make"), [("events", event_table), ("tools", tool_table)])
def test_doc_tables_match_the_registry(name: str, make: object) -> None:
    doc = (REPO / "docs" / "config.md").read_text()
    found = re.search(rf"<!-- generated: {name} -->\n(.*?)\n<!-- end generated -->", doc,
                      re.DOTALL)
    assert found, f"docs/config.md has no generated {name} table"
    assert callable(make)
    assert found.group(1) == make()
