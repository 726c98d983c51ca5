"""The pydantic models of the two JSON config dialects (Claude Code and Cursor style).

Host-native files are read leniently: keys we do not know are kept in ``model_extra`` and
reported as warnings by the loader, never as errors, so a copy of a real ``settings.json``
loads. Known keys are checked strictly: a timeout must be a number, a matcher a string.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr, model_validator

Seconds = Annotated[float, Field(gt=0, strict=True, allow_inf_nan=False)]
HandlerType = Literal["command", "prompt", "agent", "http"]


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)


Chars = Annotated[int, Field(gt=0, strict=True)]


class AuditBlock(BaseModel):
    """``prompthooks.audit``: where the audit log goes, whether it is kept, what it stores."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: StrictBool | None = None
    path: StrictStr | None = None
    store_events: StrictBool | None = None


class PackPolicyUse(BaseModel):
    """One policy taken from a pack, with this config's own overrides of its suggestions."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: StrictStr
    events: list[StrictStr] | None = Field(default=None, min_length=1)
    matcher: StrictStr | None = None
    timeout: Seconds | None = None
    failClosed: StrictBool | None = None
    model: StrictStr | None = None
    max_event_chars: Chars | None = None


class PackUse(BaseModel):
    """``prompthooks.packs[]``: a pack pinned by revision (``repo`` + ``rev``) or a local
    folder (``path``), and the policies taken from it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    repo: StrictStr | None = None
    rev: StrictStr | None = None
    path: StrictStr | None = None
    policies: list[PackPolicyUse] = Field(min_length=1)

    @model_validator(mode="after")
    def _pinned_or_local(self) -> PackUse:
        if (self.repo is None) == (self.path is None):
            raise ValueError("a pack needs either 'repo' (with 'rev') or 'path'")
        if self.repo is not None and not (self.rev and self.rev.strip()):
            raise ValueError("a pack's 'repo' needs a 'rev' (a tag or a commit SHA) to pin it")
        if self.path is not None and self.rev is not None:
            raise ValueError("a local 'path' pack has no 'rev'")
        return self


class PromptHooksBlock(BaseModel):
    """Our own top-level ``"prompthooks"`` block: defaults for the file's prompt hooks, and
    settings for the whole run (the audit log)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: StrictStr | None = None
    api_base: StrictStr | None = None
    api_key_env: StrictStr | None = None
    proxy: StrictStr | None = None  # a managed hook's own proxy (its env proxies are ignored)
    max_event_chars: Chars | None = None
    verdict_cache_ttl: Seconds | None = None
    audit: AuditBlock | None = None
    # Managed files only: load no project, user or --config source at all.
    allow_managed_hooks_only: StrictBool | None = None
    packs: list[PackUse] | None = None  # policy packs (config.packs)


class _Handler(_Lenient):
    type: HandlerType = "command"
    command: StrictStr | None = None
    prompt: StrictStr | None = None
    prompt_file: StrictStr | None = None  # ours: a shipped template's name or a path
    model: StrictStr | None = None
    timeout: Seconds | None = None
    failClosed: StrictBool = False
    max_event_chars: Chars | None = None  # ours: the event JSON's budget in the prompt
    cache_ttl: Seconds | None = None  # ours: reuse this hook's verdicts for this long

    @model_validator(mode="after")
    def _needs_its_field(self) -> _Handler:
        if self.type == "command" and not (self.command and self.command.strip()):
            raise ValueError("a command hook needs a non-empty 'command'")
        if self.type == "prompt":
            if not (self.prompt and self.prompt.strip()) and not self.prompt_file:
                raise ValueError("a prompt hook needs 'prompt' or 'prompt_file'")
            if self.prompt and self.prompt_file:
                raise ValueError("give either 'prompt' or 'prompt_file', not both")
        return self


class ClaudeHandler(_Handler):
    statusMessage: StrictStr | None = None


class ClaudeMatcherGroup(_Lenient):
    matcher: StrictStr | None = None
    hooks: list[ClaudeHandler]


class ClaudeFile(_Lenient):
    hooks: dict[str, list[ClaudeMatcherGroup]] = Field(default_factory=dict)
    prompthooks: PromptHooksBlock | None = None


class CursorHandler(_Handler):
    matcher: StrictStr | None = None
    loop_limit: Annotated[int, Field(ge=0, strict=True)] | None = 5


class CursorFile(_Lenient):
    version: Annotated[int, Field(strict=True)] = 1
    hooks: dict[str, list[CursorHandler]] = Field(default_factory=dict)
    prompthooks: PromptHooksBlock | None = None
