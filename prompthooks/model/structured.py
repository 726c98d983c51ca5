"""Structured verdicts: the verdict asked for with its JSON schema, where the endpoint takes one.

A verdict request carries OpenAI's ``response_format: {"type": "json_schema", "json_schema":
{..., "strict": true}}``: ``ok`` (boolean), ``reason`` (a string of at most
:func:`reason_chars` characters) and, on stop events, ``impossible`` (boolean), all required, no
other key. A server that constrains its output to the schema (OpenAI's structured outputs,
llama.cpp, vLLM, Ollama, LM Studio, a LiteLLM Proxy in front of one; litellm maps it to
Anthropic's output format, Gemini's response schema and Ollama's ``format``) can then return
nothing but a verdict: no prose around it, no echo of the event, and, the reason being bounded,
no verdict cut off by the token cap. The reply is still read by verdicts.py as any other.

On litellm's path the schema is sent unless litellm knows the model cannot take one (its model
table says ``supports_response_schema: false``); then, and where litellm lists no
``response_format`` for the provider, JSON mode or nothing, as before.

An endpoint that refuses the schema (a 400 or 422 whose body names it, a 500 naming the field)
is not retried as a failing server would be, but asked again at once in JSON mode, within the
same deadline, with the schema in JSON mode's object: ``{"type": "json_object", "schema":
{...}}``. That is llama-cpp-python's own form (its server refuses ``json_schema`` with a 500,
and constrains its output to a schema given so); a server that ignores the key answers in
plain JSON mode, and one that rejects it (a refusal again) is asked a third time in plain JSON
mode. When an answer comes, what was refused is remembered for the endpoint and model for
:data:`REFUSED_SECONDS`, so later calls go straight to the form that was answered: in the
process, and for a hook that is not managed in a small file in the user's runtime folder
(``schema-<hash>.json``, as dead.py keeps its own), so later runs know it too.
A managed hook never reads that file: the user, and so an agent, can write it, and it must not
take the schema off a managed hook's request.

The cassette key does not depend on any of this (cassette.request_key): recordings made before
replay the same, whichever format the endpoint takes.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from .. import paths
from .types import ModelReply, ModelRequest

REFUSED_SECONDS = 24 * 3600.0  # a server upgraded meanwhile is tried again the next day
_LIMIT = 4096  # bytes: a record is a time
REASON_CHARS = 400  # "one or two sentences", with room to spare
# What a token of the reason is taken to hold at least, in characters (English runs near 4):
# the bound keeps the whole verdict within its token cap.
_CHARS_PER_TOKEN = 2
_OVERHEAD_TOKENS = 40  # the object around the reason, with the spaces a grammar allows
_NAMES_IT = re.compile(r"response_format|json_schema|schema|\bformat\b", re.I)
_NAMES_FIELD = re.compile(r"response_format|json_schema")

_refused: dict[str, tuple[float, str]] = {}  # endpoint and model -> when, what was refused


def reason_chars(max_tokens: int) -> int:
    """The reason's ``maxLength`` for a reply of at most ``max_tokens`` tokens."""
    return max(0, min(REASON_CHARS, (max_tokens - _OVERHEAD_TOKENS) * _CHARS_PER_TOKEN))


def schema(request: ModelRequest) -> dict[str, Any]:
    """The verdict's JSON schema for ``request`` (``impossible`` on a stop hook's)."""
    properties: dict[str, Any] = {
        "ok": {"type": "boolean"},
        "reason": {"type": "string", "maxLength": reason_chars(request.max_tokens)},
    }
    if request.impossible:
        properties["impossible"] = {"type": "boolean"}
    return {"type": "object", "properties": properties, "required": list(properties),
            "additionalProperties": False}


def response_format(request: ModelRequest) -> dict[str, Any] | None:
    """The ``response_format`` of ``request``: its schema, JSON mode, or None (free text)."""
    if not request.json_mode:
        return None
    if request.tools:  # a turn that may call tools is no verdict yet
        return {"type": "json_object"}
    if not request.structured:
        if request.schema_in_json_mode:
            return {"type": "json_object", "schema": schema(request)}
        return {"type": "json_object"}
    return {"type": "json_schema",
            "json_schema": {"name": "verdict", "strict": True, "schema": schema(request)}}


def refused(status: int | None, body: str) -> bool:
    """Whether an error answer refuses the schema (and JSON mode might be taken): a 400 or
    422 naming it, or a 500 naming ``response_format`` or ``json_schema`` (llama-cpp-python's
    server answers its own validation errors with a 500)."""
    if status in (400, 422):
        return bool(_NAMES_IT.search(body))
    return status == 500 and bool(_NAMES_FIELD.search(body))


def _key(endpoint: str, model: str) -> str:
    return f"{endpoint} {model}"


def _file(key: str, environ: Mapping[str, str]) -> Path:
    digest = hashlib.sha256(key.encode()).hexdigest()[:20]
    return paths.runtime_home(environ) / f"schema-{digest}.json"


def _fresh(seen: float) -> bool:
    return 0 <= time.time() - seen < REFUSED_SECONDS


def remembered(endpoint: str, model: str, environ: Mapping[str, str] | None) -> str | None:
    """What ``endpoint`` (dead.address's name) refused lately for ``model``: None (nothing),
    ``"schema"`` (the schema's OpenAI form) or ``"schema-key"`` (the schema in JSON mode's
    object too); in this process, or in the file when ``environ`` is given (None: a managed
    hook)."""
    key = _key(endpoint, model)
    seen = _refused.get(key)
    if seen is not None and _fresh(seen[0]):
        return seen[1]
    if environ is None:
        return None
    try:
        # read_state: a FIFO, link or huge file planted here is no memory (BadStateFile is an
        # OSError): the schema is sent, and at worst refused once more
        data = json.loads(paths.read_state(_file(key, environ), _LIMIT) or b"null")
        what = "schema-key" if data.get("what") == "schema-key" else "schema"
        return what if _fresh(float(data["time"])) else None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def remember(endpoint: str, model: str, environ: Mapping[str, str] | None,
             what: str = "schema") -> None:
    key = _key(endpoint, model)
    _refused[key] = (time.time(), what)
    if environ is None:
        return
    path = _file(key, environ)
    with contextlib.suppress(OSError):  # a memory that cannot be written is not used
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        paths.atomic_write(path, json.dumps({"time": time.time(), "what": what}).encode())


def _in_json_mode(request: ModelRequest, schema_key: bool = True) -> ModelRequest:
    return replace(request, structured=False, schema_in_json_mode=schema_key)


async def asked(request: ModelRequest, endpoint: str, environ: Mapping[str, str] | None,
                call: Callable[[ModelRequest], Awaitable[ModelReply]],
                refusal: Callable[[Exception], bool]) -> ModelReply:
    """``call``'s reply to ``request``, with the schema unless ``endpoint`` is remembered to
    refuse it. A refusal (``refusal``) is answered by asking once more in JSON mode with the
    schema in its object and, should that be refused too (a server that rejects unknown keys),
    once more in plain JSON mode; each refusal is remembered when a later form is answered (a
    failure of the last form was not the schema's doing)."""
    model = request.endpoint.model
    if not (request.structured and request.json_mode):
        return await call(request)
    seen = remembered(endpoint, model, environ)
    forms = [request, _in_json_mode(request), _in_json_mode(request, schema_key=False)]
    forms = forms[{None: 0, "schema": 1, "schema-key": 2}[seen]:]
    for number, form in enumerate(forms):
        try:
            reply = await call(form)
        except Exception as exc:
            if number == len(forms) - 1 or not refusal(exc):
                raise
            continue
        if number:
            remember(endpoint, model, environ,
                     "schema-key" if not form.schema_in_json_mode else "schema")
        return reply
    raise AssertionError("unreachable: the last form's failure is raised")


__all__ = ["REFUSED_SECONDS", "asked", "reason_chars", "refused", "remember", "remembered",
           "response_format", "schema"]
