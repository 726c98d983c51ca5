"""Cursor scripts in the wild print ``userMessage``/``agentMessage`` (the 1.7-era spelling);
the docs spell them ``user_message``/``agent_message``. Both are read."""

from __future__ import annotations

from pathlib import Path

import pytest

from ...helpers import cursor_config, cursor_event, reply, run_in_process, write_script


@pytest.mark.parametrize(("user", "agent"), [("userMessage", "agentMessage"),
                                             ("user_message", "agent_message")])
def test_deny_messages_in_either_spelling_reach_the_reply(tmp_path: Path, user: str,
                                                          agent: str) -> None:
    hook = write_script(tmp_path / "deny.sh", f"""
cat >/dev/null
echo '{{"permission": "deny", "{user}": "Force push blocked", "{agent}": "Use --force-with-lease"}}'
""")
    config = cursor_config(tmp_path / "hooks.json", "beforeShellExecution",
                           {"command": str(hook)})
    event = cursor_event("beforeShellExecution", command="git push -f", cwd="/tmp")
    out = reply(run_in_process(event, "--config", str(config)))
    assert out == {"permission": "deny", "user_message": "Force push blocked",
                   "agent_message": "Use --force-with-lease"}
