"""Cold start never opens the gate: the time a prompt hook's client takes to start (importing
the direct path's client or litellm, a warm worker starting) is charged to the run's budget, not to the hook's own
timeout. Fresh `prompthooks run` processes whose imports are made slow for real: a
``sitecustomize`` on PYTHONPATH (this test's own file, nothing in prompthooks) makes the named
module's code start late when it is first imported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ..fake_model import FakeModel, verdict
from ..helpers import claude_bash, reply, run_cli, write_json

SITECUSTOMIZE = """
import importlib.machinery, os, sys, time

class _SlowLoader:
    # The module's own code runs late, as a heavy import's does: under that module's lock
    # only, so other threads import what they need meanwhile.
    def __init__(self, loader, seconds):
        self.loader, self.seconds = loader, seconds

    def __getattr__(self, name):  # resources, data files: the real loader's
        return getattr(self.loader, name)

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        time.sleep(self.seconds)
        self.loader.exec_module(module)

class _SlowImport:
    def __init__(self, name, seconds):
        self.name, self.seconds = name, seconds

    def find_spec(self, name, path=None, target=None):
        if name != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _SlowLoader(spec.loader, self.seconds)
        return spec

sys.meta_path.insert(0, _SlowImport(os.environ["TEST_SLOW_IMPORT"],
                                    float(os.environ["TEST_SLOW_IMPORT_SECONDS"])))
"""

DIRECT = "httpx"  # the direct path's HTTP client

PROBE = """
import sys
from prompthooks.cli import main
code = main(["run", "--config", sys.argv[1]])
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("litellm", "openai"))
print("HEAVY=" + ",".join(heavy), file=sys.stderr)
sys.exit(code)
"""


def _slow(tmp_path: Path, module: str, seconds: float) -> dict[str, str]:
    folder = tmp_path / "slow-site"
    folder.mkdir(exist_ok=True)
    (folder / "sitecustomize.py").write_text(SITECUSTOMIZE)
    path = os.pathsep.join(p for p in (str(folder), os.environ.get("PYTHONPATH")) if p)
    return {"PYTHONPATH": path, "TEST_SLOW_IMPORT": module,
            "TEST_SLOW_IMPORT_SECONDS": str(seconds)}


def _config(tmp_path: Path, **handler: object) -> Path:
    return write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "prompt", "prompt": "Block deletions. $ARGUMENTS", "timeout": 2,
         **handler}]}]}})


@pytest.mark.parametrize("module, env", [
    (DIRECT, {}),  # the direct path
    ("litellm", {"PROMPTHOOKS_DIRECT": "0", "PROMPTHOOKS_WORKER": "0"}),  # litellm here
])
def test_a_slow_client_import_is_not_charged_to_a_two_second_hook(
        tmp_path: Path, model: FakeModel, module: str, env: dict[str, str]) -> None:
    model.script(verdict(False, "the model judged it"))
    proc = run_cli(claude_bash("rm -rf /"), "--config", str(_config(tmp_path)), cwd=tmp_path,
                   env={**_slow(tmp_path, module, 3.0), **env}, timeout=180)
    output = reply(proc)["hookSpecificOutput"]
    assert output["permissionDecisionReason"] == "the model judged it", proc.stderr
    assert len(model.requests) == 1


def test_a_warm_worker_starting_slowly_is_waited_for_and_litellm_stays_out_of_the_client(
        tmp_path: Path, model: FakeModel) -> None:
    """The first event starts the worker, whose litellm import takes 4 s more than usual; the
    client waits for it (charged to the run's budget) and never imports litellm itself."""
    model.script(verdict(False, "through the slow worker"))
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE)
    env = {**os.environ, **_slow(tmp_path, "litellm", 4.0), "PROMPTHOOKS_DIRECT": "0",
           "PROMPTHOOKS_WORKER": "1", "PROMPTHOOKS_WORKER_IDLE": "3"}
    proc = subprocess.run([sys.executable, str(probe), str(_config(tmp_path))],
                          capture_output=True, text=True, env=env, timeout=180,
                          input=json.dumps(claude_bash("rm -rf /")))
    assert '"permissionDecisionReason": "through the slow worker"' in proc.stdout, proc.stderr
    assert "HEAVY=\n" in proc.stderr  # the worker imported litellm, not this client


def test_start_up_longer_than_the_budget_still_answers_by_the_budget_and_blocks(
        tmp_path: Path, model: FakeModel) -> None:
    """Start-up may use the run's budget, never more: a fail-closed hook whose client cannot
    start in time blocks, by the budget."""
    cfg = _config(tmp_path, failClosed=True)
    start = time.monotonic()
    proc = run_cli(claude_bash("rm -rf /"), "--config", str(cfg), "--budget", "3",
                   cwd=tmp_path, env=_slow(tmp_path, DIRECT, 30.0), timeout=120)
    assert time.monotonic() - start < 3 + 15  # the budget, and a generous margin
    output = reply(proc)["hookSpecificOutput"]
    assert output["permissionDecision"] == "deny", proc.stderr
    assert model.requests == []


@pytest.mark.parametrize("module, env", [(DIRECT, {}), ("litellm", {"PROMPTHOOKS_DIRECT": "0"})])
def test_doctor_times_the_model_not_its_clients_start(
        tmp_path: Path, model: FakeModel, module: str, env: dict[str, str]) -> None:
    """An import slower than the probe's whole 10 s still reports the model as answering."""
    model.script(verdict(True))
    cfg = _config(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "prompthooks", "doctor", "--json", "--config",
                           str(cfg), "--project", str(tmp_path)], capture_output=True,
                          text=True, timeout=180,
                          env={**os.environ, **_slow(tmp_path, module, 11.0), **env})
    report = json.loads(proc.stdout)
    (probe,) = [c for c in report["checks"] if c["check"].startswith("model ")]
    assert probe["status"] == "ok", probe
    path = "litellm" if module == "litellm" else "direct"
    assert probe["detail"].endswith(f"(test-model, {path})")
