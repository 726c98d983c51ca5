"""What a replay miss says about the recordings near it, as vcrpy names the closest request.

A bare key hash tells nobody why a recording was not found. The usual reasons: the same prompt
was recorded under another model (``prompthooks test`` runs on the model the config names,
never ``PROMPTHOOKS_MODEL``); the same prompt and model under another key (the system message
or a setting changed); or the prompt itself changed (a template or an event edited). So a miss
names the model to run on, or the closest recorded prompt and a short excerpt of each around
where they first differ. Everything shown passes the redaction pass first, whole, so that no
secret is cut in two and then missed.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Mapping
from typing import Any

from .endpoint import ModelRequest

EXCERPT = 40  # characters shown on each side of the first difference
# Prompts are compared on their first characters only: a miss must answer at once, however
# many and however long the recordings.
_COMPARED = 20_000
_CANDIDATES = 50


@functools.lru_cache(maxsize=1024)
def _redacted(text: str, key: str | None) -> str:
    """``text`` through the redaction pass, once per text: every miss of a suite compares
    its prompt with the same recordings."""
    from ..redaction import redact  # its patterns are compiled only when a replay misses

    return redact(text, [key])


def _shown(text: str) -> str:
    """One line: newlines and tabs written as escapes."""
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r").replace(
        "\t", "\\t")


def _excerpt(text: str, at: int) -> str:
    start, end = max(at - EXCERPT, 0), at + EXCERPT
    return (("..." if start else "") + _shown(text[start:end])
            + ("..." if end < len(text) else ""))


def _first_difference(a: str, b: str) -> int:
    """The length of the common prefix (a binary search over slices compared in C)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def nearby(entries: Mapping[str, Mapping[str, Any]], prompt: str, request: ModelRequest,
           model_option: str) -> str:
    """What the cassette holds near ``request``, whose user prompt is ``prompt`` (as an entry
    stores it, the fence nonce normalized), as a clause for the miss message.
    ``model_option`` is how the tool in use picks a model, with ``{model}`` where the name
    goes (``--model {model}``)."""
    if not entries:
        return "; the cassette has no recordings"
    key = request.endpoint.api_key
    prompt = _redacted(prompt, key)
    model = request.endpoint.model
    recorded = [(_redacted(str(e.get("prompt", "")), key), str(e.get("model", "")), e)
                for e in entries.values()]
    same = [(m, e) for p, m, e in recorded if p == prompt]
    others = sorted({_redacted(m, key) for m, _ in same if m != model})
    if others:
        named = " or ".join(repr(m) for m in others)
        return (f"; this prompt is recorded under model {named}, not {model!r}: run with "
                f"{model_option.format(model=others[0])}")
    if same:
        return (f"; this prompt is recorded under {model!r} with another key: the system "
                "message or the call's settings changed since (re-record it)")
    # The closest: the longest common start (a template's text, then the event), and among
    # those the most alike in characters, over a bounded number of candidates.
    prefixes = [_first_difference(prompt, p) for p, _, _ in recorded]
    longest = max(prefixes)
    candidates = [r for r, n in zip(recorded, prefixes, strict=True) if n == longest][:_CANDIDATES]
    head = prompt[:_COMPARED]
    closest, closest_model, entry = max(candidates, key=lambda r: difflib.SequenceMatcher(
        None, head, r[0][:_COMPARED], autojunk=False).quick_ratio())
    at = longest
    hook = f"hook {_redacted(str(entry['hook']), key)!r}, " if entry.get("hook") else ""
    closest_model = _redacted(closest_model, key)
    return (f"; the closest recording ({hook}model {closest_model!r}) first differs at "
            f"character {at}: recorded '{_excerpt(closest, at)}', now '{_excerpt(prompt, at)}'")
