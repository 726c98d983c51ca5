"""Replacing JSON string values in place: everything but the replaced values stays byte for
byte (autoupdate rewrites a config's pack pins this way)."""

from __future__ import annotations

import json

import pytest

from prompthooks.config.json_edit import replace_strings, string_spans

CASES = [
    ('{"a": "x"}', {("a",): "y"}, '{"a": "y"}'),
    ('{\n  "p": {"packs": [ {"rev" :"v1"}, {"rev": "v1"} ]}\n}\n',
     {("p", "packs", 1, "rev"): "v2"},
     '{\n  "p": {"packs": [ {"rev" :"v1"}, {"rev": "v2"} ]}\n}\n'),
    ('{"s": "a \\"q\\" \\u00e9", "n": [1, 2.5e3, true, null], "r": "v1"}',
     {("r",): 'é"'}, '{"s": "a \\"q\\" \\u00e9", "n": [1, 2.5e3, true, null], "r": ' +
     json.dumps('é"', ensure_ascii=False) + "}"),
    ('[{"rev": "a"}, {"rev": "b"}]', {(0, "rev"): "c", (1, "rev"): "d"},
     '[{"rev": "c"}, {"rev": "d"}]'),
]


@pytest.mark.parametrize(("text", "changes", "expected"), CASES)
def test_only_the_named_values_change(text: str, changes: dict[tuple[int | str, ...], str],
                                      expected: str) -> None:
    out = replace_strings(text, changes)
    assert out == expected
    assert json.loads(out) is not None


@pytest.mark.parametrize("text", ['{"a": }', '{"a": "x"} extra', '{"a" "x"}', "[1, 2"])
def test_text_that_is_not_one_json_value_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        string_spans(text)


def test_a_path_that_holds_no_string_is_refused() -> None:
    with pytest.raises(KeyError):
        replace_strings('{"a": 1}', {("a",): "x"})
