"""The ``prompthooks eval --report PATH`` file: Markdown, or HTML when PATH ends in .html.

Both hold, per model run, the confusion matrix, precision, recall and false-positive rate
overall, per hook and per model (as bars in HTML), latency p50/p95, tokens, cost and errored
rows, and where the verdicts came from when a cassette was used. Pure functions of the
evaluation's data; the command writes the file.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from ..model.cassette import sources_line
from .evaluation import Report


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _lines(report: Report) -> list[tuple[str, dict[str, Any]]]:
    return [("overall", report.overall.summary()),
            *((f"hook {name}", c.summary()) for name, c in sorted(report.hooks.items())),
            *((f"model {name}", c.summary()) for name, c in sorted(report.models.items()))]


def _sources(report: Report) -> list[str]:
    """Where a cassette's verdicts came from (a paragraph and a blank line), if one was used."""
    if not report.sources:
        return []
    line = sources_line(report.sources)
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
