"""A project's glue is committed and shared: `prompthooks install` writes nothing of this
machine's into it, the glue finds prompthooks at run time on the machine it runs on (run as
each host runs it: from the project folder, with a desktop's minimal PATH), blocks when it
finds none, and `uninstall` leaves the project byte for byte as it was. Real install and
uninstall subprocesses into scratch projects."""

from __future__ import annotations

import hashlib
import json
import os
import pwd
import shlex
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from prompthooks.hosts.cline.install import MARKER as CLINE_MARKER
from prompthooks.install import created_folders, launcher, originals

from ..helpers import approve, claude_bash, cline_event, cursor_event, write_json, write_script

SCRIPT = Path(sys.executable).parent / "prompthooks"  # this installation's script
MINIMAL_PATH = "/usr/bin:/bin"  # what a host started from the desktop may have, at least
HOSTS = ("claude", "cursor", "cline")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "team project"  # a space, so quoting matters
    folder.mkdir()
    return folder


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    # An activated virtualenv: this installation is on the shell's PATH by its absolute path,
    # the case that used to put that path into the project's files.
    path = f"{SCRIPT.parent}:{MINIMAL_PATH}"
    return subprocess.run([sys.executable, "-m", "prompthooks", *args], capture_output=True,
                          text=True, cwd=cwd, env={**os.environ, "PATH": path}, timeout=60)


def tree(root: Path) -> dict[str, tuple[str, str, int]]:
    """Every folder, file and link under ``root``: kind, sha256 of the bytes (a link's
    target), mode."""
    out: dict[str, tuple[str, str, int]] = {}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        name = str(path.relative_to(root))
        if path.is_symlink():
            out[name] = ("link", os.readlink(path), 0)
        elif path.is_dir():
            out[name] = ("folder", "", info.st_mode & 0o7777)
        else:
            out[name] = ("file", hashlib.sha256(path.read_bytes()).hexdigest(),
                         info.st_mode & 0o7777)
    return out


def files_of(root: Path) -> Iterator[Path]:
    return (path for path in root.rglob("*") if path.is_file() and not path.is_symlink())


def this_machine(project: Path, home: Path) -> list[str]:
    """The absolute paths that are this machine's alone."""
    real_home = pwd.getpwuid(os.getuid()).pw_dir
    found = {sys.prefix, os.path.realpath(sys.prefix), str(SCRIPT.parent), sys.executable,
             str(home), str(project), real_home}
    return sorted(path for path in found if path not in ("", "/"))


def _existing(project: Path) -> None:
    """What a team's project already holds: host configs of its own, a user's Cline hook, a
    prompthooks config approved on this machine, an empty folder."""
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_bytes(
        b'{"permissions": {"allow": ["Bash(ls:*)"]},\n\t"model": "opus"}')
    (project / ".claude" / "settings.json").chmod(0o640)
    write_json(project / ".cursor" / "hooks.json",
               {"version": 1, "hooks": {"stop": [{"command": "./audit.sh"}]}})
    write_script(project / ".clinerules" / "hooks" / "TaskStart", "echo '{}'")
    (project / "docs").mkdir()
    # The policy: deny, from a script outside the project (one inside could not be approved).
    guard = write_script(project.parent / "guard.sh",
                         "cat >/dev/null; echo 'no wiping homes' >&2; exit 2")
    write_json(project / ".prompthooks" / "hooks.json", {"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": shlex.quote(str(guard))}]}]}})
    approve(project / ".prompthooks")


def _host_run(host: str, project: Path, extra_path: str = "") -> subprocess.CompletedProcess[str]:
    """A PreToolUse for a shell command, sent to the installed glue as the host runs it: from
    the project folder, with a minimal PATH, through ``sh -c`` (Claude Code, Cursor) or by the
    hook file's own path (Cline)."""
    env = {**os.environ, "PATH": f"{extra_path}{MINIMAL_PATH}"}
    if host == "claude":
        env["CLAUDE_PROJECT_DIR"] = str(project)
        event = claude_bash("rm -rf ~/", str(project))
        settings = json.loads((project / ".claude" / "settings.json").read_text())
        argv = ["sh", "-c", settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]]
    elif host == "cursor":
        event = cursor_event("preToolUse", str(project), tool_name="Shell",
                             tool_input={"command": "rm -rf ~/"})
        hooks = json.loads((project / ".cursor" / "hooks.json").read_text())
        argv = ["sh", "-c", hooks["hooks"]["preToolUse"][0]["command"]]
    else:
        event = cline_event("PreToolUse", str(project), toolName="execute_command",
                            parameters={"command": "rm -rf ~/"})
        argv = [str(project / ".clinerules" / "hooks" / "PreToolUse")]
    return subprocess.run(argv, input=json.dumps(event), capture_output=True, text=True,
                          cwd=project, env=env, timeout=60)


DENIED = {
    "claude": {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                      "permissionDecision": "deny",
                                      "permissionDecisionReason": "no wiping homes"}},
    "cursor": {"permission": "deny", "user_message": "no wiping homes",
               "agent_message": "no wiping homes"},
    "cline": {"cancel": True, "errorMessage": "no wiping homes"},
}


def assert_blocked_for_want_of_prompthooks(host: str,
                                           proc: subprocess.CompletedProcess[str]) -> None:
    """The host's own block, naming why: exit 2 for Claude Code and Cursor (a block on every
    event they can block), a cancel for Cline (whose exit 2 lets the action through)."""
    assert proc.stderr == launcher.NOT_FOUND + "\n"
    if host == "cline":
        assert proc.returncode == 0
        assert json.loads(proc.stdout) == {"cancel": True, "errorMessage": launcher.NOT_FOUND}
    else:
        assert (proc.returncode, proc.stdout) == (2, "")


# --- install writes nothing of this machine's; uninstall leaves the project as it was ------

@pytest.mark.slow
@pytest.mark.parametrize("host", HOSTS)
def test_project_glue_is_portable_and_uninstall_leaves_the_tree_as_it_was(
        project: Path, isolated_home: Path, host: str) -> None:
    _existing(project)
    before = tree(project)

    proc = cli("install", "--host", host, cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    said = [line for line in proc.stdout.splitlines() if line.startswith("glue: ")]
    assert len(said) == 1 and "finds prompthooks on each machine at run time" in said[0]
    changed = [name for name, entry in tree(project).items() if before.get(name) != entry]
    assert changed  # the glue is in the project's files: what is checked below is there
    for path in files_of(project):
        text = path.read_text(errors="replace")
        leaked = [where for where in this_machine(project, isolated_home) if where in text]
        assert leaked == [], f"{path} names {leaked}"
    assert not list(project.rglob("*.prompthooks-backup"))

    # This machine's prompthooks where pipx puts it: the glue, run as the host runs it,
    # finds it and answers (the deny comes from the project's approved policy).
    local_bin = isolated_home / ".local" / "bin"
    local_bin.mkdir(parents=True)
    (local_bin / "prompthooks").symlink_to(SCRIPT)
    ran = _host_run(host, project)
    assert ran.stderr == "", ran.stderr
    assert json.loads(ran.stdout) == DENIED[host]
    (local_bin / "prompthooks").unlink()

    proc = cli("uninstall", "--host", host, cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert tree(project) == before  # every file's bytes and mode, every folder, nothing more
    assert not originals.folder().exists()


@pytest.mark.slow
def test_all_three_hosts_then_uninstall_leaves_the_tree_as_it_was(
        project: Path, isolated_home: Path) -> None:
    before = tree(project)
    for host in HOSTS:
        assert cli("install", "--host", host, cwd=project).returncode == 0
    assert (project / ".prompthooks" / "hooks.json").is_file()  # the starter, approved
    for path in files_of(project):
        text = path.read_text(errors="replace")
        assert not [where for where in this_machine(project, isolated_home) if where in text]
    for host in HOSTS:
        proc = cli("uninstall", "--host", host, cwd=project)
        assert proc.returncode == 0, proc.stderr
    assert tree(project) == before == {}


# --- the glue at run time --------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("host", HOSTS)
def test_the_glue_finds_the_projects_virtualenv(project: Path, host: str) -> None:
    _existing(project)
    assert cli("install", "--host", host, cwd=project).returncode == 0
    venv = project / ".venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "prompthooks").symlink_to(SCRIPT)
    ran = _host_run(host, project)
    assert ran.stderr == "", ran.stderr
    assert json.loads(ran.stdout) == DENIED[host]


@pytest.mark.slow
@pytest.mark.parametrize("host", HOSTS)
def test_no_prompthooks_anywhere_blocks_loudly(project: Path, host: str) -> None:
    _existing(project)
    assert cli("install", "--host", host, cwd=project).returncode == 0
    # Canary: a bare `prompthooks run` under this PATH is "command not found", which the
    # hosts take for a failed hook and let the action through.
    bare = subprocess.run(["sh", "-c", "prompthooks run"], input="{}", capture_output=True,
                          text=True, cwd=project, env={**os.environ, "PATH": MINIMAL_PATH},
                          timeout=60)
    assert bare.returncode == 127
    assert_blocked_for_want_of_prompthooks(host, _host_run(host, project))


@pytest.mark.slow
@pytest.mark.parametrize("host", HOSTS)
def test_a_script_whose_interpreter_is_gone_is_passed_over(project: Path, host: str) -> None:
    """A project .venv removed or moved leaves its scripts naming a Python that is not there:
    run, it is "command not found" (a non-blocking error); the glue passes it over."""
    _existing(project)
    assert cli("install", "--host", host, cwd=project).returncode == 0
    stale = write_script(project / ".venv" / "bin" / "prompthooks",
                         "import sys; sys.exit(0)", shebang=f"#!{project}/gone/bin/python")
    canary = subprocess.run(["sh", "-c", f"{shlex.quote(str(stale))} run"],
                            capture_output=True, cwd=project, timeout=60)
    assert canary.returncode in (126, 127)  # what the host would have seen
    assert_blocked_for_want_of_prompthooks(host, _host_run(host, project))


@pytest.mark.slow
@pytest.mark.parametrize("host", ("claude", "cursor"))
def test_the_launcher_on_path_does_not_run_itself(project: Path, host: str) -> None:
    """A PATH that holds the launcher's own folder: the launcher finds itself first, passes
    itself over (no loop) and, with no prompthooks anywhere else, blocks."""
    _existing(project)
    assert cli("install", "--host", host, cwd=project).returncode == 0
    folder = project / f".{host}" / "hooks"
    found = subprocess.run(["sh", "-c", "command -v prompthooks"], capture_output=True,
                           text=True, env={**os.environ, "PATH": f"{folder}:{MINIMAL_PATH}"},
                           timeout=60)
    assert found.stdout.strip() == str(folder / "prompthooks")  # canary: it is found first
    assert_blocked_for_want_of_prompthooks(host, _host_run(host, project, f"{folder}:"))


@pytest.mark.slow
@pytest.mark.parametrize("host", HOSTS)
def test_a_planted_prompthooks_package_in_the_project_never_runs(
        project: Path, isolated_home: Path, host: str) -> None:
    """The glue runs prompthooks by its script, never as ``python -m prompthooks`` from the
    project folder, where a ``prompthooks/`` package in the project would be imported."""
    _existing(project)
    assert cli("install", "--host", host, cwd=project).returncode == 0
    marker = project.parent / "planted-ran"
    planted = project / "prompthooks"
    planted.mkdir()
    (planted / "__init__.py").write_text("")
    (planted / "__main__.py").write_text(
        f"open({str(marker)!r}, 'w').write('ran')\nprint('{{}}')\n")
    # Canary: a naive interpreter run from the project folder imports the planted package.
    naive = subprocess.run([sys.executable, "-m", "prompthooks", "run"], input="{}",
                           capture_output=True, text=True, cwd=project, timeout=60)
    assert naive.returncode == 0 and marker.read_text() == "ran"
    marker.unlink()

    local_bin = isolated_home / ".local" / "bin"
    local_bin.mkdir(parents=True)
    (local_bin / "prompthooks").symlink_to(SCRIPT)
    ran = _host_run(host, project)
    assert json.loads(ran.stdout) == DENIED[host]
    assert not marker.exists()


# --- the launcher's integrity ----------------------------------------------------------------

def _doctor_failures(project: Path, host: str) -> list[str]:
    proc = cli("doctor", "--offline", "--json", cwd=project)
    return [c["detail"] for c in json.loads(proc.stdout)["checks"]
            if c["check"] == f"glue {host} (project)" and c["status"] == "fail"]


@pytest.mark.slow
@pytest.mark.parametrize("host", HOSTS)
def test_a_rewritten_launcher_is_named_by_doctor_and_put_back_by_install(
        project: Path, host: str) -> None:
    """The launcher is a file in the project, which the agent can write: doctor names one
    that is not install's, install again puts install's bytes back."""
    assert cli("install", "--host", host, cwd=project).returncode == 0
    runner = project / (".clinerules/hooks/PreToolUse" if host == "cline"
                        else f".{host}/hooks/prompthooks")
    intact = runner.read_bytes()
    assert _doctor_failures(project, host) == []
    # What an agent would write to skip prompthooks, keeping the marker so it passes as ours.
    marker = intact.decode().splitlines()[1]
    runner.write_text(f"#!/bin/sh\n{marker}\necho '{{}}'\n")
    assert subprocess.run([str(runner), "run"], input=b"{}", capture_output=True,
                          timeout=60).returncode == 0  # canary: it lets everything through
    assert _doctor_failures(project, host) == [
        f"{runner}: not what install writes (rewritten since?); read it, then put it back: "
        f"prompthooks install --host {host}"]
    proc = cli("install", "--host", host, cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert runner.read_bytes() == intact
    assert _doctor_failures(project, host) == []


@pytest.mark.slow
def test_a_cline_hook_file_that_execs_something_else_is_named_by_doctor(project: Path) -> None:
    assert cli("install", "--host", "cline", cwd=project).returncode == 0
    hook = project / ".clinerules" / "hooks" / "PreToolUse"
    hook.write_text(f"#!/bin/sh\n{CLINE_MARKER}\nexec true\n")  # the form, not the glue
    assert subprocess.run([str(hook)], input=b"{}", timeout=60).returncode == 0
    assert _doctor_failures(project, "cline") == [
        f"{hook}: not what install writes (rewritten since?); read it, then put it back: "
        "prompthooks install --host cline"]


@pytest.mark.slow
def test_a_rewritten_launcher_is_removed_by_uninstall(project: Path) -> None:
    before = tree(project)
    assert cli("install", "--host", "claude", cwd=project).returncode == 0
    runner = project / ".claude" / "hooks" / "prompthooks"
    runner.write_text(f"#!/bin/sh\n{launcher.MARKER}\nexit 0\n")
    assert cli("uninstall", "--host", "claude", cwd=project).returncode == 0
    assert tree(project) == before


def test_a_file_of_the_launchers_name_that_is_not_ours_is_left_alone(project: Path) -> None:
    mine = write_script(project / ".claude" / "hooks" / "prompthooks", "echo mine")
    before = tree(project)
    proc = cli("install", "--host", "claude", cwd=project)
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == (f"prompthooks: not replacing {mine}: not a launcher written by "
                           "prompthooks; nothing was changed\n")
    assert tree(project) == before


# --- choosing the glue -----------------------------------------------------------------------

@pytest.mark.slow
def test_glue_choices_at_project_scope(project: Path, isolated_home: Path) -> None:
    before = tree(project)
    proc = cli("install", "--host", "claude", "--glue", "absolute", cwd=project)
    assert (proc.returncode, proc.stdout) == (64, "")
    assert proc.stderr == ("prompthooks: --glue absolute: a project's host config is committed, "
                           "and this machine's path is wrong on every other; use --scope "
                           "local (uncommitted) or --scope user for glue naming this "
                           "installation\n")
    proc = cli("install", "--host", "cursor", "--glue", "launcher", "--scope", "user",
               cwd=project)
    assert proc.returncode == 64 and proc.stderr.startswith("prompthooks: --glue launcher: ")
    assert tree(project) == before

    proc = cli("install", "--host", "claude", "--glue", "bare", cwd=project)
    assert proc.returncode == 0, proc.stderr
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    assert settings["hooks"]["Stop"] == [{"hooks": [{"type": "command",
                                                     "command": "prompthooks run"}]}]
    assert not (project / ".claude" / "hooks").exists()
    assert ("glue: 'prompthooks run' (--glue bare): the host runs whatever prompthooks its "
            "PATH finds, and lets actions through when it finds none") in proc.stdout
    assert cli("uninstall", "--host", "claude", cwd=project).returncode == 0
    assert tree(project) == before


# --- install's own records -------------------------------------------------------------------

@pytest.mark.slow
def test_a_fifo_for_the_folders_record_cannot_stall_uninstall(project: Path) -> None:
    """The record of the folders install created is in the user's data folder, which the
    agent can write: a FIFO put there would hold a plain read forever."""
    assert cli("install", "--host", "cursor", cwd=project).returncode == 0
    record = created_folders._record(os.environ)
    record.unlink()
    os.mkfifo(record)
    assert stat.S_ISFIFO(os.stat(record).st_mode)  # canary: where uninstall reads
    proc = cli("uninstall", "--host", "cursor", cwd=project)  # would hang on a plain read
    assert proc.returncode == 0, proc.stderr
    # No folder is known to be install's, so the empty ones stay; the files are gone.
    assert [p for p in project.rglob("*") if not p.is_dir()] == []


# --- a project installed by an earlier version -----------------------------------------------

@pytest.mark.slow
def test_install_again_takes_this_machines_path_out_of_a_projects_glue(
        project: Path, isolated_home: Path) -> None:
    """An earlier version wrote this installation's absolute path into the project's files:
    install again brings that glue to the launcher form, keeping the entries' other fields."""
    earlier = f"{shlex.quote(str(SCRIPT))} run"
    settings = write_json(project / ".claude" / "settings.json", {"hooks": {"Stop": [
        {"hooks": [{"type": "command", "command": earlier, "timeout": 30}]}]}})
    hooks = write_json(project / ".cursor" / "hooks.json", {"version": 1, "hooks": {
        "stop": [{"command": earlier, "timeout": 45}]}})
    cline = write_script(project / ".clinerules" / "hooks" / "PreToolUse", f"exec {earlier}",
                         shebang=f"#!/bin/sh\n{CLINE_MARKER}")
    for path in (settings, hooks, cline):
        assert str(SCRIPT) in path.read_text()  # canary: the machine's path is there
    for host in HOSTS:
        proc = cli("install", "--host", host, "--events",
                   {"claude": "Stop", "cursor": "stop", "cline": "PreToolUse"}[host],
                   cwd=project)
        assert proc.returncode == 0, proc.stderr
    launched = '"${CLAUDE_PROJECT_DIR:-.}"/.claude/hooks/prompthooks run'
    assert json.loads(settings.read_text())["hooks"]["Stop"] == [{"hooks": [
        {"type": "command", "command": launched, "timeout": 30}]}]
    assert json.loads(hooks.read_text())["hooks"]["stop"] == [
        {"command": ".cursor/hooks/prompthooks run", "timeout": 45}]
    for path in files_of(project):
        text = path.read_text(errors="replace")
        assert not [where for where in this_machine(project, isolated_home) if where in text]


@pytest.mark.slow
def test_local_glue_beside_the_projects_keeps_the_launcher(project: Path) -> None:
    """Claude Code's local file (one user's, uncommitted) names this installation; taking it
    out leaves the project's glue and its launcher in place."""
    assert cli("install", "--host", "claude", cwd=project).returncode == 0
    runner = project / ".claude" / "hooks" / "prompthooks"
    shared = tree(project)
    proc = cli("install", "--host", "claude", "--scope", "local", cwd=project)
    assert proc.returncode == 0, proc.stderr
    local = json.loads((project / ".claude" / "settings.local.json").read_text())
    assert local["hooks"]["Stop"] == [{"hooks": [{"type": "command",
                                                  "command": f"{shlex.quote(str(SCRIPT))} run"}]}]
    assert cli("uninstall", "--host", "claude", "--scope", "local", cwd=project).returncode == 0
    assert tree(project) == shared and runner.is_file()


@pytest.mark.slow
def test_cline_force_over_a_users_hook_then_uninstall_leaves_the_tree_as_it_was(
        project: Path) -> None:
    mine = write_script(project / ".clinerules" / "hooks" / "PreToolUse", "echo '{}'")
    mine.chmod(0o700)
    before = tree(project)
    proc = cli("install", "--host", "cline", "--force", cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert CLINE_MARKER in mine.read_text()
    assert cli("uninstall", "--host", "cline", cwd=project).returncode == 0
    assert tree(project) == before


@pytest.mark.slow
@pytest.mark.parametrize("host", HOSTS)
def test_a_relative_path_entry_does_not_pick_a_planted_prompthooks(
        project: Path, host: str) -> None:
    """A host whose PATH holds "." runs the launcher from the project folder, where a file
    named prompthooks can be planted: the launcher takes only absolute paths."""
    _existing(project)
    assert cli("install", "--host", host, cwd=project).returncode == 0
    marker = project.parent / "planted-ran"
    write_script(project / "prompthooks", f"touch {shlex.quote(str(marker))}; echo '{{}}'")
    found = subprocess.run(["sh", "-c", "command -v prompthooks"], capture_output=True,
                           text=True, cwd=project, env={**os.environ, "PATH": f".:{MINIMAL_PATH}"},
                           timeout=60)
    assert found.stdout.strip() == "./prompthooks"  # canary: PATH finds the planted file
    assert_blocked_for_want_of_prompthooks(host, _host_run(host, project, ".:"))
    assert not marker.exists()
