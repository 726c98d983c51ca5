"""``prompthooks log stats``: counts, block rates and latency per hook, from audit rows."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any


def percentile(values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile of sorted ``values`` (0 for none)."""
    if not values:
        return 0.0
    rank = max(1, round(fraction * len(values) + 0.5 - 1e-9))
    return values[min(rank, len(values)) - 1]


def summarise(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Per hook (name and source): runs, decisions, errors, block rate, latency, tokens, cost."""
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    events: set[str] = set()
    total = 0
    for row in rows:
        groups.setdefault((row["hook"], row["source"]), []).append(row)
        events.add(row["run_id"])
        total += 1
    hooks = []
    for (hook, source), group in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        times = sorted(float(r["duration_ms"] or 0) for r in group)
        count = {d: sum(1 for r in group if r["decision"] == d)
                 for d in ("deny", "ask", "allow", "none")}
        tokens = sum((r["input_tokens"] or 0) + (r["output_tokens"] or 0) for r in group)
        hooks.append({
            "hook": hook, "source": source, "runs": len(group), **count,
            "errors": sum(1 for r in group if r["status"] != "ok"),
            "block_rate": count["deny"] / len(group),
            "p50_ms": percentile(times, 0.5), "p95_ms": percentile(times, 0.95),
            "max_ms": times[-1], "tokens": tokens,
            "cost": sum(float(r["cost"] or 0) for r in group),
        })
    return {"runs": total, "events": len(events), "hooks": hooks}
