"""The supervisor: the process the host started, which answers by the deadline whatever
happens to the work.

It reads the event (under the deadline), forks, and lets the child load the run's modules and
do the work (see ``judge``); the supervisor itself loads only what supervising needs, and the
failure policy's modules only when the work gave no answer. The child has until a short reserve
before the run's deadline; the supervisor relays the reply the moment it comes. If none comes
(the child raised, hung on something, or was killed or stopped: a hook can signal its parent),
the supervisor kills what is left of the child and its hooks and answers with the failure
policy (``fallback``). SIGTERM or SIGINT from the host makes the child answer at once with what
it has, and write its audit rows. Once the reply is relayed, the supervisor exits with its
code: a copy of it (the watcher) waits for the child's audit rows, until the deadline at most,
and then kills what is left.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import selectors
import signal
import sys
import threading
import time
from collections.abc import Callable
from types import FrameType
from typing import TYPE_CHECKING

from .. import hosts
from ..config.discovery import managed_dirs
from ..errors import EXIT_ERROR, EXIT_INTERNAL
from .channel import AFTER_REPLY_NICE, Channel, Report, open_channel
from .fallback import answer_unjudged, guess_event
from .stdin import read_event, stdin_hint

if TYPE_CHECKING:
    from .job import Job

# Seconds between the child's deadline and the run's: what the supervisor needs to answer on
# its own (kill the child and its hooks, load the failure policy's modules and, at worst, the
# managed policy). A quarter of the time left, for short budgets.
FALLBACK_RESERVE = 1.0
# Seconds the child is given to answer after SIGTERM before the supervisor answers for it.
TERM_GRACE = 1.0
SWITCH_INTERVAL = 0.0005  # seconds: the work process's thread switch interval
# The deadline for reading an event whose host is not known: the smallest host's.
_SMALLEST_BUDGET = min(host.budget for host in hosts.HOSTS.values())
_HELD = {signal.SIGTERM, signal.SIGINT}  # the host's signals: the work answers with what it has


def fallback_reserve(deadline: float, now: float) -> float:
    return min(FALLBACK_RESERVE, max(0.0, deadline - now) / 4)


def _child_groups(pid: int) -> set[int]:
    """The process groups of ``pid``'s children (Linux /proc; none elsewhere)."""
    groups = set()
    with contextlib.suppress(OSError):
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat", "rb") as stat:
                    fields = stat.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:  # ppid; fields[2] is the process group
                groups.add(int(fields[2]))
    return groups


def _kill(pid: int, groups: set[int]) -> None:
    """SIGKILL the child (stopped or not) and the process groups of the hooks it started:
    those it announced, and those it had no time to (it was stopped or killed just after
    spawning one): its children, looked up while it is frozen."""
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGSTOP)
    for pgid in groups | (_child_groups(pid) - {os.getpgid(0)}):
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)


def _write(text: str) -> None:
    if not text:
        return
    try:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except (OSError, ValueError):
        pass  # a reader that went away: the exit code still says it


def reply_bytes(text: str) -> bytes:
    """What :func:`_write` writes."""
    return (text + "\n").encode("utf-8", "surrogateescape") if text else b""


def _child(job: Job, budget: float, write_fd: int, mask: set[int | signal.Signals],
           stopped: bool = False) -> None:
    """The work, in the forked child: ``job`` judged in ``budget`` seconds from its start.
    Never returns (whatever fails here, the supervisor answers). ``mask``: the signal mask to
    restore once the handlers are set; ``stopped``: told to stop before it began."""
    cancel = threading.Event()
    if stopped:
        cancel.set()

    def stop(signum: int, frame: FrameType | None) -> None:
        cancel.set()

    try:
        for signum in _HELD:
            signal.signal(signum, stop)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        # The host reads the reply from the supervisor only: anything written to our stdout
        # goes to stderr, and nothing here reads the host's stdin.
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(2, 1)
        channel = Channel(write_fd, nice_after_reply=AFTER_REPLY_NICE)
        try:
            # The run's modules are loaded here, in the child's own memory: a child forked
            # from a process holding them would copy each page it touched. They make tens of
            # thousands of objects and no garbage: the collector, which would walk them again
            # and again meanwhile (about 2 ms), is off until they are loaded, then leaves them
            # out of its walks (frozen).
            gc.disable()
            from .judge import case_of, judge  # (as above)

            gc.freeze()
            gc.enable()
            case = case_of(job)._replace(budget=budget, start_resident=True)
        except Exception as exc:
            channel.send(failed=f"internal error: {exc!r}", kind="internal")
            return
        # Hook threads and the model loop's thread hand the interpreter to each other: a
        # thread with the answer waits at most this long for one that is busy (the default
        # is 5 ms).
        sys.setswitchinterval(SWITCH_INTERVAL)
        open_channel(channel)
        judge(case, channel, cancel)
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        os._exit(0)


class _Waiter:
    """Reads the child's messages until it replies and exits, or until it must give up."""

    def __init__(self, read_fd: int, pid: int) -> None:
        self.pid = pid
        self.report = Report()
        self.give_up_at = 0.0
        self.closed = False  # the child closed its end: it exited (or was killed)
        self._buffer = b""
        self._fd = read_fd
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_w, False)
        self._selector = selectors.DefaultSelector()
        self._selector.register(read_fd, selectors.EVENT_READ)
        self._selector.register(self._wake_r, selectors.EVENT_READ)

    def on_signal(self, signum: int, frame: FrameType | None) -> None:
        """The host wants an answer now: the child gets to answer with what it has."""
        with contextlib.suppress(OSError):
            os.kill(self.pid, signal.SIGTERM)
        self.give_up_at = min(self.give_up_at, time.monotonic() + TERM_GRACE)
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"x")

    def wait(self, until: Callable[[Report], bool]) -> None:
        """Read messages until ``until(report)`` holds, the child has gone, or time is up."""
        while not until(self.report) and not self.closed:
            left = self.give_up_at - time.monotonic()
            if left <= 0:
                return
            for key, _ in self._selector.select(left):
                if key.fd == self._wake_r:
                    with contextlib.suppress(OSError):
                        os.read(self._wake_r, 64)
                    continue
                chunk = os.read(self._fd, 1 << 16)
                if not chunk:
                    self.closed = True
                    self._selector.unregister(self._fd)
                    break
                self._buffer += chunk
                *lines, self._buffer = self._buffer.split(b"\n")
                for line in lines:
                    with contextlib.suppress(ValueError, TypeError):
                        self.report.take(json.loads(line))


def _leave_to_watcher(waiter: _Waiter, deadline: float) -> None:
    """After the reply: return at once (the host's process exits with its code), leaving a
    copy of this process, the watcher, to see the work to its end as this process would have:
    the host waits for this process's exit, and the work's audit rows come after the reply.
    Where no copy can be made, this process waits itself."""
    try:
        watcher = os.fork()
    except OSError:
        _watch(waiter, deadline)
        return
    if watcher:
        return
    try:
        # The watcher holds none of the host's streams: a host reading them to their end
        # waits for the work only, which holds stderr until its audit rows are written.
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
    except OSError:
        for fd in (0, 1, 2):
            with contextlib.suppress(OSError):
                os.close(fd)
    try:
        _watch(waiter, deadline)
    finally:
        os._exit(0)


def _watch(waiter: _Waiter, deadline: float) -> None:
    """Wait for the work's audit rows until the run's deadline, not past it; kill what is
    left of the work and its hooks then."""
    waiter.give_up_at = deadline
    waiter.wait(lambda _: False)
    if not waiter.closed:
        _kill(waiter.pid, waiter.report.groups)


def _reaped(pid: int, wait: float = 0.5) -> int | None:
    """The wait status of the child that closed its end of the pipe (it is exiting), waited
    for ``wait`` seconds at most."""
    end = time.monotonic() + wait
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done or time.monotonic() >= end:
            return status if done else None
        time.sleep(0.01)


def _why_no_answer(waiter: _Waiter) -> tuple[str, str, int]:
    """(problem, audit kind, exit code) for a child that did not reply."""
    if waiter.report.failed is not None:
        problem, kind = waiter.report.failed
        return problem, kind, EXIT_ERROR if kind == "input" else EXIT_INTERNAL
    if waiter.closed:
        with contextlib.suppress(ChildProcessError, OSError):
            status = _reaped(waiter.pid)
            if status is not None and os.WIFSIGNALED(status):
                name = signal.Signals(os.WTERMSIG(status)).name
                return (f"internal error: the run was killed by {name} before it answered",
                        "internal", EXIT_INTERNAL)
        return "internal error: the run ended before it answered", "internal", EXIT_INTERNAL
    return ("internal error: the run did not answer before its deadline", "internal",
            EXIT_INTERNAL)


def run_in_process(job: Job) -> int:
    """``prompthooks run`` in the process the host started: ``job`` judged under this
    process's supervision (the resident process is started after the reply, if none runs);
    the exit code."""
    if job.partial:
        stdin_hint("run")
    return supervise(job)


def supervise(job: Job) -> int:
    """Read the rest of the event if it is still coming, have a child judge it, and answer by
    the deadline; the exit code. ``job``: the run as the client read it (the event, maybe in
    part)."""
    named = hosts.HOSTS.get(job.host) if job.host else None
    first = job.started + (job.budget if job.budget is not None else
                           named.budget if named else _SMALLEST_BUDGET)
    if not job.partial:
        data, unreadable = job.data, job.unreadable
    else:
        # Half the budget for the event to arrive: the other half is the work's, which still
        # loads the config (for the guard) when no complete event came.
        data, unreadable = read_event(job.started + (first - job.started) / 2,
                                      prefix=job.data)
    host, host_event = hosts.sender(data, job.host, job.event)
    total = job.budget if job.budget is not None else (
        hosts.budget(host, host_event) if host else _SMALLEST_BUDGET)
    deadline = job.started + total
    child_deadline = deadline - fallback_reserve(deadline, time.monotonic())
    job.data, job.unreadable = data, unreadable
    if host is not None:
        # Loaded before the fork, as the failure policy's modules are: the answer for a work
        # that failed never waits on an import (nor fails on one: a package replaced meanwhile).
        host.wire  # noqa: B018
    stopped = job.terminated
    read_fd, write_fd = os.pipe()
    # SIGTERM and SIGINT are held from the fork until each process has its own handlers.
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
    try:
        pid = os.fork()
    except OSError:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        raise
    if pid == 0:
        os.close(read_fd)
        _child(job, child_deadline - job.started, write_fd, mask, stopped)
    os.close(write_fd)
    waiter = _Waiter(read_fd, pid)
    waiter.give_up_at = child_deadline + (deadline - child_deadline) / 4
    for signum in _HELD:
        signal.signal(signum, waiter.on_signal)
    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    if stopped:  # the host's SIGTERM came while the thin client waited for the resident one
        waiter.give_up_at = min(waiter.give_up_at, time.monotonic() + TERM_GRACE)
    elif job.terminated:  # it came while the child was forked
        waiter.on_signal(signal.SIGTERM, None)
    waiter.wait(lambda report: report.reply is not None or report.failed is not None)
    report = waiter.report
    if report.reply is not None:
        stdout, code = report.reply
        _write(stdout)
        if not waiter.closed:
            _leave_to_watcher(waiter, deadline)
        return code
    problem, kind, code = _why_no_answer(waiter)
    if unreadable is not None:  # whatever became of the work, that is what went wrong
        problem, kind, code = unreadable, "input", EXIT_ERROR
    _kill(pid, report.groups)
    return answer_unjudged(problem, kind, guess_event(data, job.host, job.event), report,
                           managed_dirs(job.managed_dir), code, deadline - 0.1,
                           job.guarded_if_unknown)
