"""``prompthooks test --write-references``: a case file's expectations written into its
cassette as reference verdicts, for the prompt hooks that have no recording yet.

Each case runs through the real engine (command hooks run; each prompt hook builds its real
request, so the entry's key is the one a real call has). A prompt hook with an entry already
is left alone: a model recording always, an earlier reference unless ``replace_references``.
A prompt hook without one gets, by the case's ``expect.decision``:

- ``deny``/``block``: ``{"ok": false, "reason": ...}``; ``ask``: ``{"decision": "ask", ...}``.
  Every prompt hook the event selects objects, unless the case's ``reference.hooks`` names
  the ones that do (the others answer ok). The reason is ``reference.reason``, else a sentence
  naming the case (with ``reason_contains`` in it, so the case can pass).
- ``allow``: ``{"ok": true}`` for every prompt hook.

Nothing is written for a case that expects a hook error, nor for command hooks (they run).
After writing, the case's own check is applied to what the run decided: a case that still
does not pass (a command hook that objects, a hook that failed) is reported.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..core.hook import Hook
from ..errors import PromptHooksError
from ..model.chain import ModelChain
from ..model.endpoint import ModelRequest
from ..model.recording import Reference, ReferenceCassette, Touch, verdict_text
from .cases import Case, cassette_path, config_for, read_case_file, run_case

Status = Literal["written", "recorded", "skipped", "error"]
NOTE = ("written by `prompthooks test --write-references` from the expectation of case "
        "{case!r} ({decision}); not a model's output")


@dataclass
class CaseWrite:
    """What ``--write-references`` did for one case (or, with no case, for a whole file)."""

    file: Path
    case: str
    status: Status
    written: int = 0  # reference verdicts written
    kept: int = 0  # prompt hooks that had an entry already
    detail: str = ""


def names(hook: Hook, wanted: str) -> bool:
    """Whether ``wanted`` (from ``reference.hooks``) names ``hook``."""
    return (wanted in (hook.name, hook.label, hook.prompt_file)
            or hook.label.endswith(f": {wanted}"))


def objects(case: Case, hook: Hook) -> bool:
    """Whether ``hook`` is one of the case's objecting prompt hooks."""
    wanted = case.reference.hooks if case.reference else None
    return wanted is None or any(names(hook, name) for name in wanted)


def reason_for(case: Case) -> str:
    if case.reference and case.reference.reason:
        return case.reference.reason
    reason = f"Reference verdict of the case '{case.name}'"
    hint = case.expect.reason_contains
    if hint and hint.lower() not in reason.lower():
        reason += f" ({hint})"
    return reason + "."


@dataclass(frozen=True)
class ReferenceAnswer:
    """The reference verdict of one case, per prompt hook."""

    case: Case

    def __call__(self, request: ModelRequest, hook: Hook) -> Reference:
        expected = self.case.expect.decision or "allow"
        permission = {"deny": "deny", "block": "deny", "ask": "ask"}.get(expected)
        if permission and not objects(self.case, hook):
            permission = None
        note = NOTE.format(case=self.case.name, decision=expected)
        return Reference(verdict_text(permission, reason_for(self.case)), note)


def _summary(path: Path, case: Case, touched: Sequence[Touch], passed: bool,
             why: str) -> CaseWrite:
    written = sum(t.written for t in touched)
    kept = len(touched) - written
    if not touched:
        detail = "no prompt hook asks a model for this event: nothing to write"
        return CaseWrite(path, case.name, "skipped", detail=detail)
    parts = [f"{written} written"] if written else []
    by_model = sum(t.source == "recording" for t in touched if not t.written)
    for count, what in ((by_model, "by a model"), (kept - by_model, "as a reference")):
        if count:
            parts.append(f"{count} already recorded {what}")
    done = ", ".join(parts)
    wanted = case.reference.hooks if case.reference else None
    unknown = [w for w in wanted or [] if not any(names(t.hook, w) for t in touched)]
    if unknown:
        return CaseWrite(path, case.name, "error", written, kept,
                         f"{done}; reference.hooks names {unknown[0]!r}, which is no prompt "
                         "hook this event selects")
    if not passed:
        return CaseWrite(path, case.name, "error", written, kept,
                         f"{done}; the case does not pass with these verdicts: {why}")
    return CaseWrite(path, case.name, "written" if written else "recorded", written, kept, done)


def write_file(path: Path, model: str | None = None,
               replace_references: bool = False) -> list[CaseWrite]:
    """Write the reference verdicts of one case file's cases into its cassette."""
    spec = read_case_file(path)
    try:
        config = config_for(path, spec)
        problem = config.errors[0] if config.errors else None
    except PromptHooksError as exc:
        problem = exc.message
    if problem:
        return [CaseWrite(path, f"({len(spec.cases)} cases)", "error",
                          detail=f"config does not load: {problem}")]
    cassette = ReferenceCassette(cassette_path(path, spec),
                                 replace_references=replace_references)
    out = []
    models = ModelChain(cassette=cassette, model=model or spec.model, suite=True)
    for case in spec.cases:
        if case.expect.error:
            out.append(CaseWrite(path, case.name, "skipped",
                                 detail="expects a hook error: nothing to write"))
            continue
        cassette.answer = ReferenceAnswer(case)
        cassette.take()
        result = run_case(path, case, config, spec.budget, models)
        out.append(_summary(path, case, cassette.take(), result.passed, result.detail))
    return out
