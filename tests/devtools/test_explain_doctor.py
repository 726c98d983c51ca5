"""`prompthooks explain` (a dry run) and `prompthooks doctor`, as real processes."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from prompthooks.audit import store

from ..fake_model import FakeModel, verdict
from ..helpers import claude_bash, cursor_event, file_modes_bind_root, write_json

KEY = "sk-ant-api03-plantedSecretValue0123456789"


def _cli(*args: str, stdin: Any = None, cwd: Path | None = None,
         env: dict[str, str] | None = None,
         preexec_fn: Callable[[], None] | None = None) -> subprocess.CompletedProcess[str]:
    data = json.dumps(stdin) if isinstance(stdin, dict) else stdin
    return subprocess.run([sys.executable, "-m", "prompthooks", *args], input=data,
                          capture_output=True, text=True, cwd=cwd, timeout=120,
                          env={**os.environ, **(env or {})}, preexec_fn=preexec_fn)


def _closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"


def _config(tmp_path: Path) -> Path:
    guard = tmp_path / "guard.sh"
    return write_json(tmp_path / "hooks.json", {
        "prompthooks": {"model": "team-fast", "api_base": _closed_port(),
                        "api_key_env": "TEAM_KEY"},
        "hooks": {"PreToolUse": [
            {"matcher": "Bash", "hooks": [
                {"type": "prompt", "prompt": "Block pushes to main.\n$ARGUMENTS",
                 "failClosed": True},
                {"type": "command", "command": str(guard)}]},
            {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "true"}]},
            {"matcher": "^Ba", "hooks": [{"type": "command", "command": str(guard)}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}})


def test_explain_shows_matches_reasons_and_the_rendered_prompt(tmp_path: Path) -> None:
    cfg = _config(tmp_path)
    event = claude_bash(f"git push origin main --token={KEY}")
    proc = _cli("explain", "--config", str(cfg), "--json", stdin=event,
                env={"TEAM_KEY": KEY})
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["host"] == "claude" and report["budget"] == 590
    assert report["event"]["name"] == "PreToolUse" and report["event"]["tool"] == "Bash"
    assert [s["path"] for s in report["sources"]] == [str(cfg)]
    hooks = report["hooks"]
    assert [(h["kind"], h["runs"]) for h in hooks] == [
        ("prompt", True), ("command", True), ("command", False), ("command", False)]
    assert hooks[0]["why"] == "matcher 'Bash' names the tool 'Bash'"
    assert hooks[0]["fail_closed"] is True and hooks[0]["timeout"] == 30
    assert hooks[2]["why"] == "matcher 'Edit|Write' does not name the tool 'Bash'"
    assert hooks[3]["why"] == (f"regex '^Ba' is found in the tool 'Bash'; the same handler "
                               f"runs once, as {hooks[1]['label']}")
    assert report["other_events"] == 1
    prompt = hooks[0]["prompt"]
    assert prompt["model"] == "team-fast" and prompt["api_key"] == "set"
    system, user = prompt["messages"]
    assert user["role"] == "user" and user["content"].startswith("Block pushes to main.\n")
    nonce = system["content"].split("<event-data-")[1].split(">")[0]
    assert f"<event-data-{nonce}>\n" in user["content"]
    assert user["content"].rstrip().endswith(f"</event-data-{nonce}>")
    assert '"command": "git push origin main --token=[redacted]"' in user["content"]
    assert KEY not in proc.stdout and KEY not in proc.stderr


def test_explain_text_needs_no_server_and_never_imports_litellm(tmp_path: Path) -> None:
    cfg = _config(tmp_path)
    code = ("import sys, io; from prompthooks.cli import main; "
            f"sys.stdin = io.TextIOWrapper(io.BytesIO({json.dumps(claude_bash('ls')).encode()!r})); "
            f"rc = main(['explain', '--config', {str(cfg)!r}]); "
            "print('LITELLM' if 'litellm' in sys.modules else 'NO-LITELLM'); sys.exit(rc)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.rstrip().endswith("NO-LITELLM")
    assert "Hooks for PreToolUse: 2 of 4 would run (1 more for other events)" in out
    assert "RUNS  inline prompt  [config: " in out and "SKIP  command true" in out
    assert "model: team-fast; endpoint: http://127.0.0.1:" in out
    assert "----- user message -----" in out and "Block pushes to main." in out


@pytest.mark.slow
def test_explain_cursor_shell_event_and_bad_input(tmp_path: Path) -> None:
    cfg = write_json(tmp_path / "cursor.json", {"version": 1, "hooks": {
        "beforeShellExecution": [{"command": "true", "matcher": "curl|wget"}],
        "beforeReadFile": [{"command": "true"}]}})
    event = cursor_event("beforeShellExecution", command="curl example.com", cwd="/tmp")
    report = json.loads(_cli("explain", "--config", str(cfg), "--json", stdin=event).stdout)
    hook, read = report["hooks"]  # both are canonical PreToolUse hooks
    assert hook["runs"] is True and report["budget"] == 55
    assert hook["why"] == "regex 'curl|wget' is found in the command 'curl example.com'"
    assert (read["runs"], read["why"]) == (False, "Cursor runs it for beforeReadFile, not for "
                                                  "beforeShellExecution")
    bad = _cli("explain", stdin="{nope")
    assert bad.returncode == 1
    assert bad.stderr.strip().splitlines() == [
        "prompthooks: the event on stdin is not valid JSON: Expecting property name enclosed "
        "in double quotes"]


def test_doctor_offline_reports_everything_without_a_key(tmp_path: Path) -> None:
    cfg = _config(tmp_path)
    proc = _cli("doctor", "--offline", "--json", "--config", str(cfg), "--project",
                str(tmp_path), env={"TEAM_KEY": KEY, "PROMPTHOOKS_API_KEY": KEY})
    assert KEY not in proc.stdout and KEY not in proc.stderr
    report = json.loads(proc.stdout)
    checks = {c["check"]: c for c in report["checks"]}
    assert proc.returncode == 0 and report["failed"] == 0
    assert checks["prompthooks"]["detail"] == "0.1.0"
    assert checks["litellm"]["status"] == "ok" and checks["rich"]["status"] == "ok"
    assert checks["config config"]["detail"] == str(cfg)
    assert checks["hooks"]["detail"] == "4 command, 1 prompt, 0 agent"
    model = checks["model team-fast"]
    assert model["status"] == "skip" and "key set" in model["detail"]
    assert model["detail"].endswith("not probed (--offline)")
    assert checks["warm worker"]["detail"] == "off (PROMPTHOOKS_RESIDENT=0)"
    assert checks["audit log"]["detail"].endswith("audit.db (created on the first run)")
    assert checks["glue"]["status"] == "warn"


def _doctor_audit(tmp_path: Path, db: Path) -> tuple[int, dict[str, str]]:
    cfg = write_json(tmp_path / "hooks.json", {
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]},
        "prompthooks": {"audit": {"path": str(db)}}})
    proc = _cli("doctor", "--offline", "--json", "--config", str(cfg), "--project",
                str(tmp_path), preexec_fn=file_modes_bind_root)
    checks = {c["check"]: c for c in json.loads(proc.stdout)["checks"]}
    return proc.returncode, checks["audit log"]


@pytest.mark.slow
def test_doctor_fails_an_audit_log_that_cannot_be_written(tmp_path: Path) -> None:
    (tmp_path / "notadir").write_text("a file where the log's folder should be")
    db = tmp_path / "notadir" / "audit.db"
    assert _doctor_audit(tmp_path, db) == (1, {
        "check": "audit log", "status": "fail",
        "detail": f"{db}: {tmp_path / 'notadir'} is a file, not a folder; rows would be lost"})
    db = tmp_path / "log" / "audit.db"
    store.connect(db).close()
    for path in db.parent.glob("audit.db*"):
        path.chmod(0o400)
    assert _doctor_audit(tmp_path, db) == (1, {
        "check": "audit log", "status": "fail",
        "detail": f"{db}: {db} is not a writable file; rows would wait in audit.db.pending "
                  "until it is"})
    for path in db.parent.glob("audit.db*"):
        path.chmod(0o600)
    assert _doctor_audit(tmp_path, db) == (0, {
        "check": "audit log", "status": "ok", "detail": f"{db}: 0 rows"})


def test_doctor_for_a_project_that_does_not_exist(tmp_path: Path) -> None:
    proc = _cli("doctor", "--offline", "--project", str(tmp_path / "nowhere"))
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == f"prompthooks: no such project folder: {tmp_path / 'nowhere'}\n"


@pytest.mark.slow
def test_doctor_probes_each_model_once(tmp_path: Path, model: FakeModel) -> None:
    model.script(verdict(True))
    cfg = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "prompt", "prompt": "a"}, {"type": "prompt", "prompt": "b"}]}]}})
    proc = _cli("doctor", "--json", "--config", str(cfg), "--project", str(tmp_path))
    report = json.loads(proc.stdout)
    (probe,) = [c for c in report["checks"] if c["check"].startswith("model ")]
    assert probe["status"] == "ok" and "2 prompt hooks; answered in" in probe["detail"]
    assert len(model.requests) == 1
    assert model.requests[0].body["max_tokens"] == 20
    assert proc.returncode == 0


def test_doctor_fails_for_an_unreachable_model_and_a_broken_config(tmp_path: Path) -> None:
    cfg = _config(tmp_path)
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    proc = _cli("doctor", "--config", str(cfg), "--config", str(broken), "--project",
                str(tmp_path), env={"TEAM_KEY": KEY})
    assert proc.returncode == 1
    assert KEY not in proc.stdout
    assert "cannot connect to the model endpoint" in proc.stdout
    assert "not valid JSON" in proc.stdout
    assert proc.stdout.rstrip().endswith("2 checks failed")


def test_doctor_warns_of_glue_that_imports_from_the_project(tmp_path: Path) -> None:
    """Glue written by earlier versions, `python -m prompthooks run` without -P: the host runs
    it in the project, whose folder Python then searches first."""
    project = tmp_path / "project"
    old = f"{sys.executable} -m prompthooks run"
    write_json(project / ".claude" / "settings.json", {"hooks": {"PreToolUse": [
        {"hooks": [{"type": "command", "command": old}]}]}})
    report = json.loads(_cli("doctor", "--offline", "--json", "--project", str(project)).stdout)
    glue = [c for c in report["checks"] if c["check"] == "glue claude (project)"]
    assert [c["status"] for c in glue] == ["ok", "warn"], glue
    assert "imports from the project folder first" in glue[1]["detail"]
    assert "prompthooks uninstall" in glue[1]["detail"]


def test_doctor_reads_a_hook_folders_glue_through_the_registry_and_bounded(
        tmp_path: Path) -> None:
    """A folder dialect's hook file is the glue: doctor finds the old form in it (the canary
    that the file was read), and a hook file past the cap is not read at all."""
    from prompthooks.hosts.cline.install import MARKER

    project = tmp_path / "project"
    hooks = project / ".clinerules" / "hooks"
    hooks.mkdir(parents=True)
    old = f"#!/bin/sh\n{MARKER}\nexec {sys.executable} -m prompthooks run\n"
    (hooks / "PreToolUse").write_text(old)
    (hooks / "PostToolUse").write_text(old + "#" * (2 << 20) + "\n")  # past the 1 MiB cap

    def warned() -> list[str]:
        report = json.loads(_cli("doctor", "--offline", "--json", "--project",
                                 str(project)).stdout)
        return [c["detail"] for c in report["checks"]
                if c["check"] == "glue cline (project)" and c["status"] == "warn"]

    (warning,) = warned()
    assert "imports from the project folder first" in warning  # PreToolUse was read
    (hooks / "PreToolUse").unlink()
    assert warned() == []  # the large one alone: not read


@pytest.mark.slow
def test_doctor_finds_the_installed_glue(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    installed = _cli("install", "--host", "claude", "--project", str(project))
    assert installed.returncode == 0, installed.stderr
    report = json.loads(_cli("doctor", "--offline", "--json", "--project", str(project)).stdout)
    glue = [c for c in report["checks"] if c["check"].startswith("glue")]
    assert glue == [{"check": "glue claude (project)", "status": "ok",
                     "detail": f"installed in {project / '.claude' / 'settings.json'}"}]
    config = next(c for c in report["checks"] if c["check"] == "config project")
    assert config["detail"] == str(project / ".prompthooks")  # the starter install wrote
