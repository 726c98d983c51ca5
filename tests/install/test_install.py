"""`prompthooks install` / `uninstall`: the host glue written into (and taken out of) each
host's own config, for both scopes, checked through the real CLI on temporary homes and
projects (the autouse ``isolated_home`` fixture points HOME and XDG_CONFIG_HOME at them)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from prompthooks.hosts.cline.install import CANCEL, MARKER
from prompthooks.install import launcher, originals
from prompthooks.install.glue import choose, is_glue
from prompthooks.setup.starter import STARTER

from ..helpers import REPO, approve, cline_event, cursor_event, write_json, write_script

SCRIPT = Path(sys.executable).parent / "prompthooks"  # this installation's script
GLUE = f"{shlex.quote(str(SCRIPT))} run"  # the glue when that script is not the one on PATH
BACKUP = ".prompthooks-backup"
# The suite's environment has no model (no key, no Ollama): install says so, and what to run.
NO_MODEL = ["no model found for prompt hooks: no ANTHROPIC_API_KEY, OPENAI_API_KEY or "
            "GEMINI_API_KEY, no stored key, no PROMPTHOOKS_API_BASE, no LiteLLM Proxy, no "
            "Ollama answering",
            "until then the destructive-shell prompt hook cannot judge: it lets every command "
            "through, and a fail-closed prompt hook would block them all",
            "next: prompthooks keys set anthropic (or start Ollama, or set "
            "PROMPTHOOKS_API_BASE: see docs/prompt-hooks.md, \"Pointing it at a model\"), then "
            "prompthooks doctor"]
STARTER_NOTE = "(starter config: the destructive-shell policy on Bash commands)"
APPROVED = "approved {} for prompthooks run (see: prompthooks trust --list)"


@pytest.fixture
def bare_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A PATH with the shell's tools but no `prompthooks` on it."""
    return f"{tmp_path_factory.mktemp('emptybin')}:/usr/bin:/bin"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "my project"  # a space, so quoting matters
    folder.mkdir()
    return folder


def cli(*args: str, path: str, cwd: Path | None = None,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "prompthooks", *args], capture_output=True,
                          text=True, cwd=cwd, env={**os.environ, **(env or {}), "PATH": path},
                          timeout=60)


def lines(proc: subprocess.CompletedProcess[str]) -> list[str]:
    return proc.stdout.splitlines()


def snapshot(root: Path) -> dict[str, tuple[bytes, int, int]]:
    """Every file under ``root``: bytes, mtime (ns) and mode."""
    out: dict[str, tuple[bytes, int, int]] = {}
    for path in sorted(root.rglob("*")):
        if path.is_file():
            info = path.stat()
            out[str(path.relative_to(root))] = (path.read_bytes(), info.st_mtime_ns,
                                                info.st_mode & 0o7777)
    return out


# The project scope's glue: the project launcher, as each host runs a project's hooks.
CLAUDE_LAUNCHED = '"${CLAUDE_PROJECT_DIR:-.}"/.claude/hooks/prompthooks run'
CURSOR_LAUNCHED = ".cursor/hooks/prompthooks run"
GLUE_NOTE = ("glue: {} finds prompthooks on each machine at run time (PATH, ~/.local/bin, the "
             "project's .venv) and blocks when there is none; it names nothing of this "
             "machine's, so commit it (--glue bare writes 'prompthooks run')")


def claude_group(glue: str = GLUE) -> dict[str, object]:
    return {"hooks": [{"type": "command", "command": glue}]}


# --- the glue command ---------------------------------------------------------------------

def test_glue_command_rule(tmp_path: Path) -> None:
    venv = tmp_path / "a venv" / "bin"
    python = write_script(venv / "python", "true")
    script = write_script(venv / "prompthooks", "true")
    other = write_script(tmp_path / "elsewhere" / "prompthooks", "true")
    link = tmp_path / "links" / "prompthooks"
    link.parent.mkdir()
    link.symlink_to(script)
    quoted = f"'{script}' run"
    # Folders a desktop-started host has on its PATH, for this test.
    defaults = [str(venv), str(link.parent), str(other.parent)]
    # The prompthooks on PATH is this one (directly or through a link) in such a folder: the
    # short form.
    assert choose(str(script), str(python), "-c", "auto", defaults).command == "prompthooks run"
    assert choose(str(link), str(python), "-c", "auto", defaults).command == "prompthooks run"
    # Another one, or none, on PATH: this installation's script by absolute path, quoted.
    assert choose(str(other), str(python), "-c", "auto", defaults).command == quoted
    assert choose(None, str(python), "-c", "auto", defaults).command == quoted
    assert shlex.split(quoted) == [str(script), "run"]
    # The running script (argv[0]) counts as this installation too.
    bare = write_script(tmp_path / "plain" / "python", "true")
    assert choose(str(other), str(bare), str(other), "auto", defaults).command == "prompthooks run"
    assert choose(None, str(bare), str(other), "auto", defaults).command == f"{other} run"
    # No script at all: the interpreter runs the package.
    # No script at all: the interpreter runs the package, with no folder of the host's (the
    # project) on its import path.
    assert choose(None, str(bare), "-c", "auto", defaults).command == f"{bare} -P -m prompthooks run"


def test_is_glue_recognises_every_form_and_nothing_else() -> None:
    for command in ("prompthooks run", "/opt/x/bin/prompthooks run", "'/a b/prompthooks' run",
                    "/usr/bin/python3 -P -m prompthooks run", "/usr/bin/python3 -m prompthooks run"):
        assert is_glue(command), command
    for other in ("prompthooks run --config x", "prompthooks validate", "./guard.sh",
                  "my-prompthooks run", "'unclosed", None, 3):
        assert not is_glue(other), other


@pytest.mark.slow
def test_glue_follows_what_path_finds(project: Path, bare_path: str, tmp_path: Path) -> None:
    """This installation on PATH through an activated virtualenv: a host started from the
    desktop would not find it there, so one user's glue is its absolute path, and install
    says why."""
    settings = project / ".claude" / "settings.local.json"
    on_path = f"{SCRIPT.parent}:{bare_path}"
    proc = cli("install", "--host", "claude", "--scope", "local", "--events", "Stop",
               "--project", str(project), path=on_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(settings.read_text())["hooks"]["Stop"] == [claude_group(GLUE)]
    assert lines(proc)[1] == (
        f"glue names this installation by absolute path: {SCRIPT.parent} is on this shell's "
        "PATH, not on that of a host started from the desktop (--glue bare writes "
        "'prompthooks run')")

    impostor = write_script(tmp_path / "fakebin" / "prompthooks", "exit 0")
    settings.unlink()
    proc = cli("install", "--host", "claude", "--scope", "local", "--events", "Stop",
               "--project", str(project), path=f"{impostor.parent}:{bare_path}")
    assert proc.returncode == 0
    assert json.loads(settings.read_text())["hooks"]["Stop"] == [claude_group(GLUE)]
    assert not any(line.startswith("glue names") for line in lines(proc))


# --- Claude Code ---------------------------------------------------------------------------

EXISTING_SETTINGS = (b'{"permissions": {"allow": ["Bash(ls:*)"]},\n'
                     b'\t"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": '
                     b'[{"type": "command", "command": "./mine.sh"}]}]},\n'
                     b'  "model": "opus"}')


@pytest.mark.slow
def test_claude_project_install_is_idempotent_and_uninstall_restores_bytes(
        project: Path, bare_path: str) -> None:
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(EXISTING_SETTINGS)
    settings.chmod(0o600)
    backup = originals.record(settings)  # in the user's data folder, not the project
    runner = project / ".claude" / "hooks" / "prompthooks"
    config_dir = project / ".prompthooks"

    first = cli("install", "--host", "claude", path=bare_path, cwd=project)
    assert first.returncode == 0, first.stderr
    assert first.stderr == ""
    assert lines(first) == [
        f"backed up {settings} to {backup}",
        f"wrote {settings} (PreToolUse, PostToolUse, UserPromptSubmit, Stop)",
        f"wrote {runner} (launcher: finds prompthooks at run time)",
        GLUE_NOTE.format("the launcher .claude/hooks/prompthooks"),
        f"wrote {config_dir / 'hooks.json'} {STARTER_NOTE}",
        APPROVED.format(config_dir / "hooks.json"),
        *NO_MODEL,
    ]
    group = claude_group(CLAUDE_LAUNCHED)
    assert json.loads(settings.read_text()) == {
        "permissions": {"allow": ["Bash(ls:*)"]},
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
                                                           "command": "./mine.sh"}]},
                           group],
            "PostToolUse": [group],
            "UserPromptSubmit": [group],
            "Stop": [group],
        },
        "model": "opus",
    }
    assert sorted(p.name for p in settings.parent.iterdir()) == ["hooks", "settings.json"]
    assert settings.stat().st_mode & 0o777 == 0o600  # the original's mode is kept
    assert backup.stat().st_mode & 0o777 == 0o600
    assert runner.stat().st_mode & 0o777 == 0o755
    assert (config_dir / "hooks.json").read_bytes() == STARTER

    before = snapshot(project)
    second = cli("install", "--host", "claude", "--project", str(project), path=bare_path)
    assert second.returncode == 0
    assert lines(second) == [
        f"already installed: PreToolUse, PostToolUse, UserPromptSubmit, Stop in {settings}",
        f"already installed: launcher {runner}",
        GLUE_NOTE.format("the launcher .claude/hooks/prompthooks"),
        f"already installed: starter config {config_dir / 'hooks.json'}",
        *NO_MODEL,
    ]
    assert snapshot(project) == before  # same files, bytes, mtimes: nothing rewritten

    gone = cli("uninstall", "--host", "claude", path=bare_path, cwd=project)
    assert gone.returncode == 0, gone.stderr
    assert lines(gone) == [
        f"restored {settings} from {backup}",
        f"removed {runner}",
        f"removed {config_dir / 'hooks.json'}",
        f"removed {backup.parent} (an empty folder install created)",  # innermost first
        f"removed {runner.parent} (an empty folder install created)",
        f"removed {config_dir} (an empty folder install created)",  # .claude was there before
        f"done: Claude Code no longer calls prompthooks from {settings}",
    ]
    assert settings.read_bytes() == EXISTING_SETTINGS
    assert settings.stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in settings.parent.iterdir()) == ["settings.json"]
    assert not (config_dir / "hooks.json").exists()

    again = cli("uninstall", "--host", "claude", path=bare_path, cwd=project)
    assert lines(again) == [f"not installed: no prompthooks entries in {settings}",
                            f"done: Claude Code no longer calls prompthooks from {settings}"]
    assert settings.read_bytes() == EXISTING_SETTINGS


@pytest.mark.slow
def test_claude_user_scope_creates_and_removes_files(
        project: Path, bare_path: str, isolated_home: Path) -> None:
    settings = isolated_home / ".claude" / "settings.json"
    config = isolated_home / ".config" / "prompthooks" / "hooks.json"
    proc = cli("install", "--host", "claude", "--scope", "user", "--events", "PreToolUse",
               "PreToolUse", path=bare_path, cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert lines(proc) == [f"wrote {settings} (PreToolUse)",
                           f"wrote {config} {STARTER_NOTE}",
                           APPROVED.format(config),
                           *NO_MODEL]
    assert json.loads(settings.read_text()) == {"hooks": {"PreToolUse": [claude_group()]}}
    assert not (project / ".claude").exists()
    assert not (project / ".prompthooks").exists()

    proc = cli("uninstall", "--host", "claude", "--scope", "user", path=bare_path, cwd=project)
    made = "(an empty folder install created)"
    # The folders install created go too, innermost first (this home had no ~/.config).
    assert lines(proc) == [f"removed {settings}", f"removed {config}",
                           f"removed {config.parent} {made}",
                           f"removed {settings.parent} {made}",
                           f"removed {config.parent.parent} {made}",
                           f"done: Claude Code no longer calls prompthooks from {settings}"]
    assert not settings.parent.exists() and not config.parent.exists()


@pytest.mark.slow
def test_uninstall_keeps_the_users_later_edits_and_leaves_no_copy(
        project: Path, bare_path: str) -> None:
    settings = write_json(project / ".claude" / "settings.json", {"model": "opus"})
    backup = originals.record(settings)
    assert cli("install", "--host", "claude", "--project", str(project), "--events", "Stop",
               path=bare_path).returncode == 0
    assert backup.is_file()
    data = json.loads(settings.read_text())
    data["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "./later.sh"}]})
    data["env"] = {"A": "1"}
    settings.write_text(json.dumps(data))
    (project / ".prompthooks" / "hooks.json").write_text('{"hooks": {}}')  # edited starter

    proc = cli("uninstall", "--host", "claude", "--project", str(project), path=bare_path)
    assert proc.returncode == 0
    assert lines(proc)[:4] == [
        f"removed prompthooks from {settings} (Stop)",
        f"kept the other changes in {settings} since install; its copy from before install "
        "was dropped",
        f"removed {project / '.claude' / 'hooks' / 'prompthooks'}",
        f"kept {project / '.prompthooks' / 'hooks.json'}: it is not the starter config "
        "install wrote",
    ]
    assert json.loads(settings.read_text()) == {
        "model": "opus", "hooks": {"Stop": [{"hooks": [{"type": "command",
                                                        "command": "./later.sh"}]}]},
        "env": {"A": "1"}}
    assert not backup.exists() and not backup.parent.exists()
    assert sorted(p.name for p in settings.parent.iterdir()) == ["settings.json"]


@pytest.mark.slow
def test_an_existing_copy_is_never_overwritten(project: Path, bare_path: str) -> None:
    """A second install with more events keeps the copy from before the first; so does an
    install over a ``<file>.prompthooks-backup`` an earlier version left, which uninstall then
    restores and removes."""
    settings = write_json(project / ".claude" / "settings.json", {"model": "opus"})
    original = settings.read_bytes()
    backup = originals.record(settings)
    for events in ("Stop", "PreToolUse"):
        proc = cli("install", "--host", "claude", "--project", str(project), "--events", events,
                   path=bare_path)
        assert proc.returncode == 0, proc.stderr
    assert json.loads(settings.read_text())["hooks"].keys() == {"Stop", "PreToolUse"}
    assert cli("uninstall", "--host", "claude", "--project", str(project),
               path=bare_path).returncode == 0
    assert settings.read_bytes() == original and not backup.exists()

    legacy = settings.with_name("settings.json" + BACKUP)
    legacy.write_bytes(original)
    proc = cli("install", "--host", "claude", "--project", str(project), "--events", "Stop",
               path=bare_path)
    assert lines(proc)[0] == f"wrote {settings} (Stop)"
    assert not backup.exists()
    proc = cli("uninstall", "--host", "claude", "--project", str(project), path=bare_path)
    assert lines(proc)[0] == f"restored {settings} from {legacy}"
    assert settings.read_bytes() == original
    assert sorted(p.name for p in settings.parent.iterdir()) == ["settings.json"]


@pytest.mark.slow
def test_bad_json_in_a_host_config_is_one_line_and_writes_nothing(
        project: Path, bare_path: str) -> None:
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": {,}}')
    before = snapshot(project)
    for command in ("install", "uninstall"):
        proc = cli(command, "--host", "claude", "--project", str(project), path=bare_path)
        assert proc.returncode == 1
        assert proc.stdout == ""
        assert proc.stderr == (f"prompthooks: {settings}: not valid JSON: line 1 column 12: "
                               "Expecting property name enclosed in double quotes; "
                               "nothing was changed\n")
        assert snapshot(project) == before

    settings.write_text('{"hooks": []}')
    proc = cli("install", "--host", "claude", "--project", str(project), path=bare_path)
    assert (proc.returncode, proc.stderr) == (
        1, f"prompthooks: {settings}: 'hooks' is not a JSON object; nothing was changed\n")


def test_unknown_event_lists_the_hosts_valid_names(project: Path, bare_path: str) -> None:
    proc = cli("install", "--host", "cursor", "--events", "PreToolUse", "--project",
               str(project), path=bare_path)
    assert proc.returncode == 64
    assert proc.stderr == (
        "prompthooks: unknown Cursor event PreToolUse (valid: preToolUse, postToolUse, "
        "postToolUseFailure, beforeShellExecution, afterShellExecution, beforeMCPExecution, "
        "afterMCPExecution, beforeReadFile, afterFileEdit, beforeSubmitPrompt, stop, "
        "subagentStart, subagentStop, sessionStart, sessionEnd, preCompact, "
        "afterAgentResponse, afterAgentThought, beforeTabFileRead, afterTabFileEdit)\n")
    assert list(project.iterdir()) == []


@pytest.mark.slow
def test_a_missing_project_folder_is_an_error(tmp_path: Path, bare_path: str) -> None:
    for command in ("install", "uninstall"):
        proc = cli(command, "--host", "claude", "--project", "nope", path=bare_path,
                   cwd=tmp_path)
        assert (proc.returncode, proc.stdout) == (1, "")
        assert proc.stderr == f"prompthooks: no such project folder: {tmp_path / 'nope'}\n"
    assert list(tmp_path.iterdir()) == []


# --- Cursor --------------------------------------------------------------------------------

EXISTING_CURSOR = (b'{\n    "version": 1,\n    "hooks": {\n        "stop": [{"command": '
                   b'"./audit.sh"}]\n    },\n    "extra": true\n}\n')


def cursor_entry(glue: str = GLUE) -> dict[str, object]:
    return {"command": glue, "timeout": 60}


@pytest.mark.slow
def test_cursor_project_install_and_byte_for_byte_uninstall(
        project: Path, bare_path: str) -> None:
    hooks = project / ".cursor" / "hooks.json"
    hooks.parent.mkdir()
    hooks.write_bytes(EXISTING_CURSOR)
    backup = originals.record(hooks)
    proc = cli("install", "--host", "cursor", path=bare_path, cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert lines(proc)[:2] == [
        f"backed up {hooks} to {backup}",
        f"wrote {hooks} (preToolUse, postToolUse, beforeSubmitPrompt, stop)"]
    entry = cursor_entry(CURSOR_LAUNCHED)
    assert json.loads(hooks.read_text()) == {
        "version": 1,
        "hooks": {"stop": [{"command": "./audit.sh"}, entry],
                  "preToolUse": [entry], "postToolUse": [entry],
                  "beforeSubmitPrompt": [entry]},
        "extra": True}

    before = snapshot(project)
    proc = cli("install", "--host", "cursor", path=bare_path, cwd=project)
    assert lines(proc)[0] == (f"already installed: preToolUse, postToolUse, "
                              f"beforeSubmitPrompt, stop in {hooks}")
    assert snapshot(project) == before

    proc = cli("uninstall", "--host", "cursor", path=bare_path, cwd=project)
    assert lines(proc)[0] == f"restored {hooks} from {backup}"
    assert hooks.read_bytes() == EXISTING_CURSOR
    assert not backup.exists()


@pytest.mark.slow
def test_cursor_user_scope(project: Path, bare_path: str, isolated_home: Path) -> None:
    hooks = isolated_home / ".cursor" / "hooks.json"
    proc = cli("install", "--host", "cursor", "--scope", "user", "--events", "stop",
               path=bare_path, cwd=project)
    assert lines(proc)[0] == f"wrote {hooks} (stop)"
    assert json.loads(hooks.read_text()) == {"version": 1, "hooks": {"stop": [cursor_entry()]}}
    proc = cli("uninstall", "--host", "cursor", "--scope", "user", path=bare_path, cwd=project)
    assert lines(proc)[0] == f"removed {hooks}"
    assert not hooks.exists()


@pytest.mark.slow
def test_cursor_glue_on_two_events_for_the_same_tool_call(project: Path,
                                                         bare_path: str) -> None:
    # Each of Cursor's events runs only the hooks Cursor would run for it, so glue on
    # preToolUse and beforeShellExecution runs no hook twice (tests/hosts/cursor/test_events.py).
    hooks = project / ".cursor" / "hooks.json"
    proc = cli("install", "--host", "cursor", "--events", "preToolUse", "beforeShellExecution",
               "--project", str(project), path=bare_path)
    assert proc.returncode == 0, proc.stderr
    assert cli("install", "--host", "cursor", "--events", "afterFileEdit", "postToolUse",
               "--project", str(project), path=bare_path).returncode == 0
    assert json.loads(hooks.read_text())["hooks"] == {
        event: [cursor_entry(CURSOR_LAUNCHED)] for event in (
            "preToolUse", "beforeShellExecution", "afterFileEdit", "postToolUse")}


# --- Cline ---------------------------------------------------------------------------------

def cline_script(glue: str = GLUE) -> str:
    return f"#!/bin/sh\n{MARKER}\nexec {glue}\n"


# A project's Cline hook file is a launcher itself, which cancels when it finds none.
CLINE_LAUNCHER = launcher.text(2, CANCEL, "run").replace(launcher.MARKER, MARKER)


@pytest.mark.slow
def test_cline_project_install_idempotent_and_uninstall(project: Path, bare_path: str) -> None:
    folder = project / ".clinerules" / "hooks"
    proc = cli("install", "--host", "cline", path=bare_path, cwd=project)
    assert proc.returncode == 0, proc.stderr
    names = ["PreToolUse", "PostToolUse", "UserPromptSubmit", "TaskComplete"]
    assert lines(proc)[:4] == [f"wrote {folder / name}" for name in names]
    for name in names:
        assert (folder / name).read_text() == CLINE_LAUNCHER
        assert (folder / name).stat().st_mode & 0o777 == 0o755
    before = snapshot(project)
    proc = cli("install", "--host", "cline", path=bare_path, cwd=project)
    assert lines(proc)[0] == f"already installed: {', '.join(names)} in {folder}"
    assert snapshot(project) == before

    proc = cli("uninstall", "--host", "cline", path=bare_path, cwd=project)
    assert lines(proc)[:4] == [f"removed {folder / name}" for name in names]
    assert not (project / ".clinerules").exists()  # install created it: empty, it goes


@pytest.mark.slow
def test_cline_foreign_hook_needs_force_and_comes_back(
        project: Path, bare_path: str, isolated_home: Path) -> None:
    folder = isolated_home / "Documents" / "Cline" / "Hooks"
    mine = write_script(folder / "PreToolUse", "echo '{\"cancel\": false}'")
    mine.chmod(0o700)
    original = mine.read_bytes()
    proc = cli("install", "--host", "cline", "--scope", "user", path=bare_path, cwd=project)
    assert proc.returncode == 1
    assert proc.stderr == (f"prompthooks: not replacing {mine}: not written by prompthooks "
                           "(--force moves it to a backup that uninstall puts back); "
                           "nothing was changed\n")
    assert sorted(p.name for p in folder.iterdir()) == ["PreToolUse"]
    assert not (isolated_home / ".config" / "prompthooks").exists()

    backup = folder / ("PreToolUse" + BACKUP)
    proc = cli("install", "--host", "cline", "--scope", "user", "--events", "PreToolUse",
               "--force", path=bare_path, cwd=project)
    assert proc.returncode == 0, proc.stderr
    assert lines(proc)[:2] == [f"backed up {mine} to {backup}", f"wrote {mine}"]
    assert backup.read_bytes() == original
    assert MARKER in mine.read_text()

    proc = cli("uninstall", "--host", "cline", "--scope", "user", path=bare_path, cwd=project)
    assert lines(proc)[0] == f"restored {mine} from {backup}"
    assert mine.read_bytes() == original
    assert mine.stat().st_mode & 0o777 == 0o700
    assert sorted(p.name for p in folder.iterdir()) == ["PreToolUse"]


# --- the starter config --------------------------------------------------------------------

@pytest.mark.slow
def test_starter_config_validates_cleanly(project: Path, bare_path: str) -> None:
    assert cli("install", "--host", "cline", "--project", str(project),
               path=bare_path).returncode == 0
    config = project / ".prompthooks" / "hooks.json"
    proc = cli("validate", "--config", str(config), path=bare_path,
               env={"ANTHROPIC_API_KEY": "test-key-not-a-secret"})
    assert proc.returncode == 0, proc.stdout
    assert lines(proc) == [f"1 hook from {config}; 0 errors, 0 warnings"]
    # Without a key for its default model, the one thing left to do is said.
    keyless = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY",
                                                                 "PROMPTHOOKS_API_KEY")}
    proc = subprocess.run([sys.executable, "-m", "prompthooks", "validate", "--json",
                           "--config", str(config)], capture_output=True, text=True,
                          timeout=60, env={**keyless, "PATH": bare_path})
    assert (proc.returncode, json.loads(proc.stdout)["warnings"]) == (0, [
        f"{config}: hooks.PreToolUse[0].hooks[0]: model 'claude-haiku-4-5' needs a key for "
        "anthropic and none is set: run prompthooks keys set anthropic (or set "
        "ANTHROPIC_API_KEY, or PROMPTHOOKS_API_KEY, or name the variable with "
        "prompthooks.api_key_env)"])
    assert json.loads(STARTER) == {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "prompt", "prompt_file": "destructive-shell", "timeout": 20}]}]}}


@pytest.mark.slow
def test_no_starter_over_an_existing_config_and_kept_while_in_use(
        project: Path, bare_path: str) -> None:
    write_script(project / ".prompthooks" / "hooks" / "PreToolUse", "exit 0")
    proc = cli("install", "--host", "claude", "--project", str(project), path=bare_path)
    assert lines(proc)[3] == (f"kept {project / '.prompthooks'}: it holds a prompthooks config "
                              "already, so no starter was written")
    assert not (project / ".prompthooks" / "hooks.json").exists()

    other = project / "other"
    other.mkdir()
    starter = other / ".prompthooks" / "hooks.json"
    for host in ("claude", "cursor"):
        assert cli("install", "--host", host, "--project", str(other),
                   path=bare_path).returncode == 0
    proc = cli("uninstall", "--host", "claude", "--project", str(other), path=bare_path)
    assert lines(proc)[2] == f"kept {starter}: the Cursor glue still uses it"
    assert starter.read_bytes() == STARTER
    proc = cli("uninstall", "--host", "cursor", "--project", str(other), path=bare_path)
    assert lines(proc)[2] == f"removed {starter}"


# --- end to end: the installed glue answers the host ---------------------------------------

def _deny_config(project: Path) -> None:
    # Outside the project: a script inside it could not be approved (see docs/packs-and-trust.md, "Trust").
    guard = write_script(project.parent / "guard.sh",
                         "cat >/dev/null; echo 'no wiping homes' >&2; exit 2")
    write_json(project / ".prompthooks" / "hooks.json", {"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": shlex.quote(str(guard))}]}]}})
    approve(project / ".prompthooks")  # not the starter: install leaves it to the user


def _run_glue(argv: list[str], event: dict[str, object], project: Path,
              path: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": path, "CLAUDE_PROJECT_DIR": str(project)}
    return subprocess.run(argv, input=json.dumps(event), capture_output=True, text=True,
                          cwd=project, env=env, timeout=60)


@pytest.mark.slow
def test_installed_glue_answers_each_host(project: Path, bare_path: str) -> None:
    _deny_config(project)
    # The project's own virtualenv holds prompthooks: where the launchers find it.
    venv = project / ".venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "prompthooks").symlink_to(SCRIPT)
    for host in ("claude", "cursor", "cline"):
        proc = cli("install", "--host", host, "--project", str(project), path=bare_path)
        assert proc.returncode == 0, proc.stderr

    claude = json.loads((REPO / "config" / "examples" / "events" / "claude-rm-home.json")
                        .read_text())
    claude["cwd"] = str(project)
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    command = settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    proc = _run_glue(["sh", "-c", command], claude, project, bare_path)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert json.loads(proc.stdout) == {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": "no wiping homes"}}

    cursor = cursor_event("preToolUse", str(project), tool_name="Shell",
                          tool_input={"command": "rm -rf ~/"})
    command = json.loads((project / ".cursor" / "hooks.json").read_text()
                         )["hooks"]["preToolUse"][0]["command"]
    proc = _run_glue(["sh", "-c", command], cursor, project, bare_path)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert json.loads(proc.stdout) == {"permission": "deny", "user_message": "no wiping homes",
                                       "agent_message": "no wiping homes"}

    cline = cline_event("PreToolUse", str(project), toolName="execute_command",
                        parameters={"command": "rm -rf ~/"})
    proc = _run_glue([str(project / ".clinerules" / "hooks" / "PreToolUse")], cline, project,
                     bare_path)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert json.loads(proc.stdout) == {"cancel": True, "errorMessage": "no wiping homes"}
