"""The pydantic models every JSON config dialect shares: a handler's common keys and our own
``prompthooks`` block. Each host's file shape is in ``hosts/<name>/config.py``.

Host-native files are read leniently: keys we do not know are kept in ``model_extra`` and
reported as warnings by the loader, never as errors, so a copy of a real ``settings.json``
loads. Known keys are checked strictly: a timeout must be a number, a matcher a string.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictStr,
    model_validator,
)

from ..core.hook import ENV_NAME, MAX_TURNS, check_name

Seconds = Annotated[float, Field(gt=0, strict=True, allow_inf_nan=False)]
Megabytes = Annotated[float, Field(gt=0, strict=True, allow_inf_nan=False)]
# Claude Code's five; mcp_tool is skipped with a warning.
HandlerType = Literal["command", "prompt", "agent", "http", "mcp_tool"]


class Lenient(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)


Chars = Annotated[int, Field(gt=0, strict=True)]
Count = Annotated[int, Field(ge=0, strict=True)]
# ``transcript``: a number of entries, true (the default number) or false (none).
TranscriptEntries = StrictBool | Annotated[int, Field(ge=1, strict=True)]
Turns = Annotated[int, Field(ge=1, le=MAX_TURNS, strict=True)]
HookName = Annotated[StrictStr, AfterValidator(check_name)]


class JsonlExport(BaseModel):
    """``prompthooks.audit.export.jsonl``: every row appended to a JSON Lines file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: StrictStr = Field(min_length=1)
    max_mb: Megabytes | None = None  # the file's size before it is rotated (default 64)


def is_http_url(value: str) -> bool:
    """Whether ``value`` is an absolute http:// or https:// URL with a host and a valid port."""
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises for a port that is not a number
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname) and value.isprintable()


_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # RFC 9110's token


def _http_url(value: str) -> str:
    if not is_http_url(value):
        raise ValueError("an OTLP endpoint is an http:// or https:// URL (OTLP over HTTP)")
    return value


class OtlpExport(BaseModel):
    """``prompthooks.audit.export.otlp``: every row sent as an OpenTelemetry log record."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    endpoint: Annotated[StrictStr, AfterValidator(_http_url)]
    # The name of the variable holding the headers ("Authorization=Bearer ...,x-team=sec"),
    # never the headers: they hold a collector's key.
    headers_env: StrictStr | None = None
    timeout: Seconds | None = None


class ExportBlock(BaseModel):
    """``prompthooks.audit.export``: where every audit row is mirrored to."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    jsonl: JsonlExport | None = None
    otlp: OtlpExport | None = None


class AuditBlock(BaseModel):
    """``prompthooks.audit``: where the audit log goes, whether it is kept, what it stores,
    and where its rows are mirrored."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: StrictBool | None = None
    path: StrictStr | None = None
    store_events: StrictBool | None = None
    export: ExportBlock | None = None


# Keys a litellm user may put here expecting litellm's logging callbacks.
_CALLBACK_KEYS = frozenset({"callbacks", "success_callback", "failure_callback",
                            "litellm_settings", "litellm_callbacks"})


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
    stop_block_cap: Count | None = None  # consecutive stop blocks per session (0: no cap)
    audit: AuditBlock | None = None
    # Managed files only: load no project, user or --config source at all.
    allow_managed_hooks_only: StrictBool | None = None
    packs: list[PackUse] | None = None  # policy packs (config.packs)

    @model_validator(mode="before")
    @classmethod
    def _no_litellm_callbacks(cls, data: object) -> object:
        # Said plainly rather than "Extra inputs are not permitted": the way out exists.
        if isinstance(data, dict) and _CALLBACK_KEYS & data.keys():
            key = sorted(_CALLBACK_KEYS & data.keys())[0]
            raise ValueError(f"{key!r}: litellm callbacks are not read from config files; "
                             "mirror the audit rows with prompthooks.audit.export (see "
                             "docs/cli.md, \"Audit log\")")
        return data


class Handler(Lenient):
    type: HandlerType = "command"
    name: HookName | None = None  # ours: how the hook is named in the log, messages, explain
    command: StrictStr | None = None
    prompt: StrictStr | None = None
    prompt_file: StrictStr | None = None  # ours: a shipped template's name or a path
    model: StrictStr | None = None
    timeout: Seconds | None = None
    failClosed: StrictBool = False
    max_event_chars: Chars | None = None  # ours: the event JSON's budget in the prompt
    cache_ttl: Seconds | None = None  # ours: reuse this hook's verdicts for this long
    # ours: this handler's "allow" approves under every host, not only its own dialect's
    allow_approves: StrictBool = False
    # ours: give this handler the sending host's raw event, not one in its own dialect
    raw_event: StrictBool = False
    transcript: TranscriptEntries | None = None  # ours: the conversation in the prompt
    # http hooks (Claude Code's keys): where the event is POSTed, the request's headers, and
    # the variables a header value may name as $VAR or ${VAR}.
    url: StrictStr | None = None
    headers: dict[StrictStr, StrictStr] | None = None
    allowedEnvVars: list[Annotated[StrictStr, Field(pattern=f"^{ENV_NAME}$")]] | None = None
    max_turns: Turns | None = None  # ours: an agent hook's model turns at most

    @model_validator(mode="after")
    def _needs_its_field(self) -> Handler:
        if self.type == "http" and not (self.url and is_http_url(self.url)):
            raise ValueError("an http hook needs a 'url': an absolute http:// or https:// URL")
        for name, value in (self.headers or {}).items():
            if not _HEADER_NAME.fullmatch(name):
                raise ValueError(f"header name {name!r} is not a valid HTTP header name")
            if any(c in value for c in "\r\n\0"):
                raise ValueError(f"header {name!r}: a value is one line")
        if self.type == "command" and not (self.command and self.command.strip()):
            raise ValueError("a command hook needs a non-empty 'command'")
        if self.type in ("prompt", "agent"):
            if not (self.prompt and self.prompt.strip()) and not self.prompt_file:
                raise ValueError(f"a{'n' if self.type == 'agent' else ''} {self.type} hook "
                                 "needs 'prompt' or 'prompt_file'")
            if self.prompt and self.prompt_file:
                raise ValueError("give either 'prompt' or 'prompt_file', not both")
        if self.max_turns is not None and self.type != "agent":
            raise ValueError("'max_turns' is an agent hook's key")
        return self
