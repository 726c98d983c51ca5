"""What one hook said: the single result type every executor returns."""

# Annotations are evaluated here (no `from __future__ import annotations`): typing.NamedTuple
# compiles every string annotation of its fields when the class is made, on every run.

from collections.abc import Mapping
from typing import Any, Literal, NamedTuple

from .events import NO_MAPPING
from .hook import Hook

Permission = Literal["allow", "ask", "deny"]
# Severity: deny > ask > allow > no opinion.
RANK: dict[Permission | None, int] = {None: 0, "allow": 1, "ask": 2, "deny": 3}
Status = Literal["ok", "error", "timeout"]


class HookResult(NamedTuple):
    """One hook's answer in host-agnostic terms.

    ``permission`` "deny" also means "block" for events that are not tool calls (a prompt, a
    stop, a compaction). ``status`` is "ok" when the hook ran and its reply was read; for
    "error" and "timeout" the merge applies the hook's failure policy.
    """

    hook: Hook
    status: Status = "ok"
    permission: Permission | None = None
    reason: str | None = None  # for the agent (deny/ask/block reason)
    user_message: str | None = None  # for the person
    system_message: str | None = None
    contexts: tuple[str, ...] = ()
    updated_input: Mapping[str, Any] | None = None
    halt: bool = False  # stop the whole agent (Claude Code "continue": false)
    stop_reason: str | None = None
    env: Mapping[str, str] = NO_MAPPING
    suppress_output: bool = False
    updated_tool_output: Any = None  # Cursor updated_mcp_tool_output
    error: str | None = None
    # A prompt hook that could not judge for a reason of set-up (no key, an unknown model,
    # nothing listening): the short reason and the fix, shown to the person (see notices.py).
    unjudged: str | None = None
    duration: float = 0.0
    model: str | None = None  # prompt hooks: the model asked, and what it cost
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost: float | None = None  # US dollars, when the model's price is known
    replayed: bool = False  # the model's (or an http hook's) reply came from a cassette
    http_status: int | None = None  # http hooks: the status the URL answered
    cached: bool = False  # the verdict came from the verdict cache
    # Agent hooks: each tool call made (tool, arguments and result size, redacted).
    tool_calls: tuple[Mapping[str, Any], ...] = ()

    @property
    def failed(self) -> bool:
        return self.status != "ok"
