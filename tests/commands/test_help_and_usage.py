"""Help a new user can act on, and usage errors that say what was meant: every command's
``--help`` has a description, examples and its exit codes; a mistyped command, option or
choice is one line naming the closest one, exit 64. Real processes."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from prompthooks.cli import build_parser
from prompthooks.commands.usage import PAGES

from ..helpers import claude_bash, write_json


def prompthooks(*args: str, columns: int = 80) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "prompthooks", *args], capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=60,
                          env={**os.environ, "COLUMNS": str(columns)})


def _commands() -> list[str]:
    for action in build_parser()._actions:
        if isinstance(action, argparse._SubParsersAction):
            return list(action.choices)
    raise AssertionError("no subcommands")


def test_every_command_has_a_page_and_every_page_a_command() -> None:
    assert sorted(PAGES) == sorted(["", *_commands()])


@pytest.mark.parametrize("command", ["", *_commands()])
@pytest.mark.parametrize("columns", [60, 200])
def test_help_has_a_description_examples_and_exit_codes(command: str, columns: int) -> None:
    proc = prompthooks(*([command] if command else []), "--help", columns=columns)
    assert proc.returncode == 0 and proc.stderr == ""
    text = proc.stdout
    page = PAGES[command]
    assert " ".join(page.description.split()[:6]) in " ".join(text.split())
    examples = text.split("\nexamples:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert [line.strip() for line in examples] == list(page.examples)
    codes = [line.split()[0] for line in text.split("\nexit codes:\n", 1)[1].splitlines()
             if line.startswith("  ") and line.split()[0].isdigit()]
    assert codes[:len(page.exits)] == [code for code, _ in page.exits]
    assert "64" in codes and "0" in codes
    if columns == 60:  # the description and exit codes wrap to the terminal, at words
        ours = text.split("\n\n")[1] + "\n" + text.split("\nexit codes:\n", 1)[1]
        assert [line for line in ours.splitlines() if len(line) > 60] == []


@pytest.mark.slow
def test_every_command_is_listed_beside_its_summary() -> None:
    listed = prompthooks("--help").stdout.split("COMMAND\n", 1)[1].split("\n\n", 1)[0]
    names = [line.split()[0] for line in listed.splitlines() if line.startswith("    ")
             and not line.startswith("     ")]
    assert names == _commands()
    for line in listed.splitlines():  # no command alone on its line, its summary below
        assert line.strip() not in _commands(), line


def test_run_lists_exactly_the_exit_codes_the_readme_documents() -> None:
    # docs/hosts.md, "Exit codes of `prompthooks run`": the codes a host reads.
    text = prompthooks("run", "--help").stdout.split("\nexit codes:\n", 1)[1]
    codes = [line.split()[0] for line in text.splitlines()
             if line.startswith("  ") and line.split()[0].isdigit()]
    assert codes == ["0", "1", "2", "3", "64"]


@pytest.mark.parametrize("argv, line", [
    (["instal"], "prompthooks: unknown command 'instal'; did you mean 'install'? (see: "
                 "prompthooks --help)"),
    (["--hlep"], "prompthooks: unrecognized arguments: --hlep; did you mean '--help'? (see: "
                 "prompthooks --help)"),
    ([], "prompthooks: the following arguments are required: COMMAND (see: prompthooks "
         "--help)"),
    (["try-pak", "x"], "prompthooks: unknown command 'try-pak'; did you mean 'try-pack'? "
                       "(see: prompthooks --help)"),
    (["install", "--host", "claude", "--dryrun"],
     "prompthooks: unrecognized arguments: --dryrun; did you mean '--dry-run'? (see: "
     "prompthooks install --help)"),
    (["uninstall", "--host", "claude", "--scpoe", "user"],
     "prompthooks: unrecognized arguments: --scpoe user; did you mean '--scope'? (see: "
     "prompthooks uninstall --help)"),
    (["log", "--jsno", "--sinse=1h"],
     "prompthooks: unrecognized arguments: --jsno --sinse=1h; did you mean '--json' for "
     "'--jsno', '--since' for '--sinse'? (see: prompthooks log --help)"),
    (["--json", "log"],
     "prompthooks: unrecognized arguments: --json; give --json after the command: prompthooks "
     "log --json (see: prompthooks log --help)"),
    (["run", "--host", "claud"],
     "prompthooks: argument --host: invalid choice: 'claud' (choose from 'claude', 'cursor', "
     "'cline'); did you mean 'claude'? (see: prompthooks run --help)"),
    (["log", "stat"], "prompthooks: argument stats: invalid choice: 'stat' (choose from "
                      "'stats'); did you mean 'stats'? (see: prompthooks log --help)"),
])
def test_a_typo_names_what_was_meant_in_one_line(argv: list[str], line: str) -> None:
    proc = prompthooks(*argv)
    assert proc.returncode == 64
    assert proc.stdout == ""
    assert proc.stderr == line + "\n"


def test_nothing_close_lists_the_commands() -> None:
    proc = prompthooks("zzzz")
    assert proc.returncode == 64
    assert proc.stderr.startswith("prompthooks: unknown command 'zzzz' (one of: run, validate, ")
    assert len(proc.stderr.splitlines()) == 1


def test_an_unknown_option_is_said_by_the_command_it_was_given_to() -> None:
    proc = prompthooks("validate", "--xyz")
    assert proc.returncode == 64
    assert proc.stderr == ("prompthooks: unrecognized arguments: --xyz (see: prompthooks "
                           "validate --help)\n")


@pytest.mark.parametrize("budget", ["-1", "0", "nan", "inf", "soon"])
def test_a_budget_that_is_no_time_is_a_usage_error(budget: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "prompthooks", "run", "--host", "claude",
                           "--budget", budget], input="{}", capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 64
    assert proc.stdout == ""
    assert proc.stderr.startswith("prompthooks: argument --budget: ")
    assert len(proc.stderr.splitlines()) == 1


def test_run_loads_neither_help_pages_nor_suggestions(tmp_path: Path) -> None:
    """`run` reads its options without the full parser; the help pages and the typo finder
    are loaded only when help is printed or a command line does not parse."""
    cfg = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": "exit 0"}]}]}})
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "prompthooks", "run",
                           "--config", str(cfg)], input=json.dumps(claude_bash("ls")),
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PROMPTHOOKS_DISPATCH": "0"})
    assert proc.returncode == 0
    imported = {line.rsplit("|", 1)[1].strip() for line in proc.stderr.splitlines()
                if line.startswith("import time:") and "|" in line}
    assert "prompthooks.runner.judge" in imported  # the canary: the run was done here
    assert not imported & {"prompthooks.commands.usage", "difflib"}
    bad = subprocess.run([sys.executable, "-X", "importtime", "-m", "prompthooks", "run",
                          "--hots"], input="{}", capture_output=True, text=True, timeout=60)
    assert "prompthooks.commands.usage" in bad.stderr  # and it is what says a typo


@pytest.mark.parametrize("idle", ["-1", "0", "nan"])
def test_an_idle_time_that_is_no_time_is_a_usage_error(idle: str) -> None:
    proc = prompthooks("serve", "--idle", idle)
    assert proc.returncode == 64
    assert proc.stderr.startswith("prompthooks: argument --idle: ")
    assert len(proc.stderr.splitlines()) == 1


def test_every_example_parses() -> None:
    """The examples are command lines this version accepts (what follows a redirection or a
    pipe is the shell's)."""
    parser = build_parser()
    seen = 0
    for page in PAGES.values():
        for example in page.examples:
            words = shlex.split(example)
            if words[0] != "prompthooks" or "COMMAND" in words:
                continue
            cut = next((i for i, w in enumerate(words) if w in ("<", "|", ">")), len(words))
            parser.parse_args(words[1:cut])
            seen += 1
    assert seen >= 30
