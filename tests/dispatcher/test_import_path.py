"""Nothing the project holds runs as prompthooks: an agent writes the project folder, and a
``prompthooks/`` package (or a ``prompthooks.py``) planted where Python looks first would run
in place of ours, in the process the host starts or in the resident process it starts.

Each attack first shows that the planted code is reachable the naive way (its canary file is
written), then drives real runs and checks the canary stays unwritten and the verdict is ours.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from prompthooks.install import glue as glue_module
from prompthooks.model import model_process

from ..fake_model import FakeModel, verdict
from ..helpers import claude_bash, claude_config, claude_event, reply, write_json
from ..model.test_worker import _wait, _workers

SCRIPT = str(Path(sys.executable).parent / "prompthooks")  # the console script users run
PLANTED = """
import os, sys
with open({canary!r}, "a") as f:
    f.write(f"{{os.getpid()}} {{sys.argv}}\\n")
"""
# The planted command line answers nothing and exits 0: for a host, a silent allow.
PLANTED_MAIN = PLANTED + "sys.exit(0)\n"
WHO = "tr '\\0' ' ' < /proc/$PPID/cmdline > {out}; cat > /dev/null"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project folder with a planted ``prompthooks`` package that writes ``canary``."""
    folder = tmp_path / "project"
    package = folder / "prompthooks"
    package.mkdir(parents=True)
    canary = tmp_path / "canary"
    (package / "__init__.py").write_text(PLANTED.format(canary=str(canary)))
    (package / "__main__.py").write_text(PLANTED_MAIN.format(canary=str(canary)))
    return folder


def _canary(project: Path) -> Path:
    return project.parent / "canary"


def _naive_run_is_hijacked(project: Path, argv: list[str],
                           env: dict[str, str] | None = None) -> None:
    """The canary: ``argv`` run from the project imports the planted package."""
    canary = _canary(project)
    proc = subprocess.run(argv, cwd=project, input=json.dumps(claude_bash("ls")), text=True,
                          capture_output=True, env={**os.environ, **(env or {})}, timeout=60)
    assert canary.exists(), (argv, proc.stderr)
    canary.unlink()


def _run(argv: list[str], event: object, project: Path, *args: str,
         env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*argv, "run", *args], input=json.dumps(event), text=True,
                          capture_output=True, cwd=project, env={**os.environ, **(env or {})},
                          timeout=300)


def _managed_deny(tmp_path: Path) -> Path:
    managed = tmp_path / "etc"
    claude_config(managed / "hooks.json", "PreToolUse",
                  {"command": "echo 'managed: no' >&2; exit 2"})
    return managed


@pytest.fixture
def warm_env(monkeypatch: pytest.MonkeyPatch, model: FakeModel) -> dict[str, str]:
    monkeypatch.setenv("PROMPTHOOKS_WORKER", "1")
    monkeypatch.setenv("PROMPTHOOKS_WORKER_IDLE", "30")
    monkeypatch.setenv("PROMPTHOOKS_DIRECT", "0")  # the warm worker serves litellm's path
    return dict(os.environ)


def _the_worker_runs_ours(env: dict[str, str], project: Path) -> None:
    path = model_process.socket_path(env)
    canary = _canary(project)
    assert _wait(lambda: path.exists() or canary.exists(), 120), "no worker listened"
    assert not canary.exists(), canary.read_text()
    (pid,) = _workers()
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    assert argv[1:5] == [b"-P", b"-m", b"prompthooks", b"serve"], argv
    assert os.readlink(f"/proc/{pid}/cwd") == "/"


def test_a_prompt_event_from_the_project_starts_a_worker_that_runs_ours(
        tmp_path: Path, project: Path, model: FakeModel, warm_env: dict[str, str]) -> None:
    """The first prompt event starts the resident process from the project folder; the next
    is handed to it, and its run enters the project folder."""
    _naive_run_is_hijacked(project, [sys.executable, "-m", "prompthooks", "run"])
    out = tmp_path / "who"
    cfg = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "prompt", "prompt": "Block deletions. $ARGUMENTS"},
        {"type": "command", "command": WHO.format(out=out)}]}]}})
    model.script(verdict(False, "no deletions"))
    proc = _run([SCRIPT], claude_bash("rm -rf /"), project, "--config", str(cfg))
    assert reply(proc)["hookSpecificOutput"]["permissionDecisionReason"] == "no deletions", \
        proc.stderr
    _the_worker_runs_ours(warm_env, project)
    model.script(verdict(False, "still no"))
    proc = _run([SCRIPT], claude_bash("rm -rf /"), project, "--config", str(cfg))
    assert reply(proc)["hookSpecificOutput"]["permissionDecisionReason"] == "still no", \
        proc.stderr
    assert "serve" in out.read_text().split()  # handed over: the resident process's run
    assert not _canary(project).exists()


def test_the_installed_glue_for_a_session_start_runs_ours_and_a_managed_deny_holds(
        tmp_path: Path, project: Path, model: FakeModel, warm_env: dict[str, str]) -> None:
    """``install --warm-start`` from the project folder, then its glue as the host runs it
    (a shell in the project): the session start starts the resident process, and a later
    event is judged by the managed policy."""
    _naive_run_is_hijacked(project, [sys.executable, "-m", "prompthooks", "install"])
    # --scope local: glue naming this installation goes in the uncommitted settings file
    proc = subprocess.run([SCRIPT, "install", "--host", "claude", "--scope", "local",
                           "--warm-start", "--glue", "absolute"], cwd=project,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    settings = json.loads((project / ".claude" / "settings.local.json").read_text())
    (group,) = settings["hooks"]["SessionStart"]
    glue = group["hooks"][0]["command"]
    assert shlex.split(glue) == [SCRIPT, "run"]
    cfg = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "prompt", "prompt": "Block deletions. $ARGUMENTS"}]}]}})
    start = subprocess.run(["/bin/sh", "-c", f"{glue} --config {shlex.quote(str(cfg))}"],
                           input=json.dumps(claude_event("SessionStart", source="startup")),
                           text=True, capture_output=True, cwd=project, timeout=120)
    assert start.returncode == 0 and start.stdout == "", start.stderr
    _the_worker_runs_ours(warm_env, project)
    model.script(verdict(True))
    managed = _managed_deny(tmp_path)
    proc = subprocess.run(["/bin/sh", "-c", f"{glue} --config {shlex.quote(str(cfg))} "
                           f"--managed-dir {shlex.quote(str(managed))}"],
                          input=json.dumps(claude_bash("rm -rf /")), text=True,
                          capture_output=True, cwd=project, timeout=120)
    output = reply(proc)["hookSpecificOutput"]
    assert output["permissionDecision"] == "deny" and output["permissionDecisionReason"] == \
        "managed: no", proc.stderr
    assert not _canary(project).exists()


def test_the_interpreter_glue_keeps_the_project_off_the_import_path(
        tmp_path: Path, project: Path) -> None:
    """The glue of an installation without a script (``python -P -m prompthooks run``), as
    the host runs it in the project; the form without ``-P`` is the canary."""
    glue = glue_module._absolute([], sys.executable)
    assert shlex.split(glue) == [sys.executable, "-P", "-m", "prompthooks", "run"]
    _naive_run_is_hijacked(project, [sys.executable, "-m", "prompthooks", "run"])
    managed = _managed_deny(tmp_path)
    proc = subprocess.run(["/bin/sh", "-c", f"{glue} --managed-dir {shlex.quote(str(managed))}"],
                          input=json.dumps(claude_bash("rm -rf /")), text=True,
                          capture_output=True, cwd=project, timeout=120)
    assert reply(proc)["hookSpecificOutput"]["permissionDecisionReason"] == "managed: no", \
        proc.stderr
    assert not _canary(project).exists()


def test_an_empty_pythonpath_entry_does_not_bring_in_the_project(
        tmp_path: Path, project: Path) -> None:
    """``PYTHONPATH=:...`` (a common slip in a shell profile) names the working folder: the
    command drops it, in process and handed over alike."""
    env = {"PYTHONPATH": ":" + os.environ.get("PYTHONPATH", "")}
    _naive_run_is_hijacked(project, [sys.executable, "-P", "-c", "import prompthooks"], env)
    managed = _managed_deny(tmp_path)
    proc = _run([SCRIPT], claude_bash("rm -rf /"), project, "--managed-dir", str(managed),
                env=env)
    assert reply(proc)["hookSpecificOutput"]["permissionDecisionReason"] == "managed: no", \
        proc.stderr
    assert not _canary(project).exists()


def test_nothing_is_imported_from_the_scripts_own_folder(tmp_path: Path, project: Path) -> None:
    """A script's folder comes first on Python's import path: in a bin folder the agent can
    write, a ``prompthooks.py`` planted beside the command would be imported by it."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    command = bin_dir / "prompthooks"
    shutil.copy2(SCRIPT, command)
    canary = _canary(project)
    (bin_dir / "prompthooks.py").write_text(PLANTED.format(canary=str(canary)))
    (bin_dir / "probe.py").write_text("import prompthooks\n")
    _naive_run_is_hijacked(project, [sys.executable, str(bin_dir / "probe.py")])
    managed = _managed_deny(tmp_path)
    proc = _run([str(command)], claude_bash("rm -rf /"), project, "--managed-dir", str(managed))
    assert reply(proc)["hookSpecificOutput"]["permissionDecisionReason"] == "managed: no", \
        proc.stderr
    assert not canary.exists()
