"""Concurrency: all hooks of an event run at once; identical handlers run once."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from prompthooks.api import dispatch, load_config

from ..helpers import (
    claude_bash,
    claude_config,
    write_json,
    write_script,
)


@pytest.mark.slow
def test_three_one_second_hooks_overlap(tmp_path: Path) -> None:
    # Each hook records when it started and ended. Run one after another, the second would
    # start after the first ended; run together, every start precedes every end, so the event
    # takes about one second, not three.
    log = tmp_path / "log"
    handlers = [{"command": str(write_script(tmp_path / f"h{i}.sh", f"""
cat > /dev/null
python3 -c 'import time; print("start", time.time())' >> {log}
sleep 1
python3 -c 'import time; print("end", time.time())' >> {log}
"""))} for i in range(3)]
    cfg = claude_config(tmp_path / "hooks.json", "PreToolUse", *handlers)
    outcome = dispatch(claude_bash("ls"), config_paths=[str(cfg)], budget=30)
    assert [r.status for r in outcome.decision.results] == ["ok"] * 3
    marks = [line.split() for line in log.read_text().splitlines()]
    starts = [float(t) for kind, t in marks if kind == "start"]
    ends = [float(t) for kind, t in marks if kind == "end"]
    assert len(starts) == len(ends) == 3
    assert max(starts) < min(ends)


def test_barrier_only_passes_when_hooks_run_together(tmp_path: Path) -> None:
    # Each hook waits (up to 20 s) until all three have started; sequential runs would time out.
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    handlers = [{"command": str(write_script(tmp_path / f"b{i}.sh", f"""
cat > /dev/null
touch {barrier}/{i}
n=0
while [ "$(ls {barrier} | wc -l)" -lt 3 ] && [ $n -lt 200 ]; do sleep 0.1; n=$((n+1)); done
[ "$(ls {barrier} | wc -l)" -ge 3 ] && echo '{{"decision": "approve"}}'
""")), "timeout": 25} for i in range(3)]
    cfg = claude_config(tmp_path / "hooks.json", "PreToolUse", *handlers)
    outcome = dispatch(claude_bash("ls"), config_paths=[str(cfg)], budget=30)
    assert [r.permission for r in outcome.decision.results] == ["allow"] * 3


def test_identical_handlers_from_several_sources_run_once(tmp_path: Path) -> None:
    counter = tmp_path / "count"
    script = write_script(tmp_path / "count.sh", f"cat >/dev/null; echo x >> {counter}")
    a = claude_config(tmp_path / "a.json", "PreToolUse", {"command": str(script)})
    b = claude_config(tmp_path / "b.json", "PreToolUse", {"command": str(script),
                                                           "failClosed": True})
    outcome = dispatch(claude_bash("ls"), config_paths=[str(a), str(b)], budget=30)
    assert counter.read_text() == "x\n"
    (result,) = outcome.decision.results
    assert result.hook.fail_closed  # the stricter copy's policy is kept


@pytest.mark.slow
def test_run_budget_bounds_every_hook(tmp_path: Path) -> None:
    cfg = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": "sleep 60", "timeout": 600},
        {"type": "command", "command": "echo '{\"decision\": \"block\", \"reason\": \"fast\"}'"},
    ]}]}})
    start = time.monotonic()
    outcome = dispatch(json.dumps(claude_bash("ls")), config_paths=[str(cfg)], budget=1.5)
    assert time.monotonic() - start < 30  # the 60 s hook was cut at the budget
    assert outcome.decision.permission == "deny" and outcome.decision.reason == "fast"
    assert [r.status for r in outcome.decision.results] == ["timeout", "ok"]


def test_same_prompt_file_name_in_two_folders_runs_both(tmp_path: Path) -> None:
    paths = []
    for name in ("user", "project"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "pol.md").write_text(f"{name} policy $ARGUMENTS")
        paths.append(str(write_json(tmp_path / name / "hooks.json", {"hooks": {"PreToolUse": [
            {"hooks": [{"type": "prompt", "prompt_file": "pol.md"}]}]}})))
    from prompthooks.api import parse_event
    from prompthooks.core.engine import select
    from prompthooks.hosts import host_tool

    _, event = parse_event(claude_bash("ls"), environ={})
    assert len(select(load_config(paths).hooks, event, host_tool)) == 2
