"""Claude Code's ``settings.json`` hooks: event -> matcher groups -> handlers (pydantic)."""

from __future__ import annotations

from pydantic import Field, StrictBool, StrictStr

from ...config.schema import Handler, Lenient, PromptHooksBlock


class ClaudeHandler(Handler):
    statusMessage: StrictStr | None = None  # a spinner text: nothing to show it in
    once: StrictBool | None = None  # honoured by Claude Code in skill front matter only
    # false: a prompt hook's block also ends the turn (config.py); unset or true: it goes
    # back to the agent.
    continueOnBlock: StrictBool | None = None
    # Accepted and not honoured, each with its own warning (config.py says what happens).
    run_async: StrictBool | None = Field(None, alias="async")
    asyncRewake: StrictBool | None = None
    run_if: StrictStr | None = Field(None, alias="if")
    args: list[StrictStr] | None = None
    shell: StrictStr | None = None


class ClaudeMatcherGroup(Lenient):
    matcher: StrictStr | None = None
    hooks: list[ClaudeHandler]


class ClaudeFile(Lenient):
    hooks: dict[str, list[ClaudeMatcherGroup]] = Field(default_factory=dict)
    prompthooks: PromptHooksBlock | None = None
