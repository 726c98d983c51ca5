"""The live model's replies recorded, then replayed with no model at all: `run --record` and
`--replay`, a copy of two of the library's suites recorded afresh, `eval --library --limit`,
the pytest plugin. A replay must give what the recording run gave, byte for byte, and write
nothing."""

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
import yaml

from ..helpers import REPO, run_cli, write_json
from .conftest import (
    BUDGET,
    EVENTS,
    HOOK_TIMEOUT,
    NAME,
    Live,
    asked_schema,
    library_config,
    verdicts,
)

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
    for event, _ in EVENTS[2:]:  # one event: eval --library asks every policy
        proc = run_cli(event, "--config", str(cfg), "--budget", str(BUDGET), "--record",
                       str(tape), cwd=tmp_path, timeout=BUDGET + 60)
        assert proc.returncode == 0, proc.stderr
        recorded.append(proc.stdout)
    verdicts(live.since(mark))
    before = tape.read_bytes()
    mark = live.mark()
    for (event, _), stdout in zip(EVENTS[2:], recorded, strict=True):
        proc = run_cli(event, "--config", str(cfg), "--replay", str(tape), cwd=tmp_path,
                       env={"PROMPTHOOKS_API_BASE": NOWHERE}, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == stdout
    assert live.since(mark) == []
    assert tape.read_bytes() == before


# Two suites of the library, cut to a few cases: two of force-push's, and stop-when-done's
# unfinished task from each host, each case carrying its host's real-shaped transcript.
SUITES = {"force-push": ("force-pushing main is blocked", "an ordinary push is allowed"),
          "stop-when-done": tuple(f"{host}: unfinished work the agent admits keeps it going"
                                  for host in ("Claude Code", "Cursor", "Cline"))}
TASK = b"Fix the date parser in src/dates.py"  # in each transcript, in no event


def test_suites_rerecorded_then_replayed(tmp_path: Path, live: Live) -> None:
    """`test --record` asks the live model afresh for each case of a copy of two suites, the
    Stop hooks on each host's transcript; the copy then replays offline to the same rows and
    writes nothing. Every call asked the schema and was answered with a verdict."""
    shipped = REPO / "prompts" / "tests"
    suites = tmp_path / "suites"
    shutil.copytree(shipped / "transcripts", suites / "transcripts")
    for name, cases in SUITES.items():
        spec = yaml.safe_load((shipped / f"{name}.yaml").read_text())
        spec["cases"] = [case for case in spec["cases"] if case["name"] in cases]
        assert len(spec["cases"]) == len(cases)
        for groups in spec["config"]["hooks"].values():  # the server answers one at a time
            for group in groups:
                for hook in group["hooks"]:
                    hook["timeout"] = HOOK_TIMEOUT
        (suites / f"{name}.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    mark = live.mark()
    proc = _cli("test", "--record", "--model", MODEL, "--json", str(suites), cwd=tmp_path)
    recorded = json.loads(proc.stdout)
    assert recorded["errors"] == 0 and recorded["failed_calls"] == [], proc.stdout
    exchanges = verdicts(live.since(mark))
    assert len(exchanges) == sum(map(len, SUITES.values()))
    stops = [e for e in exchanges if "impossible" in (asked_schema(e) or {}).get("required", ())]
    assert len(stops) == 3 and all(TASK in e.body for e in stops)  # each host's transcript
    after = _digests(suites)
    assert set(after) == {f"{name}{part}" for name in SUITES
                          for part in (".yaml", ".cassette.yaml")}
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


LIMIT = 2  # cases per policy: one to stop, one to let through


def test_eval_library_bounded_recorded_then_replayed(tmp_path: Path, live: Live) -> None:
    """`eval --library --limit 2` on the live model: every shipped policy's benchmark, cut to
    two cases, beside its regex baseline; the report says the run was bounded; the exit code
    follows the thresholds (a model this small may miss them: the code is checked, not the
    judgement); the cassette then replays offline to the same figures, into the HTML report."""
    tape = tmp_path / "bench.cassette.yaml"
    args = ["eval", "--library", "--limit", str(LIMIT), "--model", MODEL, "--concurrency",
            "1", "--budget", str(BUDGET), "--max-errors", "99"]
    mark = live.mark()
    proc = _cli(*args, "--json", "--record", str(tape), cwd=tmp_path)
    runs = json.loads(proc.stdout)
    exchanges = verdicts(live.since(mark))
    policies = sorted(p.stem for p in (REPO / "prompts" / "bench").glob("*.yaml"))
    assert [run["policy"] for run in runs] == policies
    # The canary: each case asked (an attempt past its time is asked again, while the hook's
    # 30 s last: the benchmarks' own timeout).
    assert len(exchanges) >= LIMIT * len(policies)
    for run in runs:
        assert run["limit"] == LIMIT and run["cases"] == {"stop": 1, "allow": 1}, run
        assert run["benchmark_cases"] > LIMIT
        overall = run["model"]["overall"]
        confusion = overall["confusion"]
        assert sum(confusion.values()) + overall["errors"] == LIMIT  # errors counted apart
        assert overall["errors"] == overall["timeouts"]  # every reply was a verdict
        assert len(run["baseline"]["rows"]) == LIMIT
    missed = [run for run in runs if not run["passed"]]
    assert proc.returncode == (1 if missed else 0), proc.stderr
    assert len(proc.stderr.splitlines()) == sum(len(run["missed"]) for run in runs)

    mark = live.mark()
    report = tmp_path / "bench.md"
    replay = [*args, "--replay", str(tape), "--report"]
    again = _cli(*replay, str(report), cwd=tmp_path, env={"PROMPTHOOKS_API_BASE": NOWHERE})
    page = tmp_path / "bench.html"
    html = _cli(*replay, str(page), cwd=tmp_path, env={"PROMPTHOOKS_API_BASE": NOWHERE})
    assert live.since(mark) == []
    assert again.returncode == html.returncode == proc.returncode, again.stderr
    text = report.read_text()
    assert f"**Bounded run (--limit {LIMIT})" in text
    assert f"Verdicts: {LIMIT * len(policies)} from model recordings" in text  # every policy's
    assert "(bench.svg)" in text and (tmp_path / "bench.svg").read_text().startswith("<svg")
    for run in runs:  # the model's row, the baseline's figures beside it
        row = next(line for line in text.splitlines()
                   if line.startswith(f"| {run['policy']} |"))
        cells = [c.strip() for c in row.strip("|").split("|")]
        baseline = run["baseline"]["overall"]
        assert cells[1] == f"1/1 of {run['benchmark_cases']}"
        assert cells[4] == str(run["model"]["overall"]["errors"])
        assert cells[8:10] == [_figure(baseline["recall"]),
                               _figure(baseline["false_positive_rate"])]
        assert cells[-1] == ("pass" if run["passed"] else "FAIL")
    body = page.read_text()
    assert f"Bounded run (--limit {LIMIT})" in body and body.count("<svg") == 1
    assert all(f"<td>{policy}</td>" in body for policy in policies)


def _figure(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


PLUGIN_TEST = """
import pytest
from prompthooks.testing import assert_judged

pytestmark = pytest.mark.prompthooks(config="hooks.json", model="MODEL")


def test_judged(prompthooks_event, prompthooks_run):
    event = prompthooks_event("claude", "PreToolUse", tool_name="Bash",
                              tool_input={"command": "rm -rf ~/"})
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
    result.assert_outcomes(passed=1)
    verdicts(live.since(mark))
    cassettes = sorted((pytester.path / "cassettes").rglob("*.yaml"))
    assert len(cassettes) == 1
    recorded = [c.read_bytes() for c in cassettes]
    mark = live.mark()
    monkeypatch.setenv("PROMPTHOOKS_API_BASE", NOWHERE)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert live.since(mark) == []
    assert [c.read_bytes() for c in cassettes] == recorded
