"""The ``prompthooks`` console script: for ``run``, the thinnest client that can answer.

It reads ``run``'s options and the event into a :class:`~prompthooks.runner.job.Job`, then
hands it with the caller's environment, working directory, umask and stderr to the resident
process (``prompthooks serve``) over the user's private Unix socket, and writes back the reply
and exit code it gets. Whenever the resident process cannot be used, the same job goes to the
runner in this process (:func:`prompthooks.runner.supervisor.run_in_process`); every other command,
and a ``run`` command line this module does not take, goes to :func:`prompthooks.cli.main`.
It imports the standard library only (no ``json``, ``socket``'s Python layer, ``signal`` or
``dataclasses`` either): its cost is an interpreter start.

When a managed policy exists (``/etc/prompthooks``, or ``--managed-dir``), the run never goes
to the user's resident process (the user, and so the agent, owns it and its socket and could
answer in its place). It goes only to the system resident process (``prompthooks serve
--system``, at :data:`SYSTEM_SOCKET`): a socket in a folder owned by the uid that owns the
managed folders and writable by no one else, whose peer (``SO_PEERCRED``, from the kernel) has
that uid. Anything else there (a socket the agent bound elsewhere, named by
``PROMPTHOOKS_SYSTEM_SOCKET``) fails that check, and the run is done here.

``run`` stays in this process when:

- a managed policy exists and no system resident process passes those checks;
- ``PROMPTHOOKS_RESIDENT=0`` (or its older spellings), a command line this module does not
  take, an unreadable event;
- nothing listens (the first event: a failed connect on a missing socket costs microseconds),
  the socket's folder is not private or the peer is another user, the resident process is of
  another version or model environment (it answers ``U``).

Once handed over, the client waits no later than a reserve before the run's budget (the
resident process is told to answer before it), and no longer than :data:`~.protocol.SILENCE`
without a byte (the run sends signs of life while it goes on: a resident process stopped with
SIGSTOP sends none); each read is bounded by those instants, which no trickle of bytes moves.
If no whole answer has come by then (the process died, was stopped, hung, or something else is
on the socket and answers garbage), the run is done here in the time that is left, by the same
code and failure policy: a fail-closed gate blocks. SIGTERM or SIGINT is passed on, and the
resident process gets :data:`TERM_GRACE` to answer with what it has; then the run is done here
as one told to stop (the hooks still running count as timed out).
"""

from __future__ import annotations

import os
import sys
import time

from .._version import __version__
from ..address import (
    MAX_SOCKET_PATH,
    SYSTEM_SOCKET,
    owned_closed_dir,
    private_dir,
    resident_enabled,
    socket_name,
)

# Standard library only, like this module: the table the registry reads too.
from ..hosts.markers import BUDGETS as BUDGETS
from ..hosts.markers import EVENT_BUDGETS, MARKERS
from ..runner.job import Job, process_start
from ..runner.stdin import NOT_IN_TIME, read_event

TYPE_CHECKING = False  # not typing's: importing typing would cost more than this whole module
if TYPE_CHECKING:
    import _socket
    from collections.abc import Sequence

# The smallest budget, used when the host cannot be told without parsing the event.
SMALLEST = min(BUDGETS.values())
# The events some host gives less time (a quoted name found anywhere only ever shortens it).
_EVENT_BUDGETS = {name: seconds for each in EVENT_BUDGETS.values()
                  for name, seconds in each.items()}
# Each host's marker keys as they appear in the event's bytes, most specific host first.
_MARKS = tuple((name, tuple(tuple(b'"' + key.encode() + b'"' for key in group)
                            for group in groups)) for name, groups in MARKERS.items())
MANAGED_DIR = "/etc/prompthooks"  # prompthooks.config.discovery.MANAGED_DIR
# PROMPTHOOKS_SYSTEM_SOCKET may name another system socket than SYSTEM_SOCKET, which is safe
# only because the folder and peer checks decide whom to trust.
# Seconds kept from the budget for answering here if the resident process does not (a fifth
# of the budget for short ones): time to import the run's modules and load the config.
RESERVE = 2.0
_MAX_REPLY = 1 << 26
_FIRST_READ = 1.0  # seconds the client waits for the event before loading the full run
# Seconds the resident process has to answer once told to stop (its run's engine stops the
# hooks still running and answers with what it has), after which the client answers on its own.
TERM_GRACE = 1.5
_KNOWN = frozenset({"--host", "--config", "--budget", "--managed-dir", "--record", "--replay"})


def main() -> int:
    argv = sys.argv[1:]
    if argv[:1] == ["run"]:
        return _run(argv)
    return _full()


def _full() -> int:
    """The whole command line, read by the full parser, in this process."""
    from ..cli import main as cli_main  # the full parser: never for a run it hands over

    return cli_main(None)


def _run_in_process(job: Job) -> int:
    """The run in this process, under its own supervisor; exits with its code (no interpreter
    teardown: it takes a second once litellm is loaded, and a hook thread still being stopped
    would hold the process)."""
    # The run's own modules: only for a run done in this process.
    from ..errors import reported
    from ..runner.supervisor import run_in_process

    code = reported(lambda: run_in_process(job), os.environ.get("PROMPTHOOKS_DEBUG") == "1")
    import contextlib  # loaded by the run already

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a reader that went away, a closed one
            stream.flush()
    os._exit(code)


def _job(args: Sequence[str]) -> Job | None:
    """The job for ``run``'s options (``args``), its event not read yet, or None for a command
    line this client leaves to the full parser (help, abbreviations, repeated or clashing
    options, values the parser refuses: it says why)."""
    job = Job(b"", 0.0)
    seen: set[str] = set()
    it = iter(args)
    for word in it:
        if not word.startswith("-") or word == "-":
            if job.event is not None:
                return None
            job.event = word
            continue
        name, eq, value = word.partition("=")
        if name not in _KNOWN:
            return None
        if not eq:
            value = next(it, "")
            if not value or value.startswith("-"):
                return None
        if name == "--config":
            job.config += (value,)
            continue
        if name in seen:
            return None
        seen.add(name)
        if name == "--host":
            if value not in BUDGETS:
                return None
            job.host = value
        elif name == "--budget":
            try:
                job.budget = float(value)
            except ValueError:
                return None
            if not 0 < job.budget < 1e6:
                return None
        elif name == "--managed-dir":
            job.managed_dir = value
        elif name == "--record":
            job.record = value
        else:
            job.replay = value
    return None if job.record is not None and job.replay is not None else job


def _budget(job: Job) -> float | None:
    """The run's budget as the command line gives it (None: up to the event)."""
    return job.budget if job.budget is not None else BUDGETS.get(job.host or "")


def _sniff(data: bytes) -> float:
    """The budget of the host the event could come from, the shortest when in doubt: a key
    found anywhere in the bytes counts, so a nested one only ever shortens it."""
    for name, groups in _MARKS:
        if any(all(key in data for key in group) for group in groups):
            return BUDGETS[name]
    return SMALLEST


def _event_budget(data: bytes, total: float) -> float:
    """``total``, shortened when an event name a host gives less time appears in the bytes
    (anywhere: a quoted one elsewhere only ever shortens it)."""
    for name, seconds in _EVENT_BUDGETS.items():
        if b'"' + name.encode() + b'"' in data:
            total = min(total, seconds)
    return total


_NO = -2  # _hand_over_to: run here
_USER = -1  # _hand_over_to: the user's resident process


def _hand_over_to(job: Job) -> int:
    """Whom the run may go to: :data:`_NO`, :data:`_USER`, or under a managed policy the uid
    that owns every managed folder (the system resident process must be that uid's)."""
    if not resident_enabled(os.environ):
        return _NO
    owners = set()
    for folder, named in ((MANAGED_DIR, False), (job.managed_dir, True)):
        if folder is not None:
            try:
                owners.add(os.stat(folder).st_uid)
            except FileNotFoundError:
                if named:  # not there (yet): whose it will be is not known
                    return _NO
                continue
            except OSError:  # there but unreadable: a policy this client cannot place
                return _NO
    if not owners:
        return _USER
    return owners.pop() if len(owners) == 1 else _NO


def _streams_open() -> bool:
    try:
        for fd in (0, 1, 2):
            os.fstat(fd)
    except OSError:
        return False
    return True


def _run(argv: list[str]) -> int:
    job = _job(argv[1:])
    if job is None or not _streams_open():
        return _full()
    started = job.started = process_start()
    budget = _budget(job)
    # A host closes stdin after the event; one that keeps it open is waited for by the run's
    # supervisor, half the budget at most.
    read_by = started + (budget or SMALLEST) / 2
    job.data, job.unreadable = read_event(min(read_by, time.monotonic() + _FIRST_READ))
    if job.unreadable == NOT_IN_TIME and time.monotonic() < read_by:
        job.unreadable, job.partial = None, True
        return _run_in_process(job)
    to = _hand_over_to(job) if job.unreadable is None else _NO
    if to != _NO:
        total = budget if budget is not None else _sniff(job.data)
        if job.budget is None:
            total = _event_budget(job.data, total)
        reserve = min(RESERVE, total / 5)
        job.limit = started + total - reserve
        hand = _HandOver()
        answer = _ask_resident(job, job.limit + min(0.25, reserve / 4), hand, to)
        if answer is not None:
            stdout, code = answer
            _write(stdout)
            os._exit(code)  # nothing else to do: no interpreter teardown
        # No answer: the run is done here (if it was handed over, in the time left).
        job.guarded_if_unknown = hand.asked
        hand.stopped_by = job  # a SIGTERM from now on, before the run's own handler
        job.terminated = hand.term_by is not None
        job.limit = None  # the host's budget, as for any run here
    return _run_in_process(job)


def _write(data: bytes) -> None:
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(1, view):]
    except OSError:
        pass  # a reader that went away: the exit code still says it


class _NoAnswer(Exception):
    pass


class _HandOver:
    """What became of a hand-over: whether the run was handed over (then no answer is a
    failure), and when the client was told to stop (SIGTERM or SIGINT), if it was."""

    __slots__ = ("asked", "sent", "stopped_by", "term_by")

    def __init__(self) -> None:
        self.asked = False
        self.sent: _socket.socket | None = None  # the connection, once the whole job is sent
        self.term_by: float | None = None  # the instant to stop waiting, once told to stop
        self.stopped_by: Job | None = None  # the run done here, told of a later signal


def _ask_resident(job: Job, give_up: float, hand: _HandOver, to: int = _USER
         ) -> tuple[bytes, int] | None:
    """The reply and exit code from the resident process (``to``: the user's, or the system
    one of that uid), or None to run here (``hand`` says whether the run was handed over, and
    whether the client was told to stop)."""
    # Only to hand the run over (a run done here needs neither): socket's C layer, whose
    # Python layer builds enums, and the protocol.
    import _socket

    from .protocol import ALIVE, EXIT, STDERR, TERMINATE, UNAVAILABLE, job_head

    # Before connecting: from the moment the run could be handed over, a signal is noted (and
    # passed on), never the end of this process with no answer.
    _forward_signals(TERMINATE, hand)
    conn = _connect(give_up) if to == _USER else _connect_system(give_up, to)
    if conn is None:
        return None
    try:
        job.umask = os.umask(0o022)
        os.umask(job.umask)
        job.version, job.cwd, job.env = __version__, os.getcwdb(), dict(os.environb)
        head = job_head(job)
        answer = _Answer(conn, give_up, hand)
        answer.send(head)
        hand.asked = True
        answer.send(job.data)
        hand.sent = conn  # a signal from now on is passed on at once
        if hand.term_by is not None:  # told to stop while the job was on its way
            conn.send(TERMINATE)
        kind = answer.read(1)
        if kind == ALIVE:  # the run's process is there: it gets this process's stderr
            stderr = (2).to_bytes(4, sys.byteorder)
            conn.sendmsg([STDERR], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, stderr)])
        while kind == ALIVE:
            kind = answer.read(1)
        if kind == UNAVAILABLE:  # of another version, or told to leave it to us
            hand.asked = False
            return None
        if kind != EXIT:
            return None  # not our protocol at all
        head = answer.read(12)
        code = int.from_bytes(head[:4], "big", signed=True)
        size = int.from_bytes(head[4:], "big")
        if not 0 <= code <= 255 or size > _MAX_REPLY:
            return None
        return answer.read(size), code
    except (OSError, ValueError, _NoAnswer):
        return None
    finally:
        conn.close()


def _connect(give_up: float) -> _socket.socket | None:
    """A connection to the resident process that may judge this run: the user's own socket, in
    a private folder, with a peer of this user (None: none, so the run is done here). The one
    place that chooses the socket and checks who is behind it."""
    import _socket  # as in _ask_resident

    path = socket_name(os.environ)
    if len(os.fsencode(path)) >= MAX_SOCKET_PATH or not private_dir(os.path.dirname(path)):
        return None
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        conn.settimeout(max(0.001, give_up - time.monotonic()))
        conn.connect(path)  # no socket, nobody listening, or its queue is full: run it here
        creds = conn.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)
        if int.from_bytes(creds[4:8], sys.byteorder) == os.getuid():
            return conn
    except OSError:
        pass
    conn.close()
    return None


def _connect_system(give_up: float, owner: int) -> _socket.socket | None:
    """A connection to the system resident process of ``owner`` (the managed folders'
    owner), or None. Its socket's folder must be ``owner``'s and writable by no one else (so
    nobody else can have put the socket there), and the peer must be ``owner`` as the kernel
    reports it: a socket named elsewhere (``PROMPTHOOKS_SYSTEM_SOCKET``) or served by anyone
    else is never trusted, whoever bound it."""
    import _socket  # as in _ask_resident

    path = os.environ.get("PROMPTHOOKS_SYSTEM_SOCKET") or SYSTEM_SOCKET
    if (len(os.fsencode(path)) >= MAX_SOCKET_PATH
            or not owned_closed_dir(os.path.dirname(path), owner)):
        return None
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        conn.settimeout(max(0.001, give_up - time.monotonic()))
        conn.connect(path)
        creds = conn.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)
        if int.from_bytes(creds[4:8], sys.byteorder) == owner:
            return conn
    except OSError:
        pass
    conn.close()
    return None


class _Answer:
    """The exchange with the resident process: the request sent and the answer read under
    one deadline (``give_up``, or the grace after a SIGTERM) and :data:`~.protocol.SILENCE`
    since the last byte went or came: each send or read waits until the earliest of those
    instants, so a peer that trickles bytes cannot stretch the wait past the deadline, nor one
    that was stopped (whose socket's queue fills with a large event) hold it past the
    silence."""

    __slots__ = ("_buffer", "_conn", "_give_up", "_hand", "_heard")

    def __init__(self, conn: _socket.socket, give_up: float, hand: _HandOver) -> None:
        self._conn = conn
        self._give_up = give_up
        self._hand = hand
        self._heard = time.monotonic()
        self._buffer = bytearray()

    def _wait(self) -> None:
        """The socket's timeout for the next send or read: until the earliest instant."""
        from .protocol import SILENCE  # only to hand the run over, as in _ask_resident

        by = min(self._give_up, self._heard + SILENCE)
        if self._hand.term_by is not None:
            by = min(by, self._hand.term_by)
        left = by - time.monotonic()
        if left <= 0:
            raise _NoAnswer
        self._conn.settimeout(left)

    def send(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            self._wait()
            view = view[self._conn.send(view[:1 << 20]):]
            self._heard = time.monotonic()

    def read(self, size: int) -> bytes:
        while len(self._buffer) < size:
            self._wait()
            chunk = self._conn.recv(min(size - len(self._buffer), 1 << 20) if size > 1
                                    else 1 << 16)
            if not chunk:
                raise _NoAnswer
            self._heard = time.monotonic()
            self._buffer += chunk
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return data


def _forward_signals(message: bytes, hand: _HandOver) -> None:
    """SIGTERM and SIGINT (the host gave up, or the user cancelled) are passed on: the
    resident process answers at once with what it has, within :data:`TERM_GRACE`. A signal
    after the client gave up on it is noted for the run done here, until that run's own
    handler takes over (it then stops the run at once)."""
    import _signal  # type: ignore[import-not-found]  # signal's Python layer builds enums

    def forward(signum: int, frame: object) -> None:
        if hand.term_by is None:
            hand.term_by = time.monotonic() + TERM_GRACE
        if hand.stopped_by is not None:
            hand.stopped_by.terminated = True
        if hand.sent is None:  # not in the middle of the job's bytes: sent once they are
            return
        try:
            hand.sent.send(message)
        except OSError:  # the resident process has gone: the client answers on its own
            return

    for sig in (_signal.SIGTERM, _signal.SIGINT):
        _signal.signal(sig, forward)
