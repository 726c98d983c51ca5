"""The direct path's kept-open client follows the proxy variables: a process that keeps its
client between calls (a resident run's work process makes one before its run arrives, in the
resident process's environment) makes a new one when the caller's proxy settings differ."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from prompthooks.api import dispatch

from ..fake_model import FakeModel, serve, verdict
from ..helpers import claude_bash, write_json

_NAMES = [f"{scheme}_proxy" for scheme in ("http", "https", "all", "no")]


@pytest.fixture
def proxy(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeModel]:
    """A second stand-in that answers like the model: as a proxy, it is asked for the
    model's absolute URL."""
    import os

    for name in [n for n in os.environ if n.lower() in _NAMES]:
        monkeypatch.delenv(name)
    for state in serve():
        state.script(verdict(False, "through the proxy"))
        yield state


def _judge(tmp_path: Path) -> str:
    cfg = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "prompt", "prompt": "Block deletions. $ARGUMENTS"}]}]}})
    outcome = dispatch(claude_bash("rm -rf /"), config_paths=[str(cfg)], budget=30)
    assert outcome.problems == ()
    return outcome.decision.reason or ""


def test_the_kept_client_is_remade_when_the_proxy_variables_change(
        tmp_path: Path, model: FakeModel, proxy: FakeModel,
        monkeypatch: pytest.MonkeyPatch) -> None:
    model.script(verdict(False, "straight to the model"))
    assert "straight to the model" in _judge(tmp_path)
    monkeypatch.setenv("HTTP_PROXY", proxy.url.removesuffix("/v1"))
    assert "through the proxy" in _judge(tmp_path)
    assert proxy.requests[0].path == model.url + "/chat/completions"  # asked as a proxy
    monkeypatch.delenv("HTTP_PROXY")
    assert "straight to the model" in _judge(tmp_path)
    assert len(model.requests) == 2 and len(proxy.requests) == 1
    monkeypatch.setenv("Http_Proxy", proxy.url.removesuffix("/v1"))  # read in any case
    assert "through the proxy" in _judge(tmp_path)
    assert len(model.requests) == 2 and len(proxy.requests) == 2


WARM = """
from prompthooks.model import direct
print(direct.warm_client(within=60.0), len(direct._clients))  # a generous bound: a busy CI
"""


def test_the_work_process_warm_up_never_leaves_the_machine(
        tmp_path: Path, proxy: FakeModel) -> None:
    """A work process forked ahead of its run sends one request through httpx to a stand-in
    it serves on the loopback, with every proxy variable pointing elsewhere: the stand-in
    answers, and nothing reaches the proxy."""
    import os
    import subprocess
    import sys

    base = proxy.url.removesuffix("/v1")
    env = {**os.environ, "HTTP_PROXY": base, "HTTPS_PROXY": base, "ALL_PROXY": base,
           "http_proxy": base, "NO_PROXY": "", "no_proxy": ""}
    proc = subprocess.run([sys.executable, "-c", WARM], capture_output=True, text=True,
                          env=env, timeout=60)
    assert proc.stdout.split() == ["True", "1"], proc.stderr  # answered; the kept client made
    assert proxy.requests == []
