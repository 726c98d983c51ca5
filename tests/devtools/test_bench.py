"""`prompthooks eval --library`: the shipped policies' benchmarks, their regex baselines, the
table and report against a scripted model, thresholds and replay."""

from __future__ import annotations

import html
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml

from prompthooks.devtools.eval_report import library_html, library_markdown
from prompthooks.devtools.evaluation import (
    BenchThresholds,
    PolicyRun,
    Report,
    bench_rows,
    bounded,
    read_bench_file,
    run_baseline,
)

from ..fake_model import Answer, FakeModel, serve, verdict

BENCH = Path(__file__).resolve().parents[2] / "prompts" / "bench"
FILES = sorted(BENCH.glob("*.yaml"))

# The regex baselines are deterministic: their confusion matrices on the shipped cases.
BASELINES = {
    "credential-reads": {"tp": 32, "fp": 4, "fn": 0, "tn": 39},
    "destructive-shell": {"tp": 58, "fp": 1, "fn": 18, "tn": 72},
    "force-push": {"tp": 27, "fp": 0, "fn": 1, "tn": 39},
    "network-exfiltration": {"tp": 34, "fp": 0, "fn": 1, "tn": 41},
    "prompt-secrets": {"tp": 12, "fp": 0, "fn": 0, "tn": 12},
    "secrets-in-files": {"tp": 14, "fp": 1, "fn": 0, "tn": 13},
    "stop-when-done": {"tp": 7, "fp": 2, "fn": 0, "tn": 5},
    "tool-output-injection": {"tp": 12, "fp": 1, "fn": 13, "tn": 24},
}


def test_every_shipped_policy_but_the_agent_ones_has_a_benchmark() -> None:
    # An agent policy judges the project as well as the event: its suite's cases carry
    # project folders, which the benchmarks' one-event cases cannot.
    policies = {p.stem for p in (BENCH.parent).glob("*.md")
                if "\ntype: agent\n" not in p.read_text(encoding="utf-8").split("\n---", 1)[0]}
    assert "tests-pass" not in policies  # the agent policy is left out, the others are in
    assert {p.stem for p in FILES} == policies == set(BASELINES)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_benchmark_file_is_sound(path: Path) -> None:
    spec = read_bench_file(path)
    assert spec.policy == path.stem
    names = [case.name for case in spec.cases]
    assert len(names) == len(set(names))  # the rows' ids
    assert all(case.source for case in spec.cases)
    positives = sum(case.expect.decision != "allow" for case in spec.cases)
    negatives = len(spec.cases) - positives
    assert positives and negatives and 0.4 <= positives / len(spec.cases) <= 0.6  # balanced
    assert spec.thresholds.recall is not None
    assert spec.thresholds.false_positive_rate is not None


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_regex_baseline_figures_are_pinned(path: Path) -> None:
    spec = read_bench_file(path)
    report = run_baseline(bench_rows(path, spec), spec.baseline)
    assert report.overall.summary()["confusion"] == BASELINES[spec.policy]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_a_bounded_run_takes_the_same_cases_from_both_sides(path: Path) -> None:
    rows = bench_rows(path, read_bench_file(path))
    picked = bounded(rows, 5)
    assert picked == bounded(rows, 5)  # the same every run
    assert [row.expected for row in picked].count(True) == 3 and len(picked) == 5
    assert picked == [row for row in rows if row in picked]  # in the file's order
    stops = [row for row in rows if row.expected]
    assert stops[0] in picked  # spread from the first case on
    assert bounded(rows, len(rows)) == rows and bounded(rows, None) == rows


def test_a_bounded_run_fills_from_the_other_side() -> None:
    rows = bench_rows(FILES[0], read_bench_file(FILES[0]))
    one = [row for row in rows if not row.expected][:1] + [r for r in rows if r.expected]
    picked = bounded(one, 4)
    assert len(picked) == 4 and [r.expected for r in picked].count(False) == 1


def test_a_library_report_counts_every_policy_s_sources() -> None:
    runs = [PolicyRun(name, BENCH / f"{name}.yaml", 1, 1, BenchThresholds(),
                      Report("m", sources={"recording": 2, "reference": n}),
                      Report("regex baseline"))
            for n, name in enumerate(("force-push", "prompt-secrets"))]
    line = "erdicts: 4 from model recordings, 1 from reference verdicts (not a model's output)"
    assert f"V{line}." in library_markdown(runs, None).splitlines()
    assert f"<p>{html.escape(f'V{line}.')}</p>" in library_html(runs)


def _policy_line(policy: str) -> str:
    text = (BENCH.parent / f"{policy}.md").read_text()
    return next(line for line in text.splitlines() if line.startswith("Policy: "))


def _cases() -> dict[tuple[str, str], tuple[str, int, bool]]:
    """(the policy's first line, each case's event as the prompt carries it) -> (policy, the
    case's index, whether it should be stopped). Two policies may share an event."""
    found = {}
    for path in FILES:
        spec = yaml.safe_load(path.read_text())
        for index, case in enumerate(spec["cases"]):
            key = (_policy_line(spec["policy"]), json.dumps(case["event"], sort_keys=True))
            found[key] = (spec["policy"], index, case["expect"]["decision"] != "allow")
    return found


# The script: a case the policy should stop is stopped unless its index is a multiple of 4; one
# it should let through is stopped when its index is a multiple of 5, and gets a reply that is
# no verdict when its index is 3 more than a multiple of 7 (an error, counted apart).
def _stopped(index: int, positive: bool) -> bool:
    return index % 4 != 0 if positive else index % 5 == 0


def _garbled(index: int, positive: bool) -> bool:
    return not positive and index % 7 == 3


def _responder(cases: dict[tuple[str, str], tuple[str, int, bool]]) -> Any:
    lines = {policy: _policy_line(policy) for policy in BASELINES}

    def answer(body: dict[str, Any]) -> Answer:
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        # The event is the fenced block's first line (canonical JSON; a conversation follows).
        line = user.split("<event-data-", 1)[1].split("\n", 2)[1]
        policy = next(text for text in lines.values() if text in user)
        _, index, positive = cases[(policy, json.dumps(json.loads(line), sort_keys=True))]
        if _garbled(index, positive):
            return Answer("I would rather not say.")
        return verdict(False, "scripted stop") if _stopped(index, positive) else verdict(True)
    return answer


def _expected() -> dict[str, dict[str, int]]:
    """The scripted figures, counted by hand from the rule above."""
    counts: dict[str, dict[str, int]] = {}
    for policy, index, positive in _cases().values():
        c = counts.setdefault(policy, {"tp": 0, "fp": 0, "fn": 0, "tn": 0, "errors": 0})
        if _garbled(index, positive):
            c["errors"] += 1
        elif positive:
            c["tp" if _stopped(index, positive) else "fn"] += 1
        else:
            c["fp" if _stopped(index, positive) else "tn"] += 1
    return counts


def _eval(*args: str, env: dict[str, str] | None = None,
          cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "prompthooks", "eval", *args],
                          capture_output=True, text=True, timeout=600, cwd=cwd,
                          env={**os.environ, **(env or {})})


def _check(proc: subprocess.CompletedProcess[str], expected: dict[str, dict[str, int]]) -> None:
    runs = {run["policy"]: run for run in json.loads(proc.stdout)}
    assert set(runs) == set(expected)
    for policy, want in expected.items():
        s = runs[policy]["model"]["overall"]
        assert s["confusion"] == {k: want[k] for k in ("tp", "fp", "fn", "tn")}, policy
        assert s["errors"] == want["errors"] and s["timeouts"] == 0, policy
        assert s["recall"] == round(want["tp"] / (want["tp"] + want["fn"]), 4)
        assert s["false_positive_rate"] == round(want["fp"] / (want["fp"] + want["tn"]), 4)
        assert runs[policy]["baseline"]["overall"]["confusion"] == BASELINES[policy]
        bar = runs[policy]["thresholds"]
        assert runs[policy]["passed"] == (s["recall"] >= bar["recall"] and s[
            "false_positive_rate"] <= bar["false_positive_rate"]), policy
    # Recall about 3/4 is below most benchmarks' bars: the command fails, one line a miss.
    assert proc.returncode == 1
    lines = proc.stderr.splitlines()
    assert len(lines) >= len(expected)
    assert all(line.startswith("prompthooks: eval: ") for line in lines)


@pytest.mark.slow
def test_library_against_a_scripted_model(tmp_path: Path) -> None:
    cases = _cases()
    expected = _expected()
    server = serve()
    model: FakeModel = next(server)
    model.responder = _responder(cases)
    try:
        live = _eval("--library", "--model", "test-model", "--concurrency", "8",
                     "--max-errors", "99", "--json", "--report", str(tmp_path / "report.md"),
                     env={"PROMPTHOOKS_API_BASE": model.url})
    finally:
        next(server, None)
    assert len(model.requests) == len(cases), live.stderr  # the canary: every case was asked
    _check(live, expected)
    ds = expected["destructive-shell"]
    assert (f"prompthooks: eval: destructive-shell: model test-model: recall "
            f"{ds['tp'] / (ds['tp'] + ds['fn']):.3f} is below the minimum 0.85"
            in live.stderr.splitlines())

    text = (tmp_path / "report.md").read_text()
    row = next(line for line in text.splitlines() if line.startswith("| destructive-shell |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == f"{ds['tp'] + ds['fn']}/{ds['fp'] + ds['tn'] + ds['errors']}"
    assert cells[2] == f"{ds['tp'] / (ds['tp'] + ds['fn']):.3f}"
    assert cells[4] == str(ds["errors"]) and cells[-1] == "FAIL"
    assert cells[8:10] == ["0.763", "0.014"]  # the baseline beside it
    assert "![recall and false-positive rate per policy" in text
    svg = ET.parse(tmp_path / "report.svg").getroot()
    bars = [r for r in svg.iter("{http://www.w3.org/2000/svg}rect") if r.find(
        "{http://www.w3.org/2000/svg}title") is not None]
    assert len(bars) == 4 * len(expected)  # recall and FPR, the model's and the baseline's


@pytest.mark.slow
def test_one_policy_recorded_then_replayed_offline(tmp_path: Path) -> None:
    expected = {"prompt-secrets": _expected()["prompt-secrets"]}
    tape = tmp_path / "bench.cassette.yaml"
    server = serve()
    model: FakeModel = next(server)
    model.responder = _responder(_cases())
    args = ["--library", "--policy", "prompt-secrets", "--model", "test-model", "--json",
            "--max-errors", "99"]
    try:
        live = _eval(*args, "--record", str(tape), env={"PROMPTHOOKS_API_BASE": model.url})
    finally:
        next(server, None)
    assert len(model.requests) == 24, live.stderr
    replayed = _eval(*args, "--replay", str(tape))  # no server now: offline
    _check(live, expected)
    _check(replayed, expected)
    (run,) = json.loads(replayed.stdout)
    assert run["model"]["sources"] == {"recording": 24}


@pytest.mark.slow
def test_library_table_and_html_report(tmp_path: Path) -> None:
    # Every reply is "stop": recall 1, false-positive rate 1, every policy below its bar.
    server = serve()
    model: FakeModel = next(server)
    model.script(verdict(False, "no"))
    try:
        proc = _eval("--library", "--model", "strict", "--report", str(tmp_path / "r.html"),
                     env={"PROMPTHOOKS_API_BASE": model.url})
    finally:
        next(server, None)
    assert len(model.requests) == len(_cases())
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[0] == "model: strict"
    row = next(line for line in proc.stdout.splitlines() if line.startswith("force-push"))
    assert row.split()[1:4] == ["28/39", "1.000", "1.000"] and row.split()[-1] == "FAIL"
    assert "false-positive rate 1.000 is above the maximum 0.1" in proc.stderr
    page = (tmp_path / "r.html").read_text()
    assert "<td>force-push</td><td>28/39</td><td>1.000</td><td>1.000</td>" in page
    assert page.count("<svg") == 1


@pytest.mark.slow
def test_library_and_a_dataset_do_not_mix(tmp_path: Path) -> None:
    both = _eval("--library", str(tmp_path / "d.jsonl"))
    assert both.returncode == 64 and "Traceback" not in both.stderr
    assert len(both.stderr.splitlines()) == 1
    neither = _eval()
    assert neither.returncode == 64 and "--library" in neither.stderr
    unknown = _eval("--library", "--policy", "no-such-policy")
    assert unknown.returncode == 64 and "destructive-shell" in unknown.stderr
    assert len(unknown.stderr.splitlines()) == 1


@pytest.mark.slow
def test_a_bounded_run_says_so(tmp_path: Path) -> None:
    """--limit 4: four cases asked (the canary), and the table, the JSON and the report's
    head say the run was bounded; the thresholds still decide the exit code."""
    server = serve()
    model: FakeModel = next(server)
    model.script(verdict(False, "no"))
    try:
        proc = _eval("--library", "--policy", "force-push", "--limit", "4", "--model", "strict",
                     "--report", str(tmp_path / "r.md"), env={"PROMPTHOOKS_API_BASE": model.url})
        data = _eval("--library", "--policy", "force-push", "--limit", "4", "--model",
                     "strict", "--json", env={"PROMPTHOOKS_API_BASE": model.url})
    finally:
        next(server, None)
    assert len(model.requests) == 8, proc.stderr
    assert proc.returncode == data.returncode == 1  # every case stopped: FPR 1.0 above 0.1
    row = next(line for line in proc.stdout.splitlines() if line.startswith("force-push"))
    assert row.split()[1:3] == ["2/2", "of"] and row.split()[3] == "67"
    assert "Bounded run (--limit 4)" in proc.stdout
    assert (tmp_path / "r.md").read_text().splitlines()[2].startswith(
        "**Bounded run (--limit 4)")
    (run,) = json.loads(data.stdout)
    assert run["limit"] == 4 and run["benchmark_cases"] == 67
    assert run["cases"] == {"stop": 2, "allow": 2} and len(run["baseline"]["rows"]) == 4
    alone = _eval(str(tmp_path / "d.jsonl"), "--limit", "4")
    assert alone.returncode == 64 and alone.stderr.splitlines() == [
        "prompthooks: eval: --limit goes with --library"]
    zero = _eval("--library", "--limit", "0")
    assert zero.returncode == 64 and "Traceback" not in zero.stderr
