"""Reference verdicts: cassette entries written by people (from a case's expectation), not
replies of a model, and marked so that nobody mistakes one for the other.

A reference entry is keyed exactly as the model call it stands for (:func:`request_key` of
the real request, built by the real prompt executor), so it replays wherever a recording does.
It carries ``source: reference`` and a ``note`` saying where the verdict came from, and no
token counts. :class:`ReferenceCassette` is the one way such an entry is written: it answers
each model call of a run from its ``answer`` function and never asks a model.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ..core.hook import Hook
from .endpoint import ModelReply, ModelRequest, ToolCall
from .recording import (
    Cassette,
    is_reference,
    normalize_nonce,
    recorded_calls,
    request_key,
    tool_results,
)

SOURCE = "reference"


@dataclass(frozen=True)
class Reference:
    """The verdict a reference entry holds and the note that says who wrote it and why."""

    reply: str
    note: str


def verdict_text(permission: str | None, reason: str | None = None) -> str:
    """A prompt hook's reply for ``permission``: ``None`` (no objection), ``deny`` or ``ask``."""
    if permission is None:
        return json.dumps({"ok": True})
    if permission == "ask":
        return json.dumps({"decision": "ask", "reason": reason or ""}, ensure_ascii=False)
    return json.dumps({"ok": False, "reason": reason or ""}, ensure_ascii=False)


Answer = Callable[[ModelRequest, Hook], Reference]


@dataclass
class Touch:
    """What one model call of a reference run found or wrote."""

    hook: Hook
    key: str
    written: bool  # False: an entry was already there and was replayed
    source: str = SOURCE  # of the entry replayed: "reference" or "recording"


@dataclass
class ReferenceCassette(Cassette):
    """A cassette that writes a reference entry for each model call it has no entry for.

    An existing entry is replayed and never overwritten: a model recording never, an earlier
    reference only when ``replace_references`` is set (to follow a case whose expectation
    changed). Every call is noted in ``touched``, so a caller can tell per case what was
    written and what was there already."""

    answer: Answer | None = None
    replace_references: bool = False
    touched: list[Touch] = field(default_factory=list)
    _touch_lock: threading.Lock = field(default_factory=threading.Lock)
    _fresh: set[str] = field(default_factory=set)  # keys written by this run

    def complete(self, request: ModelRequest, deadline: float, hook: Hook,
                 call_model: Callable[[ModelRequest, float], ModelReply] | None = None
                 ) -> ModelReply:
        """The entry for ``request``, written from the case's expectation when there is none
        (the model is never called)."""
        key = request_key(request)
        existing = self.entries().get(key)
        reference = existing is not None and is_reference(existing)
        # One run replaces only what was there before it: two cases with one event (and so
        # one key) must not overwrite each other's reference.
        replace = reference and self.replace_references and key not in self._fresh
        if existing is not None and not replace:
            self._note(Touch(hook, key, False, SOURCE if reference else "recording"))
            return ModelReply(text=existing["reply"], model=str(existing.get("model", "")),
                              replayed=True, tool_calls=recorded_calls(existing))
        if self.answer is None:
            raise ValueError("a reference cassette needs an answer function")
        calls: tuple[ToolCall, ...] = ()
        if request.tools and not request.turns:
            # An agent hook's reference looks at the project first (a listing of its files),
            # so that a replay runs the tool loop over the case's folder; the verdict is the
            # next turn's.
            calls = (ToolCall("reference_0", "list_files", '{"pattern": "**"}'),)
            made = Reference("", self.answer(request, hook).note)
        else:
            made = self.answer(request, hook)
        user = next((m["content"] for m in request.messages if m["role"] == "user"), "")
        from ..redaction import redact  # its patterns: only for an entry written

        # Stored as a recording is: the prompt passes the redaction pass (the key is the real
        # request's), since a cassette is committed and read by people.
        self.write({
            "key": key, "hook": hook.name, "model": request.endpoint.model,
            "prompt": redact(normalize_nonce(user, request.nonce), []), "reply": made.reply,
            "source": SOURCE, "note": made.note,
            "written": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            **tool_results(request),
            **({"tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments}
                               for c in calls]} if calls else {}),
        })
        with self._touch_lock:
            self._fresh.add(key)
        self._note(Touch(hook, key, True))
        return ModelReply(text=made.reply, model=request.endpoint.model, replayed=True,
                          tool_calls=calls)

    def _note(self, touch: Touch) -> None:
        with self._touch_lock:
            self.touched.append(touch)

    def take(self) -> list[Touch]:
        """The calls noted since the last ``take`` (one case's, when cases run one by one)."""
        with self._touch_lock:
            out, self.touched = self.touched, []
        return out
