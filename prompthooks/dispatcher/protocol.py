"""What the thin client and the resident process say to each other over the Unix socket.

Standard library only, and no ``json``: the client encodes its request and reads the answer
with byte operations. A model request from a prompt hook (:mod:`prompthooks.model.worker`) is
one JSON line and starts with ``{``; a run request starts with :data:`MAGIC`:

- request: ``MAGIC``, an 8-byte length and the header (NUL-separated: version, working
  directory, umask, the client's start and the latest instant to answer by, as
  ``time.monotonic()`` values, the number of arguments, the arguments, then the environment's
  ``NAME=value`` entries), an 8-byte length and the event's bytes.
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

import sys

TYPE_CHECKING = False  # not typing's: the thin client imports this module
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

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


class Request:
    """A run handed to the resident process."""

    __slots__ = ("argv", "cwd", "data", "env", "limit", "started", "umask", "version")

    def __init__(self, version: str, cwd: bytes, umask: int, started: float, limit: float,
                 argv: Sequence[bytes], env: Mapping[bytes, bytes], data: bytes) -> None:
        self.version = version
        self.cwd = cwd
        self.umask = umask
        self.started = started
        self.limit = limit
        self.argv = list(argv)
        self.env = dict(env)
        self.data = data

    def head(self) -> bytes:
        """Everything but the event's bytes, which follow it (not copied into one buffer: an
        event may be tens of MB)."""
        fields = [self.version.encode(), self.cwd, str(self.umask).encode(),
                  repr(self.started).encode(), repr(self.limit).encode(),
                  str(len(self.argv)).encode(), *self.argv,
                  *(k + b"=" + v for k, v in self.env.items())]
        header = b"\0".join(fields)
        return b"".join((MAGIC, _length(len(header)), header, _length(len(self.data))))

    def encode(self) -> bytes:
        return self.head() + self.data

    @classmethod
    def parse(cls, data: bytes) -> Request | None:
        """The request :meth:`encode` made, from its bytes (None: nothing, or not one)."""
        if not data.startswith(MAGIC):
            return None
        at = len(MAGIC)
        try:
            size = length(data[at:at + 8])
            header = data[at + 8:at + 8 + size]
            at += 8 + size
            event_size = length(data[at:at + 8])
            event = data[at + 8:]
            if len(header) != size or len(event) != event_size:
                return None
            return cls.decode(header, event)
        except ValueError:
            return None

    @classmethod
    def decode(cls, header: bytes, data: bytes) -> Request:
        """The request from its header and event; ValueError if it is not one."""
        fields = header.split(b"\0")
        version, cwd, umask, started, limit, argc = fields[:6]
        count = int(argc)
        argv = fields[6:6 + count]
        if len(argv) != count:
            raise ValueError("truncated arguments")
        env: dict[bytes, bytes] = {}
        for entry in fields[6 + count:]:
            name, eq, value = entry.partition(b"=")
            if not eq or not name:
                raise ValueError("bad environment entry")
            env[name] = value
        return cls(version.decode(), cwd, int(umask), float(started), float(limit), argv, env,
                   data)


def exit_frame(stdout: bytes, code: int) -> bytes:
    return EXIT + code.to_bytes(4, "big", signed=True) + _length(len(stdout)) + stdout


def length(raw: bytes) -> int:
    return int.from_bytes(raw, "big")


def passed_fds(ancillary: list[tuple[int, int, bytes]]) -> list[int]:
    """The file descriptors a message's ancillary data carried (``SCM_RIGHTS``)."""
    import _socket

    fds: list[int] = []
    for level, kind, payload in ancillary:
        if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
            usable = len(payload) - len(payload) % 4
            fds += [int.from_bytes(payload[i:i + 4], sys.byteorder)
                    for i in range(0, usable, 4)]
    return fds
