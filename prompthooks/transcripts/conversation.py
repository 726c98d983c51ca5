"""The conversation every transcript reader produces, and how it enters a prompt.

One shape for every host: the user's requests, the assistant's messages, its tool calls and
their results, oldest first. It enters the prompt inside the event's fence, one JSON object per
entry and line (a tool's output cannot pose as a user's line: its newlines are escaped), after
the redaction pass, cut to a budget: each entry to a share of it, then the newest entries
kept, with a marker saying what was left out. The latest user request is always kept: it is
what the work is judged against; so are the entries a reader pins (Cline's task, Claude Code's
summary of what its last compaction dropped).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

# ``host``: text the host put in the user's turn that the user did not write (a background
# task's notification, a command's output, a notice); ``summary``: the host's own summary of
# the conversation its last compaction dropped (model-written, not the user's words).
Role = Literal["user", "assistant", "tool_call", "tool_result", "hook_feedback", "host",
               "summary"]
# How many entries a prompt hook gets when its handler does not say (``transcript: N``).
DEFAULT_ENTRIES = 40
# The most characters one entry keeps (its head and its tail, where a tool's verdict is):
# a long tool output must not push the rest of the conversation out.
ENTRY_CHARS = {"user": 4000, "assistant": 4000, "tool_call": 1500, "tool_result": 2000,
               "hook_feedback": 1000, "host": 1500, "summary": 8000}
LATEST_REQUEST = "the latest user request"
_CUT = " ...[prompthooks: {} characters cut]... "
HEADING = ("The recent conversation, read from the host's transcript (oldest first, one JSON "
           "object per entry):")


@dataclass(frozen=True, slots=True)
class Entry:
    """One step of the conversation."""

    role: Role
    text: str
    tool: str | None = None  # tool_call, tool_result: the tool's name as the host gives it
    error: bool = False  # tool_result: the tool reported a failure
    # Kept whatever the budget, under this label, when older than the entries that fit (the
    # latest user request is kept so without a label from the reader).
    pin: str | None = None

    def as_json(self, text: str) -> str:
        data: dict[str, object] = {"role": self.role}
        if self.tool:
            data["tool"] = self.tool
        if self.error:
            data["error"] = True
        data["text"] = text
        return json.dumps(data, ensure_ascii=False).encode("utf-8", "backslashreplace").decode()


@dataclass
class Conversation:
    """What a reader made of a transcript: the entries, where from, and what went wrong."""

    entries: list[Entry] = field(default_factory=list)
    source: str | None = None  # the file read (for debug output only: never in a prompt)
    notes: list[str] = field(default_factory=list)  # for the prompt and debug output
    unread: str | None = None  # why there is no conversation at all
    # Indices of entries before which part of the transcript was not read (the reader found
    # them further back, past what it read in full): a marker is shown there.
    gaps: set[int] = field(default_factory=set)


def _squeeze(text: str, cap: int) -> str:
    """``text`` in at most about ``cap`` characters: a third from its head, the rest from its
    tail, with a marker between."""
    if len(text) <= cap:
        return text
    head = cap // 3
    tail = cap - head
    return text[:head] + _CUT.format(len(text) - cap) + text[-tail:]


def _pins(entries: list[Entry]) -> dict[int, str]:
    """The entries kept whatever the budget, by index, with their labels."""
    pins = {i: entry.pin for i, entry in enumerate(entries) if entry.pin}
    last_user = next((i for i in range(len(entries) - 1, -1, -1)
                      if entries[i].role == "user"), None)
    if last_user is not None:
        pins.setdefault(last_user, LATEST_REQUEST)
    return pins


def _left_out(count: int, unread: bool) -> str:
    if unread:
        return "[prompthooks: entries left out here]"
    return f"[prompthooks: {count} entr{'ies' if count != 1 else 'y'} left out here]"


def render(conversation: Conversation, budget: int, max_entries: int,
           redact: Callable[[str], str]) -> str:
    """The conversation as prompt text of at most about ``budget`` characters; ``redact`` is
    the redaction pass, applied to each entry's whole text before it is cut (a cut could
    leave half a key no pattern knows)."""
    if conversation.unread is not None:
        return (f"{HEADING}\n[prompthooks: the conversation could not be read: "
                f"{conversation.unread}; judge the event alone]")
    entries = conversation.entries
    texts = [redact(entry.text) for entry in entries]
    lines = [entry.as_json(_squeeze(text, ENTRY_CHARS[entry.role]))
             for entry, text in zip(entries, texts, strict=True)]
    notes = list(conversation.notes)
    room = budget - len(HEADING) - sum(len(n) + 20 for n in notes) - 120
    kept: list[int] = []
    used = 0
    for i in range(len(lines) - 1, max(len(lines) - max_entries, 0) - 1, -1):
        if used + len(lines[i]) + 1 > room:
            break
        kept.append(i)
        used += len(lines[i]) + 1
    kept.reverse()
    pins = _pins(entries)
    pinned: dict[int, str] = {}
    while True:
        # What the work is judged against must be seen, even when newer steps fill the
        # budget: each pin older than the kept entries gets a share of the room (with its
        # label and a marker), and the oldest kept entries give way until it fits.
        outside = [i for i in pins if not kept or i < kept[0]]
        share = max(room // (2 * (len(outside) + 1)), 200)
        pinned = {i: entries[i].as_json(_squeeze(texts[i],
                                                  min(share, ENTRY_CHARS[entries[i].role])))
                  for i in outside}
        if not kept or used + sum(len(line) + 60 for line in pinned.values()) <= room:
            break
        used -= len(lines[kept[0]]) + 1
        kept.pop(0)
    shown = sorted(pinned) + kept
    left_out = len(lines) - len(shown)
    out = [HEADING]
    if left_out > 0:
        notes.insert(0, f"{left_out} earlier entr{'ies' if left_out != 1 else 'y'} left out")
    if not entries:
        notes.append("the transcript holds no conversation yet")
    if notes:
        out.append(f"[prompthooks: {'; '.join(notes)}]")
    previous = -1
    for i in shown:
        unread = any(previous < gap <= i for gap in conversation.gaps)
        if previous >= 0 and (i - previous > 1 or unread):
            out.append(_left_out(i - previous - 1, unread))
        if i in pinned:
            out.append(f"[prompthooks: kept from earlier: {pins[i]}]")
            out.append(pinned[i])
        else:
            out.append(lines[i])
        previous = i
    return "\n".join(out)
