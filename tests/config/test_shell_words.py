"""A command's first words as /bin/sh expands them, read without a shell: each case is checked
against the shell itself (`printf '%s\\n' WORDS`) wherever the shell's answer is safe to ask."""

from __future__ import annotations

import subprocess

import pytest

from prompthooks.config.shell_words import first_words
from prompthooks.loading.checks import command_problem

ENV = {"CLAUDE_PROJECT_DIR": "/work/my project", "HOME": "/home/dev", "EMPTY": ""}

CASES = [
    ('"$CLAUDE_PROJECT_DIR"/.claude/hooks/guard.py', ["/work/my project/.claude/hooks/guard.py"]),
    ("${CLAUDE_PROJECT_DIR}/x.sh --flag 'a b'", ["/work/my", "project/x.sh", "--flag", "a b"]),
    ('"${CLAUDE_PROJECT_DIR}/x.sh"', ["/work/my project/x.sh"]),
    ("~/bin/guard 2>/dev/null", ["/home/dev/bin/guard", "2"]),
    ("'~/not expanded' \"~\"", ["~/not expanded", "~"]),
    ("python3 a\\ b.py; rm -rf x", ["python3", "a b.py"]),
    ('FOO=1 ./x.sh | tee log', ["FOO=1", "./x.sh"]),
    ('echo "a\\"b\\$c" # comment', ["echo", 'a"b$c']),
    ("x$EMPTY.sh", ["x.sh"]),
]


@pytest.mark.parametrize(("command", "words"), CASES)
def test_words_as_the_shell_reads_them(command: str, words: list[str]) -> None:
    assert [w.text for w in first_words(command, ENV)] == words
    assert all(w.unresolved is None for w in first_words(command, ENV))
    # The shell agrees (the commands are quoted data here, never run: printf prints them).
    script = "printf '%s\\n' " + command.split(";")[0].split("|")[0].split("2>")[0].split("#")[0]
    shell = subprocess.run(["/bin/sh", "-c", script], capture_output=True, text=True,
                           env=ENV, timeout=10)
    lines = shell.stdout.splitlines()
    assert lines and words[:len(lines)] == lines


@pytest.mark.parametrize(("command", "why"), [
    ("$(which guard)", "'$(' is expanded only when it runs"),
    ("`which guard`", "a command substitution is expanded only when it runs"),
    ("$NOT_SET/x.sh", "$NOT_SET is not set here"),
    ("${X:-/bin}/guard", "${X:-/bin...} is expanded only when it runs"),
    ("'unclosed", "a single quote is not closed"),
])
def test_what_only_running_can_tell_is_left_unresolved(command: str, why: str) -> None:
    [word] = first_words(command, ENV)
    assert word.unresolved == why


def test_interpreters_and_runners() -> None:
    env = {"PATH": "/usr/bin:/bin"}
    assert command_problem("exec env A=1 no-such-prog-xyz", "/", env) == (
        "error", "'no-such-prog-xyz' is not on PATH")
    assert command_problem("sh -c 'exit 0'", "/", env) is None  # code, not a script
    assert command_problem("exit 0", "/", env) is None  # a builtin
    assert command_problem("sh /no/such/script.sh", "/", env) == (
        "error", "sh would run '/no/such/script.sh', which does not exist")
