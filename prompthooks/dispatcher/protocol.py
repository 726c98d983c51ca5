"""What the thin client and the resident process say to each other over the Unix socket.

Standard library only, and no ``json``: the client encodes its request and reads the answer
with byte operations. (A model request from a prompt hook, :mod:`prompthooks.model.chain`, is
one JSON line to the model process's own socket.) A run request starts with :data:`MAGIC`:

- request: ``MAGIC``, an 8-byte length and the header (NUL-separated: version, working
  directory, umask, the client's start and the latest instant to answer by, as
  ``time.monotonic()`` values, ``run``'s options as named fields (host, event, budget, record,
  replay; empty when not given), the number of ``--config`` paths and the paths, then the
  environment's ``NAME=value`` entries), an 8-byte length and the event's bytes: a
  :class:`~prompthooks.runner.job.Job`, read back as one, never a command line to parse.
- then, client to server: ``E`` with the client's stderr as a file descriptor
  (``SCM_RIGHTS``), once it has heard from the run's process, so that the run's lines reach
  the host as they are said (sent with the request, it would wait in the socket's queue of a
  stopped resident process, and hold the host's pipe open: a host reads a hook's stderr to
  its end); ``T`` when the client got SIGTERM or SIGINT (answer now with what you have); the
  end of the connection when it gave up or went away.
- answer: ``U`` (unavailable: run it yourself), or ``X``, a 4-byte exit code, an 8-byte length
  and the reply for stdout. Before it, while the run goes on, ``K`` every
  :data:`ALIVE_EVERY` seconds: a client that hears nothing for :data:`SILENCE` seconds takes
  the resident process for stopped or gone. Anything else, or the end of the connection before
  a whole ``X`` frame, is no answer.
"""

from __future__ import annotations

import _socket  # not socket: its Python layer builds enums, and the thin client imports this
import os
import sys

from ..runner.job import Job

MAGIC = b"PHRUN1\n"
UNAVAILABLE = b"U"
EXIT = b"X"
TERMINATE = b"T"
ALIVE = b"K"
STDERR = b"E"
ALIVE_EVERY = 0.2  # seconds between a run's signs of life
# Seconds without a byte after which a client stops waiting for the resident process (stopped
# with SIGSTOP, say) and does the run itself: ten signs of life missed, which a machine busy
# with hundreds of runs can make a run's process wait for its turn; and a client that gives
# up too soon does the run a second time, adding to that load.
SILENCE = 2.0


def _length(n: int) -> bytes:
    return n.to_bytes(8, "big")


def _text(value: str | None) -> bytes:
    return b"" if value is None else os.fsencode(value)


def _value(raw: bytes) -> str | None:
    return os.fsdecode(raw) if raw else None


def job_head(job: Job) -> bytes:
    """The request for ``job``, all but the event's bytes, which follow it (not copied into one
    buffer: an event may be tens of MB)."""
    fields = [job.version.encode(), job.cwd, str(job.umask).encode(), repr(job.started).encode(),
              repr(job.limit).encode(), _text(job.host), _text(job.event),
              b"" if job.budget is None else repr(job.budget).encode(), _text(job.record),
              _text(job.replay), _text(job.managed_dir), str(len(job.config)).encode(),
              *(os.fsencode(path) for path in job.config),
              *(k + b"=" + v for k, v in job.env.items())]
    header = b"\0".join(fields)
    return b"".join((MAGIC, _length(len(header)), header, _length(len(job.data))))


def decode_job(header: bytes, data: bytes) -> Job:
    """The job from its header and event; ValueError if it is not one."""
    fields = header.split(b"\0")
    if len(fields) < 12:
        raise ValueError("truncated header")
    (version, cwd, umask, started, limit, host, event, budget, record, replay, managed,
     count) = fields[:12]
    paths = fields[12:12 + int(count)]
    if len(paths) != int(count):
        raise ValueError("truncated --config paths")
    env: dict[bytes, bytes] = {}
    for entry in fields[12 + len(paths):]:
        name, eq, value = entry.partition(b"=")
        if not eq or not name:
            raise ValueError("bad environment entry")
        env[name] = value
    seconds = float(budget) if budget else None
    if seconds is not None and not 0 < seconds < 1e6:
        raise ValueError("bad budget")
    return Job(data, float(started), host=_value(host), event=_value(event),
               config=[os.fsdecode(p) for p in paths], budget=seconds, record=_value(record),
               replay=_value(replay), managed_dir=_value(managed), limit=float(limit),
               version=version.decode(), cwd=cwd, umask=int(umask), env=env)


def exit_frame(stdout: bytes, code: int) -> bytes:
    return EXIT + code.to_bytes(4, "big", signed=True) + _length(len(stdout)) + stdout


def length(raw: bytes) -> int:
    return int.from_bytes(raw, "big")


def passed_fds(ancillary: list[tuple[int, int, bytes]]) -> list[int]:
    """The file descriptors a message's ancillary data carried (``SCM_RIGHTS``)."""
    fds: list[int] = []
    for level, kind, payload in ancillary:
        if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
            usable = len(payload) - len(payload) % 4
            fds += [int.from_bytes(payload[i:i + 4], sys.byteorder)
                    for i in range(0, usable, 4)]
    return fds
