"""prompthooks load test: N concurrent `prompthooks run` processes, mixed command and prompt hooks.

    python bench/load.py                        # 200 processes: several minutes on two cores
    python bench/load.py --processes 40         # smaller
    python bench/load.py --prompt-timeout 590   # prompt hooks may wait up to the run's budget
    python bench/load.py --cold-sample 20       # also 20 cold record runs, no worker (measured)

Every process gets one Claude Code PreToolUse event (Bash). The config (in a temporary folder;
HOME and the XDG folders point there too, so the user's own config, caches, worker and audit
log are never touched) has four hooks on it: two command hooks (a shell guard that denies
commands containing "rm -rf", and one that allows and adds context) and two inline prompt
hooks, with the audit log on at an explicit path (``store_events`` on, so that every row can be
traced to its event). N/4 distinct commands (a third of them "rm -rf ...") are each sent by
four processes.

Two phases, each starting all N processes at once (one Popen after another, each event written
and stdin closed at once, replies read as they come):

- record: ``prompthooks run --record CASSETTE`` against the local OpenAI-compatible server of
  tests/fake_model.py (denies events containing "rm -rf", allows the rest, answers after
  MODEL_DELAY), N processes writing one cassette at once (flock + atomic replace). The model
  calls go through a warm worker (``prompthooks serve``, started and warmed before the burst),
  as they would on a machine that has run a prompt hook in the last ten minutes. A process with
  no worker imports litellm itself (4-7 s of CPU and ~170 MB here) inside its prompt hooks'
  timeout, so N cold processes cannot all finish on two cores: ``--cold-sample K`` measures
  what happens to K of them; ``--no-worker`` runs the whole record phase that way.
- replay: ``prompthooks run --replay CASSETTE`` with the server and the worker stopped and
  ``PROMPTHOOKS_WORKER=0``: no network; every prompt hook must answer from the cassette.

The harness and the stand-in model server (threads of this process) keep normal priority;
every prompthooks process (runs, their hooks, the worker) runs at nice NICE, so that the stand-in
for a remote model is not starved by the load it serves and the timestamps are taken on time
(``--no-nice`` turns this off). A watcher samples the run's processes every half second (peak
memory, workers started by clients, clients that loaded litellm themselves) and kills them if the
machine's available memory falls under MIN_AVAILABLE_MB.

Checked, per phase (exit 1 with a grouped list of what broke): every process answered (exit 0,
or 2 as the host protocol allows) with a valid Claude Code reply whose decision is the expected
one (deny, carrying the guard's and both prompt hooks' reasons, for "rm -rf"; allow, from the
allow hook, for the rest) and nothing else on stderr; every audit row is present (N x 4 rows, N
run_ids of exactly the four hooks, each event's run count, every status ok, decisions as
expected, prompt rows replayed in the replay phase only), none left in ``<db>.pending`` after
one final write; the cassette loads (PyYAML, ``Cassette``) and holds exactly one entry per
distinct prompt request (2 x N/4) with the right verdict, no temporary file beside it, unchanged
by the replay phase.

Reported: wall time per phase, processes per second, p50/p95/max latency per process (Popen to
exit), and the phase's wall time over a bare ``python -c pass`` start and over one
``prompthooks run`` of the same event in the same mode, both measured in the same run (medians,
as bench/run.py does). The "Load" section of bench/RESULTS.md (between its markers) is replaced,
or appended. Not part of the test suite; tests/bench/test_load_smoke.py runs a small version.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import platform
import re
import selectors
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from prompthooks.address import model_environment  # noqa: E402
from prompthooks.audit import store  # noqa: E402
from prompthooks.audit.stats import percentile  # noqa: E402
from prompthooks.model.model_process import socket_path  # noqa: E402
from prompthooks.model.recording import Cassette, CassetteError  # noqa: E402
from tests.fake_model import Answer, FakeModel, serve  # noqa: E402

PY = sys.executable
_SCRIPT = Path(PY).parent / "prompthooks"
CLI: list[str] = [str(_SCRIPT)] if _SCRIPT.exists() else [PY, "-m", "prompthooks"]

DENY_MARK = "rm -rf"
MODEL = "load-model"
MODEL_DELAY = 0.1  # seconds the local server takes per answer
MODEL_REASON = "load test model: recursive delete"
GUARD_REASON = "load test guard: recursive delete"
CONTEXT = "load test: context from the allow hook"
PROMPTS = ("Block shell commands that delete files or folders recursively. $ARGUMENTS",
           "Block shell commands that destroy data that cannot be recovered. $ARGUMENTS")
HOOKS = 2 + len(PROMPTS)  # audit rows per process
FLUSH_RUN_ID = "load-test-flush"
SPOOL_LINE = "row(s) kept in"  # the stderr line of a writer that spooled its audit rows
NICE = 10
LITELLM_MB = 170  # peak resident memory of one process that imported litellm, here
MIN_AVAILABLE_MB = 3072  # below this the watcher kills the run's processes
BURST_TIMEOUT = 1800.0  # seconds before the processes still running are killed and reported
SECTION_BEGIN = "<!-- load:begin -->"
SECTION_END = "<!-- load:end -->"

GUARD = f"""#!/bin/sh
input=$(cat)
case "$input" in
  *'{DENY_MARK}'*) printf '%s\\n' '{{"hookSpecificOutput": {{"hookEventName": "PreToolUse", \
"permissionDecision": "deny", "permissionDecisionReason": "{GUARD_REASON}"}}}}' ;;
esac
"""
ALLOW = f"""#!/bin/sh
cat > /dev/null
printf '%s\\n' '{{"hookSpecificOutput": {{"hookEventName": "PreToolUse", \
"permissionDecision": "allow", "additionalContext": "{CONTEXT}"}}}}'
"""


# ------------------------------------------------------------------------------------------
# The setup: folders, hook scripts, configs, events, environments


@dataclass(frozen=True)
class Plan:
    """Which event each process sends: ``sends[i]`` indexes ``commands``."""

    commands: tuple[str, ...]
    sends: tuple[int, ...]

    @classmethod
    def make(cls, processes: int) -> Plan:
        distinct = max(1, processes // 4)
        commands = tuple(f"{DENY_MARK} /srv/load/build-{i}" if i % 3 == 0
                         else f"ls -la /srv/load/dir-{i}" for i in range(distinct))
        return cls(commands, tuple(i % distinct for i in range(processes)))

    def denied(self, command: int) -> bool:
        return DENY_MARK in self.commands[command]

    def counts(self) -> Counter[int]:
        return Counter(self.sends)


@dataclass(frozen=True)
class Setup:
    root: Path
    plan: Plan
    events: tuple[bytes, ...]  # one per distinct command
    cassette: Path
    project: Path
    managed: Path  # never created: an existing managed folder turns the config cache off
    runtime: Path  # XDG_RUNTIME_DIR, short: a Unix socket's path must fit in 108 bytes
    nice: bool

    @property
    def home(self) -> Path:
        return self.root / "home"

    def config(self, name: str) -> Path:
        return self.root / f"{name}.json"

    def audit_db(self, name: str) -> Path:
        return self.root / f"{name}-audit.db"

    def argv(self, name: str, *tape: str) -> list[str]:
        return [*CLI, "run", "--config", str(self.config(name)), "--managed-dir",
                str(self.managed), *tape]


def _script(root: Path, name: str, text: str) -> str:
    """A hook script in ``root/hooks``, and its command, relative to the config's folder."""
    path = root / "hooks" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return f'"$PROMPTHOOKS_CONFIG_DIR"/hooks/{shlex.quote(name)}'


def event(project: Path, command: str, index: int, tool: str = "Bash") -> bytes:
    return json.dumps({
        "session_id": "load-test", "transcript_path": str(project / "transcript.jsonl"),
        "cwd": str(project), "permission_mode": "default", "hook_event_name": "PreToolUse",
        "tool_name": tool, "tool_input": {"command": command, "description": "load test"},
        "tool_use_id": f"toolu_load_{index}",
    }).encode()


def make_setup(root: Path, processes: int, prompt_timeout: float | None = None,
               nice: bool = True) -> Setup:
    """Folders, hook scripts, and one config per use (record, replay, single runs), which
    differ only in their audit database."""
    plan = Plan.make(processes)
    project, home = root / "project", root / "home"
    for folder in (project, home):
        folder.mkdir(parents=True, exist_ok=True)
    runtime = Path(tempfile.mkdtemp(prefix="phload-", dir="/tmp" if os.path.isdir("/tmp")
                                    else None))  # 0700
    guard = _script(root, "guard.sh", GUARD)
    allow = _script(root, "allow.sh", ALLOW)
    setup = Setup(root, plan, tuple(event(project, c, i) for i, c in enumerate(plan.commands)),
                  root / "tape.yaml", project, root / "no-managed-policy", runtime, nice)
    timeout = {} if prompt_timeout is None else {"timeout": prompt_timeout}
    for name in ("record", "replay", "single"):
        handlers: list[dict[str, Any]] = [
            {"type": "command", "command": guard}, {"type": "command", "command": allow},
            *({"type": "prompt", "prompt": p, **timeout} for p in PROMPTS)]
        setup.config(name).write_text(json.dumps({
            "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": handlers}]},
            "prompthooks": {"model": MODEL, "audit": {
                "enabled": True, "path": str(setup.audit_db(name)), "store_events": True}},
        }, indent=2))
    return setup


def child_env(setup: Setup, api_base: str, worker: bool) -> dict[str, str]:
    """The caller's environment less anything that changes a model call or where prompthooks
    looks, with HOME and the XDG folders inside the temporary folder."""
    drop = set(model_environment(os.environ))
    env = {k: v for k, v in os.environ.items()
           if k not in drop and not k.startswith("PROMPTHOOKS_")
           and k not in ("CLAUDE_PROJECT_DIR", "CURSOR_PROJECT_DIR")}
    home = setup.home
    env.update({
        "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"), "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_STATE_HOME": str(home / ".local/state"), "XDG_RUNTIME_DIR": str(setup.runtime),
        "PROMPTHOOKS_API_BASE": api_base,
        "PROMPTHOOKS_WORKER": "1" if worker else "0",
        "PROMPTHOOKS_WORKER_IDLE": "60",  # a worker a client starts on its own dies soon
        "PROMPTHOOKS_DIRECT": "0",  # litellm's path, through the warm worker (not direct)
    })
    return env


def responder(body: Mapping[str, Any]) -> Answer:
    """The local model: deny what contains "rm -rf", allow the rest."""
    user = next((str(m.get("content")) for m in body.get("messages", [])
                 if isinstance(m, dict) and m.get("role") == "user"), "")
    data: dict[str, Any] = ({"ok": False, "reason": MODEL_REASON} if DENY_MARK in user
                            else {"ok": True})
    return Answer(json.dumps(data), delay=MODEL_DELAY)


@contextlib.contextmanager
def model_server() -> Iterator[FakeModel]:
    server = serve()
    model = next(server)
    model.responder = responder
    try:
        yield model
    finally:
        next(server, None)


# ------------------------------------------------------------------------------------------
# Processes


def ours(root: Path, exclude: Sequence[int] = ()) -> list[int]:
    """The processes running with HOME in our temporary folder: runs, hooks, workers."""
    mark = f"HOME={root / 'home'}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in exclude or int(entry.name) == os.getpid():
            continue
        with contextlib.suppress(OSError):
            if mark in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
    return found


def stop(pids: Sequence[int], sig: int = signal.SIGTERM) -> None:
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, sig)


def _available_mb() -> float | None:
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / 1024
    return None


def _rss_mb(pid: int) -> float:
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _parent(pid: int) -> int:
    with contextlib.suppress(OSError, ValueError, IndexError):
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    return 0


def _serves(pid: int) -> bool:
    with contextlib.suppress(OSError):
        return b"serve" in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    return False


@dataclass
class Watch:
    """What a half-second sampler saw of the run's processes during one burst."""

    peak_mb: float = 0.0  # resident memory of all of them at once
    peak_processes: int = 0
    workers: set[int] = field(default_factory=set)  # `serve` processes the clients started
    litellm_clients: set[int] = field(default_factory=set)  # runs over 100 MB: litellm loaded
    aborted: str | None = None


@contextlib.contextmanager
def watching(root: Path, own: Sequence[int] = ()) -> Iterator[Watch]:
    watch = Watch()
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.5):
            pids = ours(root, own)
            sizes = {pid: _rss_mb(pid) for pid in pids}
            watch.peak_mb = max(watch.peak_mb, sum(sizes.values()))
            watch.peak_processes = max(watch.peak_processes, len(pids))
            for pid, size in sizes.items():
                with contextlib.suppress(OSError):
                    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                    if b"serve" in argv and not _serves(_parent(pid)):
                        watch.workers.add(pid)  # not a worker's model process or a run
                    elif b"run" in argv and size > 100:
                        watch.litellm_clients.add(pid)
            available = _available_mb()
            if available is not None and available < MIN_AVAILABLE_MB and not watch.aborted:
                watch.aborted = (f"killed: the machine had {available:.0f} MB available with "
                                 f"{len(pids)} of the run's processes using "
                                 f"{sum(sizes.values()):.0f} MB")
                stop(pids, signal.SIGKILL)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield watch
    finally:
        done.set()
        thread.join()


def _lower(pid: int, nice: bool) -> None:
    if nice:
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, pid, NICE)


@dataclass
class ProcResult:
    index: int
    command: int  # index into Plan.commands
    returncode: int | None  # None: killed at BURST_TIMEOUT
    stdout: str
    stderr: str
    seconds: float


def burst(argv: Sequence[str], setup: Setup, env: Mapping[str, str],
          timeout: float = BURST_TIMEOUT) -> tuple[list[ProcResult], float]:
    """Start one process per planned send, all at once; (results, wall seconds)."""
    sends = setup.plan.sends
    procs: list[subprocess.Popen[bytes]] = []
    started: list[float] = []
    ended: list[float | None] = [None] * len(sends)
    out: list[list[bytes]] = [[] for _ in sends]
    err: list[list[bytes]] = [[] for _ in sends]
    open_pipes = [0] * len(sends)
    selector = selectors.DefaultSelector()
    start = time.perf_counter()
    for i, command in enumerate(sends):
        started.append(time.perf_counter())
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=dict(env), cwd=setup.project)
        _lower(proc.pid, setup.nice)
        procs.append(proc)
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.write(setup.events[command])  # under a pipe buffer: never blocks
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.close()
        for pipe, sink in ((proc.stdout, out[i]), (proc.stderr, err[i])):
            os.set_blocking(pipe.fileno(), False)
            selector.register(pipe, selectors.EVENT_READ, (i, sink))
            open_pipes[i] += 1
    deadline = start + timeout
    while selector.get_map() and time.perf_counter() < deadline:
        for key, _ in selector.select(timeout=1.0):
            i, sink = key.data
            chunk = os.read(key.fd, 65536)
            if chunk:
                sink.append(chunk)
                continue
            selector.unregister(key.fileobj)
            key.fileobj.close()  # type: ignore[union-attr]
            open_pipes[i] -= 1
            if open_pipes[i] == 0:
                procs[i].wait()
                ended[i] = time.perf_counter()
    for key in list(selector.get_map().values()):  # past the timeout: kill what is left
        i = key.data[0]
        if procs[i].poll() is None:
            procs[i].kill()
        procs[i].wait()
        selector.unregister(key.fileobj)
        key.fileobj.close()  # type: ignore[union-attr]
    wall = time.perf_counter() - start
    results = []
    for i, proc in enumerate(procs):
        done = ended[i]
        results.append(ProcResult(
            i, sends[i], proc.returncode if done is not None else None,
            b"".join(out[i]).decode("utf-8", "replace"),
            b"".join(err[i]).decode("utf-8", "replace"),
            (done if done is not None else time.perf_counter()) - started[i]))
    return results, wall


def one_run(argv: Sequence[str], data: bytes, env: Mapping[str, str], cwd: Path,
            nice: bool = False) -> float:
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=dict(env), cwd=cwd)
    _lower(proc.pid, nice)
    proc.communicate(data)
    return time.perf_counter() - start


def median_run(argv: Sequence[str], data: bytes, env: Mapping[str, str], cwd: Path,
               repeat: int, nice: bool = False) -> float:
    return statistics.median(one_run(argv, data, env, cwd, nice) for _ in range(repeat))


def imports_litellm(argv: Sequence[str], data: bytes, env: Mapping[str, str],
                    cwd: Path) -> bool:
    """Whether one ``prompthooks run`` with these arguments imports litellm."""
    args = list(argv)
    rest = args[1:] if args[0] == str(_SCRIPT) else args[3:]  # drop the script or -m
    proc = subprocess.run([PY, "-X", "importtime", "-m", "prompthooks", *rest], input=data,
                          capture_output=True, env=dict(env), cwd=cwd, check=False)
    return any(line.rsplit("|", 1)[-1].strip() == "litellm"
               for line in proc.stderr.decode("utf-8", "replace").splitlines())


def warm_config_cache(setup: Setup, name: str, env: Mapping[str, str]) -> None:
    """Load a config once (validated and cached, as after any edit) with an event no hook
    matches: nothing runs, and no audit row is written. In process, with the resident process
    off: a run done in process starts one after its reply, which would then hold the lock the
    pre-started worker needs (that `serve` would exit at once) and be counted as a worker a
    client started."""
    data = event(setup.project, "load test warm-up", 0, tool="Read")
    subprocess.run(setup.argv(name), input=data, capture_output=True,
                   env={**env, "PROMPTHOOKS_RESIDENT": "0"}, cwd=setup.project, check=False)


@contextlib.contextmanager
def warm_worker(setup: Setup, env: Mapping[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    """``prompthooks serve`` for this environment, listening; stopped at the end."""
    log = setup.root / "worker.log"
    with open(log, "wb") as err:
        proc = subprocess.Popen([*CLI, "serve", "--idle", "600"], env=dict(env),
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
    _lower(proc.pid, setup.nice)
    try:
        sock = socket_path(env)
        deadline = time.monotonic() + 60
        while not sock.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                why = log.read_text().strip() if proc.poll() is not None else "timed out"
                raise RuntimeError(f"the worker did not start listening on {sock}: {why}")
            time.sleep(0.05)
        if proc.poll() is not None:  # another process serves: the burst would not measure ours
            raise RuntimeError(f"the worker exited at once: {log.read_text().strip()}")
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# ------------------------------------------------------------------------------------------
# Invariants. A problem is (what broke, one instance): the report groups them by the first.

Problem = tuple[str, str]
_VOLATILE = [(re.compile(r"\(/[^()]*: hooks\.[^()]*\)"), "(HOOK)"),
             (re.compile(r"\(key [0-9a-f]+\)"), "(key K)"),
             (re.compile(r"/\S+"), "PATH"),
             (re.compile(r"\d+ row\(s\)"), "N row(s)")]


def shape(text: str) -> str:
    """A message with its paths, hook labels and keys taken out, to group the same fault."""
    for pattern, stand_in in _VOLATILE:
        text = pattern.sub(stand_in, text)
    return text.strip()


def check_replies(results: Sequence[ProcResult], plan: Plan) -> list[Problem]:
    """Every process answered, with the expected decision for its event."""
    problems: list[Problem] = []
    for r in results:
        what = f"process {r.index} ({plan.commands[r.command]!r})"
        deny = plan.denied(r.command)
        if r.returncode is None:
            problems.append((f"no answer within {BURST_TIMEOUT:.0f} s (killed)", what))
            continue
        if r.returncode not in (0, 2):
            problems.append((f"exit {r.returncode}", f"{what}: {r.stderr.strip()[:300]}"))
            continue
        if r.returncode == 2 and not deny:  # Claude Code reads exit 2 as a block
            problems.append(("blocked with exit 2, should pass", what))
        for line in r.stderr.splitlines():
            if line.strip() and SPOOL_LINE not in line:
                problems.append((f"stderr: {shape(line)}", what))
        if r.returncode == 2:
            continue
        try:
            reply = json.loads(r.stdout) if r.stdout.strip() else {}
        except ValueError:
            problems.append(("stdout is not JSON", f"{what}: {r.stdout[:200]!r}"))
            continue
        specific = reply.get("hookSpecificOutput") if isinstance(reply, dict) else None
        if not isinstance(specific, dict) or specific.get("hookEventName") != "PreToolUse":
            problems.append(("not a Claude Code PreToolUse reply", f"{what}: {r.stdout[:200]!r}"))
            continue
        decision = specific.get("permissionDecision")
        reason = str(specific.get("permissionDecisionReason") or "")
        if decision != ("deny" if deny else "allow"):
            problems.append((f"decision {decision!r} for {'an rm -rf' if deny else 'a safe'} "
                             "event", what))
        elif deny and GUARD_REASON not in reason:
            problems.append(("deny without the guard's reason", f"{what}: {reason!r}"))
        elif deny and reason.count(MODEL_REASON) != len(PROMPTS):
            problems.append((f"deny with {reason.count(MODEL_REASON)} of {len(PROMPTS)} prompt "
                             "hooks' reasons", what))
        if CONTEXT not in str(specific.get("additionalContext") or ""):
            problems.append(("the allow hook's context is missing", what))
    return problems


def pending_rows(db: Path) -> int:
    spool = db.with_name(db.name + ".pending")
    if not spool.exists():
        return 0
    return sum(1 for line in spool.read_text(encoding="utf-8").splitlines() if line.strip())


def flush_audit(db: Path) -> None:
    """One final write (a marker row): it moves any spooled rows into the database."""
    store.write(db, [{
        "time": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()), "run_id": FLUSH_RUN_ID,
        "host": "bench", "event": "flush", "host_event": "flush", "hook": "(load test flush)",
        "hook_label": "bench/load.py", "source": "bench", "kind": "bench", "fail_closed": 0,
        "status": "ok", "decision": "none", "cached": 0, "replayed": 0}])


def expected_decision(row: Mapping[str, Any], denied: bool) -> str:
    """What a hook's audit row must say: the allow hook allows everything; the guard and the
    prompt hooks deny the "rm -rf" events and have no opinion on the rest."""
    if row["kind"] == "command" and "allow.sh" in row["hook"]:
        return "allow"
    return "deny" if denied else "none"


@dataclass
class AuditCounts:
    rows: int = 0
    runs: int = 0
    prompt_status: Counter[str] = field(default_factory=Counter)


def check_audit(db: Path, plan: Plan, replayed: bool) -> tuple[list[Problem], AuditCounts]:
    """Every row of the phase is in the database: N runs of exactly the four hooks, each
    event's run count, statuses and decisions as expected."""
    problems: list[Problem] = []
    counts = AuditCounts()
    try:
        rows = [r for r in store.read(db) if r["run_id"] != FLUSH_RUN_ID]
    except store.AuditError as exc:
        return [("audit log unreadable", str(exc))], counts
    runs: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        runs.setdefault(row["run_id"], []).append(row)
    counts.rows, counts.runs = len(rows), len(runs)
    counts.prompt_status = Counter(str(r["status"]) for r in rows if r["kind"] == "prompt")
    if len(rows) != len(plan.sends) * HOOKS:
        problems.append(("audit rows missing or extra",
                         f"{len(rows)} rows, expected {len(plan.sends) * HOOKS}"))
    if len(runs) != len(plan.sends):
        problems.append(("audit run_ids missing or extra",
                         f"{len(runs)} run_ids, expected {len(plan.sends)}"))
    labels = Counter(row["hook_label"] for row in rows)
    if len(labels) != HOOKS:
        problems.append(("audit hooks differ", f"{sorted(labels)}, expected {HOOKS}"))
    per_command: Counter[int] = Counter()
    index = {c: i for i, c in enumerate(plan.commands)}
    for run_id, group in runs.items():
        if sorted(r["hook_label"] for r in group) != sorted(labels):
            problems.append(("a run without exactly the four hooks",
                             f"run {run_id}: {sorted(r['hook_label'] for r in group)}"))
        try:
            command = index[json.loads(group[0]["event_input"])["tool_input"]["command"]]
        except (TypeError, ValueError, KeyError):
            problems.append(("a run without a readable event input", f"run {run_id}"))
            continue
        per_command[command] += 1
        for row in group:
            want = expected_decision(row, plan.denied(command))
            if row["status"] != "ok" or row["decision"] != want:
                problems.append((
                    f"audit: {row['kind']} hook {row['status']}, decision {row['decision']} "
                    f"(expected ok, {want}): {shape(str(row['error']))}",
                    f"run {run_id}, {row['hook_label']}"))
            elif row["kind"] == "prompt" and bool(row["replayed"]) != replayed:
                problems.append((f"audit: prompt row replayed={row['replayed']}",
                                 f"run {run_id}, {row['hook_label']}"))
    if per_command != plan.counts():
        missing = {plan.commands[c]: n - per_command[c] for c, n in plan.counts().items()
                   if per_command[c] != n}
        problems.append(("audit runs per event differ from what was sent", str(missing)))
    return problems, counts


def check_cassette(path: Path, plan: Plan) -> tuple[list[Problem], int]:
    """The cassette loads, holds one entry per distinct prompt request with the right verdict,
    and no temporary file of an interrupted write is left. (problems, entries)"""
    try:
        entries = Cassette(path).entries()
    except CassetteError as exc:
        return [("cassette unreadable", str(exc))], 0
    problems: list[Problem] = []
    expected = len(plan.commands) * len(PROMPTS)
    if len(entries) != expected:
        problems.append(("cassette entries missing or extra",
                         f"{len(entries)} entries, expected {expected} ({len(plan.commands)} "
                         f"events x {len(PROMPTS)} prompt hooks)"))
    for key, entry in entries.items():
        deny = DENY_MARK in str(entry.get("prompt"))
        try:
            ok = json.loads(entry["reply"]).get("ok")
        except (ValueError, AttributeError):
            ok = None
        if ok is not (not deny):
            problems.append(("cassette entry with the wrong verdict",
                             f"{key}: {entry['reply']!r}"))
    seen = Counter(next((c for c in plan.commands if f'"command": "{c}"' in str(e["prompt"])),
                        None) for e in entries.values())
    for command in plan.commands:
        if seen[command] != len(PROMPTS):
            problems.append(("cassette: an event without one entry per prompt hook",
                             f"{command!r}: {seen[command]} entries"))
    leftovers = [p.name for p in path.parent.glob(f".{path.name}.*")]
    if leftovers:
        problems.append(("cassette: temporary files left beside it", str(leftovers)))
    return problems, len(entries)


# ------------------------------------------------------------------------------------------
# Phases


@dataclass
class PhaseReport:
    name: str
    processes: int
    wall: float
    latencies: list[float]  # sorted, seconds
    answered: int = 0  # exit 0 or 2
    problems: list[Problem] = field(default_factory=list)
    audit: AuditCounts = field(default_factory=AuditCounts)
    pending_at_end: int = 0  # audit rows still in .pending when the last process exited
    pending_after_flush: int = 0  # ... and after one more write (must be 0)
    spooled_processes: int = 0  # processes that said their rows went to .pending
    model_requests: int = 0
    cassette_entries: int = 0
    single: float | None = None  # one `prompthooks run` of the same event, median
    watch: Watch = field(default_factory=Watch)

    @property
    def rate(self) -> float:
        return self.processes / self.wall if self.wall else 0.0

    def latency(self, fraction: float) -> float:
        return percentile(self.latencies, fraction)


def run_phase(name: str, setup: Setup, env: Mapping[str, str], tape: Sequence[str],
              replayed: bool, model: FakeModel | None = None,
              own: Sequence[int] = ()) -> PhaseReport:
    requests_before = len(model.requests) if model else 0
    with watching(setup.root, own) as watch:
        results, wall = burst(setup.argv(name, *tape), setup, env)
    report = PhaseReport(name, len(results), wall, sorted(r.seconds for r in results),
                         watch=watch)
    report.answered = sum(1 for r in results if r.returncode in (0, 2))
    report.model_requests = len(model.requests) - requests_before if model else 0
    if watch.aborted:
        report.problems.append(("the run was stopped by the memory guard", watch.aborted))
    report.problems += check_replies(results, setup.plan)
    report.spooled_processes = sum(1 for r in results if SPOOL_LINE in r.stderr)
    db = setup.audit_db(name)
    report.pending_at_end = pending_rows(db)
    try:
        flush_audit(db)
    except store.AuditError as exc:
        report.problems.append(("the final audit write failed", str(exc)))
    report.pending_after_flush = pending_rows(db)
    if report.pending_after_flush:
        report.problems.append(("audit rows left in .pending after a final write",
                                str(report.pending_after_flush)))
    problems, report.audit = check_audit(db, setup.plan, replayed)
    report.problems += problems
    return report


@dataclass
class LoadReport:
    processes: int
    distinct: int
    record: PhaseReport
    replay: PhaseReport
    worker: bool
    nice: bool
    prompt_timeout: float | None
    bare: float | None = None
    replay_imports_litellm: bool | None = None
    cassette_changed_by_replay: bool = False

    @property
    def problems(self) -> list[Problem]:
        return ([(f"record: {k}", d) for k, d in self.record.problems]
                + [(f"replay: {k}", d) for k, d in self.replay.problems])


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else ""


def run_load(processes: int, root: Path, *, worker: bool = True, baselines: bool = True,
             prompt_timeout: float | None = None, nice: bool = True, repeat: int = 7,
             say: Callable[[str], None] = lambda _: None) -> LoadReport:
    """Both phases with every check; ``baselines`` adds the bare start, the single runs and
    the litellm import probe (the smoke test does without)."""
    setup = make_setup(root, processes, prompt_timeout, nice)
    try:
        return _run_load(setup, worker, baselines, prompt_timeout, repeat, say)
    finally:
        stop(ours(root))
        shutil.rmtree(setup.runtime, ignore_errors=True)


def _run_load(setup: Setup, worker: bool, baselines: bool, prompt_timeout: float | None,
              repeat: int, say: Callable[[str], None]) -> LoadReport:
    root, processes, nice = setup.root, len(setup.plan.sends), setup.nice
    bare = None
    if baselines:
        bare = statistics.median(one_run([PY, "-c", "pass"], b"", os.environ, root)
                                 for _ in range(repeat * 2))
        say(f"bare start {bare * 1000:.1f} ms")
    first = setup.events[0]
    scratch = str(root / "scratch.yaml")  # the single runs' cassette, kept apart
    with model_server() as model:
        env = child_env(setup, model.url, worker)
        for name in ("record", "replay", "single"):
            warm_config_cache(setup, name, env)
        with contextlib.ExitStack() as stack:
            own: list[int] = []
            if worker:
                own.append(stack.enter_context(warm_worker(setup, env)).pid)
                # The worker's first request waits for its litellm import.
                one_run(setup.argv("single", "--record", scratch), first, env, setup.project)
            single_record = (median_run(setup.argv("single", "--record", scratch), first, env,
                                        setup.project, repeat, nice) if baselines else None)
            say(f"record: {processes} processes ({'warm worker' if worker else 'no worker'})")
            record = run_phase("record", setup, env, ("--record", str(setup.cassette)),
                               replayed=False, model=model, own=own)
            record.single = single_record
        stop(ours(root))  # workers the clients started, if any
        api_base = model.url
    # The server is gone: a replay that tried the network would fail (connection refused).
    replay_env = child_env(setup, api_base, worker=False)
    problems, entries = check_cassette(setup.cassette, setup.plan)
    record.problems += problems
    record.cassette_entries = entries
    before = _digest(setup.cassette)
    probe = single_replay = None
    replay_argv = setup.argv("single", "--replay", str(setup.cassette))
    if baselines:
        probe = imports_litellm(replay_argv, first, replay_env, setup.project)
        single_replay = median_run(replay_argv, first, replay_env, setup.project, repeat, nice)
    say(f"replay: {processes} processes (no worker, no server)")
    replay = run_phase("replay", setup, replay_env, ("--replay", str(setup.cassette)),
                       replayed=True)
    replay.single = single_replay
    replay.cassette_entries = entries
    report = LoadReport(processes, len(setup.plan.commands), record, replay, worker, nice,
                        prompt_timeout, bare, probe)
    report.cassette_changed_by_replay = _digest(setup.cassette) != before
    if report.cassette_changed_by_replay:
        replay.problems.append(("the cassette changed during the replay phase", ""))
    return report


# ------------------------------------------------------------------------------------------
# The cold sample: record runs that import litellm in process, no worker


@dataclass
class ColdSample:
    processes: int
    wall: float
    latencies: list[float]  # sorted, seconds
    answered: int  # processes that exited 0 with a reply
    prompt_status: Counter[str]  # audit status of the prompt hooks' rows
    entries: int  # cassette entries (-1: unreadable)
    watch: Watch


def cold_sample(processes: int, root: Path, nice: bool = True,
                say: Callable[[str], None] = lambda _: None) -> ColdSample:
    """K record runs at once with PROMPTHOOKS_WORKER=0: each imports litellm itself, inside
    its prompt hooks' timeout (the default, 30 s). Measured, not checked."""
    setup = make_setup(root, processes, nice=nice)
    try:
        with model_server() as model:
            env = child_env(setup, model.url, worker=False)
            warm_config_cache(setup, "record", env)
            say(f"cold sample: {processes} record processes, no worker")
            with watching(root) as watch:
                results, wall = burst(setup.argv("record", "--record", str(setup.cassette)),
                                      setup, env)
        db = setup.audit_db("record")
        with contextlib.suppress(store.AuditError):
            flush_audit(db)
        rows = store.read(db, "kind = 'prompt'") if db.exists() else []
        try:
            entries = len(Cassette(setup.cassette).entries())
        except CassetteError:
            entries = -1
        return ColdSample(processes, wall, sorted(r.seconds for r in results),
                          sum(1 for r in results if r.returncode == 0 and r.stdout.strip()),
                          Counter(str(r["status"]) for r in rows), entries, watch)
    finally:
        stop(ours(root))
        shutil.rmtree(setup.runtime, ignore_errors=True)


# ------------------------------------------------------------------------------------------
# Output


def ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.0f} ms"


def secs(seconds: float) -> str:
    return f"{seconds:.1f} s"


def grouped(problems: Sequence[Problem], samples: int = 2) -> list[str]:
    """One line per kind of problem: how many, and the first instances."""
    kinds: dict[str, list[str]] = {}
    for kind, detail in problems:
        kinds.setdefault(kind, []).append(detail)
    return [f"{len(details)} x {kind}" + (f" (e.g. {'; '.join(d for d in details[:samples])})"
                                          if any(details[:samples]) else "")
            for kind, details in sorted(kinds.items(), key=lambda kv: -len(kv[1]))]


def _phase_facts(p: PhaseReport) -> str:
    n = p.processes
    status = ", ".join(f"{v} {k}" for k, v in p.audit.prompt_status.most_common()) or "none"
    w = p.watch
    return (f"answered {p.answered}/{n}; audit rows {p.audit.rows}/{n * HOOKS} in "
            f"{p.audit.runs}/{n} run_ids (prompt hooks: {status}); {p.spooled_processes} "
            f"processes spooled audit rows to `.pending`, {p.pending_at_end} rows were still "
            f"there when the last process exited, {p.pending_after_flush} after one final "
            f"write; {p.model_requests} model requests; peak {w.peak_processes} processes and "
            f"{w.peak_mb:.0f} MB resident at once; {len(w.workers)} workers started by "
            f"clients; {len(w.litellm_clients)} clients loaded litellm themselves")


def section(report: LoadReport, cold: ColdSample | None = None) -> str:
    machine = (f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores (shared: other "
               f"people's jobs ran at the same time), Python {platform.python_version()}")
    n = report.processes
    timeout = ("the default 30 s" if report.prompt_timeout is None
               else f"{report.prompt_timeout:g} s (`--prompt-timeout`)")
    rows = []
    for phase, how in ((report.record, "`--record`, model through "
                        + ("a warm worker" if report.worker else "litellm in each process")
                        + f", local server answering in {MODEL_DELAY * 1000:.0f} ms"),
                       (report.replay, "`--replay`, `PROMPTHOOKS_WORKER=0`, server stopped")):
        bare = f"{phase.wall / report.bare:.0f}" if report.bare else "-"
        single = f"{phase.wall / phase.single:.0f}" if phase.single else "-"
        rows.append(f"| {phase.name} | {how} | {secs(phase.wall)} | {phase.rate:.2f} | "
                    f"{secs(phase.latency(0.5))} | {secs(phase.latency(0.95))} | "
                    f"{secs(phase.latencies[-1])} | {bare} | {ms(phase.single)} | {single} |")
    problems = report.problems
    if problems:
        verdict = (f"**Invariants broken** ({len(problems)} findings, grouped):\n\n"
                   + "\n".join(f"- {line}" for line in grouped(problems)))
    else:
        verdict = ("**All invariants held**: every process answered with the expected decision "
                   "and nothing else on stderr, every audit row is in the database, the cassette "
                   "is valid and complete and the replay phase answered every prompt hook from "
                   "it.")
    probe = {True: "yes", False: "no", None: "not probed"}[report.replay_imports_litellm]
    facts = (
        f"- record: {_phase_facts(report.record)}.\n"
        f"- replay: {_phase_facts(report.replay)}.\n"
        f"- Cassette after {n} concurrent recorders: {report.record.cassette_entries} entries "
        f"of {report.distinct * len(PROMPTS)} ({report.distinct} distinct events x "
        f"{len(PROMPTS)} prompt hooks); "
        f"{'changed' if report.cassette_changed_by_replay else 'unchanged'} by the replay "
        f"phase.\n"
        f"- A replay run imports litellm: {probe} (`python -X importtime` of one run).\n")
    cold_text = ""
    if cold is not None:
        total = cold.processes * len(PROMPTS)
        status = cold.prompt_status
        cold_text = (
            f"\nCold sample (`--cold-sample {cold.processes}`): {cold.processes} record "
            f"processes at once with `PROMPTHOOKS_WORKER=0`, each importing litellm itself "
            f"under the default 30 s prompt-hook timeout: {secs(cold.wall)} wall, p50 "
            f"{secs(percentile(cold.latencies, 0.5))}, max {secs(cold.latencies[-1])}; "
            f"{cold.answered} of {cold.processes} processes answered; of {total} prompt hooks "
            f"{status['ok']} got the model's verdict, {status['timeout']} timed out and "
            f"{status['error']} failed otherwise; {cold.entries} cassette entries of "
            f"{len(PROMPTS) * max(1, cold.processes // 4)}; peak {cold.watch.peak_mb:.0f} MB "
            f"resident at once"
            + (f"; {cold.watch.aborted}" if cold.watch.aborted else "") + ".\n")
    return (
        f"{SECTION_BEGIN}\n## Load: {n} concurrent runs\n\n"
        f"`python bench/load.py --processes {n}"
        + (f" --prompt-timeout {report.prompt_timeout:g}" if report.prompt_timeout else "")
        + ("" if report.worker else " --no-worker") + ("" if report.nice else " --no-nice")
        + (f" --cold-sample {cold.processes}" if cold else "")
        + f"` on {machine}, {time.strftime('%Y-%m-%d %H:%M')}. Each process is one "
        f"`prompthooks run` of a Claude Code PreToolUse event through two command hooks and two "
        f"prompt hooks (timeout {timeout}), audit log on; {report.distinct} distinct events, "
        f"each sent {n // report.distinct} times; all {n} processes started at once"
        + (f", at nice {NICE} (the harness and the stand-in model server at 0)" if report.nice
           else "")
        + ". Latency: one process, Popen to exit. Ratios: the phase's wall time over a bare "
        f"`python -c pass` ({ms(report.bare)}) and over one `prompthooks run` of the same event "
        f"in the same mode (medians, same run).\n\n"
        f"| phase | how | wall | processes/s | p50 | p95 | max | wall / bare start | one run "
        f"| wall / one run |\n|---|---|---|---|---|---|---|---|---|---|\n" + "\n".join(rows)
        + f"\n\n{verdict}\n\n{facts}{cold_text}{SECTION_END}\n")


def write_section(text: str, path: Path = REPO / "bench" / "RESULTS.md") -> None:
    """Put the load section in RESULTS.md: replace the previous one, else append."""
    body = path.read_text() if path.exists() else ""
    if SECTION_BEGIN in body and SECTION_END in body:
        head, rest = body.split(SECTION_BEGIN, 1)
        body = head + text.rstrip("\n") + rest.split(SECTION_END, 1)[1]
    else:
        body = body.rstrip("\n") + "\n\n" + text
    path.write_text(body)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--processes", type=int, default=200, metavar="N")
    parser.add_argument("--prompt-timeout", type=float, metavar="SECONDS",
                        help="the prompt hooks' timeout (default: prompthooks' own, 30 s)")
    parser.add_argument("--no-worker", action="store_true",
                        help="record phase with PROMPTHOOKS_WORKER=0: each process imports "
                             "litellm (about N x 170 MB)")
    parser.add_argument("--cold-sample", type=int, default=0, metavar="K",
                        help="also start K record processes at once with no worker and report "
                             "what happens (measured, not checked)")
    parser.add_argument("--no-nice", action="store_true",
                        help=f"run prompthooks at the harness's priority, not nice {NICE}")
    parser.add_argument("--no-results", action="store_true",
                        help="do not write bench/RESULTS.md")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args()
    cold_n = max(args.processes if args.no_worker else 0, args.cold_sample)
    available = _available_mb()
    if cold_n and available is not None and cold_n * LITELLM_MB > available - MIN_AVAILABLE_MB:
        print(f"refusing: {cold_n} processes importing litellm need about "
              f"{cold_n * LITELLM_MB} MB; {available:.0f} MB are available", file=sys.stderr)
        return 64
    root = Path(tempfile.mkdtemp(prefix="prompthooks-load-"))

    def say(line: str) -> None:
        print(f"{time.strftime('%H:%M:%S')} {line}", file=sys.stderr, flush=True)

    try:
        report = run_load(args.processes, root / "main", worker=not args.no_worker,
                          prompt_timeout=args.prompt_timeout, nice=not args.no_nice, say=say)
        cold = (cold_sample(args.cold_sample, root / "cold", not args.no_nice, say)
                if args.cold_sample else None)
    finally:
        stop(ours(root / "main") + ours(root / "cold"))
        if args.keep:
            say(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    text = section(report, cold)
    print(text)
    if not args.no_results:
        write_section(text)
    if report.problems:
        print("invariants broken:", file=sys.stderr)
        for line in grouped(report.problems, samples=3):
            print(f"  - {line}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
