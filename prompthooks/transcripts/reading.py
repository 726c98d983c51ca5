"""Reading a transcript file safely: only inside the host's own folders, never through a
symlink or a hard link, never a FIFO or a device, and never more than a bounded tail.

The path comes from the event. An agent cannot change what its host sends, but it can run
``prompthooks run`` itself with an event of its own making, and it can write files where its
host keeps transcripts (a symlink or hard link in place of its own transcript, pointing at
``~/.ssh/id_ed25519``). Either way the file read must be one the agent could read as a
transcript anyway: a regular file, with one link, that resolves inside the host's transcript
folders (docs/prompt-hooks.md, "The conversation in the prompt").

What a long session's tail lacks (the latest request, the last compaction's summary) is
looked for further back through the same descriptor, a bounded step at a time, newest first,
with a bound on the bytes searched in all: the file is never held whole.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..paths import read_upto

if TYPE_CHECKING:
    from .conversation import Conversation

# How much of a line-oriented transcript is read: its last MiB (a long session's log runs to
# tens of MiB; the prompt holds a few thousand characters of it).
TAIL_BYTES = 1024 * 1024
# A transcript stored as one JSON document cannot be read from its tail: it is read whole up
# to this size, and left out above it.
WHOLE_BYTES = 8 * 1024 * 1024
# Searching further back: bytes read per step, the most searched in all (a bound on the work a
# stop hook does however long the session), and the longest line kept whole (a longer one, a
# pasted image or a huge tool output, is skipped: it is never the line looked for).
STEP_BYTES = 1024 * 1024
SEARCH_BYTES = 64 * 1024 * 1024
LINE_BYTES = 4 * 1024 * 1024


class Unreadable(Exception):
    """Why a transcript was not read, in words fit for the prompt (no path: the note must be
    the same on every machine, or a recorded prompt would not replay)."""


@dataclass
class Read:
    """What was read of a transcript file."""

    data: bytes
    size: int  # the file's size
    head_cut: bool = False  # only the tail was read; its first (partial) line is dropped
    notes: list[str] = field(default_factory=list)
    offset: int = 0  # where in the file ``data`` starts
    fd: int | None = None  # the file, open while it is parsed (None: nothing before offset)
    searched: int = 0  # bytes before offset read by :func:`earlier_lines`
    searched_all: bool = False  # it reached the file's start


def inside(path: Path, roots: Sequence[Path]) -> bool:
    """Whether ``path`` (resolved) lies in one of ``roots`` (resolved)."""
    for root in roots:
        try:
            path.relative_to(os.path.realpath(root))
        except ValueError:
            continue
        return True
    return False


def _open(path: Path) -> int:
    flags = (os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
             | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        return os.open(path, flags)
    except FileNotFoundError:
        raise Unreadable("the transcript file does not exist (yet)") from None
    except PermissionError:
        raise Unreadable("the transcript file cannot be read (permission denied)") from None
    except OSError as exc:
        if os.path.islink(path):  # O_NOFOLLOW's ELOOP
            raise Unreadable("the transcript path is a symlink; it is not followed") from None
        raise Unreadable(f"the transcript file cannot be read ({exc.strerror})") from None


@contextmanager
def read_file(path: Path, roots: Sequence[Path] | None, limit: int, *,
              whole: bool = False) -> Iterator[Read]:
    """The last ``limit`` bytes of ``path`` (``whole``: all of it, or Unreadable above
    ``limit``), with the file kept open for :func:`earlier_lines` until the block ends.
    ``roots`` None: the file was named by the user (a test case), not the event.

    Raises :class:`Unreadable` saying why nothing was read."""
    if not path.is_absolute():
        raise Unreadable("the transcript path is not absolute")
    if roots is not None:
        # The folder is resolved (a symlinked ~/.claude is fine); the file itself is opened
        # without following a symlink, so what is read is what lies in the folder.
        real = Path(os.path.realpath(path.parent)) / path.name
        if not inside(real, roots):
            raise Unreadable("the transcript path is outside the host's transcript folders")
    fd = _open(path)
    read: Read | None = None
    try:
        read = _tail(fd, path, roots, limit, whole)
        yield read
    finally:
        if read is not None:
            read.fd = None  # the number may be another file's once closed
        os.close(fd)


def _tail(fd: int, path: Path, roots: Sequence[Path] | None, limit: int, whole: bool) -> Read:
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Unreadable("the transcript path is not a regular file")
        if roots is not None and st.st_nlink != 1:
            # A hard link to a file elsewhere would pass every path check.
            raise Unreadable("the transcript file has other hard links; it is not read")
        if roots is not None:
            # The folder checked above must still be the folder opened (no swap in between).
            real = Path(os.path.realpath(path.parent)) / path.name
            again = os.stat(real, follow_symlinks=False)
            if not inside(real, roots) or (again.st_dev, again.st_ino) != (st.st_dev,
                                                                            st.st_ino):
                raise Unreadable("the transcript file moved while it was read")
        size = st.st_size
        if whole and size > limit:
            raise Unreadable(f"the transcript is too large to read ({size:,} bytes; at most "
                             f"{limit:,} of a file stored as one JSON document)")
        start = max(size - limit, 0)
        data = _read_at(fd, start, min(size, limit))
    except OSError as exc:
        raise Unreadable(f"the transcript file cannot be read ({exc.strerror})") from None
    read = Read(data, size, offset=start)
    if start:
        read.head_cut = True
        read.fd = fd
        newline = data.find(b"\n")
        read.data = data[newline + 1:] if newline >= 0 else b""
        read.offset = start + newline + 1 if newline >= 0 else start + len(data)
        read.notes.append(f"only the last {limit // 1024:,} KiB of a {size // 1024:,} KiB "
                          "transcript were read in full")
    return read


def _read_at(fd: int, start: int, length: int) -> bytes:
    """``length`` bytes from ``start``, or fewer where the file ends (never past the length
    asked: a file still being written stops there)."""
    os.lseek(fd, start, os.SEEK_SET)
    return read_upto(fd, length)


def earlier_lines(read: Read, budget: int | None = None) -> Iterator[bytes]:
    """The lines before what was read in full, newest first, read a step at a time, at most
    ``budget`` bytes in all (``read.searched``; ``read.searched_all`` once the file's start is
    reached). A line longer than LINE_BYTES is skipped. Nothing for a file read whole; once
    per read."""
    if read.fd is None:
        return
    budget = SEARCH_BYTES if budget is None else budget
    end = read.offset
    carry = b""  # the end of a line whose start lies further back
    skipping = False  # inside a line too long to keep
    while end > 0 and read.searched < budget:
        size = min(STEP_BYTES, end, budget - read.searched)
        try:
            chunk = _read_at(read.fd, end - size, size)
        except OSError:
            return
        if len(chunk) != size:  # the file was cut short meanwhile: what was read stands
            return
        end -= size
        read.searched += size
        parts = (chunk + carry).split(b"\n")
        carry = parts.pop(0)
        if skipping and parts:
            parts.pop()  # the start of the long line
            skipping = False
        elif skipping:
            carry = b""
        for line in reversed(parts):
            if line.strip() and len(line) <= LINE_BYTES:
                yield line
        if len(carry) > LINE_BYTES:
            carry, skipping = b"", True
    if end == 0:
        read.searched_all = True
        if carry.strip() and not skipping and len(carry) <= LINE_BYTES:
            yield carry


def earlier_values(read: Read, wanted: Callable[[bytes], bool]) -> Iterator[object]:
    """The JSON values of :func:`earlier_lines` that ``wanted`` picks from their bytes (a
    cheap test first: most lines are tool output no search needs to parse)."""
    for line in earlier_lines(read):
        if wanted(line):
            try:
                yield json.loads(line)
            except (ValueError, RecursionError):
                continue


def json_lines(read: Read) -> tuple[list[object], list[str]]:
    """The JSON values of a JSON Lines transcript, and notes on the lines that were not."""
    values: list[object] = []
    bad = 0
    lines = read.data.split(b"\n")
    last_cut = bool(lines and lines[-1].strip())  # no newline at the end: still being written
    notes: list[str] = []
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            values.append(json.loads(line))
        except (ValueError, RecursionError):
            if i == len(lines) - 1 and last_cut:
                notes.append("the transcript's last line is cut off (still being written?) "
                             "and was left out")
            else:
                bad += 1
    if bad:
        notes.append(f"{bad} line{'s' if bad != 1 else ''} of the transcript "
                     f"{'are' if bad != 1 else 'is'} not JSON and {'were' if bad != 1 else 'was'}"
                     " left out")
    return values, notes


class TranscriptReader(Protocol):
    """One transcript format, in its host's home (``hosts/<name>/transcript.py``)."""

    LIMIT: int  # the most bytes read of a file
    WHOLE: bool  # the format is one JSON document: read whole (up to LIMIT) or not at all

    def locate(self, raw: Mapping[str, Any], event_name: str,
               environ: Mapping[str, str]) -> tuple[list[str], list[Path]]:
        """(the candidate paths the event names, in order; the folders they must lie in)."""
        ...

    def parse(self, read: Read, path: Path) -> Conversation: ...

