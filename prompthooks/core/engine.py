"""The engine: pick the hooks an event selects, run them all at once under deadlines, merge.

Every hook gets the deadline ``min(its own timeout, the run's deadline less a reserve)``; all
start together, so an event takes as long as its slowest hook, not the sum. The reserve is the
time a hook takes to be stopped (SIGTERM, a grace, SIGKILL; a model call giving up), so every
result, a timed-out hook's fallback included, is in before the run's deadline; a hook whose
executor is still busy at that deadline counts as timed out. Identical handlers listed by
several sources run once (fail-closed if any copy says so).

A rewritten input from a non-managed hook is judged again: every managed hook that applies to
the event with that input (matchers evaluated on it), under any of the host's event keys for
it, runs on it within the time left. A managed block denies the event; a managed hook that
fails or cannot answer in time refuses the rewrite. With no managed hook applying to the
rewritten input, the rewrite stands.

Side effects come in from the caller: the executors that run hooks (see core.executor), the
host's reading of a rewritten input, and the stand-in results of config sources that failed
to load. The engine itself imports no executor, host or loader.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from .events import STOP_EVENTS, Event
from .executor import Executor, ExecutorFor
from .hook import Hook, HostTool
from .merge import Decision, failure_line, merge
from .result import HookResult

# The host's reading of an event with a rewritten tool input (None: it cannot be read).
Reread = Callable[[Event, Mapping[str, Any]], "Event | None"]
# Hooks are stopped their executors' stop grace, plus this margin, before the run's deadline,
# so every result is in by then; at most half the time left, so a short budget still gives the
# hooks half of it.
STOP_MARGIN = 0.2
_CANCEL_POLL = 0.05  # seconds between looks at a run's cancel flag while hooks run


def select(hooks: Iterable[Hook], event: Event, host_tool: HostTool) -> list[Hook]:
    """The hooks that apply to ``event``, deduplicated, highest priority first.
    ``host_tool`` names a tool in a hook's dialect (for matchers on the host's tool name)."""
    chosen: dict[tuple[object, ...], Hook] = {}
    for hook in sorted(hooks, key=lambda h: (h.source.priority, h.index)):
        if not hook.applies_to(event, host_tool):
            continue
        if (event.name in STOP_EVENTS and hook.loop_limit is not None
                and event.loop_count is not None and event.loop_count >= hook.loop_limit):
            continue  # Cursor's per-hook loop_limit: this hook has had its follow-ups
        key = hook.identity()
        kept = chosen.get(key)
        if kept is None:
            chosen[key] = hook
        elif hook.fail_closed and not kept.fail_closed:
            chosen[key] = kept._replace(fail_closed=True)
    return list(chosen.values())


def _run_one(executor: Executor, hook: Hook, event: Event, deadline: float) -> HookResult:
    start = time.monotonic()
    try:
        return executor.run(hook, event, min(start + hook.timeout, deadline))
    except Exception as exc:  # a bug in an executor must not lose the other hooks' answers
        return HookResult(hook=hook, status="error", error=f"internal error: {exc!r}",
                          duration=time.monotonic() - start)


def hook_deadline(deadline: float, now: float, reserve: float) -> float:
    """The instant every hook must be done by, for a run that answers at ``deadline`` and
    needs ``reserve`` seconds to stop its hooks."""
    return deadline - min(reserve, max(0.0, deadline - now) / 2)


def run_hooks(hooks: Sequence[Hook], event: Event, deadline: float, executor_for: ExecutorFor,
              cancel: threading.Event | None = None) -> list[HookResult]:
    """Run every hook concurrently, each in a thread of its own (even one hook: its executor,
    not the caller, may be what overruns). Returns at ``deadline`` at the latest, or soon
    after ``cancel`` is set (the run was told to stop): a hook still running then counts as
    timed out."""
    results: list[HookResult | None] = [None] * len(hooks)
    executors = [executor_for(h) for h in hooks]
    started = time.monotonic()
    reserve = max((e.stop_grace for e in executors), default=0.0) + STOP_MARGIN
    stop_by = hook_deadline(deadline, started, reserve)

    def work(i: int, hook: Hook) -> None:
        results[i] = _run_one(executors[i], hook, event, stop_by)

    threads = [threading.Thread(target=work, args=(i, h), daemon=True)
               for i, h in enumerate(hooks)]
    if cancel is None or not cancel.is_set():
        for thread in threads:
            thread.start()
    for thread in threads:
        while thread.is_alive() and not (cancel is not None and cancel.is_set()):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            # With a cancel to watch, wake up now and then to see it.
            thread.join(left if cancel is None else min(left, _CANCEL_POLL))
    busy = {id(e): e for e, t in zip(executors, threads, strict=True) if t.is_alive()}
    for executor in busy.values():
        executor.stop()  # a hook still being stopped: no grace left for it
    late = time.monotonic() - started
    why = ("the run was stopped before it finished" if cancel is not None and cancel.is_set()
           else "did not finish before the run's deadline")
    return [r if r is not None else HookResult(hook=h, status="timeout", duration=late, error=why)
            for r, h in zip(results, hooks, strict=True)]


def _rewritten(reread: Reread, event: Event, tool_input: Mapping[str, Any]) -> Event | None:
    try:
        return reread(event, tool_input)
    except Exception:  # an event from no known host: the rewrite cannot be judged
        return None


def _refuse(decision: Decision, reason: str, results: Sequence[HookResult] = (),
            notice: str | None = None, user_message: str | None = None) -> Decision:
    return decision._replace(permission="deny", reason=reason,
                             user_message=user_message or reason,
                             updated_input=None, rewritten_by=None,
                             errors=decision.errors + ((notice,) if notice else ()),
                             results=decision.results + tuple(results))


def rejudge(decision: Decision, hooks: Sequence[Hook], event: Event, deadline: float,
            executor_for: ExecutorFor, reread: Reread, host_tool: HostTool) -> Decision:
    """Judge a non-managed hook's rewritten input by the managed hooks that apply to it."""
    author = decision.rewritten_by
    if decision.updated_input is None or author is None or author.managed:
        return decision
    unjudged = ("Blocked by prompthooks: the rewritten input could not be judged by the "
                f"managed policy (rewritten by hook '{author.name}')")
    changed = _rewritten(reread, event, decision.updated_input)
    if changed is None:
        return _refuse(decision, unjudged)
    # Every managed hook of the canonical event judges it, whichever of the host's events it
    # is written under: the host may never send the rewritten input under that other event
    # (Cursor's beforeShellExecution, beside the preToolUse that rewrote the command).
    changed = changed._replace(own_key=None, serves_other_dialects=True)
    guards = [h for h in select(hooks, changed, host_tool) if h.managed]
    if not guards:
        return decision
    results = run_hooks(guards, changed, deadline, executor_for)
    failed = [r for r in results if r.failed]
    if failed:
        return _refuse(decision, unjudged, results,
                       f"{failure_line(failed[0])} (judging the rewritten input)")
    verdict = merge(results)
    if verdict.permission == "deny":
        return _refuse(decision, verdict.reason or "Blocked by the managed policy.", results,
                       user_message=verdict.user_message)
    if verdict.permission == "ask" and decision.permission != "ask":
        return decision._replace(permission="ask", reason=verdict.reason,
                                 results=decision.results + tuple(results))
    return decision._replace(results=decision.results + tuple(results))


def decide(hooks: Sequence[Hook], event: Event, deadline: float, executor_for: ExecutorFor,
           *, reread: Reread, host_tool: HostTool, failed: Iterable[HookResult] = (),
           cancel: threading.Event | None = None) -> Decision:
    """Select, run and merge, then judge a rewritten input again (see the module
    docstring): the whole engine for one event, answered by ``deadline`` (or as soon as
    ``cancel`` is set). ``failed`` holds the results that stand in for config sources that
    did not load; ``reread`` is the host's reading of a rewritten input, ``host_tool`` the
    registry's naming of a tool in a hook's dialect."""
    selected = select(hooks, event, host_tool)
    decision = merge([*failed, *run_hooks(selected, event, deadline, executor_for, cancel)])
    return rejudge(decision, hooks, event, deadline, executor_for, reread, host_tool)
