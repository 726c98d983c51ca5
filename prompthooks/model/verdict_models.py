"""The pydantic models of the model's two reply schemas (see :mod:`.verdicts`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool


class OkReply(BaseModel):
    model_config = ConfigDict(extra="ignore")

    ok: StrictBool
    reason: str | None = None
    impossible: StrictBool = False


class DecisionReply(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    decision: Literal["approve", "block", "allow", "deny", "ask"]
    reason: str | None = None
    systemMessage: str | None = None
    continue_: StrictBool | None = Field(default=None, alias="continue")
    stopReason: str | None = None
