"""prompthooks benchmark: ratios measured side by side in one run, written to bench/RESULTS.md.

    python bench/run.py            # about two minutes; --quick for fewer repetitions

Every figure is the median of repeated runs on this machine, and every ratio is taken against
a bare interpreter start measured in the same run (`python -c pass`), so a noisy machine moves
numerator and denominator together. Not part of the test suite: nothing here passes or fails.

- R1: `prompthooks run` with one trivial command hook, minus running that hook directly,
  over a bare start.
- R2: fan-out of 1, 10 and 50 command hooks that each sleep 200 ms: the engine's wall time over
  200 ms (in process, so the interpreter start is not counted; the CLI's wall time is shown too).
- R3: a prompt hook against a local OpenAI-compatible server that answers after 300 ms: time
  minus 300 ms, over a bare start; cold (`prompthooks run` with no worker: litellm imported in
  process) and warm (`prompthooks run` through the resident worker, `prompthooks serve`), and
  the library API in a process that has litellm imported.
- R4: 1 KB, 1 MB and 10 MB events through one command hook and one prompt hook: time and peak
  memory of `prompthooks run`.
- R5: warm throughput: prompt-hook events per second with 8 concurrent `prompthooks run`
  callers through the worker, and with 8 threads on the library API.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.fake_model import Answer, serve  # noqa: E402

PY = sys.executable
CLI = str(Path(PY).parent / "prompthooks")


def median_time(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def run(argv: Sequence[str], data: bytes = b"", env: dict[str, str] | None = None) -> None:
    subprocess.run(argv, input=data, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env={**os.environ, **(env or {})}, check=False)


def peak(argv: Sequence[str], data: bytes, env: dict[str, str] | None = None) -> tuple[float, int]:
    """(seconds, peak resident KB) of one run, read from GNU time."""
    out = subprocess.run(["/usr/bin/time", "-f", "%e %M", *argv], input=data,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         env={**os.environ, **(env or {})}, check=False)
    seconds, kb = out.stderr.decode().strip().splitlines()[-1].split()
    return float(seconds), int(kb)


def event(command: str = "ls", content: str | None = None) -> bytes:
    tool_input: dict[str, str] = {"command": command}
    tool = "Bash"
    if content is not None:
        tool, tool_input = "Write", {"file_path": "/p/big.txt", "content": content}
    return json.dumps({"session_id": "bench", "transcript_path": "/tmp/t", "cwd": "/tmp",
                       "permission_mode": "default", "hook_event_name": "PreToolUse",
                       "tool_name": tool, "tool_input": tool_input}).encode()


def config(folder: Path, name: str, handlers: list[dict[str, object]]) -> Path:
    path = folder / name
    path.write_text(json.dumps({"hooks": {"PreToolUse": [{"hooks": handlers}]}}))
    return path


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    n = 5 if args.quick else 15
    tmp = Path(tempfile.mkdtemp(prefix="prompthooks-bench-"))
    env = {"XDG_CACHE_HOME": str(tmp / "cache"), "XDG_CONFIG_HOME": str(tmp / "cfg")}
    os.environ.update(env)
    rows: list[tuple[str, str, str]] = []

    bare = median_time(lambda: run([PY, "-c", "pass"]), n * 2)
    rows.append(("bare start", f"{bare * 1000:.1f} ms", "`python -c pass`, the unit of R1/R3"))

    # R1
    trivial = config(tmp, "trivial.json", [{"type": "command", "command": "cat > /dev/null"}])
    data = event()
    run([CLI, "run", "--config", str(trivial)], data)  # warm the config cache
    cli = median_time(lambda: run([CLI, "run", "--config", str(trivial)], data), n * 2)
    direct = median_time(lambda: run(["/bin/sh", "-c", "cat > /dev/null"], data), n * 2)
    r1 = (cli - direct) / bare
    rows.append(("R1 command-only overhead", f"{r1:.2f}",
                 f"run {cli * 1000:.1f} ms, hook alone {direct * 1000:.1f} ms (target <= 4)"))

    # R2
    from prompthooks.api import dispatch, load_config

    for count in (1, 10, 50):
        cfg = config(tmp, f"fan{count}.json",
                     [{"type": "command", "command": f"sleep 0.2 # {i}"} for i in range(count)])
        loaded = load_config([str(cfg)])
        wall = median_time(lambda loaded=loaded: dispatch(data, config=loaded, budget=30),
                           max(3, n // 3))
        cli_wall = median_time(lambda cfg=cfg: run([CLI, "run", "--config", str(cfg)], data),
                               max(3, n // 3))
        rows.append((f"R2 fan-out x{count}", f"{wall / 0.2:.2f}",
                     f"engine {wall * 1000:.0f} ms; whole CLI {cli_wall * 1000:.0f} ms"
                     + (" (target <= 1.5)" if count == 50 else "")))

    # R3, R4 (prompt), R5: a local server that answers after 300 ms
    server = serve()
    model = next(server)
    model.script(Answer('{"ok": true}', delay=0.3))
    penv = {"PROMPTHOOKS_API_BASE": model.url, "PROMPTHOOKS_MODEL": "bench-model"}
    os.environ.update(penv)
    prompt = config(tmp, "prompt.json", [{"type": "prompt", "prompt": "Judge: $ARGUMENTS"}])
    cold_env = {**penv, "PROMPTHOOKS_WORKER": "0"}
    cold = median_time(lambda: run([CLI, "run", "--config", str(prompt)], data, cold_env),
                       max(3, n // 3))
    from prompthooks.model.worker import socket_path

    serving = subprocess.Popen([CLI, "serve", "--idle", "120"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    sock = socket_path(os.environ)
    while not sock.exists():
        time.sleep(0.1)
    run([CLI, "run", "--config", str(prompt)], data)  # the worker's first request
    warm = median_time(lambda: run([CLI, "run", "--config", str(prompt)], data), n)
    loaded = load_config([str(prompt)])
    os.environ["PROMPTHOOKS_WORKER"] = "0"
    dispatch(data, config=loaded, budget=30)  # import litellm, open the connection
    library = median_time(lambda: dispatch(data, config=loaded, budget=30), n)
    rows.append(("R3 prompt hook, cold", f"{(cold - 0.3) / bare:.2f}",
                 f"{cold * 1000:.0f} ms for a 300 ms model: `prompthooks run`, no worker"))
    rows.append(("R3 prompt hook, warm", f"{(warm - 0.3) / bare:.2f}",
                 f"{warm * 1000:.0f} ms: `prompthooks run` through the worker (target <= 3)"))
    rows.append(("R3 prompt hook, library", f"{(library - 0.3) / bare:.2f}",
                 f"{library * 1000:.0f} ms: `dispatch()` with litellm imported"))

    # R4
    for label, size in (("1 KB", 1_000), ("1 MB", 1_000_000), ("10 MB", 10_000_000)):
        big = event(content="x" * size)
        seconds, kb = peak([CLI, "run", "--config", str(trivial)], big)
        rows.append((f"R4 {label} event, command hook", f"{seconds * 1000:.0f} ms",
                     f"peak {kb / 1024:.1f} MB ({kb * 1024 / len(big):.1f}x the event)"))
        seconds, kb = peak([CLI, "run", "--config", str(prompt)], big,
                           {"PROMPTHOOKS_WORKER": "1"})
        rows.append((f"R4 {label} event, prompt hook", f"{seconds * 1000:.0f} ms",
                     f"peak {kb / 1024:.1f} MB of `run` (worker apart), event cut to 20,000 "
                     "characters for the model"))

    # R5
    def throughput(call: Callable[[], object]) -> float:
        done = 0
        lock = threading.Lock()
        stop_at = time.monotonic() + (3 if args.quick else 8)

        def caller() -> None:
            nonlocal done
            while time.monotonic() < stop_at:
                call()
                with lock:
                    done += 1

        start = time.monotonic()
        threads = [threading.Thread(target=caller) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return done / (time.monotonic() - start)

    lib_rate = throughput(lambda: dispatch(data, config=loaded, budget=30))
    os.environ["PROMPTHOOKS_WORKER"] = "1"
    cli_rate = throughput(lambda: run([CLI, "run", "--config", str(prompt)], data))
    ceiling = f"8 / 0.3 s = {8 / 0.3:.1f} is the ceiling"
    rows.append(("R5 warm throughput, 8 CLI callers", f"{cli_rate:.1f} events/s",
                 f"`prompthooks run` through the worker; {ceiling}"))
    rows.append(("R5 warm throughput, 8 threads", f"{lib_rate:.1f} events/s",
                 f"library API; {ceiling}"))
    serving.terminate()
    serving.wait(10)
    next(server, None)
    shutil.rmtree(tmp, ignore_errors=True)

    machine = (f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores, Python "
               f"{platform.python_version()}, {time.strftime('%Y-%m-%d')}")
    table = "\n".join(f"| {a} | {b} | {c} |" for a, b, c in rows)
    text = (REPO / "bench" / "RESULTS.md")
    body = text.read_text() if text.exists() else ""
    notes = body.split("<!-- notes -->", 1)[1] if "<!-- notes -->" in body else "\n"
    text.write_text(f"# Benchmark results\n\nRegenerated by `python bench/run.py` on {machine}"
                    f" ({'quick' if args.quick else 'full'} run).\n\n| measure | value | detail |\n"
                    f"|---|---|---|\n{table}\n\n<!-- notes -->{notes}")
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
