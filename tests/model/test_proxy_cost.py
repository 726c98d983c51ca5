"""The cost of a call through a LiteLLM Proxy, which litellm cannot price (a proxy alias), is
the one the proxy sends in its ``x-litellm-response-cost`` header: in the audit row, in
`eval`'s cost, on the litellm path and on the direct path of pinned managed hooks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from prompthooks.model import cost

from ..fake_model import FakeModel, serve_with_headers, verdict
from ..helpers import claude_bash, reply, run_cli, write_json

PRICE = "0.000731"


@pytest.fixture
def proxy(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeModel]:
    """A LiteLLM Proxy stand-in: an OpenAI-compatible server that prices every call."""
    server = serve_with_headers({"x-litellm-response-cost": PRICE})
    state = next(server)
    state.script(verdict(False, "the proxy's model says no"))
    monkeypatch.setenv("PROMPTHOOKS_API_BASE", state.url)
    monkeypatch.setenv("PROMPTHOOKS_API_KEY", "test-key-not-a-secret")
    monkeypatch.setenv("PROMPTHOOKS_MODEL", "team-alias")  # no price in litellm's map
    yield state
    next(server, None)


def _config(path: Path, db: Path, **block: object) -> Path:
    return write_json(path, {
        "prompthooks": {"audit": {"path": str(db)}, **block},
        "hooks": {"PreToolUse": [{"hooks": [
            {"type": "prompt", "prompt": "Judge it. $ARGUMENTS", "name": "proxy judge"}]}]}})


def _rows(db: Path) -> list[dict[str, object]]:
    proc = subprocess.run([sys.executable, "-m", "prompthooks", "log", "--db", str(db),
                           "--json"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    rows: list[dict[str, object]] = json.loads(proc.stdout)
    return rows


def test_litellm_path_records_the_proxys_cost(tmp_path: Path, proxy: FakeModel) -> None:
    db = tmp_path / "audit.db"
    cfg = _config(tmp_path / "hooks.json", db)
    proc = run_cli(claude_bash("rm -rf /"), "--config", str(cfg))
    assert reply(proc)["hookSpecificOutput"]["permissionDecision"] == "deny", proc.stderr
    (row,) = _rows(db)
    assert row["hook"] == "proxy judge" and row["model"]
    assert row["cost"] == pytest.approx(float(PRICE))
    assert row["input_tokens"] == 120 and row["output_tokens"] == 12


def test_direct_path_of_a_pinned_managed_hook_records_it(tmp_path: Path,
                                                          proxy: FakeModel) -> None:
    db = tmp_path / "audit.db"
    etc = tmp_path / "etc"
    _config(etc / "hooks.json", db, api_base=proxy.url, model="team-alias")
    proc = run_cli(claude_bash("rm -rf /"), "--managed-dir", str(etc), cwd=tmp_path)
    assert reply(proc)["hookSpecificOutput"]["permissionDecision"] == "deny", proc.stderr
    (row,) = _rows(db)
    assert row["source"] == "managed"
    assert row["cost"] == pytest.approx(float(PRICE))


def test_eval_adds_up_the_proxys_costs(tmp_path: Path, proxy: FakeModel) -> None:
    cfg = _config(tmp_path / "hooks.json", tmp_path / "audit.db")
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({"event": claude_bash(c), "expected": "deny"}) + "\n"
                            for c in ("rm -rf /", "rm -rf ~", "dd of=/dev/sda")))
    proc = subprocess.run([sys.executable, "-m", "prompthooks", "eval", str(data), "--config",
                           str(cfg), "--json"], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr
    (report,) = json.loads(proc.stdout)
    assert report["overall"]["cost_usd"] == pytest.approx(3 * float(PRICE))


@pytest.mark.parametrize("value", ["nan", "inf", "-0.5", "1e300", "abc", "", "0x10"])
def test_a_header_that_is_not_a_price_is_no_cost(value: str) -> None:
    assert cost.from_headers({"x-litellm-response-cost": value}) is None


def test_header_values_read_as_dollars() -> None:
    assert cost.from_headers({"x-litellm-response-cost": " 0.25 "}) == 0.25
    assert cost.from_headers({}) is None and cost.from_headers(None) is None
