"""Template rendering, fencing, truncation and the shipped library."""

from __future__ import annotations

import json

import pytest

from prompthooks.config.templates import (
    event_json,
    fence,
    library,
    new_nonce,
    parse_front_matter,
    render,
    resolve_prompt_file,
)


@pytest.mark.parametrize("arguments", [
    '{"command": "echo $& and \\\\1 and \\\\g<0>"}',
    '{"x": "$ARGUMENTS inside the data"}',
    "\\\\$",
])
def test_arguments_are_substituted_literally(arguments: str) -> None:
    assert render("Judge: $ARGUMENTS.", arguments) == f"Judge: {arguments}."


def test_every_placeholder_is_replaced_and_escaped_dollars_kept() -> None:
    assert render("a $ARGUMENTS b $ARGUMENTS", "X") == "a X b X"
    assert render("cost \\$5, literal \\$ARGUMENTS, real $ARGUMENTS", "X") == \
        "cost $5, literal $ARGUMENTS, real X"


def test_without_placeholder_the_event_is_appended() -> None:
    assert render("Block rm -rf.", "{}") == "Block rm -rf.\n\nARGUMENTS: {}"
    assert render("Costs \\$1.", "{}") == "Costs $1.\n\nARGUMENTS: {}"


def test_nonce_never_occurs_in_the_data() -> None:
    data = "x" * 100
    nonce = new_nonce(data)
    assert len(nonce) == 16 and nonce not in data
    assert fence("D", nonce) == f"<event-data-{nonce}>\nD\n</event-data-{nonce}>"


def test_small_event_is_dumped_canonically() -> None:
    assert event_json({"b": {"y": 1, "x": "é"}, "a": 1}, 100) == (
        '{"a": 1, "b": {"x": "é", "y": 1}}', False)


def test_oversized_event_cuts_long_strings_with_a_marker() -> None:
    raw = {"tool_name": "Write", "tool_input": {"file_path": "/p/big.txt",
                                                "content": "A" * 5_000_000}}
    text, cut = event_json(raw, 2_000)
    assert cut and len(text) <= 2_000
    data = json.loads(text)
    assert data["tool_input"]["file_path"] == "/p/big.txt"  # short strings survive
    assert "more characters cut]" in data["tool_input"]["content"]


def test_event_too_big_even_without_strings_is_cut_as_text() -> None:
    raw = {f"key{i}": i for i in range(1000)}
    text, cut = event_json(raw, 500)
    assert cut and len(text) <= 500 and text.endswith("more characters cut]")


def test_front_matter() -> None:
    meta, body = parse_front_matter("---\nname: x\nevents: [PreToolUse, Stop]\n---\nBody $A\n")
    assert meta == {"name": "x", "events": ["PreToolUse", "Stop"]}
    assert body == "Body $A\n"
    assert parse_front_matter("No front matter") == ({}, "No front matter")


def test_library_has_the_required_policies() -> None:
    names = set(library())
    assert len(names) >= 8
    assert {"destructive-shell", "secrets-in-files", "credential-reads", "force-push",
            "network-exfiltration", "tool-output-injection", "stop-when-done",
            "prompt-secrets"} <= names


@pytest.mark.parametrize("name", sorted(library()))
def test_each_library_template_is_complete(name: str) -> None:
    meta, body = parse_front_matter(library()[name].read_text())
    assert meta["name"] == name
    assert meta["events"] and meta["blocks"] and meta["allows"]
    assert "$ARGUMENTS" in body and len(body) > 200


def test_prompt_file_by_short_name_or_path(tmp_path: pytest.TempPathFactory) -> None:
    assert resolve_prompt_file("destructive-shell", None).name == "destructive-shell.md"
    assert resolve_prompt_file("prompts/force-push.md", None).name == "force-push.md"
    with pytest.raises(ValueError, match="not found"):
        resolve_prompt_file("no-such-policy", None)
