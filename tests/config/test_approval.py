"""Approval of project and user configs: what an agent writes into `.prompthooks/` does not
run until the user approves it, and stops running when it changes; real files, real `run`
processes, the real audit log."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from pathlib import Path
from typing import Any

import pytest

from prompthooks.api import load_config
from prompthooks.core.hook import Source
from prompthooks.loading import loader, trust

from ..helpers import (
    approve,
    claude_bash,
    claude_config,
    reply,
    run_in_process,
    write_json,
    write_script,
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def _touching(project: Path, marker: Path) -> Path:
    """The project config an agent would write: a command hook that leaves a file behind."""
    return claude_config(project / ".prompthooks" / "hooks.json", "PreToolUse",
                         {"command": f"touch {marker}"})


def _run(project: Path, *args: str, env: dict[str, str] | None = None) -> Any:
    return run_in_process(claude_bash("ls", cwd=str(project)), "--managed-dir",
                   str(project.parent / "no-managed"), *args, cwd=project, env=env)


def _rows(home: Path) -> list[dict[str, Any]]:
    conn = sqlite3.connect(home / ".local" / "share" / "prompthooks" / "audit.db")
    conn.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in conn.execute("SELECT * FROM decisions ORDER BY id")]
    finally:
        conn.close()


def _untrusted_line(project: Path, note: str = "") -> str:
    note = f"; {note}" if note else ""
    return (f"prompthooks: project config {project / '.prompthooks'} is not trusted (new or "
            f"changed since approved{note}); review it and run: prompthooks trust --project "
            f"{project}")


def _trust_cli(*args: str, cwd: Path | None = None) -> Any:
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "prompthooks", "trust", *args],
                          capture_output=True, text=True, cwd=cwd, timeout=60)


@pytest.mark.slow
def test_a_new_config_does_not_run_until_approved_and_stops_when_edited(
        project: Path, isolated_home: Path) -> None:
    marker = project.parent / "hook-ran"
    config = _touching(project, marker)

    proc = _run(project)
    assert not marker.exists()  # the agent's hook did not run
    assert proc.stderr.splitlines() == [_untrusted_line(project)]
    assert proc.returncode == 1  # nothing else had anything to say
    assert proc.stdout == ""
    (row,) = _rows(isolated_home)
    assert (row["kind"], row["source"], row["hook"], row["status"], row["decision"]) == (
        "untrusted", "project", "<untrusted project>", "error", "none")
    assert row["error"] == _untrusted_line(project).removeprefix("prompthooks: ")

    approved = _trust_cli("--project", str(project))
    assert approved.returncode == 0, approved.stderr
    proc = _run(project)
    assert marker.exists() and proc.returncode == 0 and proc.stderr == ""
    marker.unlink()

    # The agent edits the approved file: it stops running again.
    data = json.loads(config.read_text())
    data["hooks"]["PreToolUse"][0]["hooks"][0]["command"] += " && echo edited"
    config.write_text(json.dumps(data))
    proc = _run(project)
    assert not marker.exists()
    assert proc.stderr.splitlines() == [_untrusted_line(project, "hooks.json changed")]
    assert proc.returncode == 1


def test_an_untrusted_config_never_blocks_but_the_managed_policy_still_runs(
        project: Path, tmp_path: Path) -> None:
    """failClosed in an unapproved file is not honoured (an agent could block everything);
    the managed deny still answers."""
    write_json(project / ".prompthooks" / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": "exit 2", "failClosed": True}]}]}})
    proc = _run(project)
    assert proc.returncode == 1 and proc.stdout == ""
    deny = write_script(tmp_path / "deny.sh", "echo 'managed: no' >&2; exit 2")
    claude_config(tmp_path / "etc" / "hooks.json", "PreToolUse", {"command": str(deny)})
    proc = run_in_process(claude_bash("ls", cwd=str(project)), "--managed-dir", str(tmp_path / "etc"),
                   cwd=project)
    assert proc.returncode == 0
    assert reply(proc)["hookSpecificOutput"]["permissionDecisionReason"] == "managed: no"
    assert proc.stderr.splitlines() == [_untrusted_line(project)]


def test_the_config_cache_never_serves_a_changed_config(project: Path) -> None:
    """The cache holds the approved version; the file changes; the new hooks do not run."""
    marker = project.parent / "new-hook-ran"
    claude_config(project / ".prompthooks" / "hooks.json", "PreToolUse", {"command": "true"})
    approve(project / ".prompthooks")
    assert _run(project).returncode == 0  # loaded and cached
    assert _run(project).returncode == 0  # from the cache
    cached = list((Path(os.environ["XDG_CACHE_HOME"]) / "prompthooks").glob("config-*.json"))
    assert cached
    _touching(project, marker)
    proc = _run(project)
    assert not marker.exists()
    assert proc.stderr.splitlines() == [_untrusted_line(project, "hooks.json changed")]


def test_a_revoked_approval_is_not_served_from_the_cache(project: Path) -> None:
    """The files stay as cached; only the approval goes: the check is made on every run."""
    marker = project.parent / "hook-ran"
    _touching(project, marker)
    approve(project / ".prompthooks")
    assert _run(project).returncode == 0 and marker.exists()
    marker.unlink()
    assert _trust_cli("--revoke", "--project", str(project)).returncode == 0
    proc = _run(project)
    assert not marker.exists()
    assert proc.stderr.splitlines() == [_untrusted_line(project)]


def test_a_file_added_to_the_hooks_folder_changes_the_hash(project: Path) -> None:
    folder = project / ".prompthooks"
    claude_config(folder / "hooks.json", "PreToolUse", {"command": "true"})
    approve(folder)
    before = trust.digest(folder)
    marker = project.parent / "cline-hook-ran"
    write_script(folder / "hooks" / "PreToolUse", f"touch {marker}; echo '{{}}'")
    after = trust.digest(folder)
    assert after.sha256 != before.sha256
    assert after.files == ("hooks.json", "hooks/PreToolUse")
    proc = _run(project)
    assert not marker.exists() and proc.returncode == 1
    # A file prompthooks does not load (a script the hooks call) is not part of it.
    write_script(folder / "guard.sh", "exit 0")
    assert trust.digest(folder) == after
    # The mode is: a hook file made executable is another config.
    (folder / "hooks" / "PreToolUse").chmod(0o644)
    assert trust.digest(folder).sha256 != after.sha256


def test_a_symlink_swap_is_a_change(project: Path, tmp_path: Path) -> None:
    marker = tmp_path / "swapped-hook-ran"
    good = claude_config(tmp_path / "good.json", "PreToolUse", {"command": "true"})
    bad = claude_config(tmp_path / "bad.json", "PreToolUse", {"command": f"touch {marker}"})
    folder = project / ".prompthooks"
    folder.mkdir()
    (folder / "hooks.json").symlink_to(good)
    approve(folder)
    assert _run(project).returncode == 0
    (folder / "hooks.json").unlink()
    (folder / "hooks.json").symlink_to(bad)
    proc = _run(project)
    assert not marker.exists() and proc.returncode == 1
    # The same bytes behind another link are still another config.
    twin = tmp_path / "twin.json"
    twin.write_bytes(good.read_bytes())
    (folder / "hooks.json").unlink()
    (folder / "hooks.json").symlink_to(twin)
    assert not load_config(project_dir=str(project),
                           managed_dir=tmp_path / "none").loaded.trust[0].trusted


def test_the_hooks_folder_swapped_for_a_link_is_a_change(project: Path, tmp_path: Path) -> None:
    folder = project / ".prompthooks"
    write_script(folder / "hooks" / "PreToolUse", "echo '{}'")
    approve(folder)
    elsewhere = tmp_path / "elsewhere"
    write_script(elsewhere / "PreToolUse", "echo '{}'")
    (elsewhere / "PreToolUse").chmod((folder / "hooks" / "PreToolUse").stat().st_mode)
    (folder / "hooks" / "PreToolUse").unlink()
    (folder / "hooks").rmdir()
    (folder / "hooks").symlink_to(elsewhere)
    (state,) = load_config(project_dir=str(project), managed_dir=tmp_path / "none").loaded.trust
    assert state.state == "changed"


def test_a_corrupt_trust_store_approves_nothing(project: Path, isolated_home: Path) -> None:
    marker = project.parent / "hook-ran"
    _touching(project, marker)
    approve(project / ".prompthooks")
    store = isolated_home / ".local" / "share" / "prompthooks" / "trust.json"
    for garbage in (b"{not json", b"[]", b'{"format": 1, "sources": {"/x": 5}}', b"\xff\xfe"):
        store.write_bytes(garbage)
        proc = _run(project)
        assert not marker.exists()
        assert proc.returncode == 1 and "Traceback" not in proc.stderr
        (line,) = proc.stderr.splitlines()
        assert f"trust store {store} " in line and "nothing is approved" in line
        assert line.endswith(f"review it and run: prompthooks trust --project {project}")
    store.unlink()
    store.mkdir()  # not even a file
    proc = _run(project)
    assert not marker.exists() and proc.returncode == 1
    assert "not a regular file" in proc.stderr and "Traceback" not in proc.stderr
    store.rmdir()
    os.mkfifo(store)  # would block a plain read forever
    proc = _run(project)
    assert not marker.exists() and proc.returncode == 1
    assert "not a regular file" in proc.stderr


def test_a_store_others_can_write_approves_nothing(project: Path, isolated_home: Path) -> None:
    marker = project.parent / "hook-ran"
    _touching(project, marker)
    approve(project / ".prompthooks")
    store = isolated_home / ".local" / "share" / "prompthooks" / "trust.json"
    store.chmod(0o666)
    proc = _run(project)
    assert not marker.exists() and proc.returncode == 1
    assert f"trust store {store} is writable by others or not yours" in proc.stderr
    store.chmod(0o600)
    assert _run(project).returncode == 0 and marker.exists()


@pytest.mark.slow
def test_approving_replaces_a_corrupt_store(project: Path, isolated_home: Path) -> None:
    _touching(project, project.parent / "m")
    store = isolated_home / ".local" / "share" / "prompthooks" / "trust.json"
    store.parent.mkdir(parents=True)
    store.write_text("{broken")
    proc = _trust_cli("--project", str(project))
    assert proc.returncode == 0
    assert f"\nwarning: trust store {store} is not valid JSON" in proc.stdout
    assert json.loads(store.read_text())["format"] == 1


def test_the_store_is_owner_only_in_the_data_folder(project: Path, isolated_home: Path) -> None:
    _touching(project, project.parent / "m")
    assert _trust_cli("--project", str(project)).returncode == 0
    folder = isolated_home / ".local" / "share" / "prompthooks"
    store = folder / "trust.json"
    assert stat.S_IMODE(store.stat().st_mode) == 0o600
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    data = json.loads(store.read_text())
    (key,) = data["sources"]
    assert key == str((project / ".prompthooks").resolve())
    record = data["sources"][key]
    assert record["source"] == "project" and record["files"] == ["hooks.json"]
    assert record["sha256"] == trust.digest(project / ".prompthooks").sha256
    assert record["approved_at"].endswith("Z")
    # Nothing was written into the project.
    assert sorted(p.name for p in (project / ".prompthooks").iterdir()) == ["hooks.json"]


def test_no_environment_variable_grants_approval(project: Path) -> None:
    marker = project.parent / "hook-ran"
    _touching(project, marker)
    env = {name: "1" for name in ("PROMPTHOOKS_TRUST", "PROMPTHOOKS_TRUST_ALL",
                                  "PROMPTHOOKS_TRUSTED", "PROMPTHOOKS_NO_TRUST",
                                  "PROMPTHOOKS_SKIP_TRUST", "PROMPTHOOKS_NO_CACHE",
                                  "DIRENV_ALLOW", "CI")}
    env["PROMPTHOOKS_DEBUG"] = "0"
    proc = _run(project, env=env)
    assert not marker.exists() and proc.returncode == 1
    assert proc.stderr.splitlines() == [_untrusted_line(project)]


def test_a_user_config_needs_approval_too(project: Path, isolated_home: Path) -> None:
    marker = project.parent / "user-hook-ran"
    user = isolated_home / ".config" / "prompthooks"
    claude_config(user / "hooks.json", "PreToolUse", {"command": f"touch {marker}"})
    proc = _run(project)
    assert not marker.exists() and proc.returncode == 1
    assert proc.stderr.splitlines() == [
        f"prompthooks: user config {user} is not trusted (new or changed since approved); "
        "review it and run: prompthooks trust --user"]
    assert _trust_cli("--user").returncode == 0
    assert _run(project).returncode == 0 and marker.exists()


def test_command_line_and_managed_configs_need_no_approval(project: Path,
                                                           tmp_path: Path) -> None:
    marker = tmp_path / "config-hook-ran"
    config = claude_config(tmp_path / "named" / "hooks.json", "PreToolUse",
                           {"command": f"touch {marker}"})
    proc = _run(project, "--config", str(config.parent))
    assert proc.returncode == 0 and marker.exists()


def test_unapprovable_files_are_refused_without_blocking_or_hanging(project: Path) -> None:
    folder = project / ".prompthooks"
    claude_config(folder / "hooks.json", "PreToolUse", {"command": "true"})
    os.mkfifo(folder / "PreToolUse.md")
    proc = _run(project, "--budget", "20")
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [
        f"prompthooks: project config {folder} is not trusted: it cannot be approved "
        "(PreToolUse.md is not a regular file)"]
    refused = _trust_cli("--project", str(project))
    assert refused.returncode == 1
    assert refused.stdout.strip() == (f"prompthooks: project config {folder} cannot be "
                                      "approved: PreToolUse.md is not a regular file")
    (folder / "PreToolUse.md").unlink()
    with (folder / "hooks.json").open("ab") as out:  # sparse: no disk needed
        out.truncate(trust.MAX_FILE + 1)
    with pytest.raises(trust.Unapprovable, match=r"hooks\.json is larger than 1024 KB"):
        trust.digest(folder)


def test_a_file_written_between_the_check_and_the_load_is_not_loaded(
        project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The load parses the bytes the check read, never the file opened again by name."""
    folder = project / ".prompthooks"
    claude_config(folder / "hooks.json", "PreToolUse", {"command": "approved"})
    approve(folder)
    real = loader.load_path

    def racing(path: Path, source: Source, project_dir: str, loaded: loader.Loaded) -> None:
        if source.name == "project" and "racing" not in loaded.warnings:
            loaded.warnings.append("racing")
            claude_config(folder / "hooks.json", "PreToolUse", {"command": "swapped in"})
            write_script(folder / "hooks" / "PreToolUse", "exit 2")  # a new hook file too
        real(path, source, project_dir, loaded)

    monkeypatch.setattr(loader, "load_path", racing)  # sources imports it per load
    config = load_config(project_dir=str(project), managed_dir=tmp_path / "none")
    assert "swapped in" in (folder / "hooks.json").read_text()  # the write happened
    assert [h.command for h in config.hooks] == ["approved"]
    assert config.errors == []


def test_managed_hooks_only_keeps_the_managed_deny_and_drops_the_project_allow(
        project: Path, tmp_path: Path, isolated_home: Path) -> None:
    deny = write_script(tmp_path / "deny.sh", "echo 'managed: no' >&2; exit 2")
    etc = write_json(tmp_path / "etc" / "hooks.json", {
        "prompthooks": {"allow_managed_hooks_only": True},
        "hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": str(deny)}]}]}})
    allow = {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                    "permissionDecision": "allow"}}
    marker = tmp_path / "project-hook-ran"
    claude_config(project / ".prompthooks" / "hooks.json", "PreToolUse",
                  {"command": f"touch {marker}; echo '{json.dumps(allow)}'"})
    approve(project / ".prompthooks")  # approved, and still not loaded
    named = claude_config(tmp_path / "named.json", "PreToolUse", {"command": f"touch {marker}"})
    for extra in ((), ("--config", str(named))):
        proc = run_in_process(claude_bash("ls", cwd=str(project)), "--managed-dir", str(etc.parent),
                       *extra, cwd=project)
        assert not marker.exists()
        assert proc.returncode == 0
        out = reply(proc)["hookSpecificOutput"]
        assert (out["permissionDecision"], out["permissionDecisionReason"]) == ("deny",
                                                                                "managed: no")
        (line,) = proc.stderr.splitlines()
        assert line.endswith("is not loaded: the managed policy allows managed hooks only "
                             "(allow_managed_hooks_only)")
    kinds = [r["kind"] for r in _rows(isolated_home)]
    assert kinds.count("managed_only") == 2 and kinds.count("command") == 2


def test_only_a_managed_file_may_allow_managed_hooks_only(project: Path, tmp_path: Path) -> None:
    path = write_json(project / ".prompthooks" / "hooks.json", {
        "prompthooks": {"allow_managed_hooks_only": True}, "hooks": {}})
    approve(project / ".prompthooks")
    config = load_config(project_dir=str(project), managed_dir=tmp_path / "none")
    assert config.errors == [f"{path}: prompthooks.allow_managed_hooks_only: only the managed "
                             "policy (/etc/prompthooks) may set this"]
    assert not config.loaded.managed_only


def test_an_empty_config_folder_needs_no_approval(project: Path, tmp_path: Path) -> None:
    folder = project / ".prompthooks"
    write_script(folder / "guard.sh", "exit 0")  # a script, no hook file
    (state,) = load_config(project_dir=str(project), managed_dir=tmp_path / "none").loaded.trust
    assert (state.state, state.trusted) == ("empty", True)
    assert _run(project).returncode == 0

