"""prompthooks cold burst: N Cline events at once, no worker yet, all answered in Cline's budget.

    python bench/burst.py                  # 60 processes, as a busy Cline session can send them
    python bench/burst.py --processes 20   # smaller

Every process is one ``prompthooks run --config HOOKS`` of a Cline PreToolUse event
(``execute_command``), where HOOKS is a folder holding one Cline-style prompt hook,
``PreToolUse.md``. The state is cold: a fresh temporary HOME, XDG folders and runtime folder (no
worker, no config cache), ``PROMPTHOOKS_WORKER`` unset, so the burst itself must bring up the
warm worker. The model is the local OpenAI-compatible server of tests/fake_model.py, denying
"rm -rf" commands and allowing the rest after MODEL_DELAY. All N processes are started at once
(one Popen after another, each reading its event from a file) at normal priority (``--nice``
runs them at nice NICE, below the harness and the stand-in server; on a machine shared with
other work that starves them).

Checked (exit 1 with what broke): every process exited 0 before Cline's own 30 s timeout
(the run's budget for Cline is 28 s from its own start) with the model's verdict (Cline's
``cancel`` with the model's reason for "rm -rf", ``cancel: false`` for the rest) and nothing on
stderr, or, when the model's answer did not come in time, fail-open with the timeout's one
line (the hook's failure policy); exactly one worker was started; no client loaded litellm
itself. Reported: wall time, latency per process (Popen to exit: p50, p95, max; and Popen to
the reply's first byte), when the model was first asked, workers started, clients that loaded
litellm. The "Cold burst" section of bench/RESULTS.md (between its markers) is replaced, or
appended.
tests/bench/test_burst.py runs 20 processes with the same checks and a generous budget.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
for folder in (REPO, BENCH):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from load import CLI, Watch, ours, stop, watching  # noqa: E402

from prompthooks.audit.stats import percentile  # noqa: E402
from tests.fake_model import Answer, serve  # noqa: E402

CLINE_BUDGET = 28.0  # seconds: the run's default budget for Cline, from the run's own start
CLINE_TIMEOUT = 30.0  # seconds: Cline's own timeout, from the hook process's start
MODEL = "burst-model"
MODEL_DELAY = 0.1
DENY_MARK = "rm -rf"
MODEL_REASON = "burst model: recursive delete"
NICE = 10
SECTION_BEGIN = "<!-- burst:begin -->"
SECTION_END = "<!-- burst:end -->"
HOOK = """---
failClosed: false
timeout: {timeout}
---
Block shell commands that delete files or folders recursively.

$ARGUMENTS
"""


@dataclass
class BurstReport:
    processes: int
    wall: float = 0.0
    latencies: list[float] = field(default_factory=list)  # Popen to exit, sorted, seconds
    replies: list[float] = field(default_factory=list)  # Popen to the reply's first byte, sorted
    answered: int = 0  # exit 0, the model's verdict, nothing on stderr
    timed_out: int = 0  # exit 0 on time, the failure policy (fail-open) for a model timeout
    late: int = 0  # exited past Cline's timeout
    model_requests: int = 0
    first_request: float | None = None  # seconds from the first Popen to the model's first request
    watch: Watch = field(default_factory=Watch)
    problems: list[str] = field(default_factory=list)


def _event(index: int, root: Path) -> bytes:
    command = f"{DENY_MARK} build-{index}" if index % 3 == 0 else f"ls dir-{index}"
    return json.dumps({
        "clineVersion": "3.36.0", "hookName": "PreToolUse", "timestamp": "1730000000000",
        "taskId": f"task-{index}", "workspaceRoots": [str(root / "project")], "userId": "u",
        "preToolUse": {"toolName": "execute_command", "parameters": {"command": command}},
    }).encode()


def _expected(index: int) -> dict[str, Any]:
    return {"cancel": True, "errorMessage": MODEL_REASON} if index % 3 == 0 else {"cancel": False}


def _environment(root: Path, url: str) -> dict[str, str]:
    home = root / "home"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PROMPTHOOKS_", "XDG_", "CLINE_", "CLAUDE_", "CURSOR_"))}
    env.update({
        "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"), "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_RUNTIME_DIR": str(home / "run"), "PROMPTHOOKS_API_BASE": url,
        "PROMPTHOOKS_API_KEY": "burst-key-not-a-secret", "PROMPTHOOKS_MODEL": MODEL,
        "PROMPTHOOKS_WORKER_IDLE": "20",
        # The local server speaks the OpenAI API, which the direct path would call without
        # the worker: the burst measures litellm's path through one shared worker.
        "PROMPTHOOKS_DIRECT": "0",
    })
    return env


def _answer(body: Mapping[str, Any]) -> Answer:
    user = str(next(m["content"] for m in body["messages"] if m["role"] == "user"))
    if DENY_MARK in user:
        return Answer(json.dumps({"ok": False, "reason": MODEL_REASON}), delay=MODEL_DELAY)
    return Answer('{"ok": true}', delay=MODEL_DELAY)


def run_burst(processes: int, root: Path, budget: float = CLINE_BUDGET,
              nice: bool = False) -> BurstReport:
    """Start ``processes`` cold Cline runs at once and check each one (see the module doc)."""
    report = BurstReport(processes)
    hooks = root / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "PreToolUse.md").write_text(HOOK.format(timeout=int(budget)))
    (root / "project").mkdir()
    (root / "home" / "run").mkdir(parents=True, mode=0o700)
    running = serve()
    model = next(running)
    asked: list[float] = []

    def answer(body: Mapping[str, Any]) -> Answer:
        asked.append(time.monotonic())
        return _answer(body)

    model.responder = answer
    env = _environment(root, model.url)
    (root / "events").mkdir()
    events = [root / "events" / f"{i}.json" for i in range(processes)]
    for i, path in enumerate(events):
        path.write_bytes(_event(i, root))
    prefix = ["nice", "-n", str(NICE)] if nice else []
    try:
        with watching(root) as watch:
            start = time.monotonic()
            procs = []
            for path in events:
                began = time.monotonic()
                with path.open("rb") as stdin:  # the whole event, then end of file, at once
                    proc = subprocess.Popen([*prefix, *CLI, "run", "--budget", str(budget),
                                             "--config", str(hooks)],
                                            env=env, cwd=root / "project", stdin=stdin,
                                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                procs.append((proc, began))
            outputs: list[tuple[int, str, str, float, float | None]] = [
                (0, "", "", 0.0, None)] * len(procs)

            def collect(index: int, proc: subprocess.Popen[bytes], began: float) -> None:
                # Each process on its own thread: its reply's and its exit's own times.
                assert proc.stdout is not None and proc.stderr is not None
                first = proc.stdout.read(1)
                replied = time.monotonic() - began if first else None
                out = first + proc.stdout.read()
                err = proc.stderr.read()
                code = proc.wait()
                outputs[index] = (code, out.decode(), err.decode(), time.monotonic() - began,
                                  replied)

            threads = [threading.Thread(target=collect, args=(i, proc, began), daemon=True)
                       for i, (proc, began) in enumerate(procs)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(max(budget * 4, 120))
            report.wall = time.monotonic() - start
            report.first_request = min(asked) - start if asked else None
        report.watch = watch
    finally:
        stop(ours(root), signal.SIGKILL)  # the worker, and anything a failed run left
        report.model_requests = len(model.requests)
        next(running, None)
    for index, (code, out, err, took, replied) in enumerate(outputs):
        report.latencies.append(took)
        if replied is not None:
            report.replies.append(replied)
        reply = json.loads(out) if out.strip() else None
        if took > budget + CLINE_TIMEOUT - CLINE_BUDGET:
            report.late += 1
            report.problems.append(f"process {index} answered after {took:.1f} s")
        if code == 0 and reply == _expected(index) and not err:
            report.answered += 1
        elif code == 0 and reply == {"cancel": False} and any(
                line in err for line in ("did not answer in time", "before the run's deadline")):
            report.timed_out += 1  # the documented failure policy: fail-open, on time
        else:
            report.problems.append(f"process {index}: exit {code}, stdout {out[:200]!r}, "
                                   f"stderr {err[:300]!r}")
    report.latencies.sort()
    report.replies.sort()
    if len(report.watch.workers) != 1:
        report.problems.append(f"{len(report.watch.workers)} workers started (one expected)")
    if report.watch.litellm_clients:
        report.problems.append(f"{len(report.watch.litellm_clients)} clients loaded litellm")
    return report


def section(report: BurstReport, budget: float, nice: bool, load: str) -> str:
    lat = report.latencies
    verdict = ("**All held**: every process answered before Cline's timeout (with the model's "
               "verdict, or fail-open on a model timeout as the hook's policy says), one worker "
               "served the burst and no client loaded litellm."
               if not report.problems else
               f"**{len(report.problems)} problems**: " + "; ".join(report.problems[:5]))
    first = ("The model's first request came "
             + (f"{report.first_request:.1f} s" if report.first_request is not None else "never")
             + " after the first process was started: the new worker's litellm import, on two "
             "cores shared with the burst. Until then the clients wait for it, idle.")
    rep = report.replies
    replies = (f" The reply itself (its first byte on stdout) came at p50 "
               f"{percentile(rep, 0.5):.1f} s, max {rep[-1]:.1f} s; the rest of each latency is "
               "the process's exit."
               if rep else "")
    return (
        f"{SECTION_BEGIN}\n## Cold burst: {report.processes} Cline events at once\n\n"
        f"`python bench/burst.py --processes {report.processes}{' --nice' if nice else ''}` "
        f"on {platform.system()} "
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d %H:%M')}. Each process is one `prompthooks run --config "
        f"HOOKS` of a Cline PreToolUse event, HOOKS a folder with one `PreToolUse.md` prompt "
        f"hook; cold state (fresh HOME and runtime folder: no worker, no config cache), "
        f"`PROMPTHOOKS_WORKER` unset; the local model server answers in "
        f"{MODEL_DELAY * 1000:.0f} ms; all processes started at once"
        f"{f' at nice {NICE}' if nice else ''}; load average before the burst {load}. Latency: "
        f"one process, Popen to exit; the run's budget {budget:.0f} s, Cline's timeout "
        f"{CLINE_TIMEOUT:.0f} s.\n\n"
        f"| processes | wall | p50 | p95 | max | model's verdict | fail-open on time | past "
        f"Cline's timeout | workers started | clients that loaded litellm | model requests |\n"
        f"|---|---|---|---|---|---|---|---|---|---|---|\n"
        f"| {report.processes} | {report.wall:.1f} s | {percentile(lat, 0.5):.1f} s | "
        f"{percentile(lat, 0.95):.1f} s | {lat[-1]:.1f} s | {report.answered} | "
        f"{report.timed_out} | {report.late} | "
        f"{len(report.watch.workers)} | {len(report.watch.litellm_clients)} | "
        f"{report.model_requests} |\n\n{verdict}\n\n{first}{replies}\n{SECTION_END}\n")


def write_section(text: str, results: Path = BENCH / "RESULTS.md") -> None:
    current = results.read_text() if results.exists() else ""
    pattern = re.compile(re.escape(SECTION_BEGIN) + ".*?" + re.escape(SECTION_END) + "\n?", re.S)
    if pattern.search(current):
        current = pattern.sub(lambda _: text, current)
    else:
        current = current.rstrip("\n") + "\n\n" + text
    results.write_text(current)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=60)
    parser.add_argument("--budget", type=float, default=CLINE_BUDGET)
    parser.add_argument("--nice", action="store_true",
                        help=f"run the processes at nice {NICE} (starves them on a shared machine)")
    parser.add_argument("--no-write", action="store_true", help="do not touch RESULTS.md")
    args = parser.parse_args()
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    with tempfile.TemporaryDirectory(prefix="prompthooks-burst-") as tmp:
        report = run_burst(args.processes, Path(tmp), args.budget, nice=args.nice)
    text = section(report, args.budget, args.nice, load)
    print(text)
    if not args.no_write:
        write_section(text)
    return 1 if report.problems else 0


if __name__ == "__main__":
    sys.exit(main())
