"""One discovered source's approval state (loading.trust decides it) and the digest it was
decided on, apart from the hashing and the store, so that what a load reports
(config.load_result) does not import them."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..core.hook import Source
from .files import View

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
