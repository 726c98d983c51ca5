"""What loading config sources produces: the hooks, and the sources that failed to load."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..core.events import Event
from ..core.hook import Hook, Source, Trigger
from ..core.result import HookResult

if TYPE_CHECKING:
    from .trust_state import TrustState


@dataclass(frozen=True, slots=True)
class LoadFailure:
    """A source that could not be loaded; ``events`` limits a fail-closed failure's reach."""

    source: Source
    message: str
    fail_closed: bool
    events: frozenset[str] | None = None  # canonical events; None = every event
    details: tuple[str, ...] = ()  # every problem, when the file has several
    # "config": it is broken; "untrusted": not approved (loading.trust); "managed_only": the
    # managed policy allows managed hooks only. The last two never block.
    kind: str = "config"

    def stand_in(self, event: Event, dialect: str) -> HookResult:
        """This source as one failed hook for ``event`` (fail-closed where it reaches), in
        ``dialect`` (the canonical one's name: the registry's, handed in by the caller)."""
        fail_closed = self.fail_closed and (self.events is None or event.name in self.events)
        # config_event "*" marks a broken source's stand-in, "*untrusted" an unapproved one
        # (see audit.rows and merge.failure_line).
        marker = "*" if self.kind == "config" else f"*{self.kind}"
        hook = Hook(source=self.source, dialect=dialect, config_event=marker, index=-1,
                    trigger=Trigger(event.name), kind="command", timeout=0.0,
                    label=self.source.path, command=f"<{self.kind} {self.source.name}>",
                    fail_closed=fail_closed)
        return HookResult(hook=hook, status="error", error=self.message)


@dataclass
class Loaded:
    hooks: list[Hook] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    failures: list[LoadFailure] = field(default_factory=list)
    # Event keys no host has: their hooks are skipped at run time, an error for `validate`.
    unknown_events: list[str] = field(default_factory=list)
    sources: list[Source] = field(default_factory=list)
    # Run-wide settings (the audit log's): the highest-priority source that sets a key wins.
    audit: dict[str, Any] = field(default_factory=dict)
    # The approval state of each project and user source, checked on every load.
    trust: list[TrustState] = field(default_factory=list)
    managed_only: bool = False  # a managed file says "allow_managed_hooks_only"
    # What the load depended on (loading.cache); changes whenever a loaded file does.
    fingerprint: str = ""
    # A file uses policy packs: what a cached load must check again (config.packs), and
    # whether any is used (a load whose packs failed is not cached: a fetch would not be seen).
    uses_packs: bool = False
    pack_checks: list[dict[str, Any]] = field(default_factory=list)
