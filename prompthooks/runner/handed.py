"""A run handed to the ``run`` command by the thin client or the resident process, rather than
read from the process's own stdin and clock.

Standard library only: the thin client builds one before it imports the rest of prompthooks.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: the thin client imports this module
if TYPE_CHECKING:
    from collections.abc import Callable


class Handed:
    """The event already read, and what the run's clock and answer are tied to.

    ``started``: the ``time.monotonic()`` instant the budget counts from (None: this process's
    start); ``limit``: the latest instant to answer by, whatever the host's budget (None: the
    host's budget decides); ``on_reply``: called with the bytes for stdout and the exit code as
    soon as the reply is known (None: written to stdout); ``guarded_if_unknown``: the run comes
    back from a resident process that did not answer (dead, hung, or not ours), in the time
    left: if the config cannot be loaded in that time either, the event counts as one a
    fail-closed hook could apply to (blocked), rather than one none could. In the resident
    process, the supervisor's work process is forked before the run arrives
    (:mod:`prompthooks.dispatcher.work`): ``work`` is, for the supervisor, that process's pid
    and the pipe to read its reports from; ``channel_fd`` is, for the work process, the pipe to
    report on. ``terminated``: the host sent SIGTERM or SIGINT before this process's run
    began (while the thin client waited for the resident process): the run stops at once, as
    it would for one that came while it went on."""

    __slots__ = ("channel_fd", "data", "guarded_if_unknown", "limit", "on_reply", "partial",
                 "started", "terminated", "unreadable", "work")

    def __init__(self, data: bytes, unreadable: str | None, started: float | None = None,
                 limit: float | None = None,
                 on_reply: Callable[[bytes, int], None] | None = None,
                 guarded_if_unknown: bool = False, partial: bool = False,
                 work: tuple[int, int] | None = None, channel_fd: int | None = None) -> None:
        self.work = work
        self.channel_fd = channel_fd
        self.partial = partial  # stdin is still open: the rest is read as usual
        self.guarded_if_unknown = guarded_if_unknown
        self.data = data
        self.unreadable = unreadable
        self.started = started
        self.limit = limit
        self.on_reply = on_reply
        self.terminated = False
