"""`prompthooks trust` and the trust state in `install`, `validate`, `explain` and `doctor`,
as real processes on temporary homes and projects."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from prompthooks.api import load_config
from prompthooks.loading import trust
from prompthooks.setup.starter import STARTER

from ..helpers import claude_bash, claude_config, write_script


def _cli(*args: str, cwd: Path | None = None, stdin: Any = None,
         env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    data = json.dumps(stdin) if isinstance(stdin, dict) else stdin
    return subprocess.run([sys.executable, "-m", "prompthooks", *args], capture_output=True,
                          text=True, cwd=cwd, input=data, timeout=120,
                          env={**os.environ, **(env or {})})


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def _state(project: Path) -> str:
    (state,) = [t for t in load_config(project_dir=str(project),
                                       managed_dir=project / "no-managed").loaded.trust
                if t.source.name == "project"]
    return state.state


@pytest.mark.slow
def test_trust_approves_lists_and_revokes(project: Path, isolated_home: Path) -> None:
    folder = project / ".prompthooks"
    claude_config(folder / "hooks.json", "PreToolUse", {"command": "true"})
    write_script(folder / "hooks" / "TaskComplete", "echo '{}'")
    listed = json.loads(_cli("trust", "--list", "--json", cwd=project).stdout)
    assert [(s["source"], s["state"]) for s in listed["sources"]] == [("project", "new")]

    proc = _cli("trust", cwd=project)  # the current directory's project by default
    assert proc.returncode == 0, proc.stderr
    digest = trust.digest(folder)
    assert proc.stdout.splitlines()[-1] == (
        f"approved project config {folder} (sha256 {digest.sha256}): hooks.json, hooks/TaskComplete")
    assert _state(project) == "approved"

    claude_config(isolated_home / ".config" / "prompthooks" / "hooks.json", "Stop",
                  {"command": "true"})
    (folder / "hooks" / "TaskComplete").write_text("#!/bin/sh\necho changed\n")
    table = _cli("trust", "--list", cwd=project)
    assert table.returncode == 0
    rows = [line.split(None, 2) for line in table.stdout.splitlines()[1:]]
    assert rows == [["project", str(folder),
                     "not trusted: changed since approved (hooks/TaskComplete changed)"],
                    ["user", str(isolated_home / ".config" / "prompthooks"),
                     "not trusted: never approved"]]

    gone = _cli("trust", "--revoke", "--project", str(project))
    assert gone.stdout.splitlines() == [f"revoked the approval of project config {folder}"]
    assert _state(project) == "new"
    again = _cli("trust", "--revoke", "--project", str(project))
    assert again.returncode == 0
    assert again.stdout.splitlines() == [f"project config {folder} was not approved: "
                                         "nothing to revoke"]


@pytest.mark.slow
def test_trust_json_and_both_sources(project: Path, isolated_home: Path) -> None:
    claude_config(project / ".prompthooks" / "hooks.json", "Stop", {"command": "true"})
    user = isolated_home / ".config" / "prompthooks"
    claude_config(user / "hooks.json", "Stop", {"command": "true"})
    proc = _cli("trust", "--project", str(project), "--user", "--json")
    assert proc.returncode == 0
    results = json.loads(proc.stdout)["results"]
    assert [(r["source"], r["path"], r["state"], r["files"]) for r in results] == [
        ("project", str(project / ".prompthooks"), "approved", ["hooks.json"]),
        ("user", str(user), "approved", ["hooks.json"])]


def test_list_with_nothing_to_list(project: Path, isolated_home: Path) -> None:
    proc = _cli("trust", "--list", cwd=project)
    assert proc.returncode == 0
    store = isolated_home / ".local" / "share" / "prompthooks" / "trust.json"
    assert proc.stdout.splitlines() == [f"no project or user config here, and no approvals "
                                        f"in {store}"]


@pytest.mark.slow
def test_nothing_to_approve_is_one_line_and_exit_1(project: Path) -> None:
    proc = _cli("trust", "--project", str(project))
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == [f"prompthooks: no project config "
                                        f"{project / '.prompthooks'}: nothing to approve"]
    (project / ".prompthooks").mkdir()
    proc = _cli("trust", "--project", str(project))
    assert proc.returncode == 1
    assert "it holds no hooks.json and no hook files: nothing to approve" in proc.stdout


@pytest.mark.slow
def test_an_unwritable_store_is_one_line(project: Path, isolated_home: Path) -> None:
    claude_config(project / ".prompthooks" / "hooks.json", "Stop", {"command": "true"})
    store = isolated_home / ".local" / "share" / "prompthooks" / "trust.json"
    store.mkdir(parents=True)  # a folder where the file goes: os.replace cannot replace it
    (store / "x").write_text("")
    proc = _cli("trust", "--project", str(project))
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"prompthooks: cannot write the trust store {store}: ")
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("plant", ["symlink", "fifo"])
def test_a_link_or_fifo_planted_at_the_stores_lock_is_never_followed(
        project: Path, isolated_home: Path, tmp_path: Path, plant: str) -> None:
    """The store's lock is in the user's data folder, which anything running as the user
    writes: a link there would have trust create and lock the file it names (a run under
    sudo that keeps HOME: any file of root's), a FIFO could hold it. Refused in one line."""
    claude_config(project / ".prompthooks" / "hooks.json", "Stop", {"command": "true"})
    folder = isolated_home / ".local" / "share" / "prompthooks"
    folder.mkdir(parents=True)
    lock = folder / "trust.json.lock"
    target = tmp_path / "created-through-the-link"
    if plant == "symlink":
        lock.symlink_to(target)
    else:
        os.mkfifo(lock)
    proc = _cli("trust", "--project", str(project))
    # The canary: trust went for the lock (it says which file it refused).
    assert str(lock) in proc.stderr, proc.stderr
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.rstrip().endswith("; refused") and "ignored" not in proc.stderr
    assert not target.exists()
    assert _state(project) != "trusted"


@pytest.mark.slow
def test_install_approves_the_starter_it_writes(project: Path) -> None:
    proc = _cli("install", "--host", "claude", "--project", str(project),
                env={"PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    assert (f"approved {project / '.prompthooks' / 'hooks.json'} for prompthooks run "
            "(see: prompthooks trust --list)") in proc.stdout.splitlines()
    assert _state(project) == "approved"


@pytest.mark.slow
def test_install_approves_an_existing_config_only_when_it_is_exactly_the_starter(
        project: Path, tmp_path: Path) -> None:
    folder = project / ".prompthooks"
    folder.mkdir()
    (folder / "hooks.json").write_bytes(STARTER)  # a clone that carries the starter
    proc = _cli("install", "--host", "cursor", "--project", str(project))
    assert proc.returncode == 0
    assert _state(project) == "approved"

    other = tmp_path / "other"
    claude_config(other / ".prompthooks" / "hooks.json", "PreToolUse", {"command": "curl x"})
    proc = _cli("install", "--host", "claude", "--project", str(other))
    assert proc.returncode == 0
    assert not any(line.startswith("approved") for line in proc.stdout.splitlines())
    assert _state(other) == "new"

    third = tmp_path / "third"
    (third / ".prompthooks").mkdir(parents=True)
    (third / ".prompthooks" / "hooks.json").write_bytes(STARTER)
    write_script(third / ".prompthooks" / "hooks" / "PreToolUse", "curl x")  # and more
    proc = _cli("install", "--host", "claude", "--project", str(third))
    assert proc.returncode == 0
    assert (f"not approved: {third / '.prompthooks'} holds more than the starter; review it, "
            f"then run: prompthooks trust --project {third}") in proc.stdout.splitlines()
    assert _state(third) == "new"


@pytest.mark.slow
def test_validate_explain_and_doctor_show_the_trust_state(project: Path) -> None:
    folder = project / ".prompthooks"
    claude_config(folder / "hooks.json", "PreToolUse", {"command": "echo guarded"},
                  matcher="Bash")
    fix = f"prompthooks trust --project {project}"
    none = str(project / "no-managed")

    validate = _cli("validate", cwd=project)
    assert validate.returncode == 0  # the file is sound; approval is another matter
    assert (f"trust: project {folder}: not trusted: never approved; its hooks do not run; "
            f"review it, then run: {fix}") in validate.stdout.splitlines()
    as_json = json.loads(_cli("validate", "--json", cwd=project).stdout)
    assert as_json["trust"] == [{"source": "project", "path": str(folder), "state": "new",
                                 "trusted": False}]
    assert as_json["hooks"] == 1

    event = claude_bash("ls", cwd=str(project))
    report = json.loads(_cli("explain", "--json", "--managed-dir", none, stdin=event).stdout)
    (hook,) = report["hooks"]
    assert hook["runs"] is False
    assert hook["why"] == (f"matcher 'Bash' names the tool 'Bash'; but it does not run: its "
                           f"project config is not trusted: never approved; review it, then "
                           f"run: {fix}")
    assert report["sources"] == [{"name": "project", "path": str(folder), "priority": 1,
                                  "trust": "not trusted: never approved"}]
    text = _cli("explain", "--managed-dir", none, stdin=event).stdout
    assert "Hooks for PreToolUse: 0 of 1 would run" in text
    assert f"project  {folder}  [not trusted: never approved]" in text

    doctor = _cli("doctor", "--offline", "--json", "--project", str(project),
                  "--managed-dir", none)
    assert doctor.returncode == 1
    checks = json.loads(doctor.stdout)["checks"]
    (check,) = [c for c in checks if c["check"] == "trust project"]
    assert check == {"check": "trust project", "status": "fail",
                     "detail": f"{folder}: not trusted: never approved; review it, then run: "
                               f"{fix}"}
    assert not [c for c in checks if c["check"] == "config error"]  # said once, as trust

    assert _cli("trust", cwd=project).returncode == 0
    report = json.loads(_cli("explain", "--json", "--managed-dir", none, stdin=event).stdout)
    assert report["hooks"][0]["runs"] is True
    checks = json.loads(_cli("doctor", "--offline", "--json", "--project", str(project),
                             "--managed-dir", none).stdout)["checks"]
    (check,) = [c for c in checks if c["check"] == "trust project"]
    assert check["status"] == "ok" and check["detail"].startswith(f"{folder}: approved 20")


def test_managed_hooks_only_holds_for_loads_that_show_everything(project: Path,
                                                                tmp_path: Path) -> None:
    etc = tmp_path / "etc"
    claude_config(etc / "hooks.json", "Stop", {"command": "true"})
    data = json.loads((etc / "hooks.json").read_text())
    (etc / "hooks.json").write_text(json.dumps({**data, "prompthooks": {
        "allow_managed_hooks_only": True}}))
    named = claude_config(tmp_path / "named.json", "Stop", {"command": "true"})
    config = load_config([str(named)], str(project), managed_dir=etc, trusted_only=False)
    assert config.loaded.managed_only
    assert [h.source.name for h in config.hooks] == ["managed"]
    assert [(f.kind, f.fail_closed) for f in config.loaded.failures] == [("managed_only", False)]
