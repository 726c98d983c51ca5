"""The fault matrix's shared rows: one test per way a hook can fail, each asserting the exact reply.

Every row runs the faulty hook next to a healthy one and checks that the healthy hook's answer
reaches the host whatever the fault did (docs/config.md, "Merge rules": one failing hook never
discards the other hooks' answers). Where the failure policy matters a row runs twice:

- fail-open: the healthy hook's answer alone decides, and stderr holds one line naming the
  faulty hook and its fault;
- fail-closed: the event is blocked with "Blocked by prompthooks: a fail-closed hook ...",
  and the healthy hook's output is still there where the host's format carries it.

Command rows run `prompthooks run` in a real process (the reply and exit code are what the
host reads). Prompt rows talk HTTP to the scripted fake model through
:func:`prompthooks.api.dispatch` in this process, so litellm is imported and warmed once
rather than once per row; a subprocess would add nothing but that import.

The audit database rows run as root too: the run's process drops the capabilities that let
root ignore file modes (helpers.file_modes_bind_root), so a read-only file is read-only to it.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from ..helpers import (
    claude_bash,
    reply,
    run_cli,
    write_json,
)

POLICIES = pytest.mark.parametrize("fail_closed", [False, True], ids=["fail-open", "fail-closed"])

# The healthy hook of the Claude Code and Cline rows: a system message and a context.
HEALTHY = ("cat > /dev/null; echo '{\"systemMessage\": \"healthy note\", \"hookSpecificOutput\": "
           "{\"hookEventName\": \"PreToolUse\", \"additionalContext\": \"healthy context\"}}'")
# The healthy hook of the Cursor rows: Cursor's preToolUse carries only a permission and its
# messages, so the healthy hook there denies.
HEALTHY_CURSOR = ("cat > /dev/null; echo '{\"permission\": \"deny\", \"user_message\": "
                  "\"healthy says no\", \"agent_message\": \"healthy tells the agent no\"}'")
BLOCKED = "Blocked by prompthooks: a fail-closed "
TIMED_OUT = r"timed out after \d+\.\ds and was killed"
PROMPT = "Block commands that delete files outside the project."


# ---------------------------------------------------------------------------------------------
# The table-driven core


def expected_failure(lines: Sequence[str], name: str, label: str, error: str) -> str:
    """The single failure line, checked: it names the hook and where it was configured, and
    its fault fullmatches the regular expression ``error``. Returned as the merge wrote it."""
    assert len(lines) == 1, lines
    match = re.fullmatch(rf"hook '{re.escape(name)}' \({re.escape(label)}\): (?P<error>.*)",
                         lines[0], re.S)
    assert match, lines[0]
    assert re.fullmatch(error, match["error"], re.S), match["error"]
    return lines[0]


def stderr_lines(proc: subprocess.CompletedProcess[str]) -> list[str]:
    """stderr as failure lines; every line must be one of ours."""
    lines = proc.stderr.splitlines()
    assert all(line.startswith("prompthooks: ") for line in lines), proc.stderr
    return [line.removeprefix("prompthooks: ") for line in lines]


def claude_reply(failure: str | None, fail_closed: bool, *, system: str = "healthy note",
                  denial: str | None = None) -> dict[str, Any]:
    """The Claude Code reply when the healthy hook's note and context are merged with a
    faulty hook's ``failure`` (a fail-closed one denies) or its own ``denial``."""
    specific: dict[str, Any] = {"hookEventName": "PreToolUse",
                                "additionalContext": "healthy context"}
    reason = f"{BLOCKED}{failure}" if failure and fail_closed else denial
    if reason:
        specific |= {"permissionDecision": "deny", "permissionDecisionReason": reason}
    return {"systemMessage": system, "hookSpecificOutput": specific}


def claude_fault_config(tmp_path: Path, faulty: Mapping[str, Any],
                   fail_closed: bool) -> tuple[Path, str]:
    """A Claude Code style config: the faulty hook first, the healthy one second."""
    cfg = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", **faulty, "failClosed": fail_closed},
        {"type": "command", "command": HEALTHY},
    ]}]}})
    return cfg, f"{cfg}: hooks.PreToolUse[0].hooks[0]"


def healthy_config(tmp_path: Path) -> Path:
    """The healthy hook alone, to run beside a Cline-style hook folder."""
    return write_json(tmp_path / "healthy.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": HEALTHY}]}]}})


def run_row(tmp_path: Path, event: Mapping[str, Any], cfg: Path,
         *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(event, "--config", str(cfg), "--managed-dir", str(tmp_path / "no-managed"),
                   *args)


Run = tuple[subprocess.CompletedProcess[str], str]  # the run, and the faulty hook's label


def claude_row(tmp_path: Path, command: str, fail_closed: bool, timeout: float = 10,
                event: Mapping[str, Any] | None = None) -> Run:
    """Run one Claude Code row; the hooks' working directory is ``tmp_path`` (the event's
    cwd), so scripts may write their PID files there."""
    cfg, label = claude_fault_config(tmp_path, {"command": command, "timeout": timeout}, fail_closed)
    proc = run_row(tmp_path, event or claude_bash("ls", cwd=str(tmp_path)), cfg)
    assert proc.returncode == 0, proc.stderr
    return proc, label


def assert_claude_failure(tmp_path: Path, command: str, fail_closed: bool, error: str,
                           timeout: float = 10) -> None:
    """The whole check for a Claude Code row whose faulty hook fails."""
    proc, label = claude_row(tmp_path, command, fail_closed, timeout)
    failure = expected_failure(stderr_lines(proc), command, label, error)
    assert reply(proc) == claude_reply(failure, fail_closed)


def assert_claude_no_failure(tmp_path: Path, command: str, fail_closed: bool,
                              expected: dict[str, Any], timeout: float = 10,
                              event: Mapping[str, Any] | None = None) -> None:
    """The whole check for a Claude Code row whose odd hook is not a failure: no stderr line,
    and a fail-closed mark changes nothing."""
    proc, _ = claude_row(tmp_path, command, fail_closed, timeout, event)
    assert proc.stderr == ""
    assert reply(proc) == expected
