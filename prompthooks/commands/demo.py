"""``prompthooks demo``: real events from all three hosts through the example hooks, offline.

The examples (``config/examples``) hold a Claude Code style ``hooks.json`` with command and
prompt hooks, a Cursor style ``cursor-hooks.json`` and a Cline style hook folder. Prompt hooks
answer from ``demo.cassette.yaml`` (replay only: no key, no network). Each event's decision is
printed with the hooks that answered and the exact reply the host would read.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path

from ..api import dispatch, load_config
from ..errors import EXIT_OK, PromptHooksError
from ..model.chain import ModelChain
from ..model.recording import Cassette
from .output import paint, verdict_style

_PACKAGE = Path(__file__).resolve().parent.parent
EXAMPLE_DIRS = (_PACKAGE / "examples", _PACKAGE.parent / "config" / "examples")
ROOT_TOKEN = "__DEMO_ROOT__"  # events that need a real workspace folder say so


def examples_dir() -> Path:
    for folder in EXAMPLE_DIRS:
        if (folder / "hooks.json").is_file():
            return folder
    raise PromptHooksError("the demo's example files are not installed with this copy")


def _wants(event: dict[str, object]) -> str:
    data = event.get("tool_input") or event.get("preToolUse") or event
    if isinstance(data, dict) and isinstance(data.get("parameters"), dict):
        data = data["parameters"]
    assert isinstance(data, dict)
    for key in ("command", "path", "file_path", "prompt", "last_assistant_message"):
        value = data.get(key) or event.get(key)
        if isinstance(value, str):
            return value if len(value) <= 70 else value[:67] + "..."
    return ""


def main(args: argparse.Namespace) -> int:
    folder = examples_dir()
    return _run(folder, ModelChain(cassette=Cassette(folder / "demo.cassette.yaml", "replay")))


def _run(folder: Path, models: ModelChain) -> int:
    config = load_config([str(folder / "hooks.json"), str(folder / "cursor-hooks.json"),
                          str(folder / "cline-hooks")], keep_managed=False)
    if config.errors:
        raise PromptHooksError(config.errors[0])
    workspace = Path(tempfile.mkdtemp(prefix="prompthooks-demo-"))
    (workspace / "tsconfig.json").write_text("{}")  # the Cline example wants a TS project
    try:
        for path in sorted((folder / "events").glob("*.json")):
            text = path.read_text(encoding="utf-8").replace(ROOT_TOKEN, str(workspace))
            event = json.loads(text)
            outcome = dispatch(text.encode(), config=config, budget=60, count_stops=False,
                                models=models)
            decision = outcome.decision
            verdict: str = decision.permission or "no objection"
            if decision.contexts and not decision.permission:
                verdict = "context added"
            print(f"{outcome.event.host:6}  {outcome.event.host_event:22}  {_wants(event)}")
            reason = (decision.reason or "").replace("\n", "\n           ")
            shown = paint(verdict, verdict_style(verdict))
            print(f"        -> {shown}" + (f": {reason}" if reason else ""))
            for result in decision.results:
                said = result.permission or ("failed: " + (result.error or "")
                                             if result.failed else "no objection")
                how = "prompt, replayed" if result.replayed else result.hook.kind
                print(f"           {result.hook.name} ({how}): {said}")
            print(f"        {outcome.event.host} reads: {outcome.stdout or '(nothing)'}"
                  f"  exit {outcome.exit_code}")
            print()
    finally:
        shutil.rmtree(workspace, ignore_errors=True)
    return EXIT_OK
