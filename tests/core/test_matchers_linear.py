"""Matchers from config files run in linear time (RE2) on the agent's text: a pattern built to
backtrack answers at once, with the right decision; syntax RE2 cannot run in linear time is a
config error naming its JSON path."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from prompthooks.api import load_config
from prompthooks.core.matchers import Matcher
from prompthooks.hosts.claude.config import claude_matcher
from prompthooks.hosts.cursor.config import cursor_matcher

from ..helpers import (
    claude_event,
    cursor_config,
    cursor_event,
    reply,
    run_cli,
    write_json,
    write_script,
)

EVIL = "^(a|aa)+$"  # exponential for a backtracking engine on "aaa...ab"


@pytest.mark.parametrize("length", [41, 100_000])
def test_a_backtracking_pattern_answers_on_long_text(length: int) -> None:
    miss, hit = "a" * (length - 1) + "b", "a" * length
    for matcher in (claude_matcher(EVIL), cursor_matcher(EVIL)):
        assert not matcher.matches(miss)
        assert matcher.matches(hit)


def test_each_dialect_keeps_its_semantics() -> None:
    assert claude_matcher("Edit.*").matches("NotebookEdit")  # unanchored search
    assert cursor_matcher("Write").matches("TabWrite")  # searched, as Cursor does
    assert not cursor_matcher("^Write$").matches("TabWrite")
    assert cursor_matcher("curl|wget").matches("echo hi && curl x")
    assert cursor_matcher("MCP:*").matches("MCP:search")


def test_a_lone_surrogate_in_the_subject_is_matched_not_raised() -> None:
    assert cursor_matcher("rm").matches("\ud800 rm -rf /")
    assert not cursor_matcher("^x$").matches("\ud800")


@pytest.mark.parametrize(("pattern", "why"), [
    ("(?=curl)", "invalid perl operator: (?="),
    (r"(a)\1", r"invalid escape sequence: \1"),
    ("(?<!x)curl", "invalid perl operator: (?<!"),
    ("a++", "bad repetition operator: ++"),
])
def test_syntax_without_a_linear_time_engine_is_refused(pattern: str, why: str) -> None:
    for make in (claude_matcher, cursor_matcher):
        with pytest.raises(ValueError) as caught:
            make(pattern)
        assert str(caught.value) == (
            f"matcher regex {pattern!r} is not supported: {why} (matchers run in linear time, "
            "on RE2: no lookaround, backreferences, atomic groups or possessive quantifiers)")


def test_a_pattern_that_is_no_regex_keeps_its_message() -> None:
    with pytest.raises(ValueError, match=r"invalid matcher regex 'Bash\(': missing \)"):
        claude_matcher("Bash(")


def test_a_cached_pattern_that_does_not_compile_lets_the_hook_run() -> None:
    assert Matcher("search", "(?=x)").matches("anything")


def test_validate_names_the_json_path_of_a_lookaround(tmp_path: Path) -> None:
    cfg = cursor_config(tmp_path / "hooks.json", "beforeShellExecution",
                        {"command": "true", "matcher": "curl(?=.*\\|)"})
    proc = subprocess.run([sys.executable, "-m", "prompthooks", "validate", "--json",
                           "--config", str(cfg)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["errors"] == [
        f"{cfg}: hooks.beforeShellExecution[0].matcher: matcher regex 'curl(?=.*\\\\|)' is not "
        "supported: invalid perl operator: (?= (matchers run in linear time, on RE2: no "
        "lookaround, backreferences, atomic groups or possessive quantifiers)"]
    assert proc.stderr == ""  # RE2 logs nothing of its own


def test_a_refused_pattern_is_a_load_failure_of_its_file(tmp_path: Path) -> None:
    cfg = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [
        {"matcher": "(?!Read)", "hooks": [{"type": "command", "command": "x",
                                           "failClosed": True}]}]}})
    failure, = load_config([str(cfg)]).loaded.failures
    assert "hooks.PreToolUse[0].matcher: matcher regex '(?!Read)' is not supported" in (
        failure.message)
    assert failure.fail_closed and failure.events == frozenset({"PreToolUse"})


# --- end to end: `prompthooks run --budget 5` answers, with the right decision ------------------

def _deny(tmp_path: Path) -> str:
    return str(write_script(tmp_path / "deny.sh", "cat >/dev/null; echo 'no' >&2; exit 2"))


@pytest.mark.slow
@pytest.mark.parametrize("length", [41, 100_000])
def test_cursor_run_with_a_backtracking_matcher_answers(tmp_path: Path, length: int) -> None:
    cfg = cursor_config(tmp_path / "hooks.json", "beforeShellExecution",
                        {"command": _deny(tmp_path), "matcher": EVIL})
    for command, denied in (("a" * (length - 1) + "b", False), ("a" * length, True)):
        event = cursor_event("beforeShellExecution", str(tmp_path), command=command, cwd="")
        proc = run_cli(event, "--config", str(cfg), "--budget", "5", "--managed-dir",
                       str(tmp_path / "no-managed"), timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert (reply(proc).get("permission") == "deny") is denied, proc.stdout


@pytest.mark.slow
@pytest.mark.parametrize("length", [41, 100_000])
def test_claude_run_with_a_backtracking_matcher_answers(tmp_path: Path, length: int) -> None:
    cfg = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [
        {"matcher": EVIL, "hooks": [{"type": "command", "command": _deny(tmp_path)}]}]}})
    for tool, denied in (("a" * (length - 1) + "b", False), ("a" * length, True)):
        event = claude_event("PreToolUse", str(tmp_path), tool_name=tool, tool_input={},
                             tool_use_id="tu-1")
        proc = run_cli(event, "--config", str(cfg), "--budget", "5", "--managed-dir",
                       str(tmp_path / "no-managed"), timeout=120)
        assert proc.returncode == 0, proc.stderr
        decision = reply(proc).get("hookSpecificOutput", {}).get("permissionDecision")
        assert (decision == "deny") is denied, proc.stdout


PROBE = """
import sys
from prompthooks.cli import main
code = main(["run", "--config", sys.argv[1], "--managed-dir", sys.argv[2]])
print("RE2=" + str("re2" in sys.modules), file=sys.stderr)
sys.exit(code)
"""


@pytest.mark.slow
def test_a_name_list_matcher_never_imports_re2(tmp_path: Path) -> None:
    cfg = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [
        {"matcher": "Bash|Read", "hooks": [{"type": "command", "command": _deny(tmp_path)}]}]}})
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE)
    event = json.dumps(claude_event("PreToolUse", str(tmp_path), tool_name="Bash",
                                    tool_input={"command": "ls"}, tool_use_id="tu-1"))
    for _ in range(2):  # validated, then from the config cache
        proc = subprocess.run([sys.executable, str(probe), str(cfg), str(tmp_path / "none")],
                              input=event, capture_output=True, text=True, timeout=60)
        assert "RE2=False" in proc.stderr and '"deny"' in proc.stdout


LONG_PATTERNS = {
    "long server, any tool": ("mcp__" + "a_" * 50_000, True),
    "long server, another tool": ("mcp__" + "a_" * 50_000 + "_x", False),
    "many alternatives, one tool": ("(mcp__x__y)|" * 2_000 + "delete_repo", True),
    "many alternatives, no tool": ("(mcp__x__y)|" * 2_000 + "list_repos", False),
    "many groups in the server": ("mcp__" + "(a)" * 30_000 + "__delete_repo", True),
}


@pytest.mark.parametrize("name", sorted(LONG_PATTERNS))
def test_the_server_part_of_a_long_pattern_is_found_in_one_pass(name: str) -> None:
    # Matching for a host that names no MCP server reads the pattern's text with Python's re:
    # its server-part searches must not backtrack over a long agent-written pattern.
    pattern, expected = LONG_PATTERNS[name]
    assert Matcher("search", pattern).matches_any_server(
        "mcp__unknown__delete_repo") is expected


UNKNOWN = "mcp__unknown__delete_repo"


@pytest.mark.parametrize(("matcher", "expected"), [
    (Matcher("names", "x", ("Bash", "mcp__github__delete_repo")), True),
    (Matcher("names", "x", ("Bash", "mcp__github__list_repos")), False),
    (Matcher("search", "mcp__github__delete_repo"), True),
    (Matcher("search", "mcp__git(hub|lab)__delete_.*"), True),
    (Matcher("search", "^mcp__[a-z]+__delete_repo$"), True),
    (Matcher("search", "Read|mcp__github__delete_repo"), True),
    (Matcher("search", "mcp__github.*"), True),  # every tool of a server
    (Matcher("search", "mcp__.*"), True),
    (Matcher("search", "^mcp__github__list_.*"), False),  # another tool stays another tool
    (Matcher("search", "^mcp__a$|mcp__b__list_repos"), False),
    (Matcher("search", "^Bash$"), False),
])
def test_only_the_tool_part_is_checked_where_the_server_is_unknown(matcher: Matcher,
                                                                   expected: bool) -> None:
    assert matcher.matches_any_server(UNKNOWN) is expected
    # A subject with its server named is matched as written.
    assert matcher.matches_any_server("mcp__slack__delete_repo") is matcher.matches(
        "mcp__slack__delete_repo")


def test_a_literal_server_beside_a_server_part_is_still_tried() -> None:
    matcher = Matcher("search", "mcp__github.*|mcp__slack__post")
    assert matcher.matches_any_server("mcp__unknown__delete_repo")
    assert matcher.matches_any_server("mcp__unknown__post")
    assert not Matcher("search", "^mcp__github__list_|mcp__slack__post$").matches_any_server(
        "mcp__unknown__delete_repo")
