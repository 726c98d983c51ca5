"""The command executor: one hook process with the raw event on stdin, under a deadline.

The process gets its own process group. At the deadline the whole group gets SIGTERM, then
SIGKILL after a short grace, so a hook that ignores SIGTERM or left a child holding its
stdout open cannot keep the event waiting. When the hook itself exits, its pipes are drained
for a moment and then let go: a background child it started may keep running (a notifier, a
logger) but is not waited for. stdout and stderr are each capped at 1 MB; what is beyond the
cap is read and thrown away so the hook never blocks on a full pipe.
"""

from __future__ import annotations

import contextlib
import errno
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable

from ..core.events import Event
from ..core.hook import Hook
from ..core.result import HookResult
from ..hosts import get as dialect
from ..hosts import home, hook_variables
from .replies import result_from_reply

# Who hears of each command hook's process group as it starts and ends: the supervisor of a
# `run` process (runner/), so that a run it gives up on leaves no hook behind. Set by whoever
# runs the process, never by the engine.
GroupListener = Callable[[int, bool], None]
_group_listener: GroupListener | None = None


def listen_for_groups(listener: GroupListener | None) -> None:
    global _group_listener
    _group_listener = listener


def announce(pgid: int, started: bool) -> None:
    if _group_listener is not None:
        _group_listener(pgid, started)


OUTPUT_CAP = 1024 * 1024
DRAIN_AFTER_EXIT = 0.1  # seconds to keep reading pipes after the hook process exits
KILL_GRACE = 0.5  # seconds between SIGTERM and SIGKILL
_CHUNK = 65536
_POLL = 0.05  # exit polling interval where pidfd_open is not available


class _Outcome:
    """What a hook process wrote, and whether it overran its cap or its deadline."""

    __slots__ = ("stderr", "stdout", "stdout_over", "timed_out")

    def __init__(self) -> None:
        self.stdout = bytearray()
        self.stderr = bytearray()
        self.stdout_over = False
        self.timed_out = False


def working_dir(hook: Hook, event: Event) -> str:
    """The hook's own directory if it has one, else the rule of the host whose world it runs
    in (its dialect's, or the sending host's for a ``raw_event`` hook), else ours."""
    candidates = [*home(hook, event).wire.working_dirs(hook, event), event.project_dir]
    found = next((c for c in candidates if c and os.path.isdir(c)), None)
    if found:
        return found
    try:
        return os.getcwd()
    except OSError:  # our own working directory was deleted
        return "/"


def hook_input(hook: Hook, event: Event) -> bytes:
    """The event as the hook's own dialect would have sent it: the host's bytes for a hook
    written for that host (or asking for them), a translation for any other."""
    own = dialect(hook.dialect).wire
    if hook.raw_event or (event.host == hook.dialect and own.sends_as_is(event, hook)):
        return event.raw_bytes
    return own.translate(event, hook)


def hook_environment(hook: Hook, event: Event) -> dict[str, str]:
    """The caller's environment as the hook's own host would have given it (see
    ``hosts.hook_variables``), and ours on top."""
    env = hook_variables(hook, event, os.environ)
    if hook.config_dir:
        env["PROMPTHOOKS_CONFIG_DIR"] = hook.config_dir
    env["PROMPTHOOKS_HOST"] = event.host
    env["PROMPTHOOKS_EVENT"] = event.name
    env["PROMPTHOOKS_HOST_EVENT"] = event.host_event
    env["PROMPTHOOKS_PROJECT_DIR"] = event.project_dir
    if event.tool_name:
        env["PROMPTHOOKS_TOOL"] = event.tool_name
    else:
        env.pop("PROMPTHOOKS_TOOL", None)
    return env


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the group, a grace period, then SIGKILL to whatever is left of it."""
    _signal_group(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(KILL_GRACE)
    _signal_group(proc.pid, signal.SIGKILL)
    proc.wait()


def _pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _communicate(proc: subprocess.Popen[bytes], data: bytes, deadline: float) -> _Outcome:
    assert proc.stdin and proc.stdout and proc.stderr
    out = _Outcome()
    sel = selectors.DefaultSelector()
    sinks = {proc.stdout.fileno(): out.stdout, proc.stderr.fileno(): out.stderr}
    for fd in sinks:
        os.set_blocking(fd, False)
        sel.register(fd, selectors.EVENT_READ)
    stdin_fd = proc.stdin.fileno()
    view = memoryview(data)
    if data:
        os.set_blocking(stdin_fd, False)
        sel.register(stdin_fd, selectors.EVENT_WRITE)
    else:
        proc.stdin.close()
    pidfd = _pidfd(proc.pid)
    if pidfd is not None:
        sel.register(pidfd, selectors.EVENT_READ)
    exited_at: float | None = None
    try:
        while True:
            now = time.monotonic()
            if exited_at is None and (pidfd is None and proc.poll() is not None):
                exited_at = now
            open_pipes = any(fd in sinks for fd in sel.get_map())
            if exited_at is not None and (not open_pipes or now >= exited_at + DRAIN_AFTER_EXIT):
                break
            if now >= deadline:
                # A hook that exited in time is not timed out because a child of it holds
                # the pipes: stop reading, keep its answer, leave the child alone.
                out.timed_out = exited_at is None
                break
            wait = deadline - now
            if exited_at is not None:
                wait = min(wait, exited_at + DRAIN_AFTER_EXIT - now)
            elif pidfd is None:
                wait = min(wait, _POLL)
            for key, _ in sel.select(max(wait, 0)):
                fd = key.fd
                if fd == pidfd:
                    exited_at = time.monotonic()
                    sel.unregister(fd)
                elif fd == stdin_fd:
                    try:
                        written = os.write(fd, view[:_CHUNK])
                        view = view[written:]
                    except BlockingIOError:
                        continue
                    except OSError as exc:  # the hook does not read its stdin: fine
                        if exc.errno not in (errno.EPIPE, errno.EINVAL):
                            raise
                        view = view[:0]
                    if not view:
                        sel.unregister(fd)
                        proc.stdin.close()
                else:
                    _read(fd, sinks, sel, out)
    finally:
        sel.close()
        if pidfd is not None:
            os.close(pidfd)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            with contextlib.suppress(OSError):
                stream.close()
    if out.timed_out:
        _kill_group(proc)
    else:
        proc.wait()
    return out


def _read(fd: int, sinks: dict[int, bytearray], sel: selectors.BaseSelector,
          out: _Outcome) -> None:
    try:
        chunk = os.read(fd, _CHUNK)
    except BlockingIOError:
        return
    if not chunk:
        sel.unregister(fd)
        del sinks[fd]
        return
    sink = sinks[fd]
    room = OUTPUT_CAP - len(sink)
    if len(chunk) > room:
        if sink is out.stdout:
            out.stdout_over = True
        chunk = chunk[:max(room, 0)]
    sink += chunk


class CommandExecutor:
    """Runs the command hooks of one run; remembers the process groups it has running, so a
    run that must answer while a hook is still being stopped can kill them outright."""

    # Killing a group takes up to KILL_GRACE after SIGTERM, and as long again for SIGKILL to
    # land and the pipes to close.
    stop_grace = 2 * KILL_GRACE

    def __init__(self) -> None:
        self._groups: set[int] = set()
        self._lock = threading.Lock()

    def run(self, hook: Hook, event: Event, deadline: float) -> HookResult:
        """Run one command hook and read its reply; never raises for the hook's own faults."""
        return run(hook, event, deadline, self._started, self._ended)

    def stop(self) -> None:
        with self._lock:
            groups = list(self._groups)
        for pgid in groups:
            _signal_group(pgid, signal.SIGKILL)

    def _started(self, pgid: int) -> None:
        with self._lock:
            self._groups.add(pgid)

    def _ended(self, pgid: int) -> None:
        with self._lock:
            self._groups.discard(pgid)


def _ignore(pgid: int) -> None:
    pass


def run(hook: Hook, event: Event, deadline: float, started: Callable[[int], None] = _ignore,
        ended: Callable[[int], None] = _ignore) -> HookResult:
    """Run one command hook and read its reply; never raises for the hook's own faults.
    ``started`` and ``ended`` are told the hook's process group as it starts and ends."""
    if hook.executable and hook.digest:
        # only for a script approved by its content: the copy's hashing and temporary folder
        from .approved_copy import NotApproved, approved_copy

        start = time.monotonic()
        try:
            with approved_copy(hook.executable, hook.digest) as copy:
                return _run(hook, [copy], event, deadline, started, ended)
        except NotApproved as exc:
            return HookResult(hook=hook, status="error", error=str(exc),
                              duration=time.monotonic() - start)
    argv = [hook.executable] if hook.executable else ["/bin/sh", "-c", hook.command or ""]
    return _run(hook, argv, event, deadline, started, ended)


def _popen(argv: list[str], cwd: str | None, env: dict[str, str]) -> subprocess.Popen[bytes]:
    for _ in range(20):
        try:
            return subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                cwd=cwd, env=env, start_new_session=True,
            )
        except OSError as exc:
            # A file written a moment ago is "busy" while a process forked meanwhile by
            # another thread still holds its descriptor (until that process execs).
            if exc.errno != errno.ETXTBSY:
                raise
            time.sleep(0.005)
    return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=cwd, env=env, start_new_session=True)


def _run(hook: Hook, argv: list[str], event: Event, deadline: float,
         started: Callable[[int], None], ended: Callable[[int], None]) -> HookResult:
    start = time.monotonic()
    cwd, env = working_dir(hook, event), hook_environment(hook, event)
    stdin = hook_input(hook, event)
    try:
        proc = _popen(argv, cwd, env)
    except OSError as exc:
        what = "is not executable" if isinstance(exc, PermissionError) else (
            "does not exist" if isinstance(exc, FileNotFoundError) else f"cannot run: {exc}")
        return HookResult(hook=hook, status="error", error=f"{hook.executable or argv[0]} {what}",
                          duration=time.monotonic() - start)
    started(proc.pid)
    announce(proc.pid, True)  # so a supervisor that gives up on the run can kill the group
    try:
        outcome = _communicate(proc, stdin, deadline)
    except BaseException:
        _kill_group(proc)  # never leave a hook running behind an unexpected error
        raise
    finally:
        ended(proc.pid)
        announce(proc.pid, False)
    duration = time.monotonic() - start
    if outcome.timed_out:
        return HookResult(hook=hook, status="timeout", duration=duration,
                          error=f"timed out after {duration:.1f}s and was killed")
    if outcome.stdout_over:
        return HookResult(hook=hook, status="error", duration=duration,
                          error=f"printed more than {OUTPUT_CAP // (1024 * 1024)} MB on stdout")
    return result_from_reply(hook, event, proc.returncode, bytes(outcome.stdout),
                             bytes(outcome.stderr), duration)
