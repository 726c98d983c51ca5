"""``prompthooks explain [EVENT] < event.json``: a dry run. Which config sources were found,
which hooks the event selects and why, and for each prompt hook the exact prompt that would be
sent and to which model. Nothing is run and no model is called.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..api import load_config, parse_event
from ..config import discovery
from ..devtools.explain import explain
from ..errors import EXIT_OK
from ..hosts import budget
from ..loading.ignored_files import unread_in_sources
from ..runner.stdin import stdin_hint
from . import output


def main(args: argparse.Namespace) -> int:
    stdin_hint("explain")
    data = sys.stdin.buffer.read()
    host, event = parse_event(data, args.host, args.event)
    managed = discovery.managed_dirs(args.managed_dir)
    # Every source, approved or not: the report says which hooks would not run, and why.
    config = load_config(args.config or None, event.project_dir, managed_dir=managed,
                         trusted_only=False)
    report = explain(config, event, budget(host, event.host_event))

    # What makes hooks silently never run: event keys no host has, files never read.
    report["warnings"] = [*config.unknown_events, *report["warnings"],
                          *unread_in_sources(config.loaded.sources)]
    if args.json:
        output.print_json(report)
    else:
        _print(report, host.title)
    return EXIT_OK


def _print(report: dict[str, Any], title: str) -> None:
    event = report["event"]
    about = f"{event['name']} ({title} {event['host_event']!r})"
    if event["tool"]:
        about += f", tool {event['tool']}"
        if event["host_tool"] and event["host_tool"] != event["tool"]:
            about += f" ({event['host_tool']!r})"
    if event["command"]:
        about += f", command {event['command']!r}"
    output.line(f"Event: {about}", "bold")
    output.line(f"Project: {event['project']}")
    output.line(f"Budget: {report['budget']:g} s for the whole run")
    cap = report.get("stop_cap")
    if cap:
        limit = f"cap {cap['cap']}" if cap["cap"] else "no cap"
        reached = " (reached: project and user hooks are skipped for this stop)" if (
            cap["cap"] and cap["blocks"] >= cap["cap"]) else ""
        output.line(f"Stop blocks in a row for this session: {cap['blocks']} ({limit}){reached}")
    output.line("Config sources, highest priority first:")
    for source in report["sources"] or [{"name": "none", "path": "no config found",
                                         "priority": ""}]:
        output.line(f"  {source['name']:<8} {source['path']}  [{source['trust']}]"
                    if source["name"] in ("project", "user") else
                    f"  {source['name']:<8} {source['path']}")
    for failure in report["failures"]:
        if failure["kind"] != "config":  # left out on purpose, not broken
            output.line(f"  LEFT OUT {failure['message']}", "yellow")
            continue
        policy = "fail-closed: blocks this event" if failure["fail_closed"] else "fail-open"
        output.line(f"  BROKEN   {failure['message']} ({policy})", "red")
    for warning in report["warnings"]:
        output.line(f"  warning: {warning}", "yellow")
    hooks = report["hooks"]
    running = sum(h["runs"] for h in hooks)
    output.line(f"Hooks for {event['name']}: {running} of {len(hooks)} would run"
                + (f" ({report['other_events']} more for other events)"
                   if report["other_events"] else ""), "bold")
    for hook in hooks:
        verdict = "RUNS" if hook["runs"] else "SKIP"
        policy = "fail-closed" if hook["fail_closed"] else "fail-open"
        name = hook["name"] if hook["kind"] != "command" else f"command {hook['name']}"
        output.line(f"  {verdict}  {name}  [{hook['source']}: "
                    f"{hook['label']}]  {policy}, timeout {hook['timeout']:g} s",
                    "green" if hook["runs"] else "dim")
        output.line(f"        why: {hook['why']}")
        prompt = hook.get("prompt")
        if prompt:
            _print_prompt(prompt)
        if "http" in hook:
            _print_http(hook["http"])


def _print_http(http: dict[str, Any]) -> None:
    output.line(f"        POST {http['url']}; proxy: {http['proxy']}")
    output.line(f"        headers: {', '.join(http['headers']) or 'none'}"
                + "; variables they may fill: "
                + (", ".join(http["allowed_env_vars"]) or "none"))


def _print_prompt(prompt: dict[str, Any]) -> None:
    if "error" in prompt:
        output.line(f"        cannot render: {prompt['error']}", "red")
        return
    output.line(f"        model: {prompt['model']}; endpoint: "
                f"{prompt['api_base'] or 'the provider default'}; key: {prompt['api_key']}")
    for note in prompt["notes"]:
        output.line(f"        note: {note}", "yellow")
    agent = prompt.get("agent")
    if agent:
        output.line(f"        tools (read-only): {agent['tools']}; at most {agent['max_turns']} "
                    f"turns", "cyan")
        output.line(f"        confined to: {agent['root']} (no '..', no link followed, no "
                    "hard-linked or special file)")
        output.line(f"        limits: {agent['limits']}")
        if "refused" in agent:
            output.line(f"        refused: {agent['refused']}", "red")
    for message in prompt["messages"]:
        output.line(f"        ----- {message['role']} message -----", "cyan")
        for text in message["content"].splitlines():
            output.line(f"        {text}")
