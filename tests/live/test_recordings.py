"""The live model's replies recorded, then replayed with no model at all: `run --record` and
`--replay`, `test --library --rerecord` and a suite recorded afresh, `eval`, the pytest plugin.
A replay must give what the recording run gave, byte for byte, and write nothing."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ..helpers import REPO, run_cli, write_json
from .conftest import BUDGET, EVENTS, NAME, Live, asked_schema, library_config, verdicts

NOWHERE = "http://127.0.0.1:9/v1"  # nothing listens: a replay that asked would fail
MODEL = f"openai/{NAME}"


def _cli(*args: str, cwd: Path, env: dict[str, str] | None = None,
         ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "prompthooks", *args], capture_output=True,
                          text=True, cwd=cwd, env={**os.environ, **(env or {})},
                          timeout=BUDGET * 4)


def _digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.glob("*.yaml"))}


def test_run_records_then_replays_the_same_bytes(tmp_path: Path, live: Live) -> None:
    cfg = library_config(tmp_path)
    tape = tmp_path / "tape.yaml"
    mark = live.mark()
    recorded = []
    for event, _ in EVENTS:
        proc = run_cli(event, "--config", str(cfg), "--budget", str(BUDGET), "--record",
                       str(tape), cwd=tmp_path, timeout=BUDGET + 60)
        assert proc.returncode == 0, proc.stderr
        recorded.append(proc.stdout)
    verdicts(live.since(mark))
    before = tape.read_bytes()
    mark = live.mark()
    for (event, _), stdout in zip(EVENTS, recorded, strict=True):
        proc = run_cli(event, "--config", str(cfg), "--replay", str(tape), cwd=tmp_path,
                       env={"PROMPTHOOKS_API_BASE": NOWHERE}, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == stdout
    assert live.since(mark) == []
    assert tape.read_bytes() == before


def test_the_library_rerecorded_then_a_suite_recorded_and_replayed(
        tmp_path: Path, live: Live) -> None:
    """`test --library --rerecord` asks the live model for every shipped case and writes
    nothing; a copy of two suites recorded with `--record` then replays offline to the same
    rows. Every call that asked for the schema was answered with a verdict."""
    shipped = REPO / "prompts" / "tests"
    before = _digests(shipped)
    mark = live.mark()
    proc = _cli("test", "--library", "--rerecord", "--model", MODEL, "--json", cwd=tmp_path)
    report = json.loads(proc.stdout)
    # Every call that asked for the schema got a verdict. An agent hook's turns offer tools and
    # so ask no schema (the small model may answer them in prose), and a suite's own short
    # timeout may pass on a busy machine: those are the only errors taken.
    verdicts([e for e in live.since(mark) if asked_schema(e) is not None])
    for case in report["cases"]:
        if case["status"] == "error":
            assert ("did not answer in time" in case["detail"]
                    or "hook 'agent " in case["detail"]), case
    assert _digests(shipped) == before

    # Two suites recorded again (every one was just asked above): the tier stays within
    # minutes on two shared cores.
    suites = tmp_path / "suites"
    suites.mkdir()
    for name in ("force-push", "destructive-shell"):
        for part in (".yaml", ".cassette.yaml"):
            shutil.copy(shipped / f"{name}{part}", suites)
    mark = live.mark()
    proc = _cli("test", "--record", "--model", MODEL, "--json", str(suites), cwd=tmp_path)
    recorded = json.loads(proc.stdout)
    assert recorded["errors"] == 0 and recorded["failed_calls"] == [], proc.stdout
    verdicts(live.since(mark))
    after = _digests(suites)
    mark = live.mark()
    proc = _cli("test", "--model", MODEL, "--json", str(suites), cwd=tmp_path,
                env={"PROMPTHOOKS_API_BASE": NOWHERE})
    replayed = json.loads(proc.stdout)
    assert live.since(mark) == []
    assert _digests(suites) == after
    assert _rows(replayed) == _rows(recorded)
    assert replayed["sources"] == {"recording": len(recorded["cases"])}


def _rows(report: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(c["name"], c["status"], str(c.get("decision"))) for c in report["cases"]]


def test_eval_records_then_replays(tmp_path: Path, live: Live) -> None:
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({"id": f"r{i}", "host": "claude", "event": event,
                                        "expected": "deny" if i % 2 == 0 else "allow"}) + "\n"
                            for i, (event, _) in enumerate(EVENTS)))
    cfg = library_config(tmp_path)
    tape = tmp_path / "eval.cassette.yaml"
    args = ["eval", str(data), "--config", str(cfg), "--model", MODEL, "--json",
            "--concurrency", "1", "--budget", str(BUDGET)]
    mark = live.mark()
    proc = _cli(*args, "--record", str(tape), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr  # --max-errors 0: every row judged
    (recorded,) = json.loads(proc.stdout)
    verdicts(live.since(mark))
    mark = live.mark()
    proc = _cli(*args, "--replay", str(tape), cwd=tmp_path, env={"PROMPTHOOKS_API_BASE": NOWHERE})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (replayed,) = json.loads(proc.stdout)
    assert live.since(mark) == []
    assert replayed["overall"]["confusion"] == recorded["overall"]["confusion"]
    assert [(r["id"], r["decision"]) for r in replayed["rows"]] == [
        (r["id"], r["decision"]) for r in recorded["rows"]]


PLUGIN_TEST = """
import pytest
from prompthooks.testing import assert_judged

pytestmark = pytest.mark.prompthooks(config="hooks.json", model="MODEL")


@pytest.mark.parametrize("command", ["rm -rf ~/", "ls -la"])
def test_judged(prompthooks_event, prompthooks_run, command):
    event = prompthooks_event("claude", "PreToolUse", tool_name="Bash",
                              tool_input={"command": command})
    assert_judged(prompthooks_run(event))
"""


def test_the_pytest_plugin_records_then_replays(
        pytester: pytest.Pytester, live: Live, monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makepyfile(test_policy=PLUGIN_TEST.replace("MODEL", MODEL))
    write_json(pytester.path / "hooks.json", {"hooks": {"PreToolUse": [{"matcher": "Bash",
               "hooks": [{"type": "prompt", "prompt_file": "destructive-shell",
                          "timeout": 120}]}]}})
    mark = live.mark()
    result = pytester.runpytest_subprocess("--prompthooks-record-mode=once", "-p",
                                           "no:cacheprovider")
    result.assert_outcomes(passed=2)
    verdicts(live.since(mark))
    cassettes = sorted((pytester.path / "cassettes").rglob("*.yaml"))
    assert len(cassettes) == 2
    recorded = [c.read_bytes() for c in cassettes]
    mark = live.mark()
    monkeypatch.setenv("PROMPTHOOKS_API_BASE", NOWHERE)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    assert live.since(mark) == []
    assert [c.read_bytes() for c in cassettes] == recorded
