"""The consecutive-block cap on stop events, so a wrong policy never traps an agent in a loop.

As Claude Code does for its own hooks (``CLAUDE_CODE_STOP_HOOK_BLOCK_CAP``, default 8, 0 for
no cap), on every host: the blocks of a session's Stop (or of one subagent's SubagentStop) are
counted in the user's state folder; once the count reaches the cap, the next stop is let
through and the count starts again. A stop let through for any reason resets it.

The count is a file the user, and so an agent, can write: reaching the cap skips only
project and user hooks. Managed hooks still run (their loops are bounded by the hosts' own
caps: Claude Code's, and Cursor's ``loop_limit``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from .. import digests, paths
from .events import STOP_EVENTS, Event
from .hook import Hook

DEFAULT_CAP = 8
CLAUDE_VARIABLE = "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP"
_FOLDER = "stop-blocks"


def cap_for(hooks: Iterable[Hook], event: Event, environ: Mapping[str, str]) -> int:
    """The cap: the highest-priority config's ``prompthooks.stop_block_cap``, else Claude
    Code's variable under Claude Code, else 8."""
    for hook in sorted(hooks, key=lambda h: (h.source.priority, h.index)):
        settings = hook.prompt_settings
        if settings is not None and settings.stop_block_cap is not None:
            return settings.stop_block_cap
    if event.host == "claude":
        value = environ.get(CLAUDE_VARIABLE, "").strip()
        if value.isdigit():
            return int(value)
    return DEFAULT_CAP


def session_key(event: Event) -> str | None:
    """Whose stops are counted together: the session, and the subagent on SubagentStop."""
    if not event.session_id:
        return None
    agent = ""
    if event.name == "SubagentStop":
        for field in ("agent_id", "subagent_id", "agent_transcript_path"):
            value = event.raw.get(field)
            if isinstance(value, str) and value:
                agent = value
                break
    return "\0".join((event.host, event.session_id, event.name, agent))


class StopCap:
    """One session's count of consecutive stop blocks, and its cap."""

    __slots__ = ("blocks", "cap", "path")

    def __init__(self, path: Path, cap: int, blocks: int = 0) -> None:
        self.path = path
        self.cap = cap
        self.blocks = blocks

    @property
    def reached(self) -> bool:
        return self.cap > 0 and self.blocks >= self.cap

    def message(self) -> str:
        return (f"prompthooks: the stop hooks blocked {self.blocks} times in a row; this stop "
                f"is let through (stop_block_cap {self.cap})")

    def record(self, blocked: bool) -> None:
        """Count a block, or reset the count when the stop was let through. A count that
        cannot be written is simply not kept."""
        try:
            if not blocked:
                self.path.unlink(missing_ok=True)
                return
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            paths.atomic_write(self.path, json.dumps({"blocks": self.blocks + 1}).encode())
        except OSError:
            pass


def for_event(event: Event, hooks: Iterable[Hook],
              environ: Mapping[str, str]) -> StopCap | None:
    """The cap of the session a stop event belongs to (None: not a stop event, or no
    session to count by)."""
    key = session_key(event) if event.name in STOP_EVENTS else None
    if key is None:
        return None
    name = digests.sha256(key.encode("utf-8", "backslashreplace")).hexdigest()[:40]
    path = paths.state_home(environ) / _FOLDER / f"{name}.json"
    return StopCap(path, cap_for(hooks, event, environ), _count(path))


def _count(path: Path) -> int:
    """The stored count; none for a missing or damaged file, or for anything but a regular
    file prompthooks wrote (a FIFO or link planted there must not stall or steer the run)."""
    try:
        data = json.loads(paths.read_state(path, 4096) or b"null")
    except (OSError, ValueError):  # BadStateFile is an OSError
        return 0
    blocks = data.get("blocks") if isinstance(data, dict) else None
    return max(blocks, 0) if isinstance(blocks, int) and not isinstance(blocks, bool) else 0
