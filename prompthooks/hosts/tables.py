"""The mapping tables of docs/config.md, made from the registry (a test checks the doc against
them, so the tables cannot drift from what the code does)."""

from __future__ import annotations

from ..core.events import CANONICAL_TOOLS, MCP_PREFIX
from . import CANONICAL, HOSTS

_MCP = {"claude": f"`{MCP_PREFIX}<server>__<tool>`",
        "cursor": "`MCP:<tool>` (server unknown: `mcp__unknown__<tool>`)",
        "cline": "`use_mcp_tool` with `server_name`, `tool_name`; SDK: `<server>__<tool>`"}


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _header(first: str) -> list[str]:
    titles = [first, *(host.title for host in HOSTS.values())]
    return [_row(titles), _row(["---"] * len(titles))]


def event_table() -> str:
    """Canonical events (with the subject that narrows some) and each host's keys for them."""
    order: list[str] = []
    for host in (CANONICAL, *HOSTS.values()):
        for config_event in host.wire.CONFIG_EVENTS.values():
            if config_event.trigger.event not in order:
                order.append(config_event.trigger.event)
    lines = _header("canonical event")
    for event in order:
        subjects: list[str | None] = [None]
        for host in HOSTS.values():
            for ce in host.wire.CONFIG_EVENTS.values():
                if ce.trigger.event == event and ce.trigger.subject not in subjects:
                    subjects.append(ce.trigger.subject)
        for subject in subjects:
            cells = [f"`{event}`" + (f" (`{subject}`)" if subject else "")]
            for host in HOSTS.values():
                aliases = {key: alias for alias, key in host.config.EVENT_ALIASES.items()}
                keys = []
                for key, ce in host.wire.CONFIG_EVENTS.items():
                    if ce.trigger.event != event or ce.trigger.subject != subject:
                        continue
                    text = f"`{key}`"
                    if ce.trigger.tools:
                        tools = ["MCP tools" if t == MCP_PREFIX else t for t in ce.trigger.tools]
                        text += f" ({', '.join(tools)} only)"
                    if key in aliases:
                        text += f" (SDK: `{aliases[key]}`)"
                    keys.append(text)
                cells.append("; ".join(keys) or "—")
            lines.append(_row(cells))
    return "\n".join(lines)


def tool_table() -> str:
    """Canonical tools and each host's names for them."""
    lines = _header("canonical tool")
    for tool in CANONICAL_TOOLS:
        cells = [f"`{tool}`"]
        for host in HOSTS.values():
            wire = host.wire
            names = [f"`{name}`" for name, canon in wire.TOOL_NAMES.items() if canon == tool]
            shown = wire.host_tool(tool)
            if f"`{shown}`" not in names and shown in wire.TOOL_NAMES:
                names.append(f"`{shown}` (to its matchers)")
            cells.append(", ".join(names) or "—")
        lines.append(_row(cells))
    lines.append(_row(["MCP tools", *(_MCP.get(name, "—") for name in HOSTS)]))
    return "\n".join(lines)


if __name__ == "__main__":  # python -m prompthooks.hosts.tables: the tables of docs/config.md
    print(event_table(), tool_table(), sep="\n\n")
