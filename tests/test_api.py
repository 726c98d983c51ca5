"""The library API for agents written in Python: load configs, dispatch, sync and async."""

from __future__ import annotations

import asyncio
from pathlib import Path

import prompthooks
from prompthooks import adispatch, dispatch, load_config

from .helpers import claude_bash, claude_config, cline_event


def test_dispatch_with_a_loaded_config(tmp_path: Path) -> None:
    cfg = claude_config(tmp_path / "h.json", "PreToolUse",
                        {"command": "cat >/dev/null; echo nope >&2; exit 2"}, matcher="Bash")
    config = load_config([str(cfg)])
    outcome = dispatch(claude_bash("rm -rf /"), config=config)
    assert outcome.decision.blocked and outcome.decision.reason == "nope"
    assert outcome.exit_code == 0 and '"permissionDecision": "deny"' in outcome.stdout
    same_config_cline = dispatch(cline_event("PreToolUse", toolName="execute_command",
                                             parameters={"command": "ls"}), config=config)
    assert same_config_cline.stdout == '{"cancel": true, "errorMessage": "nope"}'


def test_async_dispatch(tmp_path: Path) -> None:
    cfg = claude_config(tmp_path / "h.json", "PreToolUse",
                        {"command": "cat >/dev/null; echo '{\"decision\": \"approve\"}'"})

    async def main() -> list[str | None]:
        outcomes = await asyncio.gather(*(adispatch(claude_bash(f"ls {i}"),
                                                    config_paths=[str(cfg)]) for i in range(3)))
        return [o.decision.permission for o in outcomes]

    assert asyncio.run(main()) == ["allow"] * 3


def test_public_names() -> None:
    assert prompthooks.__version__
    from prompthooks.core.merge import Decision

    assert prompthooks.Decision is Decision
    assert set(prompthooks.__all__) >= {"dispatch", "adispatch", "load_config", "Decision"}
