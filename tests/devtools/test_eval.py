"""`prompthooks eval`: metrics against a hand-computed confusion matrix, model comparison."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from prompthooks.devtools.evaluation import percentile

from ..fake_model import Answer, FakeModel, serve, verdict
from ..helpers import claude_bash, claude_config, write_json


def _dataset(path: Path, rows: list[tuple[str, str]]) -> Path:
    path.write_text("".join(json.dumps({"id": f"r{i}", "event": claude_bash(cmd),
                                        "expected": label}) + "\n"
                            for i, (cmd, label) in enumerate(rows)))
    return path


def _eval(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "prompthooks", "eval", *args],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})})


ROWS = [("rm -rf /", "deny"), ("rm tmp.txt", "allow"), ("curl x | sh", "deny"),
        ("ls", "allow"), ("rm -rf ~", "block"), ("cat f", "allow")]


@pytest.mark.slow
def test_confusion_matrix_matches_hand_count(tmp_path: Path) -> None:
    # The hook blocks every command with "rm" in it. By hand: rows 0 and 4 are true positives,
    # row 1 a false positive, row 2 a false negative, rows 3 and 5 true negatives.
    cfg = claude_config(tmp_path / "h.json", "PreToolUse", {"command":
                        "grep -q '\"command\": \"rm' && { echo rm >&2; exit 2; }; exit 0"})
    proc = _eval(str(_dataset(tmp_path / "d.jsonl", ROWS)), "--config", str(cfg), "--json")
    assert proc.returncode == 0, proc.stderr
    (report,) = json.loads(proc.stdout)
    overall = report["overall"]
    assert overall["confusion"] == {"tp": 2, "fp": 1, "fn": 1, "tn": 2}
    assert overall["precision"] == round(2 / 3, 4)
    assert overall["recall"] == round(2 / 3, 4)
    assert overall["false_positive_rate"] == round(1 / 3, 4)
    assert overall["accuracy"] == round(4 / 6, 4)
    (hook,) = report["hooks"].values()
    assert hook["confusion"] == overall["confusion"] and hook["errors"] == 0
    assert hook["latency_p50"] is not None and hook["latency_p95"] >= hook["latency_p50"]
    assert [r["decision"] for r in report["rows"]] == ["deny", "deny", "none", "none",
                                                       "deny", "none"]


def _by_model(body: dict[str, Any]) -> Answer:
    return verdict(False, "strict says no") if body["model"] == "strict" else verdict(True)


@pytest.mark.slow
@pytest.mark.slow
def test_models_compared_side_by_side_and_replayed(tmp_path: Path) -> None:
    cfg = write_json(tmp_path / "h.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "prompt", "prompt_file": "destructive-shell"}]}]}})
    data = _dataset(tmp_path / "d.jsonl", [("rm -rf /", "deny"), ("rm -rf ~", "deny"),
                                           ("ls", "allow"), ("pwd", "allow")])
    tape = tmp_path / "eval.cassette.yaml"
    server = serve()
    model: FakeModel = next(server)
    model.responder = _by_model
    args = [str(data), "--config", str(cfg), "--model", "strict", "--model", "lenient",
            "--json", "--concurrency", "3"]
    live = _eval(*args, "--record", str(tape), env={"PROMPTHOOKS_API_BASE": model.url})
    assert live.returncode == 0, live.stderr
    assert len(model.requests) == 8
    next(server, None)
    replayed = _eval(*args, "--replay", str(tape))
    for proc in (live, replayed):
        strict, lenient = json.loads(proc.stdout)
        assert strict["model"] == "strict" and lenient["model"] == "lenient"
        assert strict["overall"]["confusion"] == {"tp": 2, "fp": 2, "fn": 0, "tn": 0}
        assert lenient["overall"]["confusion"] == {"tp": 0, "fp": 0, "fn": 2, "tn": 2}
        assert strict["models"]["strict"]["input_tokens"] == 4 * 120
        assert strict["models"]["strict"]["output_tokens"] == 4 * 12
        assert strict["overall"]["cost_usd"] is None  # not a model litellm can price


@pytest.mark.slow
def test_human_table(tmp_path: Path) -> None:
    cfg = claude_config(tmp_path / "h.json", "PreToolUse", {"command": "cat >/dev/null"})
    proc = _eval(str(_dataset(tmp_path / "d.jsonl", ROWS)), "--config", str(cfg))
    lines = proc.stdout.splitlines()
    assert lines[0] == "model: (as configured)"
    assert lines[1].split()[:4] == ["tp", "fp", "fn", "tn"]
    assert lines[2].split()[:5] == ["overall", "0", "0", "3", "3"]
    assert "\x1b[" not in proc.stdout  # not a terminal: no colour codes


@pytest.mark.slow
def test_bad_dataset_is_one_line() -> None:
    proc = _eval("/no/such.jsonl")
    assert proc.returncode == 1 and "cannot read" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_percentile_nearest_rank() -> None:
    assert percentile([], 50) is None
    assert percentile([3.0, 1.0, 2.0, 4.0], 50) == 2.0
    assert percentile([float(i) for i in range(1, 101)], 95) == 95.0


@pytest.mark.slow
@pytest.mark.slow
def test_thresholds_fail_the_run_one_line_each(tmp_path: Path) -> None:
    # The same hand-counted hook: precision 2/3, recall 2/3, false-positive rate 1/3.
    cfg = claude_config(tmp_path / "h.json", "PreToolUse", {"command":
                        "grep -q '\"command\": \"rm' && { echo rm >&2; exit 2; }; exit 0"})
    data = str(_dataset(tmp_path / "d.jsonl", ROWS))
    met = _eval(data, "--config", str(cfg), "--min-precision", "0.6", "--min-recall", "0.6",
                "--max-fpr", "0.34")
    assert met.returncode == 0 and met.stderr == "", met.stderr
    missed = _eval(data, "--config", str(cfg), "--min-precision", "0.9", "--min-recall", "0.5",
                   "--max-fpr", "0.2", "--report", str(tmp_path / "r.html"))
    assert missed.returncode == 1
    assert missed.stderr.splitlines() == [
        "prompthooks: eval: precision 0.667 is below the minimum 0.9",
        "prompthooks: eval: false-positive rate 0.333 is above the maximum 0.2"]
    page = (tmp_path / "r.html").read_text()
    assert "<td class=tp>2 TP</td>" in page and "<td class=fp>1 FP</td>" in page
    markdown = _eval(data, "--config", str(cfg), "--report", str(tmp_path / "r.md"))
    assert markdown.returncode == 0
    text = (tmp_path / "r.md").read_text()
    assert "| expected stop | 2 (TP) | 1 (FN) |" in text and "| overall | 0.667 |" in text


@pytest.mark.slow
@pytest.mark.slow
def test_replies_that_cannot_be_recorded_fail_the_run_not_the_metrics(tmp_path: Path) -> None:
    cfg = write_json(tmp_path / "h.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "prompt", "prompt_file": "destructive-shell", "model": "test-model"}]}]}})
    data = _dataset(tmp_path / "d.jsonl", [("rm -rf /", "deny"), ("ls", "allow")])
    (tmp_path / "file").write_text("not a folder")
    tape = tmp_path / "file" / "eval.cassette.yaml"  # its folder is a file
    server = serve()
    model: FakeModel = next(server)
    model.responder = lambda body: verdict(True) if '"command": "ls"' in str(
        body["messages"][-1]["content"]) else verdict(False, "no")
    try:
        proc = _eval(str(data), "--config", str(cfg), "--json", "--record", str(tape),
                     env={"PROMPTHOOKS_API_BASE": model.url})
    finally:
        next(server, None)
    assert len(model.requests) == 2  # the canary: the model was asked for each row
    (report,) = json.loads(proc.stdout)
    assert report["overall"]["confusion"] == {"tp": 1, "fp": 0, "fn": 0, "tn": 1}
    assert proc.returncode == 1
    assert proc.stderr.count("the model's reply was not recorded") == 2
    assert proc.stderr.splitlines()[-1] == (
        f"prompthooks: eval: 2 of the model's replies not recorded in {tape}")


@pytest.mark.slow
def test_a_broken_config_is_one_line_on_stderr(tmp_path: Path) -> None:
    cfg = tmp_path / "h.json"
    cfg.write_text('{"hooks": ')
    proc = _eval(str(_dataset(tmp_path / "d.jsonl", ROWS)), "--config", str(cfg))
    assert proc.returncode == 1
    assert proc.stdout == ""  # not mixed into the report a script reads
    assert proc.stderr.startswith(f"prompthooks: config {cfg}: ")
    assert len(proc.stderr.splitlines()) == 1
