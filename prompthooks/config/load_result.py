"""What loading config sources produces: the hooks, the sources that failed to load, and each
discovered source's approval state (loading.trust decides it) with the digest it was decided
on, apart from the hashing and the store."""

# Annotations are evaluated here (no `from __future__ import annotations`): typing.NamedTuple
# compiles every string annotation of its fields when the class is made, on every run.

import shlex
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, NamedTuple

from ..core.events import Event
from ..core.hook import Hook, Source, Trigger
from ..core.result import HookResult
from .files import View


class LoadFailure(NamedTuple):
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


class Loaded:
    """What a load built so far (each source's loader adds to it)."""

    __slots__ = ("audit", "failures", "fingerprint", "hooks", "managed_only", "pack_checks",
                 "sources", "trust", "unknown_events", "uses_packs", "warnings")

    def __init__(self, hooks: list[Hook] | None = None, warnings: list[str] | None = None,
                 failures: list[LoadFailure] | None = None,
                 unknown_events: list[str] | None = None, sources: list[Source] | None = None,
                 audit: dict[str, Any] | None = None, trust: "list[TrustState] | None" = None,
                 managed_only: bool = False, fingerprint: str = "", uses_packs: bool = False,
                 pack_checks: list[dict[str, Any]] | None = None) -> None:
        self.hooks: list[Hook] = [] if hooks is None else hooks
        self.warnings: list[str] = [] if warnings is None else warnings
        self.failures: list[LoadFailure] = [] if failures is None else failures
        # Event keys no host has: their hooks are skipped at run time, an error for `validate`.
        self.unknown_events: list[str] = [] if unknown_events is None else unknown_events
        self.sources: list[Source] = [] if sources is None else sources
        # Run-wide settings (the audit log's): the highest-priority source that sets a key
        # wins.
        self.audit: dict[str, Any] = {} if audit is None else audit
        # The approval state of each project and user source, checked on every load.
        self.trust: list[TrustState] = [] if trust is None else trust
        self.managed_only = managed_only  # a managed file says "allow_managed_hooks_only"
        # What the load depended on (loading.cache); changes whenever a loaded file does.
        self.fingerprint = fingerprint
        # A file uses policy packs: what a cached load must check again (config.packs), and
        # whether any is used (a load whose packs failed is not cached: a fetch would not be
        # seen).
        self.uses_packs = uses_packs
        self.pack_checks: list[dict[str, Any]] = [] if pack_checks is None else pack_checks


# Approval state ----------------------------------------------------------------------------

State = Literal["approved", "changed", "new", "unapprovable", "empty"]


_NONE: Mapping[Any, Any] = MappingProxyType({})  # an empty default no holder can change


class Digest(NamedTuple):
    """The sha256 of everything an approval covers in a folder, and the bytes it was taken of.

    ``files`` are relative to the folder (a template outside it by its absolute path);
    ``file_sha256`` says which one changed; ``view`` serves the load; ``templates`` holds each
    template's bytes by (config folder, ``prompt_file`` as written); ``executables`` the sha256
    of each hook file by absolute path; ``contents`` the bytes of each of ``files`` (what an
    approval keeps a copy of, to show what changed since). Two are equal when every field
    is; its repr leaves out the bytes."""

    sha256: str
    files: tuple[str, ...]
    file_sha256: Mapping[str, str] = _NONE
    view: View | None = None
    templates: Mapping[tuple[str, str], bytes] = _NONE
    executables: Mapping[str, str] = _NONE
    contents: Mapping[str, bytes] = _NONE

    def __repr__(self) -> str:
        return (f"Digest(sha256={self.sha256!r}, files={self.files!r}, "
                f"file_sha256={self.file_sha256!r})")


class TrustState(NamedTuple):
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
    covered: Digest | None = None
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
