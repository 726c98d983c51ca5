"""One config, every host: a hook written in one dialect serves the other hosts."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..helpers import (
    claude_bash,
    claude_config,
    claude_event,
    cline_event,
    cursor_config,
    cursor_event,
    reply,
    run_in_process,
    write_script,
)

# A host-agnostic guard: it reads the canonical tool from PROMPTHOOKS_TOOL.
GUARD = 'cat >/dev/null; echo "blocked $PROMPTHOOKS_TOOL on $PROMPTHOOKS_HOST" >&2; exit 2'

SHELL_EVENTS = {
    "claude": claude_bash("rm -rf /"),
    "cursor-shell": cursor_event("beforeShellExecution", command="rm -rf /", cwd="/tmp"),
    "cursor-tool": cursor_event("preToolUse", tool_name="Shell",
                                tool_input={"command": "rm -rf /"}),
    "cline": cline_event("PreToolUse", toolName="execute_command",
                         parameters={"command": "rm -rf /"}),
}


def _denied(host: str, out: dict[str, object]) -> str | None:
    """The block reason in any host's reply, or None."""
    if host == "claude":
        specific = out.get("hookSpecificOutput", {})
        assert isinstance(specific, dict)
        return specific.get("permissionDecisionReason") \
            if specific.get("permissionDecision") == "deny" else None
    if host.startswith("cursor"):
        return out.get("agent_message") if out.get("permission") == "deny" else None  # type: ignore[return-value]
    return out.get("errorMessage") if out.get("cancel") else None  # type: ignore[return-value]


# Cursor sends a shell command twice, as preToolUse and as beforeShellExecution, each to its
# own entries: a Cursor beforeShellExecution hook runs on the second, a hook written for
# another host on the first (Cursor's general event), so each runs once per command.


@pytest.mark.parametrize("host", SHELL_EVENTS)
def test_claude_style_bash_hook_serves_every_host(tmp_path: Path, host: str) -> None:
    cfg = claude_config(tmp_path / "hooks.json", "PreToolUse", {"command": GUARD}, matcher="Bash")
    out = reply(run_in_process(SHELL_EVENTS[host], "--config", str(cfg)))
    expected_host = host.split("-")[0]
    expected = None if host == "cursor-shell" else f"blocked Bash on {expected_host}"
    assert _denied(host, out) == expected


@pytest.mark.parametrize("host", SHELL_EVENTS)
def test_cursor_style_shell_hook_serves_every_host(tmp_path: Path, host: str) -> None:
    cfg = cursor_config(tmp_path / "hooks.json", "beforeShellExecution",
                        {"command": GUARD, "matcher": "rm -rf"})
    out = reply(run_in_process(SHELL_EVENTS[host], "--config", str(cfg)))
    assert (_denied(host, out) is not None) is (host != "cursor-tool")


@pytest.mark.parametrize("host", SHELL_EVENTS)
def test_cline_style_hook_folder_serves_every_host(tmp_path: Path, host: str) -> None:
    write_script(tmp_path / "hooks" / "PreToolUse",
                 "cat >/dev/null; echo '{\"cancel\": true, \"errorMessage\": \"cline says no\"}'")
    out = reply(run_in_process(SHELL_EVENTS[host], "--config", str(tmp_path / "hooks")))
    assert _denied(host, out) == (None if host == "cursor-shell" else "cline says no")


def test_matcher_in_the_other_dialect_does_not_fire_for_other_tools(tmp_path: Path) -> None:
    cfg = claude_config(tmp_path / "hooks.json", "PreToolUse", {"command": GUARD}, matcher="Bash")
    read = cline_event("PreToolUse", toolName="read_file", parameters={"path": "a"})
    assert reply(run_in_process(read, "--config", str(cfg))) == {"cancel": False}


def test_cursor_tool_matcher_on_a_claude_event(tmp_path: Path) -> None:
    cfg = cursor_config(tmp_path / "hooks.json", "preToolUse",
                        {"command": GUARD, "matcher": "Write"})
    edit = claude_event("PreToolUse", tool_name="Edit", tool_input={"file_path": "a"})
    assert _denied("claude", reply(run_in_process(edit, "--config", str(cfg)))) == \
        "blocked Edit on claude"
    read = claude_event("PreToolUse", tool_name="Read", tool_input={"file_path": "a"})
    assert reply(run_in_process(read, "--config", str(cfg))) == {}


def test_stop_hooks_across_hosts(tmp_path: Path) -> None:
    cfg = claude_config(tmp_path / "hooks.json", "Stop", {"command":
                        "cat >/dev/null; echo '{\"decision\": \"block\", \"reason\": \"finish the tests\"}'"})
    cursor_out = reply(run_in_process(cursor_event("stop", status="completed", loop_count=0),
                               "--config", str(cfg)))
    assert cursor_out == {"followup_message": "finish the tests"}
    cline_out = reply(run_in_process(cline_event("TaskComplete", taskMetadata={}), "--config", str(cfg)))
    assert cline_out == {"cancel": True, "errorMessage": "finish the tests"}


def test_prompt_events_across_hosts(tmp_path: Path) -> None:
    write_script(tmp_path / "hooks" / "UserPromptSubmit",
                 "cat >/dev/null; echo '{\"cancel\": false, \"contextModification\": \"STANDARDS\"}'")
    claude_out = reply(run_in_process(claude_event("UserPromptSubmit", prompt="x"), "--config",
                               str(tmp_path / "hooks")))
    assert claude_out["hookSpecificOutput"]["additionalContext"] == "STANDARDS"
    cursor_cfg = cursor_config(tmp_path / "c.json", "beforeSubmitPrompt",
                               {"command": "cat >/dev/null; exit 2"})
    cline_out = reply(run_in_process(cline_event("UserPromptSubmit", prompt="x", attachments=[]),
                              "--config", str(cursor_cfg)))
    assert cline_out["cancel"] is True
