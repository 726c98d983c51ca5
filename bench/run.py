"""prompthooks benchmark on the install users get, written to bench/RESULTS.md.

    python bench/run.py            # a few minutes; --quick for fewer repetitions

It builds this checkout's wheel and installs it (not editable, bytecode compiled) into a
temporary virtual environment whose dependencies are this environment's (a `.pth` line: no
download), then measures that install's console script. Every ratio is against that install's
own bare start (`python -c pass` of the same interpreter, in the same run), so a noisy machine
moves numerator and denominator together; the R1 and R3 ratios are taken pair by pair (a bare
start, then the run), their median reported. Each figure is a median of repeated runs; a run is
timed from its spawn to its exit with stdout read through a pipe, as a host reads it (stderr
goes to /dev/null, except in the row that says otherwise). Not part of the test suite: nothing
here passes or fails.

- R1: a command-only event (one trivial command hook), through the resident process and in
  process (`PROMPTHOOKS_RESIDENT=0`), from `--config` and from an approved project config.
  Target <= 2 handed over, <= 4 in process.
- Managed: a command-only event under a managed policy (`--managed-dir`), in process, with
  its compiled policy (`prompthooks managed compile`) and without; and handed to a system
  resident process (`prompthooks serve --system`, run by the policy's owner). Target <= 2.
- R1 first event: the same event in process with nothing listening, the run then starting
  the resident process (as a session's first event does).
- R3 warm: one prompt hook through the resident process against a local OpenAI-compatible
  server that answers at once, and in process. Target <= 2.5. The same prompt hook as the
  managed policy, in process (compiled) and handed to the system resident process.
- Fan-out: 50 prompt hooks on one event over one, against a model that answers in 300 ms.
  Target <= 1.5.
- Cold: the first prompt event with no resident process (a fresh runtime folder), against the
  300 ms model: seconds beyond the model's time. Target <= 1 s.
- Dead endpoint: a prompt hook whose endpoint refuses connections, two events in a row.
  Target <= 1 s per event.
- The resident process's memory (PSS of `prompthooks serve`, its model process and the
  process forked for the next run).
- Event size: 1 KB, 1 MB and 10 MB events through one command hook and through one prompt hook:
  time and the client's peak memory.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.fake_model import Answer, FakeModel, serve  # noqa: E402

SLOW = 0.3  # seconds the "slow" model takes to answer
SETTLE = 0.25  # seconds between a run and the next measured start


def build_install(tmp: Path) -> Path:
    """A virtual environment with this checkout installed from its wheel; its bin folder."""
    wheels, venv = tmp / "wheels", tmp / "venv"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels),
                    str(REPO)], check=True, env=clean_env())
    (wheel,) = wheels.glob("prompthooks-*.whl")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    bin_dir = venv / "bin"
    site = Path(subprocess.run([str(bin_dir / "python"), "-c",
                                "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    # The dependencies are this environment's, already compiled; prompthooks is the wheel's
    # (the venv's own site-packages comes first on the path).
    (site / "_bench_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "--no-deps", "-q",
                    str(wheel)], check=True, env=clean_env())
    subprocess.run([str(bin_dir / "python"), "-m", "compileall", "-q", str(site / "prompthooks")],
                   check=True, env=clean_env())
    return bin_dir


def clean_env(**extra: str) -> dict[str, str]:
    """This environment without what would change the measured install: no bytecode switch,
    no prompthooks variables of the caller."""
    env = {k: v for k, v in os.environ.items()
           if k != "PYTHONDONTWRITEBYTECODE" and not k.startswith("PROMPTHOOKS_")}
    return {**env, **extra}


def median_time(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def paired(fn: Callable[[], object], bare: Callable[[], object], repeat: int,
           after: Callable[[], object] | None = None) -> tuple[float, float]:
    """(the median of ``fn``'s time over a bare start's, taken pair by pair, bare start and
    run in turn; the median of ``fn``'s own time): the pairs keep the ratio steady while the
    machine's speed drifts. Each pair starts after a pause in which the previous run's work
    after its reply (its audit rows, the resident process forking the next run's processes)
    is done, as it is by a host's next tool call: neither start shares the machine with it.
    ``after``, if given, runs after each pair, out of the times."""
    ratios, times = [], []
    for _ in range(repeat):
        time.sleep(SETTLE)
        start = time.perf_counter()
        bare()
        middle = time.perf_counter()
        fn()
        end = time.perf_counter()
        ratios.append((end - middle) / (middle - start))
        times.append(end - middle)
        if after is not None:
            after()
    return statistics.median(ratios), statistics.median(times)


def run(argv: Sequence[str], data: bytes, env: dict[str, str],
        stderr: int = subprocess.DEVNULL) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(argv, input=data, stdout=subprocess.PIPE, stderr=stderr, env=env,
                          check=False)


def peak(argv: Sequence[str], data: bytes, env: dict[str, str]) -> tuple[float, int]:
    """(seconds, peak resident KB) of one run, read from GNU time."""
    out = subprocess.run(["/usr/bin/time", "-f", "%e %M", *argv], input=data,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                         check=False)
    seconds, kb = out.stderr.decode().strip().splitlines()[-1].split()
    return float(seconds), int(kb)


def event(content: str | None = None) -> bytes:
    tool_input: dict[str, str] = {"command": "ls"}
    tool = "Bash"
    if content is not None:
        tool, tool_input = "Write", {"file_path": "/p/big.txt", "content": content}
    return json.dumps({"session_id": "bench", "transcript_path": "/tmp/t", "cwd": "/tmp",
                       "permission_mode": "default", "hook_event_name": "PreToolUse",
                       "tool_name": tool, "tool_input": tool_input}).encode()


def config(folder: Path, name: str, handlers: list[dict[str, Any]],
           defaults: dict[str, Any] | None = None) -> str:
    path = folder / name
    data: dict[str, Any] = {"hooks": {"PreToolUse": [{"hooks": handlers}]}}
    if defaults:
        data["prompthooks"] = defaults
    path.write_text(json.dumps(data))
    return str(path)


def dead_port() -> int:
    """A local port nothing listens on (connections are refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def resident(runtime: Path) -> list[int]:
    """The pids of the `prompthooks serve` processes (and their children) for ``runtime``."""
    mark = f"XDG_RUNTIME_DIR={runtime}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if b"serve" in (entry / "cmdline").read_bytes().split(b"\0") and \
                    mark in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
    return found


def pss_kb(pid: int) -> int:
    """The process's proportional set size (a page shared by n processes counts 1/n), else
    its resident set size."""
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def stop(pids: Sequence[int]) -> None:
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)


def wait_for(path: Path, seconds: float = 120) -> None:
    end = time.monotonic() + seconds
    while not path.exists():
        if time.monotonic() > end:
            raise SystemExit(f"nothing listens on {path}")
        time.sleep(0.05)


@contextlib.contextmanager
def system_resident(cli: str, env: Mapping[str, str], socket_path: Path) -> Iterator[None]:
    """``prompthooks serve --system`` on ``socket_path`` (a stale one removed first), until
    the block ends."""
    socket_path.unlink(missing_ok=True)
    system = subprocess.Popen([cli, "serve", "--system"], env=dict(env),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    try:
        wait_for(socket_path)
        yield
    finally:
        os.killpg(system.pid, signal.SIGTERM)
        system.wait(30)


@contextlib.contextmanager
def model_server() -> Iterator[FakeModel]:
    """The local model: `fast` answers at once, `slow` after 300 ms."""
    server = serve()
    model = next(server)

    def answer(body: dict[str, Any]) -> Answer:
        return Answer('{"ok": true}', delay=SLOW if body.get("model") == "slow" else 0.0)

    model.responder = answer
    try:
        yield model
    finally:
        next(server, None)


def measure(args: argparse.Namespace, tmp: Path, bin_dir: Path, model: FakeModel
            ) -> list[tuple[str, str, str]]:
    n = 5 if args.quick else 15
    py, cli = str(bin_dir / "python"), str(bin_dir / "prompthooks")
    home = tmp / "home"
    runtime = tmp / "runtime"
    runtime.mkdir(mode=0o700)
    env = clean_env(HOME=str(home), XDG_CACHE_HOME=str(home / "cache"),
                    XDG_CONFIG_HOME=str(home / "config"), XDG_DATA_HOME=str(home / "data"),
                    XDG_RUNTIME_DIR=str(runtime), PROMPTHOOKS_WORKER="1")
    here = {**env, "PROMPTHOOKS_RESIDENT": "0"}
    rows: list[tuple[str, str, str]] = []

    def bare_start() -> object:
        return run([py, "-c", "pass"], data, env)

    data = event()
    bare = median_time(bare_start, n * 2)
    rows.append(("bare start", f"{bare * 1000:.1f} ms",
                 "`python -c pass` of the installed environment: the unit of every ratio"))

    fast = {"api_base": model.url, "model": "fast"}
    slow = {"api_base": model.url, "model": "slow"}
    trivial = config(tmp, "trivial.json", [{"type": "command", "command": "cat > /dev/null"}])
    prompt = config(tmp, "prompt.json", [{"type": "prompt", "prompt": "Judge: $ARGUMENTS"}], fast)
    one = config(tmp, "one.json", [{"type": "prompt", "prompt": "Judge: $ARGUMENTS"}], slow)
    fifty = config(tmp, "fifty.json", [{"type": "prompt", "prompt": f"Judge {i}: $ARGUMENTS"}
                                       for i in range(50)], slow)

    # Cold first: no resident process in this runtime folder.
    colds = []
    for i in range(1 if args.quick else 3):
        cold_runtime = tmp / f"cold-{i}"
        cold_runtime.mkdir(mode=0o700)
        cold_env = {**env, "XDG_RUNTIME_DIR": str(cold_runtime)}
        start = time.perf_counter()
        proc = run([cli, "run", "--config", one], data, cold_env)
        colds.append(time.perf_counter() - start)
        verdict = "the model's verdict" if proc.returncode == 0 else f"exit {proc.returncode}"
        time.sleep(1)
        stop(resident(cold_runtime))
    cold = statistics.median(colds)
    rows.append(("cold first prompt event", f"{cold - SLOW:.2f} s beyond the model",
                 f"{cold:.2f} s for a {SLOW * 1000:.0f} ms model, no resident process "
                 f"(median of {len(colds)}; last: {verdict}) (target <= 1 s)"))

    serving = subprocess.Popen([cli, "serve", "--idle", "600"], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sock = next(runtime.glob("prompthooks/worker-*.sock"), None)
    while sock is None:
        time.sleep(0.05)
        sock = next(runtime.glob("prompthooks/worker-*.sock"), None)
    wait_for(sock)
    try:
        for argv in ([cli, "run", "--config", trivial], [cli, "run", "--config", prompt]):
            run(argv, data, env)  # caches and the resident process's first request
        pairs = n * 6
        disp, disp_s = paired(lambda: run([cli, "run", "--config", trivial], data, env),
                              bare_start, pairs)
        with_err, with_err_s = paired(lambda: run([cli, "run", "--config", trivial], data, env,
                                                  subprocess.PIPE), bare_start, pairs)
        inproc, inproc_s = paired(lambda: run([cli, "run", "--config", trivial], data, here),
                                  bare_start, n * 2)
        hook = median_time(lambda: run(["/bin/sh", "-c", "cat > /dev/null"], data, env), n * 2)
        rows.append(("R1 command-only, resident", f"{disp:.2f}",
                     f"{disp_s * 1000:.1f} ms, the hook alone {hook * 1000:.1f} ms "
                     "(target <= 2)"))
        rows.append(("R1 command-only, resident, stderr read too", f"{with_err:.2f}",
                     f"{with_err_s * 1000:.1f} ms: to the end of stderr, which the run holds "
                     "until its audit rows are written"))
        rows.append(("R1 command-only, in process", f"{inproc:.2f}",
                     f"{inproc_s * 1000:.1f} ms: `PROMPTHOOKS_RESIDENT=0`, as with no resident "
                     "process"))

        # The same event as most users' configs give it: the project's own config folder,
        # approved (the approval checked on the real files on every event), no --config.
        approved = tmp / "approved"
        (approved / ".prompthooks").mkdir(parents=True)
        config(approved / ".prompthooks", "hooks.json",
               [{"type": "command", "command": "cat > /dev/null"}])
        subprocess.run([cli, "trust", "--project", str(approved)], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        in_project = json.dumps({**json.loads(data), "cwd": str(approved)}).encode()
        project_env = {**here, "CLAUDE_PROJECT_DIR": str(approved)}
        proc = run([cli, "run"], in_project, project_env, subprocess.PIPE)
        assert proc.returncode == 0 and not proc.stderr, proc.stderr
        approved_here, approved_s = paired(lambda: run([cli, "run"], in_project, project_env),
                                           bare_start, n * 2)
        rows.append(("R1 command-only, in process, approved project config",
                     f"{approved_here:.2f}",
                     f"{approved_s * 1000:.1f} ms: the project's `.prompthooks/hooks.json`, "
                     "approved, `PROMPTHOOKS_RESIDENT=0`"))

        # The first event of a session: nothing listens, so the run is done in process, which
        # then starts the resident process (each pair in a fresh runtime folder, the process
        # it started stopped after it).
        folders: list[Path] = []

        def first_event() -> object:
            folders.append(tmp / f"first-{len(folders)}")
            folders[-1].mkdir(mode=0o700)
            return run([cli, "run", "--config", trivial], data,
                       {**env, "XDG_RUNTIME_DIR": str(folders[-1])})

        def stop_started() -> None:
            time.sleep(1)  # the start, after the run's exit: the process it started is found
            stop(resident(folders[-1]))

        first, first_s = paired(first_event, bare_start, n * 2, stop_started)
        rows.append(("R1 command-only, in process, first event", f"{first:.2f}",
                     f"{first_s * 1000:.1f} ms: nothing listens; the run then starts the "
                     "resident process"))

        # A managed policy (one trivial command hook), in process: compiled by its owner
        # (this process), then without its compiled form (validated on every event).
        policy = tmp / "managed"
        policy.mkdir()
        config(policy, "hooks.json", [{"type": "command", "command": "cat > /dev/null"}])
        policy.chmod(0o755)
        subprocess.run([cli, "managed", "compile", "--managed-dir", str(policy)], env=env,
                       check=True, stdout=subprocess.DEVNULL)
        under = [cli, "run", "--managed-dir", str(policy)]
        # The event's project must not hold the policy's folder (then it is validated).
        project = tmp / "project"
        project.mkdir()
        at = json.dumps({**json.loads(data), "cwd": str(project)}).encode()
        proc = run(under, at, here, subprocess.PIPE)
        assert proc.returncode == 0, proc.stderr
        managed, managed_s = paired(lambda: run(under, at, here), bare_start, n * 2)
        (policy / "compiled-policy.json").unlink()
        bare_managed, bare_managed_s = paired(lambda: run(under, at, here), bare_start, n * 2)
        rows.append(("managed policy, in process, compiled", f"{managed:.2f}",
                     f"{managed_s * 1000:.1f} ms: `--managed-dir`, `PROMPTHOOKS_RESIDENT=0`, "
                     "after `prompthooks managed compile`"))
        rows.append(("managed policy, in process, not compiled", f"{bare_managed:.2f}",
                     f"{bare_managed_s * 1000:.1f} ms: the same, validated on every event"))

        # The same managed event handed to a system resident process (`serve --system`, run
        # by the policy's owner: this process's user), the policy compiled again.
        subprocess.run([cli, "managed", "compile", "--managed-dir", str(policy)], env=env,
                       check=True, stdout=subprocess.DEVNULL)
        system_dir = tmp / "system"
        system_dir.mkdir(mode=0o755)
        system_env = {**env, "PROMPTHOOKS_SYSTEM_SOCKET": str(system_dir / "socket")}
        with system_resident(cli, system_env, system_dir / "socket"):
            run(under, at, system_env)
            handed, handed_s = paired(lambda: run(under, at, system_env), bare_start, n * 4)
        rows.append(("managed policy, system resident process", f"{handed:.2f}",
                     f"{handed_s * 1000:.1f} ms: `--managed-dir`, handed to `prompthooks serve "
                     "--system` (target <= 2)"))

        # One prompt hook (the model answering at once) as the managed policy: in process,
        # compiled, then handed to the system resident process.
        judged = tmp / "managed-prompt"
        judged.mkdir()
        config(judged, "hooks.json", [{"type": "prompt", "prompt": "Judge: $ARGUMENTS"}], fast)
        judged.chmod(0o755)
        subprocess.run([cli, "managed", "compile", "--managed-dir", str(judged)], env=env,
                       check=True, stdout=subprocess.DEVNULL)
        under_p = [cli, "run", "--managed-dir", str(judged)]
        proc = run(under_p, at, here, subprocess.PIPE)
        assert proc.returncode == 0, proc.stderr
        managed_p, managed_p_s = paired(lambda: run(under_p, at, here), bare_start, n)
        with system_resident(cli, system_env, system_dir / "socket"):
            run(under_p, at, system_env)
            handed_p, handed_p_s = paired(lambda: run(under_p, at, system_env), bare_start,
                                          n * 4)
        rows.append(("managed prompt hook, in process, compiled", f"{managed_p:.2f}",
                     f"{managed_p_s * 1000:.1f} ms: one prompt hook as the managed policy, "
                     "model answering at once"))
        rows.append(("managed prompt hook, system resident process", f"{handed_p:.2f}",
                     f"{handed_p_s * 1000:.1f} ms: the same, handed to `prompthooks serve "
                     "--system` (target <= 2.5)"))

        warm, warm_s = paired(lambda: run([cli, "run", "--config", prompt], data, env),
                              bare_start, pairs)
        warm_here, warm_here_s = paired(lambda: run([cli, "run", "--config", prompt], data,
                                                    here), bare_start, n)
        rows.append(("R3 warm prompt hook, resident", f"{warm:.2f}",
                     f"{warm_s * 1000:.1f} ms, model answering at once (target <= 2.5)"))
        rows.append(("R3 warm prompt hook, in process", f"{warm_here:.2f}",
                     f"{warm_here_s * 1000:.1f} ms: the run in process "
                     "(`PROMPTHOOKS_RESIDENT=0`)"))

        t1 = median_time(lambda: run([cli, "run", "--config", one], data, env), max(3, n // 3))
        t50 = median_time(lambda: run([cli, "run", "--config", fifty], data, env),
                          max(3, n // 3))
        rows.append(("fan-out, 50 prompt hooks over 1", f"{t50 / t1:.2f}",
                     f"{t50 * 1000:.0f} ms and {t1 * 1000:.0f} ms against a "
                     f"{SLOW * 1000:.0f} ms model (target <= 1.5)"))

        dead = config(tmp, "dead.json", [{"type": "prompt", "prompt": "Judge: $ARGUMENTS",
                                          **({"timeout": 5} if args.quick else {})}],
                      {"api_base": f"http://127.0.0.1:{dead_port()}/v1", "model": "dead"})
        deads = []
        for _ in range(2):
            start = time.perf_counter()
            run([cli, "run", "--config", dead], data, env)
            deads.append(time.perf_counter() - start)
        rows.append(("dead endpoint", " / ".join(f"{d:.2f} s" for d in deads),
                     "two events in a row, connection refused"
                     + (" (hook timeout 5 s)" if args.quick else " (default hook timeout)")
                     + " (target <= 1 s per event)"))

        for label, size in (("1 KB", 1_000), ("1 MB", 1_000_000), ("10 MB", 10_000_000)):
            big = event(content="x" * size)

            def sized(cfg: str, big: bytes = big) -> object:
                return run([cli, "run", "--config", cfg], big, env)

            took = median_time(lambda: sized(trivial), max(3, n // 3))
            _, kb = peak([cli, "run", "--config", trivial], big, env)
            took_p = median_time(lambda: sized(prompt), max(3, n // 3))
            _, kb_p = peak([cli, "run", "--config", prompt], big, env)
            rows.append((f"{label} event, command hook", f"{took * 1000:.0f} ms",
                         f"client peak {kb / 1024:.1f} MB"))
            rows.append((f"{label} event, prompt hook", f"{took_p * 1000:.0f} ms",
                         f"client peak {kb_p / 1024:.1f} MB (the event is cut to 20,000 "
                         "characters for the model)"))

        pids = resident(runtime)
        total = sum(pss_kb(pid) for pid in pids)
        rows.append(("resident memory", f"{total / 1024:.0f} MB",
                     f"PSS of `prompthooks serve`, its model process and the process forked "
                     f"for the next run ({len(pids)} processes; a page they share counted "
                     "once)"))
    finally:
        serving.terminate()
        serving.wait(30)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "RESULTS.md",
                        help="where the table goes (default: bench/RESULTS.md)")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="prompthooks-bench-"))
    try:
        bin_dir = build_install(tmp)
        with model_server() as model:
            rows = measure(args, tmp, bin_dir, model)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    machine = (f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores, Python "
               f"{platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M')}, load average "
               f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} at the end")
    table = "\n".join(f"| {a} | {b} | {c} |" for a, b, c in rows)
    body = args.out.read_text() if args.out.exists() else ""
    notes = body.split("<!-- notes -->", 1)[1] if "<!-- notes -->" in body else "\n"
    args.out.write_text(
        f"# Benchmark results\n\nRegenerated by `python bench/run.py` on {machine} "
        f"({'quick' if args.quick else 'full'} run), against a wheel install in a fresh "
        "virtual environment (bytecode compiled).\n\n| measure | value | detail |\n"
        f"|---|---|---|\n{table}\n\n<!-- notes -->{notes}")
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
