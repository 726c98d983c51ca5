"""Claude Code's ``settings.json`` hooks: event -> matcher groups -> handlers (pydantic)."""

from __future__ import annotations

from pydantic import Field, StrictStr

from ...config.schema import Handler, Lenient, PromptHooksBlock


class ClaudeHandler(Handler):
    statusMessage: StrictStr | None = None


class ClaudeMatcherGroup(Lenient):
    matcher: StrictStr | None = None
    hooks: list[ClaudeHandler]


class ClaudeFile(Lenient):
    hooks: dict[str, list[ClaudeMatcherGroup]] = Field(default_factory=dict)
    prompthooks: PromptHooksBlock | None = None
