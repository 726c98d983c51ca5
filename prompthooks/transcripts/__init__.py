"""The conversation behind an event, read from the host's transcript (one reader per format,
in each host's home: ``hosts/<name>/transcript.py``), for prompt hooks that judge the work
and not only the event: Stop and SubagentStop by default, any prompt hook whose handler sets
``transcript``.

Nothing here raises for a transcript's faults: a missing, unreadable, huge, cut or malformed
file gives what could be read, with notes saying what was not.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .conversation import DEFAULT_ENTRIES, Conversation, Entry, render
from .reading import TranscriptReader, Unreadable, read_file

__all__ = ["DEFAULT_ENTRIES", "Conversation", "Entry", "TranscriptReader", "given", "read",
           "render"]

# A transcript named by a test case (prompthooks test): read in place of the one the event
# names, so a suite never reads the machine's own files. ``(None,)``: the case has none.
# Process-wide, not a ContextVar: the hooks of a run each run in a thread of their own.
_given: tuple[Path | None] | None = None


@contextmanager
def given(path: Path | None) -> Iterator[None]:
    """Every event's transcript is ``path`` for a while (a case file names it, so it is read
    wherever it lies), or, with None, there is none."""
    global _given
    before, _given = _given, (path,)
    try:
        yield
    finally:
        _given = before


def read(reader: TranscriptReader | None, raw: Mapping[str, Any], event_name: str,
         environ: Mapping[str, str] | None = None) -> Conversation:
    """The conversation of the session an event belongs to, read by its host's ``reader``
    (``Host.transcript``); never raises for the file."""
    env = os.environ if environ is None else environ
    if reader is None:
        return Conversation(unread="this host keeps no transcript prompthooks can read")
    candidates, roots = reader.locate(raw, event_name, env)
    checked: list[Path] | None = roots
    if _given is not None:
        if _given[0] is None:
            return Conversation(unread="the test case gives no transcript")
        candidates, checked = [str(_given[0])], None
    if not candidates:
        return Conversation(unread="the event names no transcript")
    for i, candidate in enumerate(candidates):
        path = Path(os.path.expanduser(candidate))
        try:
            with read_file(path, checked, reader.LIMIT, whole=reader.WHOLE) as data:
                conversation: Conversation = reader.parse(data, path)
        except Unreadable as exc:
            if "does not exist" in str(exc) and i < len(candidates) - 1:
                continue  # Cline: the next place its history may be
            return Conversation(source=str(path), unread=str(exc))
        except Exception as exc:  # a shape no reader expected: what was read is not used
            return Conversation(source=str(path),
                                unread=f"the transcript could not be parsed ({type(exc).__name__})")
        conversation.source = str(path)
        conversation.notes[:0] = data.notes
        return conversation
    return Conversation(unread="no transcript was found")
