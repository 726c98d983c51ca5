"""A hook written for one host and run under another sees one host: its stdin, environment
and working folder all say the dialect it was written for (real scripts, real runs)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ..helpers import (
    claude_config,
    claude_event,
    cline_event,
    cursor_config,
    cursor_event,
    reply,
    run_in_process,
    write_script,
)

HOSTS = ("claude", "cursor", "cline")

DUMP = """
import json, os, sys
data = json.load(sys.stdin)
with open({out!r}, "w") as f:
    json.dump({{"env": dict(os.environ), "cwd": os.getcwd(), "stdin": data}}, f)
print(json.dumps({{"cancel": False}}) if "hookName" in data else "")
"""


def _sender_env(host: str, project: Path) -> dict[str, str]:
    """What each host puts in the environment of the process it runs (prompthooks)."""
    if host == "claude":
        return {"CLAUDECODE": "1", "CLAUDE_CODE_ENTRYPOINT": "cli",
                "CLAUDE_PROJECT_DIR": str(project)}
    if host == "cursor":
        return {"CURSOR_VERSION": "2.1.0", "CURSOR_TRACE_ID": "trace-1",
                "CURSOR_USER_EMAIL": "dev@example.com", "CURSOR_PROJECT_DIR": str(project),
                "CLAUDE_PROJECT_DIR": str(project)}
    return {"CLINE_VERSION": "3.36.0", "CLINE_BUILD_ENV": "production"}


# The variables that tell the sending host apart (the canaries: a hook of its own dialect
# sees them).
_MARKERS = {"claude": ("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT"),
            "cursor": ("CURSOR_VERSION", "CURSOR_TRACE_ID", "CURSOR_USER_EMAIL"),
            "cline": ("CLINE_VERSION", "CLINE_BUILD_ENV")}


def _event(host: str, project: Path) -> dict[str, Any]:
    """A Bash `ls` as each host sends it; Claude Code's session has moved into a subfolder."""
    if host == "claude":
        return claude_event("PreToolUse", cwd=str(project / "sub"), tool_name="Bash",
                            tool_input={"command": "ls"}, tool_use_id="toolu_1")
    if host == "cursor":
        return cursor_event("preToolUse", root=str(project), tool_name="Shell",
                            tool_input={"command": "ls"})
    return cline_event("PreToolUse", root=str(project), toolName="execute_command",
                       parameters={"command": "ls"})


def _config(dialect: str, project: Path, body: str, **handler: Any) -> Path:
    """A hook of ``dialect`` running ``body``, configured inside the project."""
    if dialect == "cline":
        folder = project / ".clinerules" / "hooks"
        write_script(folder / "PreToolUse", body, "#!/usr/bin/env python3")
        return folder
    script = write_script(project / "hook.py", body, "#!/usr/bin/env python3")
    if dialect == "claude":
        return claude_config(project / ".claude" / "settings.json", "PreToolUse",
                             {"command": str(script), **handler})
    return cursor_config(project / ".cursor" / "hooks.json", "preToolUse",
                         {"command": str(script), **handler})


def _run(dialect: str, host: str, tmp_path: Path, **handler: Any) -> dict[str, Any]:
    project = tmp_path / "project"
    (project / "sub").mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"  # where prompthooks itself is started
    elsewhere.mkdir()
    out = tmp_path / "seen.json"
    config = _config(dialect, project, DUMP.format(out=str(out)), **handler)
    proc = run_in_process(_event(host, project), "--config", str(config), cwd=elsewhere,
                   env=_sender_env(host, project))
    assert proc.returncode == 0 and "error" not in proc.stderr, (proc.stdout, proc.stderr)
    seen: dict[str, Any] = json.loads(out.read_text())
    return seen


def _dialect_of(stdin: dict[str, Any]) -> str:
    if "hookName" in stdin:
        return "cline"
    return "cursor" if "cursor_version" in stdin else "claude"


@pytest.mark.parametrize("dialect", HOSTS)
@pytest.mark.parametrize("host", HOSTS)
def test_a_hook_sees_its_own_hosts_world(tmp_path: Path, dialect: str, host: str) -> None:
    seen = _run(dialect, host, tmp_path)
    env, project = seen["env"], str(tmp_path / "project")
    assert _dialect_of(seen["stdin"]) == dialect
    if dialect == host:
        # The canary: the sending host's variables reach a hook written for it, so their
        # absence below is the translation's doing.
        assert all(env.get(name) for name in _MARKERS[host]), env
        return
    leaked = {name: env[name] for name in _MARKERS[host] if name in env}
    assert not leaked, f"a {dialect} hook under {host} sees {leaked}"
    own = {name: value for name, value in env.items()
           if name.startswith(("CLAUDE_PROJECT_DIR", "CURSOR_"))}
    if dialect == "claude":
        assert own == {"CLAUDE_PROJECT_DIR": project}
        assert seen["cwd"] == seen["stdin"]["cwd"]
    elif dialect == "cursor":
        transcript = seen["stdin"]["transcript_path"]
        assert own == {"CURSOR_PROJECT_DIR": project, "CLAUDE_PROJECT_DIR": project,
                       **({"CURSOR_TRANSCRIPT_PATH": transcript} if transcript else {})}
        assert seen["cwd"] == seen["stdin"]["workspace_roots"][0] == project
    else:
        assert own == {}
        assert seen["cwd"] == seen["stdin"]["workspaceRoots"][0] == project


def test_a_claude_hook_under_claude_code_runs_in_the_sessions_folder(tmp_path: Path) -> None:
    """The other side of the rule above: the same folder move is followed by Claude Code's own
    hooks, while Cursor and Cline hooks run from the project root."""
    seen = _run("claude", "claude", tmp_path)
    assert seen["cwd"] == str(tmp_path / "project" / "sub")


def test_a_raw_event_hook_keeps_the_sending_hosts_world(tmp_path: Path) -> None:
    seen = _run("claude", "cursor", tmp_path, raw_event=True)
    assert _dialect_of(seen["stdin"]) == "cursor"
    assert seen["env"]["CURSOR_VERSION"] == seen["stdin"]["cursor_version"]
    assert seen["env"]["CURSOR_PROJECT_DIR"] == str(tmp_path / "project")


# A hook that serves several hosts and tells them apart as third-party hooks do: by
# CURSOR_VERSION first (set by Cursor alone, its authors reason), then by the payload.
ADAPTER = """
import json, os, sys
data = json.load(sys.stdin)
with open({out!r}, "a") as f:
    f.write(("cursor" if os.environ.get("CURSOR_VERSION") else "claude") + "\\n")
if os.environ.get("CURSOR_VERSION"):
    command = data.get("command") or (data.get("tool_input") or {{}}).get("command", "")
    if isinstance(data.get("tool_input"), dict) and "hook_event_name" in data \\
            and data.get("tool_name") != "Shell":
        command = ""  # a Claude Code payload read as Cursor's: nothing it knows to check
else:
    command = data["tool_input"]["command"]
if "rm -rf" in command:
    print("no recursive deletes", file=sys.stderr)
    sys.exit(2)
"""


def test_a_claude_hook_that_picks_its_adapter_from_cursor_version_still_blocks(
        tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    picked = tmp_path / "picked.txt"
    # preToolUse: Cursor runs hooks written for Claude Code on its general event only.
    event = cursor_event("preToolUse", root=str(project), tool_name="Shell",
                         tool_input={"command": "rm -rf /", "cwd": str(project)})
    env = _sender_env("cursor", project)
    # The canary: given Cursor's bytes and world (raw_event), the hook takes the Cursor path,
    # so CURSOR_VERSION really reached prompthooks and would reach the hook.
    raw = _config("claude", project, ADAPTER.format(out=str(picked)), raw_event=True)
    assert reply(run_in_process(event, "--config", str(raw), env=env))["permission"] == "deny"
    assert picked.read_text() == "cursor\n"
    # Translated: a Claude Code payload in a Claude Code world, so the Claude path checks it.
    config = _config("claude", project, ADAPTER.format(out=str(picked)))
    out = reply(run_in_process(event, "--config", str(config), env=env))
    assert picked.read_text() == "cursor\nclaude\n"
    assert out["permission"] == "deny" and "no recursive deletes" in out["agent_message"]
