"""`prompthooks run` for Cline: hook folders, last-JSON replies, and Cline's own examples."""

from __future__ import annotations

from pathlib import Path

import pytest

from prompthooks.hosts.cline.wire import MAX_CONTEXT

from ...helpers import (
    cline_event,
    reply,
    run_in_process,
    write_script,
)

TS_ONLY = """
input=$(cat)
case "$input" in
  *'"toolName": "write_to_file"'*'.js"'*)
    if [ -f tsconfig.json ]; then
      echo '{"cancel": true, "errorMessage": "JavaScript files not allowed in TypeScript project"}'
      exit 0
    fi ;;
esac
echo '{"cancel": false}'
"""

NO_PACKAGE_JSON = """
input=$(cat)
case "$input" in
  *'package.json'*) echo '{"cancel": true, "errorMessage": "Global policy: Cannot modify package.json"}'; exit 0 ;;
esac
echo '{"cancel": false}'
"""

LOGS_THEN_JSON = """
cat > /dev/null
echo "Processing hook..."
echo "Tool: write_to_file"
cat <<END
{
  "cancel": false,
  "contextModification": "WORKSPACE_RULES: Use TypeScript"
}
END
"""


def _write(root: Path, tool: str = "write_to_file", path: str = "src/a.js") -> dict[str, object]:
    return cline_event("PreToolUse", root=str(root), toolName=tool,
                       parameters={"path": path, "content": "x"})


def test_seed_example_block_js_in_typescript_project(tmp_path: Path) -> None:
    hooks = tmp_path / "hooks"
    write_script(hooks / "PreToolUse", TS_ONLY, "#!/usr/bin/env bash")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    no_ts = reply(run_in_process(_write(workspace), "--config", str(hooks)))
    assert no_ts == {"cancel": False}
    (workspace / "tsconfig.json").write_text("{}")  # the hook runs in the workspace root
    blocked = reply(run_in_process(_write(workspace), "--config", str(hooks)))
    assert blocked == {"cancel": True,
                       "errorMessage": "JavaScript files not allowed in TypeScript project"}
    ts_file = reply(run_in_process(_write(workspace, path="src/a.ts"), "--config", str(hooks)))
    assert ts_file == {"cancel": False}


def test_seed_example_global_and_workspace_hooks_combined(tmp_path: Path) -> None:
    global_dir, ws_dir = tmp_path / "global", tmp_path / "ws-hooks"
    write_script(global_dir / "PreToolUse", NO_PACKAGE_JSON, "#!/usr/bin/env bash")
    write_script(ws_dir / "PreToolUse", TS_ONLY.replace("if [ -f tsconfig.json ]; then",
                                                        "if true; then"), "#!/usr/bin/env bash")
    both = reply(run_in_process(_write(tmp_path, path="package.json.js"), "--config", str(ws_dir),
                         "--config", str(global_dir)))
    assert both == {"cancel": True, "errorMessage":
                    "JavaScript files not allowed in TypeScript project\n"
                    "Global policy: Cannot modify package.json"}
    only_global = reply(run_in_process(_write(tmp_path, path="package.json"), "--config", str(ws_dir),
                                "--config", str(global_dir)))
    assert only_global == {"cancel": True,
                           "errorMessage": "Global policy: Cannot modify package.json"}


def test_log_lines_before_the_json(tmp_path: Path) -> None:
    write_script(tmp_path / "hooks" / "PreToolUse", LOGS_THEN_JSON)
    out = reply(run_in_process(_write(tmp_path), "--config", str(tmp_path / "hooks")))
    assert out == {"cancel": False, "contextModification": "WORKSPACE_RULES: Use TypeScript"}


def test_no_json_means_allow_and_exit_2_is_only_an_error(tmp_path: Path) -> None:
    write_script(tmp_path / "a" / "PreToolUse", "echo just logging")
    write_script(tmp_path / "b" / "PreToolUse", "echo 'not json'; exit 2")
    proc = run_in_process(_write(tmp_path), "--config", str(tmp_path / "a"), "--config",
                   str(tmp_path / "b"))
    assert reply(proc) == {"cancel": False}
    assert "exited with status 2" in proc.stderr


def test_valid_json_is_honoured_whatever_the_exit_code(tmp_path: Path) -> None:
    """Cline: "If we have valid JSON, honor it regardless of exit code" (hook-factory.ts)."""
    write_script(tmp_path / "b" / "PreToolUse",
                 "echo '{\"cancel\": true, \"errorMessage\": \"no\"}'; exit 2")
    proc = run_in_process(_write(tmp_path), "--config", str(tmp_path / "b"))
    assert reply(proc) == {"cancel": True, "errorMessage": "no"}


@pytest.mark.slow
def test_one_crashing_hook_does_not_discard_another_cancel(tmp_path: Path) -> None:
    # Cline itself loses every result when one hook fails; prompthooks keeps them.
    write_script(tmp_path / "a" / "PreToolUse", "kill -SEGV $$")
    write_script(tmp_path / "b" / "PreToolUse",
                 "echo '{\"cancel\": true, \"errorMessage\": \"stop\"}'")
    write_script(tmp_path / "c" / "PreToolUse", "sleep 30")
    proc = run_in_process(_write(tmp_path), "--config", str(tmp_path / "a"), "--config",
                   str(tmp_path / "b"), "--config", str(tmp_path / "c"), "--budget", "2")
    assert reply(proc) == {"cancel": True, "errorMessage": "stop"}
    assert "SIGSEGV" in proc.stderr and "timed out" in proc.stderr


def test_contexts_joined_and_capped(tmp_path: Path) -> None:
    write_script(tmp_path / "a" / "PostToolUse",
                 "echo '{\"cancel\": false, \"contextModification\": \"first\"}'")
    write_script(tmp_path / "b" / "PostToolUse",
                 "python3 -c 'import json; print(json.dumps({\"contextModification\": \"x\" * 60000}))'")
    event = cline_event("PostToolUse", root=str(tmp_path), toolName="read_file",
                        parameters={}, result="ok", success=True, executionTimeMs=3)
    out = reply(run_in_process(event, "--config", str(tmp_path / "a"), "--config", str(tmp_path / "b")))
    context = out["contextModification"]
    assert context.startswith("first\n\nxxx")
    assert len(context) == MAX_CONTEXT and context.endswith("truncated to 50,000 characters]")


def test_task_start_hook_and_cwd_is_workspace_root(tmp_path: Path) -> None:
    write_script(tmp_path / "hooks" / "TaskStart",
                 "cat >/dev/null; printf '{\"contextModification\": \"%s\"}' \"$(pwd)\"")
    ws = tmp_path / "ws"
    ws.mkdir()
    event = cline_event("TaskStart", root=str(ws),
                        taskMetadata={"taskId": "t", "ulid": "u", "initialTask": "go"})
    out = reply(run_in_process(event, "--config", str(tmp_path / "hooks")))
    assert out == {"cancel": False, "contextModification": str(ws)}


def test_broken_cline_prompt_file_marked_fail_closed_blocks(tmp_path: Path) -> None:
    (tmp_path / "hooks").mkdir()
    (tmp_path / "hooks" / "PreToolUse.md").write_text(
        "---\nfailClosed: true\ntimeout: 15s\n---\nNo deletes. $ARGUMENTS\n")
    event = cline_event("PreToolUse", toolName="execute_command", parameters={"command": "ls"})
    out = reply(run_in_process(event, "--config", str(tmp_path / "hooks")))
    assert out["cancel"] is True and "bad front matter" in out["errorMessage"]
    other = cline_event("UserPromptSubmit", prompt="hi", attachments=[])
    assert reply(run_in_process(other, "--config", str(tmp_path / "hooks")))["cancel"] is False
