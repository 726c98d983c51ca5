"""The direct path's client follows the proxy variables: a process that keeps its client
between calls makes a new one when the caller's proxy settings differ."""

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
import sys, time
from prompthooks.model import direct
from prompthooks.model.endpoint import Direct
from prompthooks.model.endpoint import Endpoint
from prompthooks.model.endpoint import ModelRequest

print(direct.warm(within=60.0), len(direct._clients))  # a generous bound: a busy CI
base = sys.argv[1]
request = ModelRequest(Endpoint("test-model", base), ({"role": "user", "content": "-"},))
print(direct.complete(request, time.monotonic() + 60, Direct(base, "test-model", None)).text)
"""


def test_the_work_process_warm_up_never_leaves_the_machine(
        tmp_path: Path, model: FakeModel, proxy: FakeModel) -> None:
    """A work process forked ahead of its run passes one chat completion through the client's
    code on in-memory transports, with every proxy variable pointing at a server: nothing
    reaches it. The canary: the same process's real call, made next, goes through that proxy."""
    import os
    import subprocess
    import sys

    base = proxy.url.removesuffix("/v1")
    env = {**os.environ, "HTTP_PROXY": base, "HTTPS_PROXY": base, "ALL_PROXY": base,
           "http_proxy": base, "NO_PROXY": "", "no_proxy": ""}
    proc = subprocess.run([sys.executable, "-c", WARM, model.url], capture_output=True,
                          text=True, env=env, timeout=120)
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["True", "1"], proc.stderr  # done; the client made
    assert "through the proxy" in lines[1], proc.stderr  # the canary: the real call's way
    (asked,) = proxy.requests  # the real call alone
    assert asked.path == model.url + "/chat/completions"
    assert model.requests == []
