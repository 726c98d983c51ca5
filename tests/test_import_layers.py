"""The package is built in layers, each folder one layer, and every import runs downward: a
module imports from its own layer or one below it, never from one above (the table below,
drawn in docs/architecture.md). Every import is counted, the ones made inside a function or
under TYPE_CHECKING too, since moving an import into a function hides a dependency, it does
not remove it. Modules still import each other without a loop, also inside one layer."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path

import prompthooks

ROOT = Path(prompthooks.__file__).parent

# Lowest first. An entry is a package (every module in it) or a module; a module belongs to
# its longest entry. ``prompthooks`` names the package's own ``__init__`` only.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("prompthooks.digests",),  # sha256 without OpenSSL: standard library only
    ("prompthooks._version",),
    ("prompthooks.redaction",),
    ("prompthooks.errors",),
    ("prompthooks.address",),  # the resident process's socket: standard library only
    ("prompthooks.paths",),
    ("prompthooks.core",),
    ("prompthooks.transcripts", "prompthooks.notices"),
    ("prompthooks.config",),  # what a host's config reader builds on
    ("prompthooks.model",),
    ("prompthooks.install",),  # what a host's glue is written with
    ("prompthooks.hosts",),
    ("prompthooks.executors",),
    ("prompthooks.audit",),
    ("prompthooks.loading",),  # the loader, cache, trust, managed policy: above the hosts
    ("prompthooks.setup",),  # each host's glue by name, the starter
    ("prompthooks.api", "prompthooks.testing", "prompthooks"),
    ("prompthooks.runner",),
    ("prompthooks.dispatcher",),
    ("prompthooks.devtools",),
    ("prompthooks.commands",),
    ("prompthooks.cli",),
    # The console script's thin client stands above everything: it hands a command line it
    # does not take to the full parser (cli).
    ("prompthooks.__main__", "prompthooks.dispatcher.client"),
)


@dataclass(frozen=True)
class Import:
    module: str
    line: int
    target: str


def _module_of(path: Path) -> str:
    parts = ["prompthooks", *path.relative_to(ROOT).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _files() -> dict[str, Path]:
    return {_module_of(p): p for p in ROOT.rglob("*.py")}


def _imports_of(name: str, source: str, modules: set[str], is_package: bool = False
                ) -> list[Import]:
    """Every import of package modules in ``source`` (module ``name``), wherever it is made."""
    package = name if is_package else name.rpartition(".")[0]
    found: list[Import] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            base = f"{base}.{node.module}" if node.level and node.module else (
                base if node.level else node.module or "")
            # `from package import module` names the module; other names, the package
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                       for a in node.names]
        else:
            continue
        found += [Import(name, node.lineno, t) for t in targets if t in modules and t != name]
    return found


def _imports() -> list[Import]:
    files = _files()
    return [each for name, path in files.items()
            for each in _imports_of(name, path.read_text(encoding="utf-8"), set(files),
                                    path.name == "__init__.py")]


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {name: set() for name in _files()}
    for each in _imports():
        graph[each.module].add(each.target)
    return graph


def _layer(module: str) -> int | None:
    """The index of ``module``'s layer in LAYERS (its longest entry), None when it has none."""
    best: tuple[int, int] | None = None  # (length of the entry, layer)
    for index, entries in enumerate(LAYERS):
        for entry in entries:
            inside = module == entry or (entry != "prompthooks"
                                         and module.startswith(f"{entry}."))
            if inside and (best is None or len(entry) > best[0]):
                best = (len(entry), index)
    return None if best is None else best[1]


def _upward(imports: list[Import]) -> list[str]:
    """Each import from a lower layer to a higher one, as ``module:line imports target``."""
    found: list[str] = []
    for each in imports:
        low, high = _layer(each.module), _layer(each.target)
        if low is not None and high is not None and high > low:
            found.append(f"{each.module}:{each.line} imports {each.target} "
                         f"(layer {LAYERS[high][0]} is above {LAYERS[low][0]})")
    return found


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
    assert "prompthooks.model.model_process" in graph["prompthooks.dispatcher.resident"]
    # inside a function
    assert "prompthooks.cli" in graph["prompthooks.dispatcher.client"]
    # under TYPE_CHECKING
    assert "prompthooks.runner.job" in graph["prompthooks.dispatcher.client"]


def test_every_module_has_a_layer() -> None:
    assert [name for name in _files() if _layer(name) is None] == []


def test_every_import_runs_downward() -> None:
    assert _upward(_imports()) == []


def test_a_planted_upward_import_is_named_with_its_line() -> None:
    modules = set(_files())
    source = ("from __future__ import annotations\n\n"
              "def reply() -> None:\n"
              "    from ..hosts import HOSTS  # a layer up, hidden in a function\n")
    planted = _imports_of("prompthooks.config.planted", source, modules)
    assert planted == [Import("prompthooks.config.planted", 4, "prompthooks.hosts")]  # canary
    assert _upward(planted) == ["prompthooks.config.planted:4 imports prompthooks.hosts "
                                "(layer prompthooks.hosts is above prompthooks.config)"]
    # The same import one layer up runs downward.
    assert _upward(_imports_of("prompthooks.loading.planted", source, modules)) == []



def test_no_module_imports_itself_through_others() -> None:
    assert _loops(_graph()) == []


def test_the_loop_check_sees_a_planted_loop() -> None:
    graph = _graph()
    graph["prompthooks.paths"] = graph["prompthooks.paths"] | {"prompthooks.errors"}
    graph["prompthooks.errors"] = graph["prompthooks.errors"] | {"prompthooks.paths"}
    assert ["prompthooks.errors", "prompthooks.paths"] in _loops(graph)


# A lint pragma (noqa and its codes, type: ignore and its codes) is no reason.
_PRAGMA = re.compile(r"#\s*(noqa(:\s*[A-Z]+[0-9]+(\s*,\s*[A-Z]+[0-9]+)*)?"
                     r"|type:\s*ignore(\[[^\]]*\])?)")


def _reasons(source: str) -> dict[int, bool]:
    """Line number -> whether a comment on that line says something (a pragma does not), and
    whether the line holds nothing but that comment."""
    said: dict[int, bool] = {}
    lines = source.splitlines()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT and re.search(r"[A-Za-z]", _PRAGMA.sub("", token.string)):
            row = token.start[0]
            said[row] = lines[row - 1].lstrip().startswith("#")
    return said


def _unexplained(source: str) -> list[int]:
    """The first line of each import made inside a function without a comment that says why:
    on one of its lines, or on a line of comment just above it. Imports that follow each other
    share one: one comment says why for a group."""
    said = _reasons(source)
    found: list[int] = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for body in _bodies(node):
            group: list[ast.stmt] = []
            for statement in [*body, None]:
                if isinstance(statement, ast.Import | ast.ImportFrom):
                    group.append(statement)
                    continue
                if group:
                    first, last = group[0].lineno, group[-1].end_lineno or group[-1].lineno
                    if not (said.get(first - 1) or any(
                            row in said for row in range(first, last + 1))):
                        found.append(first)
                group = []
    return sorted(set(found))


def _bodies(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[list[ast.stmt]]:
    """Every statement list inside ``function`` (its body, its branches, its handlers), not
    those of the functions and classes defined in it, which are visited on their own."""
    found: list[list[ast.stmt]] = []
    stack: list[ast.AST] = [function]
    while stack:
        node = stack.pop()
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            value = getattr(node, name, None)
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                found.append(value)
            if isinstance(value, list):
                stack += [each for each in value if not isinstance(
                    each, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)]
    return found


def test_every_import_inside_a_function_says_why() -> None:
    """An import is made inside a function only where the run's cost (or a quick command's)
    or an optional dependency needs it, and then a comment says which."""
    checked = sorted(ROOT.rglob("*.py"))
    assert ROOT / "cli.py" in checked and ROOT / "model" / "direct.py" in checked
    found = [f"{path.relative_to(ROOT.parent)}:{line}" for path in checked
             for line in _unexplained(path.read_text(encoding="utf-8"))]
    assert found == []


def test_an_unexplained_import_in_a_function_is_named() -> None:
    source = ("import os\n\n\n"
              "def a() -> None:\n"
              "    import json\n\n"  # line 5: no reason (the canary)
              "    if os.sep:\n"
              "        import yaml  # noqa: F401\n"  # line 8: a pragma is no reason
              "    # litellm: only for a call on its path\n"
              "    import litellm\n"  # line 10: the comment above says why
              "    import openai\n\n"  # line 11: in the same group
              "    def inner() -> None:\n"
              "        import sqlite3  # the audit: only when one is read\n"
              "        import ssl\n\n"  # line 15: sqlite3's comment covers it
              "    try:\n"
              "        import re2  # type: ignore[import-untyped]\n"  # line 18: a pragma only
              "    except ImportError:\n"
              "        from . import x  # an optional extra\n")
    assert _unexplained(source) == [5, 8, 18]
    # Each, given a reason, passes.
    fixed = (source.replace("import json\n", "import json  # only for a reply read\n")
             .replace("import yaml  # noqa: F401\n", "import yaml  # noqa: F401  # optional\n")
             .replace("# type: ignore[import-untyped]\n",
                      "# type: ignore[import-untyped]  # as the matchers\n"))
    assert _unexplained(fixed) == []
