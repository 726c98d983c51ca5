"""What loading config sources produces: the hooks, the sources that failed to load, and each
discovered source's approval state (loading.trust decides it) with the digest it was decided
on, apart from the hashing and the store."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..core.events import Event
from ..core.hook import Hook, Source, Trigger
from ..core.result import HookResult
from .files import View


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


# Approval state ----------------------------------------------------------------------------

State = Literal["approved", "changed", "new", "unapprovable", "empty"]


@dataclass(frozen=True, slots=True)
class Digest:
    """The sha256 of everything an approval covers in a folder, and the bytes it was taken of.

    ``files`` are relative to the folder (a template outside it by its absolute path);
    ``file_sha256`` says which one changed; ``view`` serves the load; ``templates`` holds each
    template's bytes by (config folder, ``prompt_file`` as written); ``executables`` the sha256
    of each hook file by absolute path; ``contents`` the bytes of each of ``files`` (what an
    approval keeps a copy of, to show what changed since)."""

    sha256: str
    files: tuple[str, ...]
    file_sha256: Mapping[str, str] = field(default_factory=dict, compare=False)
    view: View | None = field(default=None, compare=False, repr=False)
    templates: Mapping[tuple[str, str], bytes] = field(default_factory=dict, compare=False,
                                                       repr=False)
    executables: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)
    contents: Mapping[str, bytes] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class TrustState:
    """Whether one discovered source may run, and why not."""

    source: Source
    key: str  # the folder's resolved path: the store's key
    state: State
    sha256: str | None = None
    files: tuple[str, ...] = ()
    approved_at: str | None = None
    reason: str | None = None  # why it cannot be approved, or why the store was not read
    # "<repo> <rev>" -> commit of the pinned packs its hooks.json uses that are fetched.
    packs: tuple[tuple[str, str], ...] = ()
    # An approved source: what was checked (the load uses these bytes), and "<repo> <rev>" ->
    # the digest of each pinned pack's files as approved (the load checks the pack's bytes).
    covered: Digest | None = field(default=None, compare=False, repr=False)
    pack_digests: tuple[tuple[str, str], ...] = ()

    @property
    def trusted(self) -> bool:
        """Its hooks may run (approved, or nothing in it that prompthooks would load)."""
        return self.state in ("approved", "empty")

    @property
    def command(self) -> str:
        return approve_command(self.source)

    def describe(self) -> str:
        """The state in a few words, for tables."""
        if self.state == "approved":
            return f"approved {self.approved_at}"
        if self.state == "changed":
            return "not trusted: changed since approved" + (
                f" ({self.reason})" if self.reason else "")
        if self.state == "new":
            return "not trusted: never approved"
        if self.state == "empty":
            return "nothing to approve (no hooks)"
        return f"cannot be approved: {self.reason}"

    def advice(self) -> str:
        """What to do about an untrusted source ("" for a trusted one)."""
        if self.trusted:
            return ""
        if self.state == "unapprovable":
            return "fix it, then run: " + self.command
        return "review it, then run: " + self.command

    def message(self) -> str:
        """The one line ``run`` says for a source it did not load."""
        where = f"{self.source.name} config {self.source.path}"
        if self.state == "unapprovable":
            return f"{where} is not trusted: it cannot be approved ({self.reason})"
        note = f"; {self.reason}" if self.reason else ""
        return (f"{where} is not trusted (new or changed since approved{note}); review it and "
                f"run: {self.command}")


def approve_command(source: Source) -> str:
    if source.name == "user":
        return "prompthooks trust --user"
    return f"prompthooks trust --project {shlex.quote(str(Path(source.path).parent))}"
