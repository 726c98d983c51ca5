"""Policy test cases: YAML files of events and the decisions expected for them, run through
the real engine with a cassette (replay by default, so no key and no network).

A case file::

    cassette: destructive-shell.cassette.yaml   # default: <file>.cassette.yaml beside it
    config: ../config/hooks.json               # a path, a list of paths, or an inline config
    model: claude-haiku-4-5                    # optional: every prompt hook's model
    cases:
      - name: deleting the home directory is blocked
        host: claude                           # optional: detected from the event
        event: {...}                           # the host's raw input
        expect: {decision: deny, reason_contains: home}

``decision`` is ``deny`` (or ``block``), ``ask``, or ``allow``, which means "not blocked and
not asked": no hook objected. A case may name its ``source`` (a benchmark's cases name the
public corpus and entry they come from). An optional ``reference: {reason: ..., hooks:
[...]}`` steers the reference verdicts ``test --write-references`` writes for the case
(below).

A case passes only when it was judged: every hook its event selects answered (a prompt hook
from the model or a recording). A hook that errs, times out or has no recorded reply makes the
case ERROR, not PASS, whatever the merged decision. A case that tests a failure policy says so
with ``expect: {error: true}`` (the case then needs a hook to fail; ``decision`` is optional and,
when given, checked too).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator

from .. import transcripts
from ..api import Config, Outcome, config_from_data, dispatch, load_config
from ..core.hook import Hook
from ..core.merge import failure_line
from ..errors import ConfigError, PromptHooksError, excerpt
from ..executors.agent import given_project
from ..hosts import HOSTS, NAMES
from ..model.chain import ModelChain
from ..model.endpoint import ModelRequest
from ..model.recording import Cassette, Drift, Mode
from ..model.references import Reference, ReferenceCassette, Touch, verdict_text
from ..model.verdict import VerdictError, parse_verdict

Expected = Literal["allow", "deny", "block", "ask"]
Status = Literal["pass", "fail", "error"]


class Expect(BaseModel):
    model_config = ConfigDict(extra="forbid")

    decision: Expected | None = None
    reason_contains: str | None = None
    error: bool = False  # a hook is expected to fail (testing a failure policy)

    @model_validator(mode="after")
    def _decision_or_error(self) -> Expect:
        if self.decision is None and not self.error:
            raise ValueError("expect needs a 'decision' (or 'error: true')")
        return self


class CaseReference(BaseModel):
    """How ``test --write-references`` writes this case's reference verdicts (optional)."""

    model_config = ConfigDict(extra="forbid")

    reason: str | None = None  # the objecting hooks' reason (default: names the case)
    # The prompt hooks that object (a hook's name, its prompt_file, or the end of its label
    # such as "hooks.PreToolUse[0].hooks[1]"); the others answer ok. Default: all selected.
    hooks: list[str] | None = None


def _known_host(name: str) -> str:
    if name not in HOSTS:
        raise ValueError(f"unknown host {name!r}; use one of {', '.join(NAMES)}")
    return name


class Case(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    host: Annotated[str, AfterValidator(_known_host)] | None = None
    event_name: str | None = None
    event: dict[str, Any]
    # The host's transcript for this event, relative to the case file; read in place of
    # the one the event names (a case without one has no conversation).
    transcript: str | None = None
    # The project folder an agent hook reads, relative to the case file; read in place of
    # the one the event names.
    project: str | None = None
    expect: Expect
    reference: CaseReference | None = None
    # Where the case comes from (a benchmark's public corpus, its file and entry; or ours).
    source: str | None = None


class CaseFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    cassette: str | None = None
    config: str | list[str] | dict[str, Any] | None = None
    model: str | None = None
    budget: float = Field(default=60.0, gt=0)
    cases: list[Case]


F = TypeVar("F", bound=CaseFile)


@dataclass
class CaseResult:
    file: Path
    case: Case
    status: Status
    decision: str
    seconds: float
    detail: str = ""
    outcome: Outcome | None = None

    @property
    def passed(self) -> bool:
        return self.status == "pass"


@dataclass
class FileRun:
    results: list[CaseResult] = field(default_factory=list)
    drift: list[Drift] = field(default_factory=list)
    calls: int = 0  # model calls made (record, rerecord)
    failed_calls: list[str] = field(default_factory=list)  # one line per failed model call
    unrecorded: list[str] = field(default_factory=list)  # one line per reply not recorded
    sources: dict[str, int] = field(default_factory=dict)  # recording / reference / model


def read_case_file(path: Path) -> CaseFile:
    return read_cases_as(path, CaseFile)


def read_cases_as(path: Path, kind: type[F]) -> F:
    """A case file read as ``kind`` (a benchmark's file is a case file with more keys)."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(str(path), f"cannot read: {excerpt(str(exc))}") from None
    try:
        return kind.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(str(path), first["msg"], where or "(top level)") from None


def case_files(paths: Sequence[str]) -> list[Path]:
    """The YAML case files named, or found in the folders named (``*.cassette.yaml`` aside)."""
    found: list[Path] = []
    for name in paths:
        path = Path(name)
        if path.is_dir():
            found += sorted(p for p in path.rglob("*.y*ml")
                            if p.suffix in (".yaml", ".yml") and ".cassette." not in p.name)
        elif path.exists():
            found.append(path)
        else:
            raise PromptHooksError(f"{name}: no such file or folder")
    return found


def cassette_path(path: Path, spec: CaseFile) -> Path:
    if spec.cassette:
        return (path.parent / spec.cassette).resolve()
    return path.with_name(f"{path.stem}.cassette.yaml")


def config_for(path: Path, spec: CaseFile) -> Config:
    if isinstance(spec.config, dict):
        return config_from_data(spec.config, str(path), str(path.parent))
    names = [spec.config] if isinstance(spec.config, str) else (spec.config or [])
    if not names:
        raise ConfigError(str(path), "a case file needs a 'config' (a path or inline hooks)")
    return load_config([str((path.parent / n).resolve()) for n in names], str(path.parent),
                       keep_managed=False)


def unjudged(outcome: Outcome) -> list[str]:
    """One line per selected hook that gave no verdict (error, timeout, no recorded reply)."""
    return [failure_line(r) for r in outcome.decision.results if r.failed]


def judge(case: Case, outcome: Outcome) -> tuple[Status, str, str]:
    """(pass, fail or error; the decision seen; why it did not pass)."""
    permission = outcome.decision.permission
    seen = permission if permission in ("deny", "ask") else "allow"
    failures = unjudged(outcome)
    if failures and not case.expect.error:
        return "error", seen, f"not judged: {failures[0]}" + (
            f" (and {len(failures) - 1} more)" if len(failures) > 1 else "")
    if case.expect.error and not failures:
        return "fail", seen, "expected a hook to fail, every hook answered"
    if case.expect.decision is not None:
        expected = "deny" if case.expect.decision == "block" else case.expect.decision
        if seen != expected:
            return "fail", seen, f"expected {expected}, got {seen}"
    wanted = case.expect.reason_contains
    reason = outcome.decision.reason or ""
    if wanted and wanted.lower() not in reason.lower():
        return "fail", seen, f"reason {reason!r} does not contain {wanted!r}"
    return "pass", seen, ""


def run_case(path: Path, case: Case, config: Config, budget: float,
             models: ModelChain | None = None) -> CaseResult:
    start = time.monotonic()
    try:
        with transcripts.given((path.parent / case.transcript).resolve() if case.transcript
                               else None), \
                given_project((path.parent / case.project).resolve() if case.project else None):
            outcome = dispatch(case.event, host=case.host, event_name=case.event_name,
                               config=config, budget=budget, count_stops=False, models=models)
    except PromptHooksError as exc:
        return CaseResult(path, case, "error", "error", time.monotonic() - start, str(exc))
    status, seen, why = judge(case, outcome)
    return CaseResult(path, case, status, seen, time.monotonic() - start, why, outcome)


def run_file(path: Path, mode: Mode = "replay", model: str | None = None,
             config: Config | None = None) -> FileRun:
    """Run every case of one file with its cassette in ``mode``, on ``model`` if given, else
    the file's ``model``, else what its config names (never ``PROMPTHOOKS_MODEL``: a suite
    replays the same on every machine). ``config`` replaces the file's own (a pack's suite
    runs against its policy)."""
    spec = read_case_file(path)
    if config is None:
        config = config_for(path, spec)
    if config.errors:
        raise PromptHooksError(config.errors[0])
    run = FileRun()
    cassette = Cassette(cassette_path(path, spec), mode)
    models = ModelChain(cassette=cassette, model=model or spec.model, suite=True)
    for case in spec.cases:
        run.results.append(run_case(path, case, config, spec.budget, models))
    run.drift = list(cassette.drift)
    run.calls, run.failed_calls = cassette.calls, list(cassette.failed_calls)
    run.unrecorded = list(cassette.unrecorded)
    run.sources = dict(cassette.sources)
    return run


def verdict_change(drift: Drift) -> str:
    """How a re-recorded verdict differs, in words."""
    def summary(text: str) -> str:
        try:
            verdict = parse_verdict(text)
        except VerdictError:
            return "no verdict"
        return verdict.permission or "ok"

    before, after = summary(drift.recorded), summary(drift.now)
    if before == after:
        return f"same verdict ({after}), different wording"
    return f"verdict changed: {before} -> {after}"

# Reference verdicts ------------------------------------------------------------------------
# ``prompthooks test --write-references``: a case file's expectations written into its
# cassette as reference verdicts, for the prompt hooks that have no recording yet.
#
# Each case runs through the real engine (command hooks run; each prompt hook builds its real
# request, so the entry's key is the one a real call has). A prompt hook with an entry already
# is left alone: a model recording always, an earlier reference unless ``replace_references``.
# A prompt hook without one gets, by the case's ``expect.decision``:
#
# - ``deny``/``block``: ``{"ok": false, "reason": ...}``; ``ask``: ``{"decision": "ask", ...}``.
#   Every prompt hook the event selects objects, unless the case's ``reference.hooks`` names
#   the ones that do (the others answer ok). The reason is ``reference.reason``, else a sentence
#   naming the case (with ``reason_contains`` in it, so the case can pass).
# - ``allow``: ``{"ok": true}`` for every prompt hook.
#
# Nothing is written for a case that expects a hook error, nor for command hooks (they run).
# After writing, the case's own check is applied to what the run decided: a case that still
# does not pass (a command hook that objects, a hook that failed) is reported.

WriteStatus = Literal["written", "recorded", "skipped", "error"]
NOTE = ("written by `prompthooks test --write-references` from the expectation of case "
        "{case!r} ({decision}); not a model's output")


@dataclass
class CaseWrite:
    """What ``--write-references`` did for one case (or, with no case, for a whole file)."""

    file: Path
    case: str
    status: WriteStatus
    written: int = 0  # reference verdicts written
    kept: int = 0  # prompt hooks that had an entry already
    detail: str = ""


def _names(hook: Hook, wanted: str) -> bool:
    """Whether ``wanted`` (from ``reference.hooks``) names ``hook``."""
    return (wanted in (hook.name, hook.label, hook.prompt_file)
            or hook.label.endswith(f": {wanted}"))


def _objects(case: Case, hook: Hook) -> bool:
    """Whether ``hook`` is one of the case's objecting prompt hooks."""
    wanted = case.reference.hooks if case.reference else None
    return wanted is None or any(_names(hook, name) for name in wanted)


def _reason_for(case: Case) -> str:
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
        if permission and not _objects(self.case, hook):
            permission = None
        note = NOTE.format(case=self.case.name, decision=expected)
        return Reference(verdict_text(permission, _reason_for(self.case)), note)


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
    unknown = [w for w in wanted or [] if not any(_names(t.hook, w) for t in touched)]
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
