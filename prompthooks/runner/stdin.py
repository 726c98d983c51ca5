"""Reading the event from stdin under a deadline.

A host writes one JSON object and closes the pipe; one that keeps it open must not keep the
run from answering. Reading stops at end of file, at a complete JSON object (the pipe may
stay open behind it), at the size cap, or at the deadline.

Standard library only, and ``json`` only when the pipe is still open after what could be a
whole object: the thin client (``prompthooks.dispatcher.client``) reads the event with it.
"""

from __future__ import annotations

import os
import select
import sys
import time

MAX_EVENT_BYTES = 64 * 1024 * 1024
NOT_IN_TIME = "no complete event on stdin in time (stdin was not closed)"
_CHUNK = 1 << 16
_BOM = b"\xef\xbb\xbf"


def _complete(data: bytes) -> bool:
    """Whether ``data`` is a whole JSON object already."""
    import json  # only for an event still coming: the thin client imports this module

    try:
        return isinstance(json.loads(data.removeprefix(_BOM)), dict)
    except (ValueError, RecursionError):
        return False


def read_event(deadline: float, fd: int = 0, cap: int = MAX_EVENT_BYTES,
               prefix: bytes = b"") -> tuple[bytes, str | None]:
    """The bytes of the event, and the reason it cannot be had (None when it can); ``prefix``:
    what was read of it already."""
    chunks: list[bytes] = [prefix] if prefix else []
    size = len(prefix)
    while True:
        left = deadline - time.monotonic()
        try:
            # Past the deadline, what is already in the pipe is still read (a process that
            # started slowly finds the whole event waiting).
            ready, _, _ = select.select([fd], [], [], max(left, 0.0))
            if not ready:
                if left <= 0:
                    return b"".join(chunks), NOT_IN_TIME
                continue
            chunk = os.read(fd, _CHUNK)
        except OSError as exc:
            return b"".join(chunks), f"cannot read stdin: {exc.strerror or exc}"
        if not chunk:
            return b"".join(chunks), None
        chunks.append(chunk)
        size += len(chunk)
        if size > cap:
            return b"", f"the event on stdin is larger than {cap // (1024 * 1024)} MB"
        # Only worth a parse when this read could have finished an object and the pipe has
        # nothing more right now (a host that wrote the event and closed it: end of file next).
        if chunk.rstrip().endswith(b"}") and not _more_now(fd) and _complete(b"".join(chunks)):
            return b"".join(chunks), None


def _more_now(fd: int) -> bool:
    """Whether a read of ``fd`` would return at once (more data, or end of file)."""
    try:
        return bool(select.select([fd], [], [], 0)[0])
    except OSError:
        return False


def stdin_hint(command: str) -> None:
    """One line for a person who ran the command at a terminal, which would otherwise wait in
    silence for input (a host always pipes the event in)."""
    try:
        interactive = os.isatty(0)
    except OSError:
        return
    if interactive:
        print(f"prompthooks {command}: reading the event as JSON from stdin (end it with "
              f"Ctrl-D), e.g. prompthooks {command} < event.json", file=sys.stderr, flush=True)
