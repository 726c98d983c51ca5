"""Test helpers: real hook scripts, real config files, real `prompthooks run` processes."""

from __future__ import annotations

import ctypes
import io
import json
import os
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent


def write_script(path: Path, body: str, shebang: str = "#!/bin/sh") -> Path:
    """An executable script; ``body`` is shell unless another shebang is given."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{shebang}\n{body.strip()}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def approve(folder: Path, source: str = "project",
            environ: Mapping[str, str] | None = None) -> Path:
    """Approve a project or user config folder as `prompthooks trust` does (the tests'
    configs are reviewed by whoever wrote the test); the folder."""
    from prompthooks.core.hook import Source
    from prompthooks.loading import trust

    trust.approve(Source(source, str(folder), 1), folder,
                  os.environ if environ is None else environ)
    return folder


def write_json(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))
    return path


def claude_config(path: Path, event: str, *handlers: Mapping[str, Any],
                  matcher: str | None = None) -> Path:
    group: dict[str, Any] = {"hooks": [{"type": "command", **h} for h in handlers]}
    if matcher is not None:
        group["matcher"] = matcher
    return write_json(path, {"hooks": {event: [group]}})


def cursor_config(path: Path, event: str, *handlers: Mapping[str, Any]) -> Path:
    return write_json(path, {"version": 1, "hooks": {event: list(handlers)}})


def claude_event(event: str = "PreToolUse", cwd: str = "/tmp", **fields: Any) -> dict[str, Any]:
    base = {"session_id": "sess-1", "transcript_path": "/tmp/t.jsonl", "cwd": cwd,
            "permission_mode": "default", "hook_event_name": event}
    return {**base, **fields}


def claude_bash(command: str, cwd: str = "/tmp") -> dict[str, Any]:
    return claude_event("PreToolUse", cwd, tool_name="Bash",
                        tool_input={"command": command, "description": "run it"},
                        tool_use_id="tu-1")


def cursor_event(event: str, root: str = "/tmp", **fields: Any) -> dict[str, Any]:
    base = {"conversation_id": "conv-1", "generation_id": "gen-1", "model": "some-model",
            "hook_event_name": event, "cursor_version": "1.7.2", "workspace_roots": [root],
            "user_email": "dev@example.com", "transcript_path": None}
    return {**base, **fields}


def cline_event(hook: str, root: str = "/tmp", **data: Any) -> dict[str, Any]:
    key = hook[0].lower() + hook[1:]
    return {"clineVersion": "3.36.0", "hookName": hook, "timestamp": "1730000000000",
            "taskId": "task-1", "workspaceRoots": [root], "userId": "user-1", key: data}


def run_cli(stdin: bytes | str | Mapping[str, Any], *args: str, cwd: Path | str | None = None,
            env: Mapping[str, str] | None = None, timeout: float = 60,
            preexec_fn: Callable[[], None] | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m prompthooks run ARGS` with ``stdin``; output decoded as text."""
    if isinstance(stdin, Mapping):
        stdin = json.dumps(stdin)
    data = stdin.encode() if isinstance(stdin, str) else stdin
    full_env = {**os.environ, **(env or {})}
    proc = subprocess.run([sys.executable, "-m", "prompthooks", "run", *args], input=data,
                          capture_output=True, cwd=cwd, env=full_env, timeout=timeout,
                          preexec_fn=preexec_fn)
    return subprocess.CompletedProcess(proc.args, proc.returncode,
                                       proc.stdout.decode("utf-8", "replace"),
                                       proc.stderr.decode("utf-8", "replace"))


def run_in_process(stdin: bytes | str | Mapping[str, Any], *args: str,
                   cwd: Path | str | None = None,
                   env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`prompthooks run ARGS` as ``run_cli`` answers it, through ``cli.main`` in this process
    (the same config loading, executors, merge, reply and exit code, without a process start).
    For tests that want a run's verdict; a test of the process itself (its supervisor and
    deadline, signals, the standard streams, imports, the installed script) keeps ``run_cli``.
    Not for threads: it swaps the process's standard streams, environment and folder."""
    from prompthooks import cli

    if isinstance(stdin, Mapping):
        stdin = json.dumps(stdin)
    data = stdin.encode() if isinstance(stdin, str) else stdin
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="surrogateescape")
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="surrogateescape")
    with pytest.MonkeyPatch.context() as patch:
        for name, value in (env or {}).items():
            patch.setenv(name, value)
        if cwd is not None:
            patch.chdir(cwd)
        patch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
        patch.setattr(sys, "stdout", out)
        patch.setattr(sys, "stderr", err)
        code = cli.main(["run", *args])
        out.flush()
        err.flush()
    argv = [sys.executable, "-m", "prompthooks", "run", *args]
    return subprocess.CompletedProcess(argv, code, _text(out), _text(err))


def _text(stream: io.TextIOWrapper) -> str:
    buffer = stream.buffer
    assert isinstance(buffer, io.BytesIO)
    return buffer.getvalue().decode("utf-8", "replace")


def file_modes_bind_root() -> None:
    """For ``preexec_fn``: drop the capabilities that let root ignore file modes (from the
    bounding set, so the program it runs never gets them back), so that a read-only file is
    read-only to the child as it would be to any user. Nothing to do for other users."""
    if os.geteuid() != 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (1, 2, 3):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER
        if libc.prctl(24, capability, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


def reply(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """The JSON object prompthooks printed (``{}`` for an empty stdout)."""
    text = proc.stdout.strip()
    return json.loads(text) if text else {}


# Processes: a zombie counts as dead (PID 1 here need not reap the orphans of a killed hook).

def living(pids: Iterable[int]) -> list[int]:
    """The PIDs among ``pids`` of processes still running (neither gone nor zombies)."""
    alive = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            continue
        if state != "Z":
            alive.append(pid)
    return alive


def process_group(pgid: int) -> list[int]:
    """Every process of the process group ``pgid``."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):  # gone before it was opened, or read
            continue
        if int(fields[2]) == pgid:
            members.append(int(entry))
    return members


def assert_group_killed(leader: int, seconds: float = 5) -> None:
    """The hook's process (``/bin/sh -c``, the leader of its own process group: ``$$`` in a
    one-line command) was reaped by the run, and nothing of its group is left running (polled
    briefly: the kernel may lag behind the run's exit)."""
    end = time.monotonic() + seconds
    while living(process_group(leader)) and time.monotonic() < end:
        time.sleep(0.05)
    assert living(process_group(leader)) == []
    with pytest.raises(ProcessLookupError):
        os.kill(leader, 0)


def read_pid(path: Path) -> int:
    return int(path.read_text().strip())


def install_wheel(tmp_path: Path) -> Path:
    """Build this checkout's wheel (isolated, as a release would: pip fetches the build
    backend pyproject names) and install it into a folder of its own; put that folder on
    PYTHONPATH to run the installed copy, not the checkout."""
    wheels, target = tmp_path / "wheels", tmp_path / "site"
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q",
                            "-w", str(wheels), str(REPO)],
                           capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stderr
    (wheel,) = wheels.glob("prompthooks-*.whl")
    install = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q",
                              "--target", str(target), str(wheel)],
                             capture_output=True, text=True, timeout=600)
    assert install.returncode == 0, install.stderr
    return target


def on_a_pty(argv: Iterable[str], env: Mapping[str, str], codes: Iterable[int] = (0,)) -> str:
    """What ``prompthooks ARGV`` writes to a pseudo-terminal as its stdout (line ends as
    ``\n``); its exit code is one of ``codes`` and its stderr empty."""
    import pty

    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "prompthooks", *argv],
                            stdin=subprocess.DEVNULL, stdout=follower, stderr=subprocess.PIPE,
                            env=dict(env))
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the process closed its end
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert proc.wait(60) in tuple(codes)
    assert proc.stderr is not None and proc.stderr.read() == b""
    return b"".join(chunks).decode().replace("\r\n", "\n")


def wait_until(condition: Callable[[], object], seconds: float = 60) -> bool:
    """Whether ``condition`` came true within ``seconds`` (looked at every 50 ms)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.05)
    return False
