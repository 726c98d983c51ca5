"""What the audit log, `log` and `explain` keep and show: no secret from a hook's command, from
a path-like secret value or from the variable `api_key_env` names; no terminal escapes from
stored text. Real `prompthooks` processes and a real SQLite database."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ..helpers import (
    approve,
    claude_bash,
    claude_event,
    reply,
    run_in_process,
    write_json,
    write_script,
)

GH = "ghp_" + "Q7" * 18  # a GitHub token format
ENV_KEY = "mYlLm-k3y-0123456789"  # held by a variable whose name says nothing


def _rows(db: Path) -> list[dict[str, Any]]:
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute("SELECT * FROM decisions ORDER BY id")]
    finally:
        conn.close()


def _cli(*args: str, env: dict[str, str] | None = None,
         stdin: str = "") -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run([sys.executable, "-m", "prompthooks", *args], input=stdin,
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "NO_COLOR": "1", **(env or {})})


def _project(tmp_path: Path, command: str, **block: Any) -> Path:
    project = tmp_path / "project"
    data: dict[str, Any] = {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": command}]}]},
        "prompthooks": {"audit": {"path": str(tmp_path / "audit.db")}, **block}}
    write_json(project / ".prompthooks" / "hooks.json", data)
    approve(project / ".prompthooks")
    return project


@pytest.mark.slow
def test_a_secret_in_the_hook_command_is_never_stored_or_shown(tmp_path: Path) -> None:
    deny = write_script(tmp_path / "deny.sh", "cat >/dev/null; echo 'no' >&2; exit 2")
    project = _project(tmp_path, f"GH_TOKEN={GH} {deny}")
    event = claude_bash("ls", cwd=str(project))
    proc = run_in_process(event, cwd=project)
    assert reply(proc)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert GH not in proc.stdout + proc.stderr
    (row,) = _rows(tmp_path / "audit.db")
    assert row["hook"].startswith("GH_TOKEN=[redacted] ")
    assert GH not in json.dumps(row)
    db = str(tmp_path / "audit.db")
    for args in (("log", "--db", db), ("log", "--db", db, "--json"),
                 ("log", "stats", "--db", db), ("log", "stats", "--db", db, "--json")):
        shown = _cli(*args)
        assert shown.returncode == 0 and "GH_TOKEN=[redacted]" in shown.stdout
        assert GH[:8] not in shown.stdout
    for flags in ([], ["--json"]):
        shown = _cli("explain", *flags, stdin=json.dumps(event),
                     env={"CLAUDE_PROJECT_DIR": str(project)})
        assert shown.returncode == 0, shown.stderr
        assert "GH_TOKEN=[redacted]" in shown.stdout and GH[:8] not in shown.stdout


def test_log_redacts_rows_an_older_version_stored_as_they_were(tmp_path: Path) -> None:
    deny = write_script(tmp_path / "deny.sh", "cat >/dev/null; echo 'no' >&2; exit 2")
    project = _project(tmp_path, str(deny))
    run_in_process(claude_bash("ls", cwd=str(project)), cwd=project)
    conn = sqlite3.connect(tmp_path / "audit.db")
    conn.execute("UPDATE decisions SET hook = ?, hook_label = ?",
                  (f"GH_TOKEN={GH} ./x.sh", f"label {GH}"))
    conn.commit()
    conn.close()
    shown = _cli("log", "--db", str(tmp_path / "audit.db"), "--json")
    (row,) = json.loads(shown.stdout)
    assert (row["hook"], row["hook_label"]) == ("GH_TOKEN=[redacted] ./x.sh", "label [redacted]")


def test_a_secret_named_value_that_looks_like_a_path_is_redacted(tmp_path: Path) -> None:
    value = "/srv/not-a-path-a-secret-42"
    echo = write_script(tmp_path / "echo.sh",
                        'cat >/dev/null; echo "saw $DEPLOY_TOKEN" >&2; exit 2')
    project = _project(tmp_path, str(echo))
    proc = run_in_process(claude_bash("ls", cwd=str(project)), cwd=project,
                   env={"DEPLOY_TOKEN": value, "DEPLOY_KEY_PATH": "/srv/keys/deploy-key"})
    assert value in proc.stdout  # the host's reply is left as the hook gave it
    (row,) = _rows(tmp_path / "audit.db")
    assert row["reason"] == "saw [redacted]"


@pytest.mark.slow
def test_the_key_api_key_env_names_is_hidden_in_explain_and_the_stored_event(
        tmp_path: Path) -> None:
    allow = write_script(tmp_path / "allow.sh", "cat >/dev/null; exit 0")
    project = _project(tmp_path, str(allow), api_key_env="MYLLM")
    proj_cfg = json.loads((project / ".prompthooks" / "hooks.json").read_text())
    proj_cfg["prompthooks"]["audit"]["store_events"] = True
    write_json(project / ".prompthooks" / "hooks.json", proj_cfg)
    approve(project / ".prompthooks")
    event = claude_bash(f"curl -H 'x-key: {ENV_KEY}' https://llm.example", cwd=str(project))
    env = {"MYLLM": ENV_KEY, "CLAUDE_PROJECT_DIR": str(project)}
    proc = run_in_process(event, cwd=project, env=env)
    assert proc.returncode == 0, proc.stderr
    (row,) = _rows(tmp_path / "audit.db")
    assert ENV_KEY not in row["event_input"] and "x-key: [redacted]" in row["event_input"]
    for flags in ([], ["--json"]):
        shown = _cli("explain", *flags, stdin=json.dumps(event), env=env)
        assert shown.returncode == 0, shown.stderr
        assert ENV_KEY not in shown.stdout and "x-key: [redacted]" in shown.stdout


@pytest.mark.slow
def test_log_escapes_control_characters_and_json_stays_exact(tmp_path: Path) -> None:
    nasty = "\x1b[2J\x1b]0;owned\x07 \u202egnp.exe \x9b31m"
    deny = write_script(tmp_path / "deny.sh",
                        "cat >/dev/null; printf 'no \\033[2J\\342\\200\\256 here' >&2; exit 2")
    project = _project(tmp_path, str(deny))
    event = claude_event("PreToolUse", str(project), tool_name=f"Bash{nasty}\nfake row",
                         tool_input={"command": "ls"}, tool_use_id="t")
    run_in_process(event, cwd=project)
    db = str(tmp_path / "audit.db")
    table = _cli("log", "--db", db)
    assert table.returncode == 0
    for raw in ("\x1b", "\x07", "\x9b", "\u202e"):
        assert raw not in table.stdout
    assert "\\x1b[2J" in table.stdout and "\\u202e" in table.stdout and "\\x9b" in table.stdout
    assert len(table.stdout.splitlines()) == 3  # title, header, one row: no faked row
    (row,) = json.loads(_cli("log", "--db", db, "--json").stdout)
    assert row["tool"] == f"Bash{nasty}\nfake row"  # exact
    assert row["reason"] == "no \x1b[2J\u202e here"


def test_printable_escapes_what_drives_a_terminal() -> None:
    from prompthooks.commands.output import printable

    text = "a\tb\nc\x1b[2J\x7f\x9b\u202e\u2066é✓"
    assert printable(text) == "a\\tb\\nc\\x1b[2J\\x7f\\x9b\\u202e\\u2066é✓"
    assert printable(text, newlines=True) == "a\tb\nc\\x1b[2J\\x7f\\x9b\\u202e\\u2066é✓"
    assert printable("plain text, 100%") == "plain text, 100%"
