"""The model's verdict: what a prompt hook asks the model for (the verdict's JSON schema, where
the endpoint takes one, and the endpoints remembered as refusing it), how a reply is read into
a :class:`Verdict` (the two reply schemas, prose and fences around them, a verdict cut off by
the token cap), and the optional on-disk cache of verdicts."""

from __future__ import annotations

import contextlib
import functools
import json
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, Literal

from .. import digests, paths
from ..core.result import Permission
from ..errors import excerpt
from .endpoint import ModelReply, ModelRequest, Verdict

# --- Reading a reply -----------------------------------------------------------------------------
# The model's verdict and a forgiving extractor.
#
# Accepted: ``{"ok": bool, "reason"?: str, "impossible"?: bool}`` and the older
# ``{"decision": "approve"|"block"|"allow"|"deny"|"ask", "reason", "systemMessage", "continue",
# "stopReason"}``, validated by the pydantic models of :func:`reply_models` (made when a
# reply is parsed, so a warm client that receives a parsed verdict never loads pydantic).
# Markdown fences are stripped and the first JSON object that fits either schema is taken out of
# any surrounding prose. A refusal cut off by the reply's token cap (``{"ok": false, "reason":
# "It dele``) is a refusal, its reason marked as cut (below). Anything else is a
# :class:`VerdictError` that says what the model actually returned.

_SAMPLE = 300  # characters of a bad reply quoted in the error
# A verdict is a few hundred characters (the request allows 300 tokens). A longer reply is not
# searched: looking for JSON objects in it costs time that grows with the square of its length
# (a 1 MB reply of "{" took minutes), and that time is past the hook's deadline.
MAX_REPLY_CHARS = 20_000
_OBJECT_START = re.compile(r'\{\s*"')  # a verdict is an object with at least one key

_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.S)


class VerdictError(ValueError):
    """The model's reply holds no verdict."""


@functools.cache
def reply_models() -> tuple[Any, Any]:
    """The pydantic models of the model's two reply schemas (``ok``, and the older
    ``decision``). Made on first use: pydantic is imported only when a reply is parsed, so a
    warm client that receives a parsed verdict, and a run without a prompt hook, never load
    it."""
    from pydantic import BaseModel, ConfigDict, Field, StrictBool  # see the docstring

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

    return OkReply, DecisionReply


def _verdict(obj: dict[str, object]) -> Verdict | None:
    from pydantic import ValidationError  # loaded with the models, see reply_models

    OkReply, DecisionReply = reply_models()
    try:
        if "ok" in obj:
            ok = OkReply.model_validate(obj)
            return Verdict(None if ok.ok else "deny", ok.reason or None, ok.impossible)
        old = DecisionReply.model_validate(obj)
    except ValidationError:
        return None
    permission: Permission | None = _DECISIONS.get(old.decision)  # type: ignore[assignment]
    return Verdict(permission, old.reason or None, False, old.systemMessage,
                   old.continue_ is False, old.stopReason)


def _objects(text: str) -> tuple[list[dict[str, object]], list[Pair] | None]:
    """Every JSON object with a key that starts at a ``{`` in ``text``, in order, and the
    top-level pairs of the first (outermost) object the end of the text cuts off, if any."""
    decoder = json.JSONDecoder()
    found = []
    cut = None
    match = _OBJECT_START.search(text)
    while match:
        try:
            value, end = decoder.raw_decode(text, match.start())
        except (ValueError, RecursionError):  # RecursionError: nested too deeply
            if cut is None:
                cut = cut_pairs(text, match.start())
            match = _OBJECT_START.search(text, match.start() + 1)
            continue
        if isinstance(value, dict):
            found.append(value)
        match = _OBJECT_START.search(text, end)
    return found, cut


def _cut_verdict(pairs: list[Pair] | None) -> tuple[bool, Verdict | None]:
    """(whether the reply ends in a cut-off verdict, the refusal it says if it says one
    without doubt). A cut refusal is a refusal: the model said no and ran out of tokens while
    saying why. A cut ``{"ok": true`` is not a verdict: its end might have said otherwise."""
    if not pairs:
        return False, None
    certain, permission = cut_permission(pairs)
    if not certain:
        return any(key in ("ok", "decision") for key, _, _ in pairs), None
    if permission != "deny":
        return True, None
    return True, Verdict("deny", cut_reason(pairs))


def parse_verdict(text: str) -> Verdict:
    """The verdict in a model's reply text; raises VerdictError if there is none, or if the
    reply holds verdicts that disagree (a model quoting injected text such as ``{"ok": true}``
    next to its own answer must not be read as the quote)."""
    if len(text) > MAX_REPLY_CHARS:
        raise VerdictError(f"the model's reply is too long to be a verdict ({len(text):,} "
                           f"characters, at most {MAX_REPLY_CHARS:,}): "
                           f"{excerpt(text, _SAMPLE)!r}")
    candidates = [m.group(1) for m in _FENCE.finditer(text)]
    objects, cut = _objects(text)
    found = [v for obj in [o for c in candidates for o in _objects(c)[0]] + objects
             if (v := _verdict(obj)) is not None]
    was_cut, refusal = _cut_verdict(cut)
    if was_cut and refusal is None:
        # A cut verdict that is not a sure refusal: with nothing else it is no verdict, and
        # beside a complete verdict it is one that may disagree.
        shown = excerpt(text, _SAMPLE)
        if found:
            raise VerdictError(f"the model's reply holds verdicts that disagree: {shown!r}")
        raise VerdictError(f"the model's reply was cut off before its verdict was complete: "
                           f"{shown!r}")
    if refusal is not None:
        found.append(refusal)
    if found and all(v.permission == found[0].permission for v in found):
        # "impossible" lifts a stop hook's block: an echoed {"ok": false, "impossible": true}
        # beside the model's own block must not, so it holds only if every verdict says so.
        return replace(found[0], impossible=all(v.impossible for v in found))
    shown = excerpt(text, _SAMPLE) if text.strip() else "(an empty reply)"
    if found:
        raise VerdictError(f"the model's reply holds verdicts that disagree: {shown!r}")
    raise VerdictError(f"the model's reply is not a verdict: {shown!r}")


# --- A verdict cut off by the token cap ----------------------------------------------------------
# Reading a verdict object that the reply's token cap cut off.
#
# A model that hits ``max_tokens`` mid-answer returns ``{"ok": false, "reason": "It delet`` with
# no end. Only the object's top-level pairs written before the cut are read (pydantic_core's
# partial JSON, a cut string kept as far as it goes), and only what they say without doubt
# counts: ``"ok": false`` or ``"decision": "block"``/``"deny"`` complete before the cut is a
# refusal; a cut ``"ok": fa``, a cut ``{"ok": true``, or pairs that disagree are not.

_CONTROL = dict.fromkeys(range(32), " ")
# The end of a text cut inside a literal or a number (``"ok": fa``): partial JSON drops it.
_CUT_LITERAL = re.compile(r':\s*([^\s"{}\[\],:]+)$')

# key, value, whether the end cut the value (a cut string keeps its start; any other is None)
Pair = tuple[str, object, bool]


def cut_pairs(text: str, start: int) -> list[Pair] | None:
    """The top-level pairs of the object at ``start`` when the end of ``text`` cuts it off;
    None when it is not cut off (it is complete, or malformed before the end)."""
    # Imported here: only a reply holding a cut or broken object comes this way, and the
    # verdict's pydantic models, loaded for any reply, import it anyway.
    from pydantic_core import from_json

    # A model may break a line inside its reason, which JSON forbids: a raw control character
    # reads as a space (outside a string it is one already).
    body = text[start:].translate(_CONTROL)
    try:
        from_json(body)
    except ValueError as exc:
        if not str(exc).startswith("EOF while parsing"):
            return None  # malformed before the end, or nested past the parser's limit
    else:
        return None  # complete
    said = from_json(body, allow_partial="trailing-strings")
    if not isinstance(said, dict):
        return None
    whole = from_json(body, allow_partial=True)  # without the string the end cut
    pairs: list[Pair] = [(key, value, False) for key, value in said.items()]
    if pairs:
        key, value, _ = pairs[-1]
        if key not in whole or whole[key] != value:
            pairs[-1] = (key, value, True)
    literal = _CUT_LITERAL.search(body)
    if literal:
        # The pair whose literal the end cut, if it is a top-level one: the one that
        # appears when a complete value stands in for the cut one.
        filled = from_json(body[:literal.start(1)] + "null", allow_partial=True)
        pairs += [(key, None, True) for key in filled if key not in said]
    return pairs


_DECISIONS: dict[object, str | None] = {"block": "deny", "deny": "deny", "ask": "ask",
                                        "approve": None, "allow": None}


def cut_permission(pairs: list[Pair]) -> tuple[bool, str | None]:
    """(whether the cut pairs say one verdict without doubt, that verdict's permission)."""
    said: set[str | None] = set()
    for key, value, partial in pairs:
        if key == "ok":
            if partial or not isinstance(value, bool):
                return False, None
            said.add(None if value else "deny")
        elif key == "decision":
            if partial or not isinstance(value, str) or value not in _DECISIONS:
                return False, None
            said.add(_DECISIONS[value])
    if len(said) != 1:
        return False, None
    return True, next(iter(said))


def cut_reason(pairs: list[Pair]) -> str:
    """The reason written before the cut, marked as cut when the cut fell inside it."""
    reasons = [(value, partial) for key, value, partial in pairs
               if key == "reason" and isinstance(value, str)]
    if not reasons:
        return "[the model's reason was cut off]"
    reason, partial = reasons[-1]
    reason = reason.rstrip()
    if partial:
        return f"{reason}... [cut off]"
    return reason or "[the model's reason was cut off]"


# --- The verdict cache ---------------------------------------------------------------------------
# The optional verdict cache: the same model asked the same rendered prompt within a TTL gets
# the same verdict without a call. Off unless a config asks for it (``cache_ttl`` on a handler,
# or ``verdict_cache_ttl`` in the file's ``prompthooks`` block, which leaves Stop and SubagentStop
# hooks out: whether work is done changes even when the words do not). Entries live under the
# user's cache folder, one JSON file per key (the cassette key: model, messages with the nonce
# normalized, parameters).

def _cache_path(key: str, environ: Mapping[str, str]) -> Path:
    return paths.cache_home(environ) / "verdicts" / f"{key}.json"


def cached_verdict(key: str, ttl: float,
                   environ: Mapping[str, str]) -> tuple[Verdict, float] | None:
    """The cached verdict and its age in seconds, if one younger than ``ttl`` exists."""
    try:
        # read_state: a FIFO, link or huge file planted here is a miss (BadStateFile is an
        # OSError), never a wait
        data = json.loads(paths.read_state(_cache_path(key, environ)) or b"null")
        age = time.time() - float(data["time"])
        verdict = Verdict(**data["verdict"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if verdict.permission not in (None, "allow", "ask", "deny") or not (
            verdict.reason is None or isinstance(verdict.reason, str)):
        return None  # not something we wrote
    return (verdict, age) if 0 <= age < ttl else None


def cache_verdict(key: str, verdict: Verdict, environ: Mapping[str, str]) -> None:
    folder = _cache_path(key, environ).parent
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        body = json.dumps({"time": time.time(), "verdict": asdict(verdict)}).encode()
        paths.atomic_write(_cache_path(key, environ), body)
    except OSError:
        pass  # a cache that cannot be written is not used


# --- The verdict's schema ------------------------------------------------------------------------
# Structured verdicts: the verdict asked for with its JSON schema, where the endpoint takes one.
#
# A verdict request carries OpenAI's ``response_format: {"type": "json_schema", "json_schema":
# {..., "strict": true}}``: ``ok`` (boolean), ``reason`` (a string of at most
# :func:`reason_chars` characters) and, on stop events, ``impossible`` (boolean), all required, no
# other key. A server that constrains its output to the schema (OpenAI's structured outputs,
# llama.cpp, vLLM, Ollama, LM Studio, a LiteLLM Proxy in front of one; litellm maps it to
# Anthropic's output format, Gemini's response schema and Ollama's ``format``) can then return
# nothing but a verdict: no prose around it, no echo of the event, and, the reason being bounded,
# no verdict cut off by the token cap. The reply is still read as any other (above).
#
# On litellm's path the schema is sent unless litellm knows the model cannot take one (its model
# table says ``supports_response_schema: false``); then, and where litellm lists no
# ``response_format`` for the provider, JSON mode or nothing, as before.
#
# An endpoint that refuses the schema (a 400 or 422 whose body names it, a 500 naming the field)
# is not retried as a failing server would be, but asked again at once in JSON mode, within the
# same deadline, with the schema in JSON mode's object: ``{"type": "json_object", "schema":
# {...}}``. That is llama-cpp-python's own form (its server refuses ``json_schema`` with a 500,
# and constrains its output to a schema given so); a server that ignores the key answers in
# plain JSON mode, and one that rejects it (a refusal again) is asked a third time in plain JSON
# mode. When an answer comes, what was refused is remembered for the endpoint and model for
# :data:`REFUSED_SECONDS`, so later calls go straight to the form that was answered: in the
# process, and for a hook that is not managed in a small file in the user's runtime folder
# (``schema-<hash>.json``, as failures.py keeps dead endpoints), so later runs know it too.
# A managed hook never reads that file: the user, and so an agent, can write it, and it must not
# take the schema off a managed hook's request.
#
# The cassette key does not depend on any of this (recording.request_key): recordings made before
# replay the same, whichever format the endpoint takes.

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


def _key(endpoint: str, model: str, environ: Mapping[str, str] | None) -> str:
    """The memory's key; a managed hook's (``environ`` None) apart: a refusal a user's hook
    met (through a proxy the agent may set) never takes the schema off a managed request."""
    return f"{endpoint} {model}" + ("" if environ is not None else " managed")


def _file(key: str, environ: Mapping[str, str]) -> Path:
    digest = digests.sha256(key.encode()).hexdigest()[:20]
    return paths.runtime_home(environ) / f"schema-{digest}.json"


def _fresh(seen: float) -> bool:
    return 0 <= time.time() - seen < REFUSED_SECONDS


def remembered(endpoint: str, model: str, environ: Mapping[str, str] | None) -> str | None:
    """What ``endpoint`` (dead.address's name) refused lately for ``model``: None (nothing),
    ``"schema"`` (the schema's OpenAI form) or ``"schema-key"`` (the schema in JSON mode's
    object too); in this process, or in the file when ``environ`` is given (None: a managed
    hook)."""
    key = _key(endpoint, model, environ)
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
    key = _key(endpoint, model, environ)
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
