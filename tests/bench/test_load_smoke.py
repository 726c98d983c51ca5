"""A small run of bench/load.py: 20 concurrent `prompthooks run` processes recording into one
cassette through a warm worker, then 20 replaying from it with the server stopped. The same
invariants as the 200-process load test, checked exactly; nothing is timed."""

from __future__ import annotations

import sys
from pathlib import Path

from ..helpers import REPO

# bench/ holds scripts, not a package: put it on the path, as bench/run.py does for tests/.
if str(REPO / "bench") not in sys.path:
    sys.path.insert(0, str(REPO / "bench"))

# `mypy bench/load.py tests/bench/test_load_smoke.py` type-checks this import; the project's plain
# `mypy` (files: prompthooks, tests) cannot see bench/, hence an ignore that is unused there.
from load import HOOKS, PROMPTS, LoadReport, Plan, run_load  # type: ignore[import-not-found, unused-ignore]

PROCESSES = 20


def test_twenty_concurrent_runs_record_then_replay(tmp_path: Path) -> None:
    report: LoadReport = run_load(PROCESSES, tmp_path, baselines=False)
    assert report.problems == []
    plan = Plan.make(PROCESSES)
    assert report.distinct == len(plan.commands) == PROCESSES // 4
    for phase in (report.record, report.replay):
        assert phase.processes == PROCESSES
        assert phase.answered == PROCESSES  # exit 0 (or 2) with the expected decision
        assert len(phase.latencies) == PROCESSES
        assert phase.audit.rows == PROCESSES * HOOKS  # every row, after the final write
        assert phase.audit.runs == PROCESSES  # one run_id per process
        assert phase.audit.prompt_status == {"ok": PROCESSES * len(PROMPTS)}
        assert phase.pending_after_flush == 0
        assert phase.cassette_entries == report.distinct * len(PROMPTS)
        assert phase.watch.aborted is None
    assert report.record.model_requests >= PROCESSES * len(PROMPTS)  # record always asks
    assert report.replay.model_requests == 0
    assert not report.cassette_changed_by_replay
    assert report.record.watch.workers == set()  # every client reached the warm worker
