"""What the work tells its supervisor, as JSON lines on a pipe (or to a report, in process).

Messages, in the order they are sent:

- ``{"guard": bool, "audit": {...}}``: once the config is loaded, whether a managed or
  fail-closed hook could apply to the event, and the audit settings: what the supervisor
  needs to answer on its own if the work goes no further;
- ``{"group": pgid}`` / ``{"ended": pgid}``: a command hook's process group started / ended,
  so the supervisor can kill what is left of a run it gave up on;
- ``{"failed": problem, "kind": "input"|"internal"}``: the event could not be judged;
- ``{"reply": stdout, "exit": code}``: the answer.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Callable
from typing import Any

# The niceness increment of a run once its reply is sent: nobody waits for its end (the thin
# client, or the process the host started, exits with the reply), and a host's next event
# should not wait for its audit rows.
AFTER_REPLY_NICE = 10


class Report:
    """What the supervisor has heard from the work so far."""

    __slots__ = ("audit", "failed", "groups", "guard", "reply")

    def __init__(self) -> None:
        self.guard: bool | None = None
        self.audit: dict[str, Any] | None = None
        self.groups: set[int] = set()
        self.failed: tuple[str, str] | None = None  # (problem, kind)
        self.reply: tuple[str, int] | None = None  # (stdout, exit code)

    def take(self, message: dict[str, Any]) -> None:
        if "guard" in message:
            self.guard = bool(message["guard"])
            self.audit = dict(message.get("audit") or {})
        elif "group" in message:
            self.groups.add(int(message["group"]))
        elif "ended" in message:
            self.groups.discard(int(message["ended"]))
        elif "failed" in message:
            self.failed = (str(message["failed"]), str(message.get("kind", "internal")))
        elif "reply" in message:
            self.reply = (str(message["reply"]), int(message["exit"]))


class Channel:
    """Sends messages to the supervisor: over a pipe, or into ``report`` in this process (and
    the reply, the moment it is known, to ``on_reply``: the resident process's run passes it
    to its client)."""

    def __init__(self, fd: int | None = None, report: Report | None = None,
                 nice_after_reply: int = 0,
                 on_reply: Callable[[str, int], None] | None = None) -> None:
        self._fd = fd
        self._nice = nice_after_reply
        self._on_reply = on_reply
        self.report = report if report is not None else Report()
        self._lock = threading.Lock()  # hook threads announce groups while the main thread talks

    def send(self, **message: Any) -> None:
        if self._fd is None:
            self.report.take(message)
            if self._on_reply is not None and self.report.reply is not None and "reply" in message:
                self._on_reply(*self.report.reply)
        else:
            data = memoryview((json.dumps(message, ensure_ascii=True) + "\n").encode())
            with self._lock:
                while data:
                    try:
                        data = data[os.write(self._fd, data):]
                    except BrokenPipeError:  # the supervisor has answered and gone
                        return

    def lower_priority(self) -> None:
        """Once the answer is out and whatever must start after it has started (a process
        started from here would keep this thread's priority for good): what this thread does
        next (the audit rows) gives way to the supervisor passing the answer on, and to the
        host's next event."""
        if self._nice:
            with contextlib.suppress(OSError):
                os.nice(self._nice)


def open_channel(channel: Channel) -> None:
    """Command hooks of this process announce their process groups on ``channel``."""
    # The work's only: the supervisor, which reads the channel, never runs a hook.
    from ..executors.command import listen_for_groups

    def announce(pgid: int, started: bool) -> None:
        channel.send(**({"group": pgid} if started else {"ended": pgid}))

    listen_for_groups(announce)
