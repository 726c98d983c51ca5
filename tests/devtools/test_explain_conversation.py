"""`prompthooks explain` shows the conversation a prompt hook would send, redacted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ..helpers import claude_event, write_json
from ..transcripts.samples import LEAKED_KEY, UNFINISHED, claude_transcript

pytestmark = pytest.mark.slow


def _explain(event: dict[str, object], cfg: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "prompthooks", "explain", "--config", str(cfg),
                           *args], input=json.dumps(event), capture_output=True, text=True,
                          timeout=120, env=dict(os.environ))


def test_explain_shows_the_conversation_as_sent(tmp_path: Path, isolated_home: Path) -> None:
    path = claude_transcript(isolated_home, UNFINISHED)
    cfg = write_json(tmp_path / "hooks.json", {"prompthooks": {"stop_block_cap": 3},
                                               "hooks": {"Stop": [{"hooks": [
        {"type": "prompt", "prompt_file": "stop-when-done"}]}]}})
    event = claude_event("Stop", transcript_path=str(path), stop_hook_active=True)
    text = _explain(event, cfg)
    assert text.returncode == 0, text.stderr
    out = text.stdout
    assert LEAKED_KEY not in out and "[redacted]" in out
    assert '{"role": "user", "text": "Fix the date parser so that the test suite passes."}' in out
    assert f"note: transcript {path}: 4 entries read" in out
    assert "Stop blocks in a row for this session: 0 (cap 3)" in out
    assert "skipped at run time" not in out  # stop_hook_active no longer skips a stop hook
    report = json.loads(_explain(event, cfg, "--json").stdout)
    (hook,) = report["hooks"]
    user = next(m["content"] for m in hook["prompt"]["messages"] if m["role"] == "user")
    assert "read from the host's transcript" in user and LEAKED_KEY not in user
    assert report["stop_cap"] == {"cap": 3, "blocks": 0}
