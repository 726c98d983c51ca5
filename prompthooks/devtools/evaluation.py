"""``prompthooks eval``: run a labeled dataset through the hooks and measure them.

A dataset is JSON Lines, one row per event: ``{"event": {...}, "expected": "deny"}`` with
optional ``"host"`` and ``"id"``. ``expected`` is ``deny``/``block``/``ask`` (the hooks should
stop it: a positive) or ``allow`` (a negative); a decision of ``ask`` counts as stopping it.
A row on which a hook gave no verdict (an error, a timeout, no recorded reply) is an error:
counted apart, never as a negative or a positive.
Rows run with bounded concurrency; the report gives the confusion matrix, precision, recall,
false-positive rate, latency p50/p95, tokens and cost, overall, per hook and per model.

The shipped policies' benchmarks (``prompts/bench/<policy>.yaml``, ``eval --library``) are case
files with a ``policy``, the ``thresholds`` its figures must reach and a regex ``baseline``:
the patterns a team without a model would write, counted by the same :class:`Counts` beside the
model's figures.
"""

from __future__ import annotations

import json
import math
import re
import statistics
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .. import transcripts
from ..api import Config, dispatch
from ..config.templates import library_dir
from ..core.result import HookResult
from ..errors import PromptHooksError
from ..model.chain import ModelChain
from ..model.recording import Cassette
from ..paths import read_state
from .cases import CaseFile, config_for, read_cases_as

POSITIVE = frozenset({"deny", "block", "ask"})


@dataclass(frozen=True)
class Row:
    id: str
    event: dict[str, Any]
    expected: bool  # True: the hooks should stop this event
    host: str | None = None
    event_name: str | None = None
    transcript: Path | None = None  # read in place of the one the event names


@dataclass
class Counts:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    errors: int = 0
    timeouts: int = 0  # of the errors: a hook that ran out of time
    latencies: list[float] = field(default_factory=list)
    costs: list[float] = field(default_factory=list)  # per row, where its cost is known
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = None

    def add(self, expected: bool, predicted: bool) -> None:
        if expected and predicted:
            self.tp += 1
        elif predicted:
            self.fp += 1
        elif expected:
            self.fn += 1
        else:
            self.tn += 1

    def summary(self) -> dict[str, Any]:
        def ratio(a: int, b: int) -> float | None:
            return round(a / b, 4) if b else None

        return {
            "confusion": {"tp": self.tp, "fp": self.fp, "fn": self.fn, "tn": self.tn},
            "precision": ratio(self.tp, self.tp + self.fp),
            "recall": ratio(self.tp, self.tp + self.fn),
            "false_positive_rate": ratio(self.fp, self.fp + self.tn),
            "accuracy": ratio(self.tp + self.tn, self.tp + self.fp + self.fn + self.tn),
            "errors": self.errors,
            "timeouts": self.timeouts,
            "latency_p50": percentile(self.latencies, 50),
            "latency_p95": percentile(self.latencies, 95),
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": None if self.cost is None else round(self.cost, 6),
            "cost_median_usd": (round(statistics.median(self.costs), 8) if self.costs
                                else None),
        }


def percentile(values: Sequence[float], pct: float) -> float | None:
    """Nearest-rank percentile, in seconds rounded to the millisecond."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return round(ordered[rank - 1], 3)


def read_dataset(path: Path) -> list[Row]:
    rows = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise PromptHooksError(f"{path}: cannot read: {exc}") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            expected = str(data["expected"]).lower()
            if expected not in POSITIVE | {"allow"} or not isinstance(data["event"], dict):
                raise ValueError(f"expected must be deny, block, ask or allow, not {expected!r}")
        except (ValueError, KeyError, TypeError) as exc:
            raise PromptHooksError(f"{path}: line {number}: a row needs an 'event' object and "
                                   f"an 'expected' label ({exc})") from None
        rows.append(Row(str(data.get("id", number)), data["event"], expected in POSITIVE,
                        data.get("host")))
    if not rows:
        raise PromptHooksError(f"{path}: no rows")
    return rows


def _cost(model: str | None, tokens_in: int | None, tokens_out: int | None) -> float | None:
    if not model or tokens_in is None or tokens_out is None:
        return None
    try:
        # litellm's price table: importing litellm takes seconds, only for a row with tokens
        from ..model.litellm_client import import_litellm

        prompt, completion = import_litellm().cost_per_token(
            model=model, prompt_tokens=tokens_in, completion_tokens=tokens_out)
        return float(prompt) + float(completion)
    except Exception:
        return None  # a model litellm's cost map does not know


def _account(counts: Counts, result: HookResult, expected: bool) -> None:
    if result.failed:
        counts.errors += 1
        counts.timeouts += result.status == "timeout"
    else:
        counts.add(expected, result.permission in POSITIVE)
    counts.latencies.append(result.duration)
    counts.input_tokens += result.input_tokens or 0
    counts.output_tokens += result.output_tokens or 0
    # The call's own cost when it has one (litellm's price, or a LiteLLM Proxy's header),
    # else the price map's for the tokens (a replayed reply carries no cost).
    cost = (result.cost if result.cost is not None
            else _cost(result.model, result.input_tokens, result.output_tokens))
    if cost is not None:
        counts.cost = (counts.cost or 0.0) + cost
        counts.costs.append(cost)


@dataclass
class Report:
    model: str | None
    overall: Counts = field(default_factory=Counts)
    hooks: dict[str, Counts] = field(default_factory=dict)
    models: dict[str, Counts] = field(default_factory=dict)
    rows: list[dict[str, Any]] = field(default_factory=list)
    # Where a cassette's verdicts came from: "recording" (a model's reply replayed),
    # "reference" (written from an expectation, not a model's output), "model" (asked now).
    sources: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"model": self.model, "overall": self.overall.summary(),
                "hooks": {k: v.summary() for k, v in sorted(self.hooks.items())},
                "models": {k: v.summary() for k, v in sorted(self.models.items())},
                "sources": dict(sorted(self.sources.items())), "rows": self.rows}


def evaluate(rows: Sequence[Row], config: Config, model: str | None = None,
             concurrency: int = 4, budget: float = 60.0,
             progress: Callable[[int, int], None] | None = None,
             cassette: Cassette | None = None) -> Report:
    """Run every row (with every prompt hook forced to ``model`` if given, else on the model
    the config names: ``PROMPTHOOKS_MODEL`` is ignored; through ``cassette`` when given) and
    count."""
    models = ModelChain(cassette=cassette, model=model, suite=True)
    report = Report(model)
    lock = threading.Lock()
    done = 0
    # The transcript a row carries is process-wide while it runs (transcripts.given): rows that
    # carry one run one at a time, and so do the others then (none must read another's).
    conversations = any(row.transcript for row in rows)

    def one(row: Row) -> None:
        nonlocal done
        try:
            with (transcripts.given(row.transcript) if conversations else nullcontext()):
                outcome = dispatch(row.event, host=row.host, event_name=row.event_name,
                                   config=config, budget=budget, count_stops=False,
                                   models=models)
        except PromptHooksError as exc:
            with lock:
                report.overall.errors += 1
                report.rows.append({"id": row.id, "decision": "error", "error": str(exc)})
                done += 1
                if progress:
                    progress(done, len(rows))
            return
        decision = outcome.decision
        errored = any(r.failed for r in decision.results)
        with lock:
            if errored:
                report.overall.errors += 1
                report.overall.timeouts += any(r.status == "timeout" for r in decision.results)
            else:
                report.overall.add(row.expected, decision.permission in POSITIVE)
            report.overall.latencies.append(max((r.duration for r in decision.results),
                                                default=0.0))
            costs = [c for c in (r.cost if r.cost is not None
                                 else _cost(r.model, r.input_tokens, r.output_tokens)
                                 for r in decision.results if r.model) if c is not None]
            if costs:
                report.overall.costs.append(sum(costs))
            for result in decision.results:
                _account(report.hooks.setdefault(result.hook.name, Counts()), result,
                         row.expected)
                if result.model:
                    _account(report.models.setdefault(result.model, Counts()), result,
                             row.expected)
                report.overall.input_tokens += result.input_tokens or 0
                report.overall.output_tokens += result.output_tokens or 0
            report.rows.append({"id": row.id, "expected": "stop" if row.expected else "allow",
                                "decision": "error" if errored
                                else decision.permission or "none",
                                "problems": list(outcome.problems)})
            done += 1
            if progress:
                progress(done, len(rows))

    with ThreadPoolExecutor(max_workers=1 if conversations else max(1, concurrency)) as pool:
        list(pool.map(one, rows))
    costs = [c.cost for c in report.models.values() if c.cost is not None]
    report.overall.cost = sum(costs) if costs else None
    report.rows.sort(key=lambda r: str(r["id"]))
    return report


@dataclass(frozen=True)
class Thresholds:
    """What a run must reach to pass (``None``: not checked). Errored rows fail the run unless
    ``max_errors`` allows them: a row nobody judged measures nothing."""

    min_precision: float | None = None
    min_recall: float | None = None
    max_fpr: float | None = None
    max_errors: int = 0


def missed(report: Report, limits: Thresholds) -> list[str]:
    """One line per threshold ``report`` misses (a ratio with no rows to compute it on, such
    as precision with nothing predicted, misses its threshold too)."""
    s = report.overall.summary()
    name = f"model {report.model}: " if report.model else ""
    lines = []
    for key, label, limit, low in (("precision", "precision", limits.min_precision, True),
                                   ("recall", "recall", limits.min_recall, True),
                                   ("false_positive_rate", "false-positive rate",
                                    limits.max_fpr, False)):
        value = s[key]
        if limit is None:
            continue
        if value is None:
            lines.append(f"{name}{label} cannot be computed (no rows to compute it on); "
                         f"{'minimum' if low else 'maximum'} {limit:g}")
        elif (value < limit) if low else (value > limit):
            side = "below the minimum" if low else "above the maximum"
            lines.append(f"{name}{label} {value:.3f} is {side} {limit:g}")
    if s["errors"] > limits.max_errors:
        lines.append(f"{name}{s['errors']} row{'s' if s['errors'] != 1 else ''} errored (no "
                     f"verdict); at most {limits.max_errors} allowed (--max-errors)")
    return lines


COLUMNS = ("", "tp", "fp", "fn", "tn", "prec", "recall", "fpr", "p50 s", "p95 s", "tokens",
           "cost $", "err")


def table_rows(report: Report) -> list[list[object]]:
    """The human report of one model run: overall, then per hook and per model."""

    def num(value: float | None, digits: int = 3) -> str:
        return "-" if value is None else f"{value:.{digits}f}"

    def row(name: str, counts: Counts) -> list[object]:
        s = counts.summary()
        c = s["confusion"]
        return [name, c["tp"], c["fp"], c["fn"], c["tn"], num(s["precision"]),
                num(s["recall"]), num(s["false_positive_rate"]), num(s["latency_p50"]),
                num(s["latency_p95"]), s["input_tokens"] + s["output_tokens"],
                num(s["cost_usd"], 5), s["errors"]]

    return [row("overall", report.overall),
            *(row(f"hook {name}", c) for name, c in sorted(report.hooks.items())),
            *(row(f"model {name}", c) for name, c in sorted(report.models.items()))]


class Baseline(BaseModel):
    """A regex baseline: what a team without a model would write. The ``block`` patterns are
    searched in the text of the event's ``fields`` (dotted paths; a value that is not a
    string is searched as canonical JSON; ``transcript`` is the case's transcript file); any
    match stops the event unless an ``unless`` pattern matches too. Python ``re`` syntax;
    ``(?i)`` for case-insensitive."""

    model_config = ConfigDict(extra="forbid")

    fields: list[str] = Field(min_length=1)
    block: list[str] = Field(min_length=1)
    unless: list[str] = Field(default_factory=list)

    @field_validator("block", "unless")
    @classmethod
    def _compiles(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"pattern {pattern!r} does not compile: {exc}") from None
        return patterns

    def text(self, event: dict[str, Any], transcript: Path | None = None) -> str:
        parts = []
        for path in self.fields:
            if path == "transcript":
                data = read_state(transcript) if transcript else None
                parts.append(data.decode("utf-8", "replace") if data else "")
                continue
            value: Any = event
            for key in path.split("."):
                value = value.get(key) if isinstance(value, dict) else None
            if isinstance(value, str):
                parts.append(value)
            elif value is not None:
                parts.append(json.dumps(value, sort_keys=True, ensure_ascii=False))
        return "\n".join(parts)

    def stops(self, event: dict[str, Any], transcript: Path | None = None) -> bool:
        text = self.text(event, transcript)
        return (any(re.search(p, text) for p in self.block)
                and not any(re.search(p, text) for p in self.unless))


class BenchThresholds(BaseModel):
    """What the policy must reach on its benchmark (``None``: not checked)."""

    model_config = ConfigDict(extra="forbid")

    recall: float | None = Field(default=None, ge=0, le=1)
    false_positive_rate: float | None = Field(default=None, ge=0, le=1)


class BenchFile(CaseFile):
    """A shipped policy's benchmark: a case file (each case with its ``source``), the
    thresholds and the regex baseline."""

    policy: str
    thresholds: BenchThresholds = Field(default_factory=BenchThresholds)
    baseline: Baseline


def read_bench_file(path: Path) -> BenchFile:
    spec = read_cases_as(path, BenchFile)
    for number, case in enumerate(spec.cases):
        if case.expect.decision is None:  # an expected failure measures nothing
            raise PromptHooksError(f"{path}: cases.{number}: a benchmark case needs a "
                                   "'decision'")
    return spec


def bench_rows(path: Path, spec: BenchFile) -> list[Row]:
    return [Row(case.name, case.event, case.expect.decision in POSITIVE, case.host,
                case.event_name,
                (path.parent / case.transcript).resolve() if case.transcript else None)
            for case in spec.cases]


def bounded(rows: list[Row], limit: int | None) -> list[Row]:
    """At most ``limit`` of ``rows``, the same every run: half of them to stop and half to let
    through (the other side fills in where one runs short), each side's picks spread evenly
    over the file's order, so a bounded run still draws on each of the benchmark's sources."""
    if limit is None or limit >= len(rows):
        return rows
    stop = [n for n, row in enumerate(rows) if row.expected]
    allow = [n for n, row in enumerate(rows) if not row.expected]
    stops = min(len(stop), max(limit - len(allow), (limit + 1) // 2))
    chosen = {side[i * len(side) // count]
              for side, count in ((stop, stops), (allow, limit - stops)) for i in range(count)}
    return [row for n, row in enumerate(rows) if n in chosen]  # in the file's order


def run_baseline(rows: Sequence[Row], baseline: Baseline) -> Report:
    """The regex baseline over ``rows``, counted as a model run is (no tokens, no cost)."""
    report = Report("regex baseline")
    for row in rows:
        start = time.monotonic()
        stops = baseline.stops(row.event, row.transcript)
        report.overall.latencies.append(time.monotonic() - start)
        report.overall.add(row.expected, stops)
        report.rows.append({"id": row.id, "expected": "stop" if row.expected else "allow",
                            "decision": "deny" if stops else "none"})
    return report


@dataclass
class PolicyRun:
    """One shipped policy measured on its benchmark: the model's run and the baseline's."""

    policy: str
    path: Path
    positives: int
    negatives: int
    thresholds: BenchThresholds
    model: Report
    baseline: Report
    misses: list[str] = field(default_factory=list)
    limit: int | None = None  # --limit: the cases measured are a subset of the benchmark's
    total: int = 0  # the benchmark's cases

    @property
    def bounded(self) -> bool:
        return self.positives + self.negatives < self.total

    def as_dict(self) -> dict[str, Any]:
        return {"policy": self.policy, "benchmark": str(self.path),
                "cases": {"stop": self.positives, "allow": self.negatives},
                "limit": self.limit, "benchmark_cases": self.total,
                "thresholds": self.thresholds.model_dump(), "model": self.model.as_dict(),
                "baseline": {k: v for k, v in self.baseline.as_dict().items()
                             if k in ("overall", "rows")},
                "passed": not self.misses, "missed": self.misses}


def library_benchmarks() -> list[Path]:
    """The shipped policies' benchmark files: ``bench/`` beside the installed library."""
    folder = library_dir()
    found = sorted((folder / "bench").glob("*.yaml")) if folder else []
    if not found:
        raise PromptHooksError("eval --library: the shipped policies' benchmarks are not "
                               "installed with this copy of prompthooks")
    return found


def evaluate_bench(path: Path, model: str | None, limits: Thresholds, concurrency: int = 4,
                   budget: float | None = None,
                   progress: Callable[[int, int], None] | None = None,
                   cassette: Cassette | None = None, limit: int | None = None) -> PolicyRun:
    """Measure one benchmark file's policy on ``model`` (else the model its config names),
    and its regex baseline; ``limits`` are the command line's, the file's thresholds fill
    what they leave unset. ``limit``: at most that many of its cases (:func:`bounded`)."""
    spec = read_bench_file(path)
    config = config_for(path, spec)
    if config.errors:
        raise PromptHooksError(f"config {config.errors[0]}")
    every = bench_rows(path, spec)
    rows = bounded(every, limit)
    report = evaluate(rows, config, model, concurrency, budget or spec.budget, progress,
                      cassette)
    # Named for the model asked: the one given, the file's, else the one its hooks named.
    report.model = model or spec.model or next(iter(sorted(report.models)), None)
    own = Thresholds(limits.min_precision,
                     spec.thresholds.recall if limits.min_recall is None else limits.min_recall,
                     (spec.thresholds.false_positive_rate if limits.max_fpr is None
                      else limits.max_fpr), limits.max_errors)
    positives = sum(row.expected for row in rows)
    return PolicyRun(spec.policy, path, positives, len(rows) - positives, spec.thresholds,
                     report, run_baseline(rows, spec.baseline),
                     [f"{spec.policy}: {line}" for line in missed(report, own)], limit,
                     len(every))

