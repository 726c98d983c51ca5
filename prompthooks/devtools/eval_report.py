"""The ``prompthooks eval --report PATH`` file: Markdown, or HTML when PATH ends in .html.

Both hold, per model run, the confusion matrix, precision, recall and false-positive rate
overall, per hook and per model (as bars in HTML), latency p50/p95, tokens, cost and errored
rows, and where the verdicts came from when a cassette was used. ``eval --library`` gets one
table per model, a row per shipped policy with the regex baseline beside it, and a plot
(an SVG drawn here: inline in HTML, a file beside the Markdown). Pure functions of the
evaluation's data; the command writes the files.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from ..model.recording import sources_line
from .evaluation import PolicyRun, Report


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _lines(report: Report) -> list[tuple[str, dict[str, Any]]]:
    return [("overall", report.overall.summary()),
            *((f"hook {name}", c.summary()) for name, c in sorted(report.hooks.items())),
            *((f"model {name}", c.summary()) for name, c in sorted(report.models.items()))]


def _sources(*reports: Report) -> list[str]:
    """Where a cassette's verdicts came from, summed over ``reports`` (a paragraph and a blank
    line), if one was used."""
    counts: dict[str, int] = {}
    for report in reports:
        for source, count in report.sources.items():
            counts[source] = counts.get(source, 0) + count
    if not counts:
        return []
    line = sources_line(counts)
    return [line[:1].upper() + line[1:] + ".", ""]


HEAD = ("", "precision", "recall", "false-positive rate", "p50 s", "p95 s", "tokens", "cost $",
        "errors")


def _cells(s: dict[str, Any]) -> list[str]:
    return [_num(s["precision"]), _num(s["recall"]), _num(s["false_positive_rate"]),
            _num(s["latency_p50"]), _num(s["latency_p95"]),
            str(s["input_tokens"] + s["output_tokens"]), _num(s["cost_usd"], 5),
            str(s["errors"])]


def markdown(reports: Sequence[Report], dataset: str) -> str:
    out = [f"# prompthooks eval: {dataset}", ""]
    for report in reports:
        s = report.overall.summary()
        c = s["confusion"]
        out += [f"## Model: {report.model or '(as configured)'}", "",
                f"{len(report.rows)} rows, {s['errors']} errored (no verdict; not counted "
                "below).", "", *_sources(report),
                "| | predicted stop | predicted allow |", "|---|---:|---:|",
                f"| expected stop | {c['tp']} (TP) | {c['fn']} (FN) |",
                f"| expected allow | {c['fp']} (FP) | {c['tn']} (TN) |", "",
                "| " + " | ".join(HEAD) + " |", "|" + "---|" + "---:|" * (len(HEAD) - 1)]
        for name, summary in _lines(report):
            out.append("| " + " | ".join([name.replace("|", "\\|"), *_cells(summary)]) + " |")
        out.append("")
    return "\n".join(out)


def _bar(value: float | None, colour: str) -> str:
    if value is None:
        return "-"
    return (f'<div class="bar"><span style="width:{value * 100:.1f}%;background:{colour}">'
            f'</span></div> {value:.3f}')


STYLE = """body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.3em .6em;
text-align:right}td:first-child,th:first-child{text-align:left}
.bar{display:inline-block;width:8em;height:.8em;background:#eee;vertical-align:middle}
.bar span{display:block;height:100%}.tp,.tn{background:#e6f4ea}.fp,.fn{background:#fde8e8}"""


def html_page(reports: Sequence[Report], dataset: str) -> str:
    e = html.escape
    out = [f"<!doctype html><meta charset=utf-8><title>prompthooks eval: {e(dataset)}</title>",
           f"<style>{STYLE}</style><h1>prompthooks eval: {e(dataset)}</h1>"]
    for report in reports:
        s = report.overall.summary()
        c = s["confusion"]
        out += [f"<h2>Model: {e(report.model or '(as configured)')}</h2>",
                f"<p>{len(report.rows)} rows, {s['errors']} errored (no verdict; not counted "
                "below).</p>", *(f"<p>{e(line)}</p>" for line in _sources(report) if line),
                "<table><tr><th></th><th>predicted stop</th><th>predicted allow</th></tr>",
                f"<tr><th>expected stop</th><td class=tp>{c['tp']} TP</td>"
                f"<td class=fn>{c['fn']} FN</td></tr>",
                f"<tr><th>expected allow</th><td class=fp>{c['fp']} FP</td>"
                f"<td class=tn>{c['tn']} TN</td></tr></table>",
                "<table><tr>" + "".join(f"<th>{e(h)}</th>" for h in HEAD) + "</tr>"]
        for name, summary in _lines(report):
            cells = _cells(summary)
            bars = [_bar(summary["precision"], "#4a90d9"), _bar(summary["recall"], "#50a050"),
                    _bar(summary["false_positive_rate"], "#d9534f")]
            out.append("<tr><td>" + e(name) + "</td>" + "".join(f"<td>{b}</td>" for b in bars)
                       + "".join(f"<td>{e(v)}</td>" for v in cells[3:]) + "</tr>")
        out.append("</table>")
    return "\n".join(out) + "\n"


LIBRARY_HEAD = ("policy", "cases stop/allow", "recall", "false-positive rate", "errors",
                "timeouts", "median s", "median cost $", "baseline recall", "baseline FPR",
                "thresholds", "result")


def library_cells(run: PolicyRun) -> list[str]:
    """One policy's row of the ``eval --library`` table (terminal and report alike)."""
    s, b = run.model.overall.summary(), run.baseline.overall.summary()
    limits = [f"recall >= {run.thresholds.recall:g}" if run.thresholds.recall is not None
              else "", f"FPR <= {run.thresholds.false_positive_rate:g}"
              if run.thresholds.false_positive_rate is not None else ""]
    cases = f"{run.positives}/{run.negatives}"
    if run.bounded:
        cases += f" of {run.total}"
    return [run.policy, cases, _num(s["recall"]),
            _num(s["false_positive_rate"]), str(s["errors"]), str(s["timeouts"]),
            _num(s["latency_p50"], 2), _num(s["cost_median_usd"], 6), _num(b["recall"]),
            _num(b["false_positive_rate"]), ", ".join(x for x in limits if x) or "-",
            "pass" if not run.misses else "FAIL"]


def _by_model(runs: Sequence[PolicyRun]) -> dict[str, list[PolicyRun]]:
    groups: dict[str, list[PolicyRun]] = {}
    for run in runs:
        groups.setdefault(run.model.model or "(as configured)", []).append(run)
    return groups


ABOUT = ("Recall: the share of the cases the policy should stop that it stopped. "
         "False-positive rate (FPR): the share of the cases it should let through that it "
         "stopped. A case on which the model gave no verdict (a reply that is not a verdict, "
         "a failed call, a timeout) is an error: counted apart, neither stopped nor let "
         "through. Median s and median cost are per case. The regex baseline is the "
         "benchmark file's own patterns, run on the same cases.")


def bounded_note(limit: int) -> str:
    """What a run bounded by ``--limit`` measured: said at the head of its report and under
    its table, so its figures are never taken for the benchmark's."""
    return (f"Bounded run (--limit {limit}): at most {limit} cases per policy, half to stop "
            "and half to let through, spread evenly over each benchmark file (the same cases "
            "every run). These are not the benchmark's figures.")


def _limit(runs: Sequence[PolicyRun]) -> int | None:
    return next((run.limit for run in runs if run.limit is not None), None)


def library_markdown(runs: Sequence[PolicyRun], plot: str | None) -> str:
    limit = _limit(runs)
    out = ["# prompthooks eval --library", "",
           *((f"**{bounded_note(limit)}**", "") if limit else ()), ABOUT, ""]
    for model, group in _by_model(runs).items():
        out += [f"## Model: {model}", "", *_sources(*(run.model for run in group)),
                "| " + " | ".join(LIBRARY_HEAD) + " |",
                "|---|" + "---:|" * (len(LIBRARY_HEAD) - 3) + "---|---|"]
        out += ["| " + " | ".join(c.replace("|", "\\|") for c in library_cells(run)) + " |"
                for run in group]
        out.append("")
        missed = [line for run in group for line in run.misses]
        if missed:
            out += ["Below the thresholds:", "", *(f"- {line}" for line in missed), ""]
    if plot:
        out += [f"![recall and false-positive rate per policy, the model's beside the "
                f"baseline's]({plot})", ""]
    return "\n".join(out)


def library_html(runs: Sequence[PolicyRun]) -> str:
    e = html.escape
    out = ["<!doctype html><meta charset=utf-8><title>prompthooks eval --library</title>",
           f"<style>{STYLE}</style><h1>prompthooks eval --library</h1>"]
    limit = _limit(runs)
    if limit:
        out.append(f"<p><strong>{e(bounded_note(limit))}</strong></p>")
    out.append(f"<p>{e(ABOUT)}</p>")
    for model, group in _by_model(runs).items():
        out += [f"<h2>Model: {e(model)}</h2>",
                *(f"<p>{e(line)}</p>" for line in _sources(*(run.model for run in group)) if line),
                "<table><tr>" + "".join(f"<th>{e(h)}</th>" for h in LIBRARY_HEAD) + "</tr>"]
        out += ["<tr>" + "".join(f"<td>{e(c)}</td>" for c in library_cells(run)) + "</tr>"
                for run in group]
        out.append("</table>")
        missed = [line for run in group for line in run.misses]
        if missed:
            out.append("<ul>" + "".join(f"<li>{e(line)}</li>" for line in missed) + "</ul>")
    out.append(library_svg(runs))
    return "\n".join(out) + "\n"


# The model's bars, then the baseline's, in each of the two panels.
MODEL_COLOUR, BASELINE_COLOUR = "#4a78c2", "#b8b8b8"


def library_svg(runs: Sequence[PolicyRun]) -> str:
    """Two panels, recall and false-positive rate, with a pair of bars per policy and model
    run (the model's and the regex baseline's, each with its value) and a mark at the
    benchmark's threshold. A ratio that cannot be computed has no bar."""
    e = html.escape
    label_w, panel_w, gap, bar_h, pad = 250, 260, 50, 11, 8
    row_h = 2 * bar_h + pad
    top = 58
    width = label_w + 2 * panel_w + gap + 40
    height = top + row_h * len(runs) + 30
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<rect x="{label_w}" y="8" width="12" height="10" fill="{MODEL_COLOUR}"/>',
           f'<text x="{label_w + 16}" y="17">model</text>',
           f'<rect x="{label_w + 70}" y="8" width="12" height="10" fill="{BASELINE_COLOUR}"/>',
           f'<text x="{label_w + 86}" y="17">regex baseline</text>',
           f'<line x1="{label_w + 190}" y1="6" x2="{label_w + 190}" y2="19" stroke="#222" '
           'stroke-width="2"/>', f'<text x="{label_w + 196}" y="17">threshold</text>']
    for panel, (title, key) in enumerate((("recall (higher is better)", "recall"),
                                          ("false-positive rate (lower is better)",
                                           "false_positive_rate"))):
        x0 = label_w + panel * (panel_w + gap)
        out.append(f'<text x="{x0}" y="{top - 12}" font-weight="bold">{e(title)}</text>')
        for tick in (0, 0.5, 1):
            x = x0 + tick * panel_w
            out += [f'<line x1="{x:.1f}" y1="{top - 4}" x2="{x:.1f}" '
                    f'y2="{top + row_h * len(runs)}" stroke="#ddd"/>',
                    f'<text x="{x:.1f}" y="{top + row_h * len(runs) + 14}" '
                    f'text-anchor="middle">{tick:g}</text>']
        for index, run in enumerate(runs):
            y = top + index * row_h
            for offset, (report, colour) in enumerate(((run.model, MODEL_COLOUR),
                                                       (run.baseline, BASELINE_COLOUR))):
                value = report.overall.summary()[key]
                if value is None:
                    continue
                out += [f'<rect x="{x0}" y="{y + offset * bar_h}" '
                        f'width="{value * panel_w:.1f}" height="{bar_h - 1}" '
                        f'fill="{colour}"><title>{e(run.policy)}: {value:.3f}</title></rect>',
                        f'<text x="{x0 + value * panel_w + 3:.1f}" '
                        f'y="{y + offset * bar_h + bar_h - 2}" font-size="9">{value:.2f}</text>']
            # The benchmark's threshold: a dark mark across the pair.
            limit = (run.thresholds.recall if key == "recall"
                     else run.thresholds.false_positive_rate)
            if limit is not None:
                x = x0 + limit * panel_w
                out.append(f'<line x1="{x:.1f}" y1="{y - 1}" x2="{x:.1f}" y2="{y + 2 * bar_h}" '
                           f'stroke="#222" stroke-width="2"><title>threshold {limit:g}'
                           '</title></line>')
    for index, run in enumerate(runs):
        y = top + index * row_h + bar_h + 4
        name = run.policy if len(_by_model(runs)) == 1 else f"{run.policy} ({run.model.model})"
        out.append(f'<text x="{label_w - 8}" y="{y}" text-anchor="end">{e(name)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
