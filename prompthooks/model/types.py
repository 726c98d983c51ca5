"""The model call's request, reply and errors: light types shared by every path."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .settings import MAX_TOKENS, Endpoint

if TYPE_CHECKING:
    from .verdicts import Verdict


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """Everything that decides the model's reply."""

    endpoint: Endpoint
    messages: tuple[Mapping[str, str], ...]
    nonce: str = ""  # the fence boundary in the messages: random, so never part of a key
    temperature: float = 0.0
    max_tokens: int = MAX_TOKENS
    json_mode: bool = True
    # Not part of a cassette key (model/structured.py): the verdict's JSON schema is asked for
    # where the endpoint takes it, and the schema holds "impossible" on a stop hook's request.
    structured: bool = True
    impossible: bool = False


@dataclass(frozen=True, slots=True)
class ModelReply:
    text: str
    model: str
    attempts: int = 1
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost: float | None = None  # US dollars: litellm's price, else a LiteLLM Proxy's header
    replayed: bool = False  # read from a cassette, not asked
    verdict: Verdict | None = None  # already parsed (by the warm worker)


class ModelError(Exception):
    """The model could not be asked; the message says why, without any key."""


class ModelTimeout(ModelError):
    """No answer before the hook's deadline."""
