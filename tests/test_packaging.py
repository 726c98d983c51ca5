"""The wheel carries every package, the shipped policies, their suites and benchmarks: built,
installed outside the repository, `prompthooks run` answers an event, `prompthooks test
--library` runs the suites and `eval --library` reads the benchmarks from an unrelated folder."""

from __future__ import annotations

import ast
import importlib.metadata
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from .helpers import REPO, install_wheel


def test_every_source_package_is_in_the_wheel_list() -> None:
    # A subpackage missing from pyproject's list is missing from every non-editable install
    # (an editable one still finds it, so nothing else here would notice).
    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    source = {".".join(init.parent.relative_to(REPO).parts)
              for init in (REPO / "prompthooks").rglob("__init__.py")}
    assert source - listed == set()


def _imported_top_level_names() -> dict[str, str]:
    """Every top-level module the package imports (at module level or inside a function),
    with one file that imports it."""
    found: dict[str, str] = {}
    for source in sorted((REPO / "prompthooks").rglob("*.py")):
        for node in ast.walk(ast.parse(source.read_bytes(), str(source))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                found.setdefault(name.split(".")[0], str(source.relative_to(REPO)))
    return found


def _declared() -> set[str]:
    """The distributions pyproject declares: dependencies and every optional group (the
    otel export and the pytest plugin import theirs only where those are installed)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    requirements = list(project["dependencies"])
    for group in project.get("optional-dependencies", {}).values():
        requirements += group
    return {_normalized(re.match(r"[A-Za-z0-9._-]+", r).group())  # type: ignore[union-attr]
            for r in requirements}


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_every_third_party_import_is_a_declared_dependency() -> None:
    """A module imported from a distribution pyproject does not name works only while another
    dependency happens to pull it in (httpx through litellm, once): each is declared."""
    imported = _imported_top_level_names()
    assert {"httpx", "litellm", "yaml"} <= imported.keys()  # the scan sees the imports
    distributions = importlib.metadata.packages_distributions()
    declared = _declared()
    undeclared = {}
    for name, where in imported.items():
        if name in sys.stdlib_module_names or name in ("prompthooks", "__future__"):
            continue
        owners = {_normalized(d) for d in distributions.get(name, [])}
        if not owners & declared:
            undeclared[name] = (where, sorted(owners))
    assert undeclared == {}


@pytest.mark.wheel
def test_wheel_runs_the_library_suites_from_anywhere(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    target = install_wheel(tmp_path)
    # The installed copy, not the checkout: PYTHONPATH comes before the editable install.
    env = {**os.environ, "PYTHONPATH": str(target)}
    where = subprocess.run([sys.executable, "-c",
                            "import prompthooks; print(prompthooks.__file__)"], capture_output=True, text=True, cwd=elsewhere, env=env, timeout=60)
    assert where.stdout.startswith(str(target)), where.stdout + where.stderr
    # The run path from the installed copy: a command hook judges a real Claude event.
    hooks = elsewhere / "hooks.json"
    hooks.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "echo no pushing >&2; exit 2"}]}]}}))
    event = {"session_id": "s", "hook_event_name": "PreToolUse", "cwd": str(elsewhere),
             "tool_name": "Bash", "tool_input": {"command": "git push"}}
    run = subprocess.run([sys.executable, "-m", "prompthooks", "run", "--config", str(hooks)],
                         input=json.dumps(event), capture_output=True, text=True, cwd=elsewhere,
                         env=env, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    reply = json.loads(run.stdout)["hookSpecificOutput"]
    assert reply["permissionDecision"] == "deny" and "no pushing" in reply["permissionDecisionReason"]
    # The command as the install made it: a plain script pointed at the interpreter.
    script = target / "bin" / "prompthooks"
    assert script.read_text().startswith(f"#!{sys.executable}\n")
    by_script = subprocess.run([str(script), "run", "--config", str(hooks)],
                               input=json.dumps(event), capture_output=True, text=True,
                               cwd=elsewhere, env={**env, "PROMPTHOOKS_DISPATCH": "0"},
                               timeout=120)
    assert json.loads(by_script.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    proc = subprocess.run([sys.executable, "-m", "prompthooks", "test", "--library"],
                          capture_output=True, text=True, cwd=elsewhere, env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = proc.stdout.splitlines()[-1]
    assert int(summary.split()[0]) >= 24 and summary.endswith("0 failed, 0 errors")
    assert "from reference verdicts (not a model's output)" in proc.stdout
    # The benchmarks and the transcripts their cases name: the regex baselines' figures as
    # pinned (stop-when-done's read the transcripts); no model answers an empty cassette.
    from .devtools.test_bench import BASELINES

    empty = elsewhere / "none.cassette.yaml"
    bench = subprocess.run([sys.executable, "-m", "prompthooks", "eval", "--library", "--json",
                            "--replay", str(empty), "--max-errors", "999"],
                           capture_output=True, text=True, cwd=elsewhere, env=env, timeout=300)
    runs = {run["policy"]: run for run in json.loads(bench.stdout)}
    assert {name: run["baseline"]["overall"]["confusion"] for name, run in runs.items()} == BASELINES
    assert all(run["benchmark"].startswith(str(target)) for run in runs.values())
