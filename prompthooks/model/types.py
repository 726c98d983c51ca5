"""The model call's request, reply and errors: light types shared by every path."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

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
    # After a refusal of the schema: JSON mode carrying it as ``{"type": "json_object",
    # "schema": ...}``, llama-cpp-python's form (a server that ignores the key sees JSON mode).
    schema_in_json_mode: bool = False
    impossible: bool = False
    # Tool calling (agent hooks): the tools offered, in the OpenAI format, and the turns
    # after ``messages`` (the model's tool calls and the tool results), as the API takes them.
    tools: tuple[Mapping[str, Any], ...] = ()
    turns: tuple[Mapping[str, Any], ...] = ()

    def payload_messages(self) -> list[dict[str, Any]]:
        """The messages as the chat API takes them: ``messages`` then ``turns``."""
        return [dict(m) for m in self.messages] + [dict(t) for t in self.turns]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call a model asked for: its id, the tool's name, its arguments (JSON text,
    as the model wrote it: it may not parse)."""

    id: str
    name: str
    arguments: str


def tool_calls_of(message: Any) -> tuple[ToolCall, ...]:
    """The tool calls of a chat completion's message (a dict from the direct path, an object
    from litellm); none when it has none or they are not in the OpenAI shape."""
    def get(value: Any, key: str) -> Any:
        return value.get(key) if isinstance(value, Mapping) else getattr(value, key, None)

    calls = get(message, "tool_calls")
    out: list[ToolCall] = []
    for call in calls if isinstance(calls, (list, tuple)) else ():
        function = get(call, "function")
        name = get(function, "name")
        arguments = get(function, "arguments")
        out.append(ToolCall(str(get(call, "id") or f"call_{len(out)}"),
                            name if isinstance(name, str) else "",
                            arguments if isinstance(arguments, str)
                            else "" if arguments is None else _dumped(arguments)))
    return tuple(out)


def _dumped(value: Any) -> str:
    import json

    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


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
    tool_calls: tuple[ToolCall, ...] = ()  # the tools the model asked to call (agent hooks)


class ModelError(Exception):
    """The model could not be asked; the message says why, without any key."""


class ModelTimeout(ModelError):
    """No answer before the hook's deadline."""
