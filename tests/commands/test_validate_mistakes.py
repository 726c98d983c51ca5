"""`prompthooks validate` names the mistakes a new user makes, all in one run: commands that
are missing or not executable (resolved as the hook would run them), misspelled events and
tools, tools named in another host's words, matchers on events that ignore them, a Cline-style
hook that cannot start, models no path reaches. Each case is checked against a real `run`
too: what validate calls missing really fails there, what it passes really runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ..helpers import approve, claude_bash, run_in_process, write_json, write_script

KEY = "test-key-not-a-secret"


def validate(cwd: Path, *args: str, env: dict[str, str] | None = None,
             drop: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k not in drop}
    environ = {"ANTHROPIC_API_KEY": KEY, **environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "prompthooks", "validate", *args],
                          capture_output=True, text=True, timeout=60, cwd=cwd, env=environ)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "proj"
    (folder / ".prompthooks").mkdir(parents=True)
    return folder


@pytest.mark.slow
def test_every_mistake_of_every_file_in_one_run(project: Path, isolated_home: Path) -> None:
    config = project / ".prompthooks"
    guard = write_script(project / ".claude" / "hooks" / "guard.sh", "exit 0")
    unrunnable = project / "scripts" / "plain.sh"
    unrunnable.parent.mkdir()
    unrunnable.write_text("#!/bin/sh\nexit 0\n")  # never made executable
    project_file = write_json(config / "hooks.json", {"hooks": {
        "PreToolUSe": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "./nope.sh"}]}],
        "PreToolUse": [{"matcher": "Shell|Bsh", "hooks": [
            {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/guard.sh",
             "timeout": "ten"},
            {"type": "command", "command": "./scripts/plain.sh"},
            {"type": "command", "command": "python3 .claude/hooks/missing.py"},
            {"type": "command", "command": "no-such-program-xyz --check"},
            {"type": "prompt", "prompt_file": "destructive-shel"}]}],
        "Stop": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "exit 0"}]}]}})
    # A Cline-style hook beside it that cannot start: not executable.
    cline_hook = config / "hooks" / "PreToolUse"
    cline_hook.parent.mkdir()
    cline_hook.write_text("#!/bin/sh\nexit 0\n")
    # The user's config, Cursor style: its commands run in its own folder.
    user = isolated_home / ".config" / "prompthooks"
    write_script(user / "beside.sh", "exit 0")
    user_file = write_json(user / "hooks.json", {"version": 1, "hooks": {
        "preToolUse": [{"command": "./beside.sh", "matcher": "Bash"},
                       {"command": "./gone.sh", "matcher": "Shell"}],
        "beforeReadFile": [{"command": "./beside.sh", "matcher": "Shell"}],
        "sessionStrat": [{"command": "./beside.sh"}]}})

    proc = validate(project)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stderr == ""
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["level", "problem"]
    problems = [" ".join(line.split(None, 1)) for line in lines[1:] if
                line.startswith(("error", "warning"))]
    expected_errors = [
        f"{project_file}: hooks.PreToolUse[0].hooks[0].timeout: Input should be a valid number",
        f"{project_file}: hooks.PreToolUSe: unknown Claude Code event (did you mean "
        "'PreToolUse'?); its hooks are ignored",
        f"{project_file}: hooks.PreToolUSe[0].hooks[0].command: './nope.sh' does not exist "
        f"(no {project / 'nope.sh'}: the hook runs in {project})",
        f"{project_file}: hooks.PreToolUse[0].matcher: unknown tool 'Bsh' (did you mean "
        "'Bash'?)",
        f"{project_file}: hooks.PreToolUse[0].hooks[1].command: './scripts/plain.sh' is not "
        f"executable ({unrunnable}): chmod +x it, or name its interpreter first (python3 ..., "
        "bash ...)",
        f"{project_file}: hooks.PreToolUse[0].hooks[2].command: python3 would run "
        "'.claude/hooks/missing.py', which does not exist (no "
        f"{project / '.claude/hooks/missing.py'}: the hook runs in {project})",
        f"{project_file}: hooks.PreToolUse[0].hooks[3].command: 'no-such-program-xyz' is not "
        "on PATH",
        f"{project_file}: hooks.PreToolUse[0].hooks[4].prompt_file: prompt file "
        "'destructive-shel' not found",
        f"{cline_hook}: not executable: a Cline style hook is run through its #! line "
        f"(chmod +x {cline_hook})",
        f"{user_file}: hooks.sessionStrat: unknown Cursor event (did you mean 'sessionStart'?); "
        "its hooks are ignored",
        f"{user_file}: hooks.preToolUse[0].matcher: 'Bash' never matches: it is Claude Code's "
        "name; a Cursor style matcher says 'Shell'",
        f"{user_file}: hooks.preToolUse[1].command: './gone.sh' does not exist (no "
        f"{user / 'gone.sh'}: the hook runs in {user})",
        f"{user_file}: hooks.beforeReadFile[0].matcher: 'Shell' never matches: beforeReadFile "
        "fires for Read only",
    ]
    errors = [p.removeprefix("error ") for p in problems if p.startswith("error ")]
    for line in expected_errors:
        assert any(e.startswith(line) for e in errors), (line, errors)
    assert len(errors) == len(expected_errors), errors
    warnings = [p.removeprefix("warning ") for p in problems if p.startswith("warning ")]
    # Cursor's own name in a Claude Code style matcher selects Cursor's shell commands under
    # Cursor (as Cursor matches the Claude Code hooks it runs), and nothing elsewhere.
    assert warnings == [
        f"{project_file}: hooks.PreToolUse[0].matcher: 'Shell' is Cursor's name: it matches "
        "under Cursor only; a Claude Code style matcher says 'Bash' under every host",
        f"{project_file}: hooks.Stop[0].matcher: Stop ignores matchers: its hooks run on every "
        "Stop event"]
    assert lines[-1].endswith(f"; {len(expected_errors)} errors, 2 warnings")
    # Resolved as the hook runs: the guard found through $CLAUDE_PROJECT_DIR and the user's
    # script beside its config are not reported.
    assert not any(str(guard) in e for e in errors)
    assert not any("beside.sh" in e for e in errors)

    as_json = json.loads(validate(project, "--json").stdout)
    assert sorted(as_json["errors"]) == sorted(errors)
    assert as_json["warnings"] == warnings


def test_what_validate_reports_is_what_run_does(project: Path) -> None:
    """The canary: the command validate calls missing fails under `run`, and the one it
    resolves through $CLAUDE_PROJECT_DIR runs there."""
    config = project / ".prompthooks"
    marker = project / "ran"
    write_script(project / ".claude" / "hooks" / "guard.sh", f"touch '{marker}'")
    write_json(config / "hooks.json", {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/guard.sh"},
        {"type": "command", "command": "./nope.sh"}]}]}})
    # Named with --config, as a user names a file of their own: a project's approval never
    # covers a script the project holds (see "Trust"), so the project's own would not run.
    named = ("--config", str(config / "hooks.json"))
    report = json.loads(validate(project, "--json", *named).stdout)
    assert report["errors"] == [
        f"{config / 'hooks.json'}: hooks.PreToolUse[0].hooks[1].command: './nope.sh' does not "
        f"exist (no {project / 'nope.sh'}: the hook runs in {project})"]
    run = run_in_process(claude_bash("ls", str(project)), *named, cwd=project,
                  env={"CLAUDE_PROJECT_DIR": str(project)})
    assert marker.exists()  # the guard validate resolved did run
    assert "./nope.sh: not found" in run.stderr  # the one it named failed


def test_a_command_is_read_never_run(project: Path, tmp_path: Path) -> None:
    """validate reads configs nobody approved: a command substitution in one is never run."""
    config = project / ".prompthooks"
    marker = tmp_path / "substituted"
    command = f"$(touch '{marker}')/x.sh `touch '{marker}'`"
    write_json(config / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": command}]}]}})
    proc = validate(project)
    assert proc.returncode == 0, proc.stdout
    assert not marker.exists()
    # The canary: handed to a shell, as `run` does once approved, it does run.
    approve(config)
    run_in_process(claude_bash("ls", str(project)), cwd=project)
    assert marker.exists()


@pytest.mark.slow
def test_unset_variables_are_a_warning_not_a_guess(project: Path) -> None:
    config = project / ".prompthooks"
    write_json(config / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": "$PLUGIN_HOME_NOT_SET/guard.sh"},
        {"type": "command", "command": "\"$PROMPTHOOKS_CONFIG_DIR\"/guard.sh"}]}]}})
    report = json.loads(validate(project, "--json").stdout)
    assert report["warnings"] == [
        f"{config / 'hooks.json'}: hooks.PreToolUse[0].hooks[0].command: not checked: "
        "$PLUGIN_HOME_NOT_SET is not set here"]
    # $PROMPTHOOKS_CONFIG_DIR is the config's folder, as the runner sets it.
    assert report["errors"] == [
        f"{config / 'hooks.json'}: hooks.PreToolUse[0].hooks[1].command: "
        f"'{config.resolve()}/guard.sh' does not exist"]
    write_script(config / "guard.sh", "exit 0")
    assert json.loads(validate(project, "--json").stdout)["errors"] == []


def test_a_cline_hook_whose_interpreter_is_missing(project: Path) -> None:
    hook = write_script(project / ".prompthooks" / "hooks" / "PreToolUse", "print(1)",
                        shebang="#!/usr/bin/env no-such-python-xyz")
    other = write_script(project / ".prompthooks" / "hooks" / "TaskStart", "exit 0",
                         shebang="#!/no/such/sh")
    report = json.loads(validate(project, "--json").stdout)
    assert report["errors"] == [
        f"{hook}: its #! line runs 'no-such-python-xyz', which is not on PATH",
        f"{other}: its #! line names /no/such/sh, which is not an executable program here"]
    hook.write_text("#!/bin/sh\nexit 0\n")
    other.write_text("#!/bin/sh\nexit 0\n")
    assert validate(project, "--json").returncode == 0


@pytest.mark.slow
def test_models_no_path_reaches_are_warnings(project: Path, model: object) -> None:
    config = project / ".prompthooks"
    policy = {"type": "prompt", "prompt": "Block rm -rf. $ARGUMENTS"}
    write_json(config / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {**policy, "model": "gpt-4.1-mini"},
        {**policy, "model": "mystery-model"},
        {**policy, "model": "acme/model-1"},
        {**policy, "model": "gemini/gemini-2.5-flash"},
        {**policy, "model": "anthropic/claude-haiku-4-5"},
        {**policy}]}]}})
    where = f"{config / 'hooks.json'}: hooks.PreToolUse[0].hooks"
    drop = ("OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "PROMPTHOOKS_API_KEY",
            "PROMPTHOOKS_API_BASE", "PROMPTHOOKS_MODEL", "OPENAI_BASE_URL", "OPENAI_API_BASE")
    proc = validate(project, "--json", drop=drop)
    assert proc.returncode == 0  # warnings: the key may be set where the host runs
    assert json.loads(proc.stdout)["warnings"] == [
        f"{where}[0]: model 'gpt-4.1-mini' is OpenAI's and no key is set: set OPENAI_API_KEY "
        "(or PROMPTHOOKS_API_KEY, or name the variable with prompthooks.api_key_env)",
        f"{where}[1]: no provider is known for 'mystery-model' and no api_base is set: name "
        "the provider (anthropic/..., gemini/..., openai/...), or set prompthooks.api_base to "
        "your endpoint",
        f"{where}[2]: the provider prefix 'acme' of 'acme/model-1' is not one prompthooks "
        "knows and no api_base is set: name the provider (anthropic/..., gemini/..., "
        "openai/...), or set prompthooks.api_base to your endpoint",
        f"{where}[3]: model 'gemini/gemini-2.5-flash' needs a key for gemini and none is set: "
        "run prompthooks keys set gemini (or set GEMINI_API_KEY, or PROMPTHOOKS_API_KEY, or "
        "name the variable with prompthooks.api_key_env)",
    ]
    # An endpoint of one's own (here the fake model server, which wants no key) reaches them.
    data = json.loads((config / "hooks.json").read_text())
    data["prompthooks"] = {"api_base": os.environ["PROMPTHOOKS_API_BASE"]}
    (config / "hooks.json").write_text(json.dumps(data))
    assert json.loads(validate(project, "--json", drop=drop).stdout)["warnings"] == []


@pytest.mark.slow
def test_hostile_sizes_are_read_in_bounded_time(project: Path) -> None:
    """A config an agent wrote may hold a command of hundreds of kilobytes, a matcher of fifty
    thousand names, a long event key (within the 1 MiB a config file may be): validate
    answers, bounded (the subprocess's timeout only guards against a hang)."""
    config = project / ".prompthooks"
    long_word = "./" + "a" * 400_000
    names = "|".join(["Bsh"] * 50_000)
    key = "X" * 200_000
    write_json(config / "hooks.json", {"hooks": {
        "PreToolUse": [{"matcher": names, "hooks": [{"type": "command", "command": long_word}]}],
        key: []}})
    # The canary: each is in the file as written, whole.
    data = json.loads((config / "hooks.json").read_text())
    assert data["hooks"]["PreToolUse"][0]["matcher"].count("|") == 49_999
    assert (config / "hooks.json").stat().st_size < 1024 * 1024  # read, not refused
    report = json.loads(validate(project, "--json").stdout)
    where = f"{config / 'hooks.json'}: hooks.PreToolUse[0]"
    assert report["warnings"] == [f"{where}.hooks[0].command: not checked: the command is longer "
                                  "than the 8192 characters read"]
    assert f"{where}.matcher: unknown tool 'Bsh' (did you mean 'Bash'?)" in report["errors"]
    assert any(key in e and "unknown Claude Code event; its hooks" in e
               for e in report["errors"])


@pytest.mark.slow
def test_names_no_file_can_have_are_one_line_each(project: Path) -> None:
    """A NUL or an unpaired surrogate (both valid in JSON) in a command, a matcher or an event
    key: one line each and exit 1, never a traceback."""
    config = project / ".prompthooks"
    write_json(config / "hooks.json", {"hooks": {
        "PreToolUse": [{"matcher": "Ba\u0000sh", "hooks": [
            {"type": "command", "command": "./a\u0000b.sh"},
            {"type": "command", "command": "python3 \ud800.py"}]}],
        "Pre\ud800": []}})
    assert "\\u0000" in (config / "hooks.json").read_text()  # the canary: written as JSON has it
    for args in ((), ("--json",)):
        proc = validate(project, *args)
        assert (proc.returncode, proc.stderr) == (1, "")
    report = json.loads(validate(project, "--json").stdout)
    where = f"{config / 'hooks.json'}: hooks"
    assert report["errors"] == [
        f"{where}.Pre\\ud800: unknown Claude Code event; its hooks are ignored",
        f"{where}.PreToolUse[0].hooks[0].command: './a\\x00b.sh' cannot name a file: it holds "
        "a NUL character or an unpaired surrogate",
        f"{where}.PreToolUse[0].hooks[1].command: python3 would run '\\ud800.py', which cannot "
        "name a file: it holds a NUL character or an unpaired surrogate",
    ]
    [warning] = report["warnings"]
    assert warning.startswith(f"{where}.PreToolUse[0].matcher: 'Ba\\x00sh' matches none of the ")
    assert warning.endswith(" tools hosts are known to have")


@pytest.mark.slow
def test_a_session_start_matcher_hosts_never_send(project: Path) -> None:
    config = project / ".prompthooks"
    typo, right = project / "typo-ran", project / "right-ran"
    write_json(config / "hooks.json", {"hooks": {
        "SessionStart": [{"matcher": "startp|weekly", "hooks": [
                             {"type": "command", "command": f"touch '{typo}'"}]},
                         {"matcher": "startup", "hooks": [
                             {"type": "command", "command": f"touch '{right}'"}]}],
        "PreCompact": [{"matcher": "Auto", "hooks": [{"type": "command", "command": "true"}]}]}})
    report = json.loads(validate(project, "--json").stdout)
    where = f"{config / 'hooks.json'}: hooks"
    assert report["errors"] == [
        f"{where}.SessionStart[0].matcher: SessionStart is never sent with 'startp' (did you "
        "mean 'startup'?)",
        f"{where}.PreCompact[0].matcher: PreCompact is never sent with 'Auto' (did you mean "
        "'auto'?)"]
    assert report["warnings"] == [
        f"{where}.SessionStart[0].matcher: no host is known to send SessionStart with 'weekly' "
        "(known: clear, compact, resume, startup)"]
    # The canary: a real session start runs the hook spelled right, never the misspelt one.
    approve(config)
    event = {"session_id": "s", "hook_event_name": "SessionStart", "source": "startup",
             "cwd": str(project)}
    run_in_process(event, cwd=project)
    assert right.exists() and not typo.exists()


@pytest.mark.slow
def test_a_secret_in_a_command_is_shown_redacted(project: Path) -> None:
    token = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
    config = project / ".prompthooks"
    write_json(config / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": f"{token} ./guard.sh"}]}]}})
    proc = validate(project)
    # The canary: the token is the program the command would start, and it is reported.
    assert "is not on PATH" in proc.stdout and "[redacted]" in proc.stdout
    assert token not in proc.stdout and token[:10] not in proc.stdout
