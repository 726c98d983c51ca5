"""The fast tier's lists in conftest.py name files and tests that exist: a test renamed or moved
without its entry would silently join the fast tier."""

from __future__ import annotations

import ast
from pathlib import Path

from .conftest import SLOW_FILES, SLOW_TESTS

TESTS = Path(__file__).resolve().parent


def _test_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and node.name.startswith("test_")}


def test_every_slow_file_and_test_named_exists() -> None:
    assert SLOW_FILES and SLOW_TESTS  # the lists were read
    missing_files = [f for f in (*SLOW_FILES, *SLOW_TESTS) if not (TESTS / f).is_file()]
    assert missing_files == []
    missing_tests = {f: sorted(set(names) - _test_names(TESTS / f))
                     for f, names in SLOW_TESTS.items()}
    assert {f: names for f, names in missing_tests.items() if names} == {}
