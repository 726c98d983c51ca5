"""The dry run behind ``prompthooks explain``: which sources were found, which hooks an event
selects and why, for each prompt hook the exact request it would send, and for each http hook
where it posts the event. Nothing runs, no model is called and no http hook's URL is
contacted. Text that could hold a secret goes through the redaction pass.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ..api import Config
from ..core import stop_cap
from ..core.engine import select
from ..core.events import Event
from ..core.hook import Hook, shown_url
from ..hosts import get as get_host
from ..hosts import host_tool
from ..redaction import config_keys, redact

_WHAT = {"tool": "tool", "host_tool": "tool type", "command": "command",
         "subject": "event subject"}


def match_reason(hook: Hook, event: Event) -> tuple[bool, str]:
    """Whether ``hook`` applies to ``event`` (its event being the right one), and why."""
    trigger = hook.trigger
    if not hook.served_by(event):
        title = get_host(event.host).title
        if hook.dialect == event.host:
            return False, (f"{title} runs it for {hook.config_event}, not for "
                           f"{event.host_event}")
        return False, (f"{title} sends this action as a general event too; hooks written "
                       f"for another host run on that one, once")
    if trigger.tools and not trigger.fires_on(event):
        return False, (f"{hook.config_event} covers {', '.join(trigger.tools)} only; "
                       f"the tool is {event.tool_name!r}")
    if trigger.subject is not None and event.subject != trigger.subject:
        return False, (f"{hook.config_event} is for {trigger.subject!r} only; "
                       f"this is {event.subject!r}")
    if hook.match_on == "none":
        return True, f"{hook.config_event} has no matcher: every such event"
    matcher = hook.matcher
    if matcher.mode == "all":
        return True, "the matcher matches everything"
    subject = hook.match_subject(event, host_tool)
    what = f"the {_WHAT[hook.match_on]} {subject!r}"
    if hook.unchecked_server(event):
        what += (f" ({get_host(event.host).title} names no MCP server: the matcher's server "
                 "part is not checked)")
    ok = (matcher.matches_any_server(subject) if hook.unchecked_server(event)
          else matcher.matches(subject))
    if not ok and hook.matches_host_name(event):
        ok, what = True, (f"{get_host(event.host).title}'s own name for the tool, "
                          f"{event.host_tool_name!r}")
    pattern = matcher.pattern
    if matcher.mode == "names":
        return ok, f"matcher {pattern!r} {'names' if ok else 'does not name'} {what}"
    if matcher.mode == "full":
        return ok, (f"regex {pattern!r} {'matches' if ok else 'does not match'} "
                    f"all of {what}")
    return ok, f"regex {pattern!r} {'is' if ok else 'is not'} found in {what}"


def _prompt(hook: Hook, event: Event, environ: Mapping[str, str] | None,
            keys: list[str]) -> dict[str, Any]:
    # a prompt hook's request and the model modules (some 80 ms) only for an event that has
    # one: explain stays quick for command hooks
    from ..config.templates import TemplateError
    from ..executors.prompt import prepare

    try:
        request, conversation = prepare(hook, event)
    except TemplateError as exc:
        return {"error": str(exc)}
    endpoint = request.endpoint
    notes = []
    agent = None
    if hook.kind == "agent":
        # an agent's tools only for an agent hook, as above
        from ..executors import agent as agent_hook
        from ..executors.project_tools import LIMITS, unusable_root

        request = agent_hook.agent_request(hook, event)
        root = agent_hook.project_root(event)
        problem = unusable_root(root)
        # What the model may read, and how much: the tools, their limits, the folder.
        agent = {"tools": agent_hook.describe_tools(), "max_turns": agent_hook.turns(hook),
                 "root": os.path.realpath(root), "limits": LIMITS,
                 **({"refused": problem} if problem else {})}
    if conversation is not None:
        # The conversation itself is in the user message, as it would be sent (redacted).
        where = redact(conversation.source or "no file", keys, environ)
        if conversation.unread is not None:
            notes.append(f"transcript {where}: not read: {conversation.unread}")
        else:
            notes.append(f"transcript {where}: {len(conversation.entries)} entries read"
                         + (f" ({'; '.join(conversation.notes)})" if conversation.notes
                            else ""))
    return {
        "model": endpoint.model, "api_base": endpoint.api_base,
        "api_key": "set" if endpoint.api_key else "not set (the provider's own variable, "
                                                  "if any)",
        "messages": [{"role": m["role"],
                      "content": redact(m["content"], [endpoint.api_key, *keys], environ)}
                     for m in request.messages],
        "notes": notes,
        **({"agent": agent} if agent else {}),
    }


def http_target(hook: Hook) -> dict[str, Any]:
    """What an http hook sends where, as far as it can be shown: the URL without its user,
    password or query (either may hold a token), the header names (their values may), the
    variables the headers may fill, and which proxy settings apply."""
    settings = hook.prompt_settings
    proxy = ("the proxy its file names" if hook.managed and settings and settings.proxy
             else "none (a managed hook reads no proxy variable)" if hook.managed
             else "the environment's proxy variables")
    return {"url": shown_url(hook.url or ""),
            "headers": sorted({name for name, _ in hook.headers}),
            "allowed_env_vars": list(hook.allowed_env_vars), "proxy": proxy}


def _hook_entry(hook: Hook, runs: bool, why: str, keys: list[str],
                environ: Mapping[str, str] | None) -> dict[str, Any]:
    return {"name": redact(hook.name, keys, environ), "label": redact(hook.label, keys, environ),
            "source": hook.source.name,
            "kind": hook.kind, "fail_closed": hook.fail_closed, "timeout": hook.timeout,
            "runs": runs, "why": redact(why, keys, environ)}  # it quotes the command


def explain(config: Config, event: Event, budget: float,
            environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The dry-run report for one event, as plain data (``--json`` prints it as is)."""
    untrusted = {t.source: t for t in config.loaded.trust if not t.trusted}
    kept = {hook.identity(): hook
            for hook in select([h for h in config.hooks if h.source not in untrusted], event,
                               host_tool)}
    keys = config_keys((h.api_key_env for h in config.hooks), environ)
    hooks: list[dict[str, Any]] = []
    others = 0
    for hook in sorted(config.hooks, key=lambda h: (h.source.priority, h.index)):
        if hook.trigger.event != event.name:
            others += 1
            continue
        runs, why = match_reason(hook, event)
        winner = kept.get(hook.identity()) if runs else None
        if hook.source in untrusted:
            state = untrusted[hook.source]
            runs, why = False, (f"{why}; but it does not run: its {hook.source.name} config is "
                                f"{state.describe()}; {state.advice()}")
            winner = None
        elif runs and winner is None:
            runs, why = False, (f"{why}; but its loop_limit ({hook.loop_limit}) is reached "
                                f"(loop_count {event.loop_count})")
        elif winner is not None and winner.label != hook.label:
            runs, why = False, f"{why}; the same handler runs once, as {winner.label}"
        entry = _hook_entry(winner or hook, runs, why, keys, environ)
        if runs and hook.judged:
            entry["prompt"] = _prompt(hook, event, environ, keys)
        if hook.kind == "http":
            entry["http"] = http_target(hook)
        hooks.append(entry)
    trust = {t.source: t.describe() for t in config.loaded.trust}
    failures = [{"source": f.source.name, "message": redact(f.message, keys, environ),
                 "kind": f.kind,
                 "fail_closed": f.fail_closed and (f.events is None or event.name in f.events)}
                for f in config.loaded.failures]
    return {
        "host": event.host,
        "event": {"host_event": event.host_event, "name": event.name, "tool": event.tool_name,
                  "host_tool": event.host_tool_name,
                  "command": redact(event.command, keys, environ) if event.command else None,
                  "subject": event.subject, "project": event.project_dir},
        "sources": [{"name": s.name, "path": s.path, "priority": s.priority,
                     "trust": trust.get(s, "no approval needed")}
                    for s in config.loaded.sources],
        "failures": failures, "warnings": config.warnings, "budget": budget,
        "hooks": hooks, "other_events": others, "stop_cap": _stop_cap(config, event, environ),
    }


def _stop_cap(config: Config, event: Event,
              environ: Mapping[str, str] | None) -> dict[str, int] | None:
    """A stop's consecutive-block count and cap (core.stop_cap), or None."""
    cap = stop_cap.for_event(event, config.hooks, os.environ if environ is None else environ)
    return None if cap is None else {"cap": cap.cap, "blocks": cap.blocks}
