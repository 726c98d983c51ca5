"""Cursor's ``hooks.json``: ``version`` and event -> flat handler lists (pydantic)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StrictStr

from ...config.schema import Handler, Lenient, PromptHooksBlock


class CursorHandler(Handler):
    matcher: StrictStr | None = None
    loop_limit: Annotated[int, Field(ge=0, strict=True)] | None = 5


class CursorFile(Lenient):
    version: Annotated[int, Field(strict=True)] = 1
    hooks: dict[str, list[CursorHandler]] = Field(default_factory=dict)
    prompthooks: PromptHooksBlock | None = None
