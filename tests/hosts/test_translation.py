"""Hooks receive the event in their own dialect: a script written for one host, unmodified,
gives the same decision under the other two (real scripts, real ``prompthooks run``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ..helpers import (
    claude_bash,
    claude_config,
    cline_event,
    cursor_config,
    cursor_event,
    reply,
    run_in_process,
    write_json,
    write_script,
)


def _cline_sdk(command: str) -> dict[str, Any]:
    return {"hookName": "tool_call", "clineVersion": "1.0.0",
            "timestamp": "2026-01-15T10:30:00Z", "taskId": "conv-1",
            "workspaceRoots": ["/tmp"], "userId": "user", "iteration": 1,
            "tool_call": {"id": "c-1", "name": "run_commands",
                          "input": {"commands": [command]}}}


# The same action, rm -rf (or a harmless ls), as each host sends it.
def _events(command: str) -> dict[str, dict[str, Any]]:
    return {
        "claude": claude_bash(command),
        "cursor-tool": cursor_event("preToolUse", tool_name="Shell",
                                    tool_input={"command": command}),
        "cursor-shell": cursor_event("beforeShellExecution", command=command, cwd="/tmp"),
        "cline": cline_event("PreToolUse", toolName="execute_command",
                             parameters={"command": command, "requires_approval": "false"}),
        "cline-sdk": _cline_sdk(command),
    }


def _blocked(out: dict[str, Any]) -> bool:
    """Whether any host's reply refuses the action."""
    specific = out.get("hookSpecificOutput") or {}
    return (specific.get("permissionDecision") == "deny" or out.get("permission") == "deny"
            or out.get("cancel") is True)


CLAUDE_GUARD = """
import json, sys
data = json.load(sys.stdin)
if data["hook_event_name"] == "PreToolUse" and data["tool_name"] == "Bash" \\
        and "rm -rf" in data["tool_input"]["command"]:
    print("no recursive deletes", file=sys.stderr)
    sys.exit(2)
"""

CURSOR_GUARD = """
import json, sys
data = json.load(sys.stdin)
if "rm -rf" in data.get("command", ""):
    print(json.dumps({"permission": "deny", "userMessage": "no recursive deletes",
                      "agentMessage": "no recursive deletes"}))
else:
    print(json.dumps({"permission": "allow"}))
"""

CLINE_GUARD = """
import json, sys
data = json.load(sys.stdin)
pre = data.get("preToolUse", {})
if pre.get("toolName") == "execute_command" and "rm -rf" in pre["parameters"]["command"]:
    print("checking...")
    print(json.dumps({"cancel": True, "errorMessage": "no recursive deletes"}))
else:
    print(json.dumps({"cancel": False}))
"""


def _config(tmp_path: Path, dialect: str) -> Path:
    if dialect == "claude":
        script = write_script(tmp_path / "guard.py", CLAUDE_GUARD, "#!/usr/bin/env python3")
        return claude_config(tmp_path / "claude.json", "PreToolUse", {"command": str(script)},
                             matcher="Bash")
    if dialect == "cursor":
        script = write_script(tmp_path / "guard.py", CURSOR_GUARD, "#!/usr/bin/env python3")
        return cursor_config(tmp_path / "cursor" / "hooks.json", "beforeShellExecution",
                             {"command": str(script)})
    write_script(tmp_path / "cline" / "PreToolUse", CLINE_GUARD, "#!/usr/bin/env python3")
    return tmp_path / "cline"


@pytest.mark.slow
@pytest.mark.parametrize("dialect", ["claude", "cursor", "cline"])
@pytest.mark.parametrize("host", ["claude", "cursor-tool", "cursor-shell", "cline",
                                  "cline-sdk"])
def test_a_guard_written_for_one_host_decides_the_same_under_all(tmp_path: Path, dialect: str,
                                                                 host: str) -> None:
    if (dialect, host) == ("cline", "cline-sdk"):
        # Cline's own engine: the hook gets Cline's own bytes, as Cline would send them (a
        # script that knows only execute_command misses run_commands there too).
        pytest.skip("the host's own payload, untranslated")
    if host == ("cursor-tool" if dialect == "cursor" else "cursor-shell"):
        # Cursor sends the command under both events, and runs this hook on the other one
        # only (tests/hosts/cursor/test_events.py).
        pytest.skip("Cursor runs this hook for its other event of the same command")
    config = _config(tmp_path, dialect)
    bad = run_in_process(_events("rm -rf build")[host], "--config", str(config))
    assert _blocked(reply(bad)), (bad.stdout, bad.stderr)
    good = run_in_process(_events("ls")[host], "--config", str(config))
    assert not _blocked(reply(good)), (good.stdout, good.stderr)
    assert good.returncode == 0 and "error" not in good.stderr


def test_claude_project_dir_is_set_for_a_claude_hook_under_cline(tmp_path: Path) -> None:
    """Claude's docs' own form, "$CLAUDE_PROJECT_DIR"/.claude/hooks/x.sh, under Cline."""
    project = tmp_path / "project"
    write_script(project / ".claude" / "hooks" / "guard.sh",
                 'cat >/dev/null; echo "from $CLAUDE_PROJECT_DIR" >&2; exit 2')
    config = claude_config(tmp_path / "claude.json", "PreToolUse",
                           {"command": '"$CLAUDE_PROJECT_DIR"/.claude/hooks/guard.sh'})
    event = cline_event("PreToolUse", root=str(project), toolName="execute_command",
                        parameters={"command": "ls"})
    out = reply(run_in_process(event, "--config", str(config), env={"CLAUDE_PROJECT_DIR": ""}))
    assert out == {"cancel": True, "errorMessage": f"from {project}"}


def test_cursor_project_dir_is_set_for_a_cursor_hook_under_claude(tmp_path: Path) -> None:
    script = write_script(tmp_path / "env.sh", """
cat >/dev/null
echo "{\\"permission\\": \\"deny\\", \\"agent_message\\": \\"$CURSOR_PROJECT_DIR\\"}"
""")
    config = cursor_config(tmp_path / "cursor" / "hooks.json", "preToolUse",
                           {"command": str(script)})
    out = reply(run_in_process(claude_bash("ls", cwd=str(tmp_path)), "--config", str(config),
                        env={"CLAUDE_PROJECT_DIR": str(tmp_path), "CURSOR_PROJECT_DIR": ""}))
    assert out["hookSpecificOutput"]["permissionDecisionReason"] == str(tmp_path)


def test_raw_event_gives_the_sending_hosts_own_bytes(tmp_path: Path) -> None:
    seen = tmp_path / "seen.json"
    for raw in (False, True):
        config = write_json(tmp_path / f"claude-{raw}.json", {"hooks": {"PreToolUse": [{
            "hooks": [{"type": "command", "command": f"cat > {seen}", "raw_event": raw}]}]}})
        event = cursor_event("preToolUse", tool_name="Shell", tool_input={"command": "ls"})
        run_in_process(event, "--config", str(config))
        got = json.loads(seen.read_text())
        if raw:
            assert got == event
        else:
            assert (got["hook_event_name"], got["tool_name"], got["tool_input"]) == \
                ("PreToolUse", "Bash", {"command": "ls"})
            assert got["session_id"] == "conv-1" and "cursor_version" not in got


def test_the_calls_id_crosses_hosts(tmp_path: Path) -> None:
    """A hook that pairs its pre and post events by the call's id finds it in its own field."""
    seen = tmp_path / "seen.json"
    claude = claude_config(tmp_path / "claude.json", "PreToolUse",
                           {"command": f"cat > {seen}"})
    for event, expected in ((_cline_sdk("ls"), "c-1"),
                            (cursor_event("preToolUse", tool_name="Shell",
                                          tool_input={"command": "ls"},
                                          tool_use_id="call-7"), "call-7")):
        assert run_in_process(event, "--config", str(claude)).returncode == 0
        assert json.loads(seen.read_text())["tool_use_id"] == expected
    cursor = cursor_config(tmp_path / "cursor" / "hooks.json", "preToolUse",
                           {"command": f"cat > {seen}"})
    assert run_in_process(claude_bash("ls"), "--config", str(cursor)).returncode == 0
    got = json.loads(seen.read_text())
    assert (got["hook_event_name"], got["tool_use_id"]) == ("preToolUse", "tu-1")
