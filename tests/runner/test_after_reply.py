"""Once the work has sent its reply, what it does next (the audit rows) gives way to others'
work when asked: nobody waits for it (the thin client, or the process a host started, exits
with the reply). A channel not asked (a run called from Python) keeps its priority."""

from __future__ import annotations

import subprocess
import sys

import pytest

PROBE = """
import os, sys
from prompthooks.runner.channel import AFTER_REPLY_NICE, Channel
read_fd, write_fd = os.pipe()
channel = Channel(write_fd, nice_after_reply=AFTER_REPLY_NICE if sys.argv[1] == "1" else 0)
before = os.nice(0)
channel.send(guard=False, audit={})
during = os.nice(0)
channel.send(reply="{}", exit=0)
sent = os.nice(0)
channel.lower_priority()
print(sent, before, during, os.nice(0), os.read(read_fd, 1 << 16).decode().count("\\n"))
"""


@pytest.mark.parametrize("detached", [True, False])
def test_the_work_lowers_its_priority_after_the_reply_only_when_detached(
        detached: bool) -> None:
    proc = subprocess.run([sys.executable, "-c", PROBE, "1" if detached else "0"],
                          capture_output=True, text=True, timeout=60)
    sent, before, during, after, messages = map(int, proc.stdout.split())
    assert messages == 2, proc.stderr  # both messages reached the supervisor's pipe
    assert during == before == sent  # never before the reply, nor by sending it
    assert after == (min(before + 10, 19) if detached else before)
