"""`prompthooks run` for Cursor: its config style, matchers, JSON reply and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ...helpers import (
    approve,
    claude_config,
    cursor_config,
    cursor_event,
    reply,
    run_in_process,
    write_json,
    write_script,
)


def test_block_git_example_deny_and_ask(tmp_path: Path) -> None:
    # The shape of Cursor's own block-git.sh example.
    script = write_script(tmp_path / "block-git.sh", """
input=$(cat)
case "$input" in
  *'"git '*) echo '{"continue": true, "permission": "deny", "user_message": "Git blocked.", "agent_message": "Use gh instead."}' ;;
  *'"gh '*) echo '{"continue": true, "permission": "ask", "user_message": "gh needs approval"}' ;;
  *) echo '{"continue": true, "permission": "allow"}' ;;
esac
""")
    cfg = cursor_config(tmp_path / "hooks.json", "beforeShellExecution", {"command": str(script)})
    deny = reply(run_in_process(cursor_event("beforeShellExecution", command="git push", cwd="/tmp"),
                         "--config", str(cfg)))
    assert deny == {"permission": "deny", "user_message": "Git blocked.",
                    "agent_message": "Use gh instead."}
    ask = reply(run_in_process(cursor_event("beforeShellExecution", command="gh pr list", cwd="/tmp"),
                        "--config", str(cfg)))
    assert ask["permission"] == "ask" and ask["user_message"] == "gh needs approval"
    allow = reply(run_in_process(cursor_event("beforeShellExecution", command="ls", cwd="/tmp"),
                          "--config", str(cfg)))
    assert allow == {"permission": "allow"}


def test_command_matcher_and_tool_type_matcher(tmp_path: Path) -> None:
    cfg = write_json(tmp_path / "hooks.json", {"version": 1, "hooks": {
        "beforeShellExecution": [{"command": "echo net >&2; exit 2", "matcher": "curl|wget"}],
        "preToolUse": [{"command": "echo tool >&2; exit 2", "matcher": "Read|Write"}],
    }})
    curl = reply(run_in_process(cursor_event("beforeShellExecution", command="curl x | sh"),
                         "--config", str(cfg)))
    assert curl["permission"] == "deny" and curl["agent_message"] == "net"
    quiet = reply(run_in_process(cursor_event("beforeShellExecution", command="ls"),
                          "--config", str(cfg)))
    assert quiet == {}
    read = reply(run_in_process(cursor_event("preToolUse", tool_name="Read",
                                      tool_input={"file_path": "x"}), "--config", str(cfg)))
    assert read["permission"] == "deny" and read["agent_message"] == "tool"


def test_exit_2_denies_and_invalid_json_fails_open(tmp_path: Path) -> None:
    cfg = cursor_config(tmp_path / "hooks.json", "preToolUse", {"command": "echo '[1]'"})
    proc = run_in_process(cursor_event("preToolUse", tool_name="Shell", tool_input={"command": "ls"}),
                   "--config", str(cfg))
    assert reply(proc) == {} and "not an object" in proc.stderr and proc.returncode == 0


def test_fail_closed_crash_denies(tmp_path: Path) -> None:
    cfg = cursor_config(tmp_path / "hooks.json", "beforeMCPExecution",
                        {"command": "exit 1", "failClosed": True})
    out = reply(run_in_process(cursor_event("beforeMCPExecution", tool_name="t", tool_input="{}",
                                     url="http://x"), "--config", str(cfg)))
    assert out["permission"] == "deny" and "fail-closed" in out["agent_message"]


def test_before_submit_prompt_blocks_with_continue_false(tmp_path: Path) -> None:
    cfg = cursor_config(tmp_path / "hooks.json", "beforeSubmitPrompt",
                        {"command": "echo '{\"continue\": false, \"user_message\": \"no PII\"}'"})
    out = reply(run_in_process(cursor_event("beforeSubmitPrompt", prompt="ssn 123"), "--config",
                        str(cfg)))
    assert out == {"continue": False, "user_message": "no PII"}


def test_stop_followup_and_loop_limit(tmp_path: Path) -> None:
    cfg = cursor_config(tmp_path / "hooks.json", "stop",
                        {"command": "echo '{\"followup_message\": \"run the tests\"}'",
                         "loop_limit": 2})
    first = reply(run_in_process(cursor_event("stop", status="completed", loop_count=0), "--config",
                          str(cfg)))
    assert first == {"followup_message": "run the tests"}
    capped = reply(run_in_process(cursor_event("stop", status="completed", loop_count=2), "--config",
                           str(cfg)))
    assert capped == {}


def test_post_tool_use_context_and_session_start_env(tmp_path: Path) -> None:
    cfg = write_json(tmp_path / "hooks.json", {"version": 1, "hooks": {
        "postToolUse": [{"command": "echo '{\"additional_context\": \"coverage 91%\"}'"}],
        "sessionStart": [{"command": "echo '{\"env\": {\"A\": \"1\"}, \"additional_context\": \"hello\"}'"}],
    }})
    post = reply(run_in_process(cursor_event("postToolUse", tool_name="Shell",
                                      tool_input={"command": "npm test"}, tool_output="{}"),
                         "--config", str(cfg)))
    assert post == {"additional_context": "coverage 91%"}
    start = reply(run_in_process(cursor_event("sessionStart", session_id="s",
                                       is_background_agent=False), "--config", str(cfg)))
    assert start == {"env": {"A": "1"}, "additional_context": "hello"}


def test_project_hooks_run_from_project_root_with_cursor_env(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    cursor_config(project / ".prompthooks" / "hooks.json", "beforeReadFile",
                  {"command": 'echo "$(pwd)|$CURSOR_PROJECT_DIR|$CURSOR_VERSION" >&2; exit 2'})
    approve(project / ".prompthooks")
    out = reply(run_in_process(cursor_event("beforeReadFile", root=str(project), file_path="/x",
                                     content=""), "--managed-dir", str(tmp_path / "none"),
                        cwd=tmp_path))
    assert out["permission"] == "deny"
    assert out["agent_message"] == f"{project}|{project}|1.7.2"


def test_bom_on_stdin(tmp_path: Path) -> None:
    cfg = cursor_config(tmp_path / "hooks.json", "beforeSubmitPrompt", {"command": "exit 2"})
    import json
    data = b"\xef\xbb\xbf" + json.dumps(cursor_event("beforeSubmitPrompt", prompt="x")).encode()
    proc = run_in_process(data, "--config", str(cfg))
    assert reply(proc)["continue"] is False


def test_a_project_session_start_env_cannot_steer_later_runs(tmp_path: Path) -> None:
    env = {"HTTPS_PROXY": "http://127.0.0.1:9", "http_proxy": "http://127.0.0.1:9",
           "OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "PROMPTHOOKS_API_BASE": "http://x",
           "HOME": "/tmp/elsewhere", "PATH": "/tmp/bin", "LD_PRELOAD": "/tmp/x.so",
           "PROJECT_NAME": "demo"}
    cfg = cursor_config(tmp_path / "hooks.json", "sessionStart",
                        {"command": f"echo '{json.dumps({'env': env})}'"})
    proc = run_in_process(cursor_event("sessionStart", session_id="s", is_background_agent=False),
                   "--config", str(cfg))
    assert reply(proc) == {"env": {"PROJECT_NAME": "demo"}}
    dropped = [line for line in proc.stderr.splitlines() if "env keys ignored" in line]
    assert len(dropped) == 1
    for key in env.keys() - {"PROJECT_NAME"}:
        assert key in dropped[0]


def test_a_managed_session_start_env_is_forwarded(tmp_path: Path) -> None:
    etc = tmp_path / "etc"
    cursor_config(etc / "hooks.json", "sessionStart",
                  {"command": "echo '{\"env\": {\"HTTPS_PROXY\": \"http://corp:3128\"}}'"})
    proc = run_in_process(cursor_event("sessionStart", session_id="s", is_background_agent=False),
                   "--managed-dir", str(etc), cwd=tmp_path)
    assert reply(proc) == {"env": {"HTTPS_PROXY": "http://corp:3128"}}
    assert "env keys ignored" not in proc.stderr


def test_cursor_stop_halt_is_not_a_follow_up(tmp_path: Path) -> None:
    cfg = claude_config(tmp_path / "h.json", "Stop", {"command":
                        """echo '{"continue": false, "stopReason": "budget exhausted"}'"""})
    out = reply(run_in_process(cursor_event("stop", status="completed", loop_count=0), "--config",
                        str(cfg)))
    assert "followup_message" not in out


@pytest.mark.slow
def test_cursor_block_reply_exit_code(tmp_path: Path) -> None:
    cfg = cursor_config(tmp_path / "h.json", "preToolUse", {"command": "x", "failClosed": True})
    proc = subprocess.run([sys.executable, "-m", "prompthooks", "run", "--config", str(cfg),
                           "--host", "cursor"], input=b"", capture_output=True, timeout=60)
    assert proc.returncode == 2


def test_cursor_events_without_ask_get_deny(tmp_path: Path) -> None:
    ask = {"command": """cat >/dev/null; echo '{"permission": "ask", "user_message": "check"}'"""}
    cfg = write_json(tmp_path / "h.json", {"version": 1, "hooks": {
        "beforeReadFile": [ask], "beforeShellExecution": [ask]}})
    read = reply(run_in_process(cursor_event("beforeReadFile", file_path="/p/x", content=""),
                         "--config", str(cfg)))
    assert read["permission"] == "deny"
    shell = reply(run_in_process(cursor_event("beforeShellExecution", command="ls"), "--config",
                          str(cfg)))
    assert shell["permission"] == "ask"
