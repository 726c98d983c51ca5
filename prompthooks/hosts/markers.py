"""What tells each host's events apart, and how long each host gives a run.

Standard library only, and nothing else at all: the thin client (``dispatcher/client.py``)
reads these before it has parsed the event, on the hottest path there is, and the registry
(``hosts.detect``, ``hosts.budget``) reads the same table, so the two cannot drift apart.
"""

from __future__ import annotations

NAMES = ("claude", "cursor", "cline")  # the registry's order (help, tables, file dialects)
TITLES = {"claude": "Claude Code", "cursor": "Cursor", "cline": "Cline"}
# The keys that mark an event of each host: any one group, every key of it present. Most
# specific first: the order events are told apart in.
MARKERS: dict[str, tuple[tuple[str, ...], ...]] = {
    "cline": (("hookName",), ("clineVersion",)),
    "cursor": (("cursor_version",), ("conversation_id",)),
    "claude": (("session_id", "hook_event_name"),),
}
# The key each host names its event in.
EVENT_KEYS = {"claude": "hook_event_name", "cursor": "hook_event_name", "cline": "hookName"}
# The run's whole budget (seconds) when each host calls: Claude Code gives a command hook
# 600 s; Cursor documents no default and the glue sets 60 s; Cline gives a hook 30 s.
BUDGETS = {"claude": 590.0, "cursor": 55.0, "cline": 28.0}
# The events (a host's own names) it gives less time than its budget allows: Claude Code
# lowers a command hook's default to 30 s on UserPromptSubmit, and a glue entry without a
# timeout of its own is killed then (a killed hook is no block), so the run answers before.
EVENT_BUDGETS: dict[str, dict[str, float]] = {
    "claude": {"UserPromptSubmit": 28.0}, "cursor": {}, "cline": {}}
# The hook files a folder dialect loads from a config folder, named after its events (the keys
# of its wire module's CONFIG_EVENTS, in their order): the approval check lists a folder with
# them without loading that module.
HOOK_FILES: dict[str, tuple[str, ...]] = {
    "cline": ("PreToolUse", "PostToolUse", "UserPromptSubmit", "TaskStart", "TaskResume",
              "TaskCancel", "TaskComplete", "PreCompact", "Notification", "TaskError",
              "SessionShutdown"),
}
