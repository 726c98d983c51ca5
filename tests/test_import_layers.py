"""The package's modules import each other without a loop: every import counted, the ones
made inside a function or under TYPE_CHECKING too, so each module stands above all it uses
(the resident process above the model client it serves, the loader above the host registry,
the config modules hosts read below it)."""

from __future__ import annotations

import ast
from pathlib import Path

import prompthooks

ROOT = Path(prompthooks.__file__).parent


def _module_of(path: Path) -> str:
    parts = ["prompthooks", *path.relative_to(ROOT).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _graph() -> dict[str, set[str]]:
    files = {_module_of(p): p for p in ROOT.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = package
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                base = f"{base}.{node.module}" if node.level and node.module else (
                    base if node.level else node.module or "")
                # `from package import module` names the module; other names, the package
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in files else base
                           for a in node.names]
            else:
                continue
            graph[name].update(t for t in targets if t in files and t != name)
    return graph


def _loops(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group: list[str] = []
            while True:
                top = stack.pop()
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_graph_sees_the_imports_it_must() -> None:
    graph = _graph()
    assert "prompthooks.dispatcher.run_process" in graph["prompthooks.dispatcher.resident"]
    assert "prompthooks.model.worker" in graph["prompthooks.dispatcher.resident"]
    assert "prompthooks.hosts" in graph["prompthooks.config.loader"]


def test_no_module_imports_itself_through_others() -> None:
    assert _loops(_graph()) == []
