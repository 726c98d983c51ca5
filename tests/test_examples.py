"""The shipped examples under config/ run as the README says."""

from __future__ import annotations

import os
import subprocess
import sys

from .helpers import REPO


def test_demo_script_blocks_what_it_should() -> None:
    env = {**os.environ, "PATH": f"{os.path.dirname(sys.executable)}:{os.environ['PATH']}"}
    proc = subprocess.run(["bash", str(REPO / "config" / "demo.sh")], capture_output=True,
                          text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    rows = {line.split()[0]: line for line in proc.stdout.splitlines()[1:]}
    assert set(rows) == {"claude-ls", "claude-prompt", "claude-rm-home", "cline-curl-sh",
                         "cline-write-js", "cursor-force-push", "cursor-read-env"}
    assert "no objection" in rows["claude-ls"]
    assert '"additionalContext": "Project rules:' in rows["claude-prompt"]
    assert '"permissionDecision": "deny"' in rows["claude-rm-home"]
    assert '"cancel": true' in rows["cline-curl-sh"]
    assert "JavaScript files not allowed" in rows["cline-write-js"]
    assert '"permission": "deny"' in rows["cursor-force-push"]
    assert "Reading .env files is blocked." in rows["cursor-read-env"]
