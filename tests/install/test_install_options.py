"""`install` / `uninstall` options: `--scope local` (Claude Code's uncommitted personal
settings), `--dry-run` (nothing written, proven on the whole tree), `--json` (what changed),
`--glue` (how the glue names prompthooks), and the folders install created, removed by
uninstall once empty (never a folder that was there before)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from prompthooks.install import originals
from prompthooks.install.glue import choose
from prompthooks.setup.starter import STARTER

from ..helpers import write_script

SCRIPT = Path(sys.executable).parent / "prompthooks"
GLUE = f"{shlex.quote(str(SCRIPT))} run"


@pytest.fixture
def bare_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A PATH with the shell's tools but no `prompthooks` on it."""
    return f"{tmp_path_factory.mktemp('emptybin')}:/usr/bin:/bin"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "my project"
    folder.mkdir()
    return folder


def cli(*args: str, path: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "prompthooks", *args], capture_output=True,
                          text=True, cwd=cwd, env={**os.environ, "PATH": path}, timeout=60)


def tree(*roots: Path) -> dict[str, tuple[str, bytes, int, int]]:
    """Every folder and file under ``roots``: kind, bytes, mtime (ns) and mode."""
    out: dict[str, tuple[str, bytes, int, int]] = {}
    for root in roots:
        for path in sorted(root.rglob("*")):
            info = path.lstat()
            data = path.read_bytes() if path.is_file() and not path.is_symlink() else b""
            kind = "dir" if path.is_dir() else "file"
            out[str(path)] = (kind, data, info.st_mtime_ns, info.st_mode)
    return out


# --- --scope local -----------------------------------------------------------------------

@pytest.mark.slow
def test_local_scope_is_claudes_personal_settings(project: Path, bare_path: str,
                                                  isolated_home: Path) -> None:
    shared = project / ".claude" / "settings.json"
    shared.parent.mkdir()
    shared.write_text('{"model": "opus"}\n')
    local = project / ".claude" / "settings.local.json"
    config = isolated_home / ".config" / "prompthooks" / "hooks.json"
    proc = cli("install", "--host", "claude", "--scope", "local", "--events", "PreToolUse",
               path=bare_path, cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(local.read_text()) == {
        "hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": GLUE}]}]}}
    assert shared.read_text() == '{"model": "opus"}\n'  # the committed file is untouched
    # The starter goes to the user's folder: the project's .prompthooks is shared by clones.
    assert config.read_bytes() == STARTER
    assert not (project / ".prompthooks").exists()
    assert proc.stdout.splitlines()[0] == f"wrote {local} (PreToolUse)"

    doctor = subprocess.run([sys.executable, "-m", "prompthooks", "doctor", "--offline",
                             "--json"], capture_output=True, text=True, cwd=project,
                            timeout=60)
    checks = {c["check"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert checks["glue claude (local)"]["detail"] == f"installed in {local}"

    proc = cli("uninstall", "--host", "claude", "--scope", "local", path=bare_path, cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert not local.exists()
    assert not config.exists()
    assert shared.read_text() == '{"model": "opus"}\n'
    assert (project / ".claude").is_dir()  # the user's folder stays


@pytest.mark.slow
def test_the_users_starter_stays_while_local_glue_uses_it(project: Path, bare_path: str,
                                                         isolated_home: Path) -> None:
    config = isolated_home / ".config" / "prompthooks" / "hooks.json"
    for scope in ("local", "user"):
        assert cli("install", "--host", "claude", "--scope", scope, path=bare_path,
                   cwd=project).returncode == 0
    proc = cli("uninstall", "--host", "claude", "--scope", "user", path=bare_path, cwd=project)
    assert f"kept {config}: the Claude Code (local scope) glue still uses it" in proc.stdout
    assert config.read_bytes() == STARTER


@pytest.mark.slow
def test_local_scope_warns_when_git_would_commit_it(project: Path, bare_path: str) -> None:
    """Claude Code ignores settings.local.json in git only when it creates the file itself."""
    subprocess.run(["git", "init", "-q", str(project)], check=True, timeout=30)
    local = project / ".claude" / "settings.local.json"
    proc = cli("install", "--host", "claude", "--scope", "local", path=bare_path, cwd=project)
    assert proc.returncode == 0
    assert proc.stderr == (f"prompthooks: warning: git does not ignore {local}: add "
                           ".claude/settings.local.json to .gitignore to keep it yours\n")
    assert local.exists()
    (project / ".gitignore").write_text(".claude/settings.local.json\n")
    again = cli("install", "--host", "claude", "--scope", "local", path=bare_path, cwd=project)
    assert (again.returncode, again.stderr) == (0, "")


@pytest.mark.slow
@pytest.mark.parametrize("host, title", [("cursor", "Cursor"), ("cline", "Cline")])
def test_local_scope_is_refused_where_the_host_has_none(project: Path, bare_path: str,
                                                        isolated_home: Path, host: str,
                                                        title: str) -> None:
    before = tree(project, isolated_home)
    for command in ("install", "uninstall"):
        proc = cli(command, "--host", host, "--scope", "local", path=bare_path, cwd=project)
        assert proc.returncode == 64
        assert proc.stdout == ""
        assert proc.stderr == (f"prompthooks: --scope local: {title} has no uncommitted "
                               "personal settings; it has no personal settings layer for a "
                               "project: use --scope user\n")
    assert tree(project, isolated_home) == before


# --- --dry-run ---------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("host", ["claude", "cursor", "cline"])
def test_dry_run_writes_nothing_and_says_what_install_would_do(
        project: Path, bare_path: str, isolated_home: Path, host: str) -> None:
    before = tree(project, isolated_home)
    dry = cli("install", "--host", host, "--dry-run", path=bare_path, cwd=project)
    assert dry.returncode == 0, dry.stderr
    assert tree(project, isolated_home) == before  # byte for byte, mtimes and modes too
    real = cli("install", "--host", host, path=bare_path, cwd=project)
    assert real.returncode == 0, real.stderr
    done, would = real.stdout.splitlines(), dry.stdout.splitlines()
    assert would[-1] == "dry run: nothing was changed"
    # The same lines, in the conditional: the dry run decided exactly as the install did.
    assert [line.replace("wrote ", "would write ", 1).replace("approved ", "would approve ", 1)
            for line in done[:-1]] == would[:-1]
    assert would[0].startswith("would write ")


@pytest.mark.slow
def test_dry_run_uninstall_writes_nothing(project: Path, bare_path: str,
                                          isolated_home: Path) -> None:
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"model": "opus"}')
    assert cli("install", "--host", "claude", path=bare_path, cwd=project).returncode == 0
    before = tree(project, isolated_home)
    dry = cli("uninstall", "--host", "claude", "--dry-run", path=bare_path, cwd=project)
    assert dry.returncode == 0, dry.stderr
    assert tree(project, isolated_home) == before
    config = project / ".prompthooks"
    backup, runner = originals.record(settings), project / ".claude" / "hooks" / "prompthooks"
    made = "(an empty folder install created)"
    assert dry.stdout.splitlines() == [
        f"would restore {settings} from {backup}",
        f"would remove {runner}",
        f"would remove {config / 'hooks.json'}",
        f"would remove {backup.parent} {made}",
        f"would remove {runner.parent} {made}",
        f"would remove {config} {made}",
        "dry run: nothing was changed"]
    real = cli("uninstall", "--host", "claude", path=bare_path, cwd=project)
    assert real.stdout.splitlines()[:-1] == [
        line.removeprefix("would ").replace("restore ", "restored ", 1)
        .replace("remove ", "removed ", 1) for line in dry.stdout.splitlines()[:-1]]
    assert settings.read_text() == '{"model": "opus"}'


def test_dry_run_of_cline_force_sees_its_own_moves(project: Path, bare_path: str) -> None:
    folder = project / ".clinerules" / "hooks"
    mine = write_script(folder / "PreToolUse", "echo mine")
    before = tree(project)
    dry = cli("install", "--host", "cline", "--events", "PreToolUse", "--force", "--dry-run",
              path=bare_path, cwd=project)
    assert dry.returncode == 0, dry.stderr
    assert tree(project) == before
    assert dry.stdout.splitlines()[:2] == [
        f"would back up {mine} to {mine}.prompthooks-backup", f"would write {mine}"]


# --- --json ------------------------------------------------------------------------------

@pytest.mark.slow
def test_json_says_what_changed(project: Path, bare_path: str, isolated_home: Path) -> None:
    proc = cli("install", "--host", "cursor", "--events", "stop", "--json", path=bare_path,
               cwd=project)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    hooks, config = project / ".cursor" / "hooks.json", project / ".prompthooks"
    runner = hooks.parent / "hooks" / "prompthooks"
    assert report["host"] == "cursor" and report["scope"] == "project"
    assert report["location"] == str(hooks)
    assert report["glue"] == ".cursor/hooks/prompthooks run"
    assert report["events"] == ["stop"]
    assert report["dry_run"] is False and report["changed"] is True
    assert report["changes"] == [
        {"action": "create folder", "path": str(hooks.parent)},
        {"action": "write", "path": str(hooks)},
        {"action": "create folder", "path": str(runner.parent)},
        {"action": "write", "path": str(runner)},
        {"action": "create folder", "path": str(config)},
        {"action": "write", "path": str(config / "hooks.json")},
        {"action": "approve", "path": str(config / "hooks.json")}]
    assert report["messages"][0] == f"wrote {hooks} (stop)"
    assert report["warnings"] == []

    again = json.loads(cli("install", "--host", "cursor", "--events", "stop", "--json",
                           path=bare_path, cwd=project).stdout)
    assert again["changed"] is False and again["changes"] == []

    dry = json.loads(cli("uninstall", "--host", "cursor", "--json", "--dry-run",
                         path=bare_path, cwd=project).stdout)
    assert dry["dry_run"] is True and dry["changed"] is False
    assert [c["action"] for c in dry["changes"]] == ["remove", "remove", "remove",
                                                     "remove folder", "remove folder",
                                                     "remove folder"]
    assert hooks.exists()
    gone = json.loads(cli("uninstall", "--host", "cursor", "--json", path=bare_path,
                          cwd=project).stdout)
    assert gone["changes"] == [{"action": "remove", "path": str(hooks)},
                               {"action": "remove", "path": str(runner)},
                               {"action": "remove", "path": str(config / "hooks.json")},
                               {"action": "remove folder", "path": str(runner.parent)},
                               {"action": "remove folder", "path": str(hooks.parent)},
                               {"action": "remove folder", "path": str(config)}]
    assert sorted(p.name for p in project.iterdir()) == []


# --- the folders install created ---------------------------------------------------------

@pytest.mark.slow
def test_uninstall_never_removes_a_folder_that_was_there(project: Path, bare_path: str) -> None:
    (project / ".claude").mkdir()  # the user's, empty
    (project / ".prompthooks").mkdir()
    for command in ("install", "uninstall"):
        assert cli(command, "--host", "claude", path=bare_path, cwd=project).returncode == 0
    assert (project / ".claude").is_dir() and (project / ".prompthooks").is_dir()
    assert list((project / ".claude").iterdir()) == []


@pytest.mark.slow
def test_a_created_folder_the_user_filled_stays(project: Path, bare_path: str) -> None:
    assert cli("install", "--host", "claude", path=bare_path, cwd=project).returncode == 0
    (project / ".claude" / "notes.md").write_text("mine")
    proc = cli("uninstall", "--host", "claude", path=bare_path, cwd=project)
    assert (project / ".claude" / "notes.md").read_text() == "mine"
    assert not (project / ".prompthooks").exists()
    assert f"removed {project / '.claude'} (" not in proc.stdout


@pytest.mark.slow
def test_validate_lists_no_empty_user_folder(project: Path, bare_path: str,
                                            isolated_home: Path) -> None:
    """A folder left empty (by hand, or by an older uninstall) is no source of hooks."""
    (isolated_home / ".config" / "prompthooks").mkdir(parents=True)
    proc = subprocess.run([sys.executable, "-m", "prompthooks", "validate", "--json"],
                          capture_output=True, text=True, cwd=project, timeout=60)
    report = json.loads(proc.stdout)
    assert report["sources"] == [] and report["trust"] == []
    text = subprocess.run([sys.executable, "-m", "prompthooks", "validate"],
                          capture_output=True, text=True, cwd=project, timeout=60)
    assert text.stdout.splitlines() == ["0 hooks from none found; 0 errors, 0 warnings"]


# --- --glue and the PATH ------------------------------------------------------------------

def test_glue_choice_for_a_desktop_started_host(tmp_path: Path) -> None:
    venv = tmp_path / "venv" / "bin"
    python = write_script(venv / "python", "true")
    script = write_script(venv / "prompthooks", "true")
    quoted = f"{shlex.quote(str(script))} run"
    system = [str(tmp_path / "usr-bin")]
    # Found on PATH in a folder such a host has (pipx's ~/.local/bin, /usr/local/bin): bare.
    assert choose(str(script), str(python), "-c", "auto", [str(venv)]).command \
        == "prompthooks run"
    # Found only through an activated virtualenv: by absolute path, and install says why.
    glue = choose(str(script), str(python), "-c", "auto", system)
    assert glue.command == quoted and glue.warning is None
    assert glue.note is not None and str(venv) in glue.note
    # --glue absolute: always the path, without a note.
    assert choose(str(script), str(python), "-c", "absolute", [str(venv)]) == \
        type(glue)(quoted)
    # --glue bare: what was asked, and a warning when the host may not find it.
    bare = choose(str(script), str(python), "-c", "bare", system)
    assert bare.command == "prompthooks run"
    assert bare.warning is not None and "relies on the host's PATH" in bare.warning
    assert choose(str(script), str(python), "-c", "bare", [str(venv)]).warning is None
    assert choose(None, str(python), "-c", "bare", system).warning == (
        "warning: the glue 'prompthooks run' relies on the host's PATH: this installation is "
        "not the prompthooks on this shell's PATH, so the host may run another one, or none")


@pytest.mark.slow
def test_glue_bare_warns_on_stderr(project: Path, bare_path: str) -> None:
    proc = cli("install", "--host", "claude", "--events", "Stop", "--glue", "bare",
               path=f"{SCRIPT.parent}:{bare_path}", cwd=project)
    assert proc.returncode == 0
    assert proc.stderr == (
        f"prompthooks: warning: the glue 'prompthooks run' relies on the host's PATH: the "
        f"prompthooks on this shell's PATH is in {SCRIPT.parent}, which a host started from "
        "the desktop does not have on its PATH\n")
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    assert settings["hooks"]["Stop"][0]["hooks"][0]["command"] == "prompthooks run"


@pytest.mark.parametrize("args, message", [
    (["--glue", "relative"], "argument --glue: invalid choice: 'relative' (choose from "
                             "'auto', 'absolute', 'bare', 'launcher') (see: prompthooks "
                             "install --help)"),
    (["--scope", "team"], "argument --scope: invalid choice: 'team' (choose from 'project', "
                          "'local', 'user', 'managed') (see: prompthooks install --help)"),
    (["--dry-run=yes"], "argument --dry-run: ignored explicit argument 'yes' (see: "
                        "prompthooks install --help)"),
    (["--scope", "managed", "--glue", "bare", "--managed-root", "/nonexistent"],
     "--glue bare: the managed glue always names this installation by absolute path (a PATH "
     "the user controls must not choose what the gate runs)"),
])
def test_bad_options_are_one_line(project: Path, bare_path: str, args: list[str],
                                  message: str) -> None:
    before = tree(project)
    proc = cli("install", "--host", "claude", *args, path=bare_path, cwd=project)
    assert proc.returncode == 64
    assert proc.stderr == f"prompthooks: {message}\n"
    assert proc.stdout == ""
    assert tree(project) == before


@pytest.mark.slow
@pytest.mark.parametrize("extra", [[], ["--json"], ["--dry-run"], ["--json", "--dry-run"]])
def test_an_unreadable_host_config_is_one_line_in_every_mode(project: Path, bare_path: str,
                                                             extra: list[str]) -> None:
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": ')
    before = tree(project)
    for command in ("install", "uninstall"):
        proc = cli(command, "--host", "claude", *extra, path=bare_path, cwd=project)
        assert proc.returncode == 1
        assert proc.stdout == ""
        assert proc.stderr == (f"prompthooks: {settings}: not valid JSON: line 1 column 11: "
                               "Expecting value; nothing was changed\n")
    assert tree(project) == before


@pytest.mark.slow
@pytest.mark.parametrize("host", ["claude", "cline"])
def test_doctor_warns_when_installed_glue_relies_on_path(project: Path, bare_path: str,
                                                         host: str) -> None:
    on_path = f"{SCRIPT.parent}:{bare_path}"
    assert cli("install", "--host", host, "--glue", "bare", path=on_path,
               cwd=project).returncode == 0
    place = project / (".claude/settings.json" if host == "claude" else ".clinerules/hooks")

    def glue_warnings() -> list[str]:
        proc = cli("doctor", "--offline", "--json", path=on_path, cwd=project)
        return [c["detail"] for c in json.loads(proc.stdout)["checks"]
                if c["check"] == f"glue {host} (project)" and c["status"] == "warn"]

    assert glue_warnings() == [
        f"{place}: the glue 'prompthooks run' relies on the host's PATH: the prompthooks on "
        f"this shell's PATH is in {SCRIPT.parent}, which a host started from the desktop does "
        "not have on its PATH; reinstall from this installation with --glue auto (the "
        "project launcher)"]
    assert cli("uninstall", "--host", host, path=on_path, cwd=project).returncode == 0
    assert cli("install", "--host", host, path=on_path, cwd=project).returncode == 0
    assert glue_warnings() == []  # the launcher looks where the host's PATH does not
