"""What people expect of a command-line tool: shell completion, FORCE_COLOR and NO_COLOR, a
hint instead of a silent wait on a terminal, and a server that says where it listens."""

from __future__ import annotations

import json
import os
import pty
import select
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from prompthooks.cli import build_parser
from prompthooks.model.model_process import socket_path

COMMANDS = ("run", "validate", "install", "uninstall", "explain", "doctor", "trust", "log",
            "serve", "demo", "test", "completion", "eval")


def prompthooks(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
                stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "prompthooks", *args], input=stdin,
                          capture_output=True, text=True, cwd=cwd, timeout=60,
                          env={**os.environ, **(env or {})})


# --- completion --------------------------------------------------------------------------

@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_script_knows_every_command(shell: str, tmp_path: Path) -> None:
    proc = prompthooks("completion", shell)
    assert proc.returncode == 0 and proc.stderr == ""
    for name in COMMANDS:
        assert name in proc.stdout, name
    for flag in ("--dry-run", "--scope", "--config", "--json", "--glue"):
        assert flag.lstrip("-") in proc.stdout, flag
    script = tmp_path / f"prompthooks.{shell}"
    script.write_text(proc.stdout)
    checker = {"bash": ["bash", "-n"], "zsh": ["zsh", "-n"], "fish": ["fish", "--no-execute"]}
    if shutil.which(shell) is None:
        assert shell != "bash"  # bash is always here; zsh and fish only when installed
        return
    check = subprocess.run([*checker[shell], str(script)], capture_output=True, text=True,
                           timeout=30)
    assert check.returncode == 0, check.stderr


def _bash_complete(script: Path, *words: str) -> list[str]:
    """What bash offers for the last word of ``prompthooks WORDS``."""
    line = " ".join(f"'{w}'" for w in ("prompthooks", *words))
    probe = (f"source '{script}'; COMP_WORDS=({line}); COMP_CWORD={len(words)}; "
             '_prompthooks; printf "%s\\n" "${COMPREPLY[@]}"')
    out = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_bash_completion_completes_commands_options_and_choices(tmp_path: Path) -> None:
    script = tmp_path / "prompthooks.bash"
    script.write_text(prompthooks("completion", "bash").stdout)
    assert _bash_complete(script, "in") == ["install"]
    assert _bash_complete(script, "install", "--scope", "") == ["project", "local", "user",
                                                                 "managed"]
    assert _bash_complete(script, "install", "--host", "c") == ["claude", "cursor", "cline"]
    assert _bash_complete(script, "uninstall", "--dr") == ["--dry-run"]
    assert _bash_complete(script, "log", "") == ["stats"]
    assert _bash_complete(script, "completion", "") == ["bash", "zsh", "fish"]
    (tmp_path / "event.json").write_text("{}")
    assert _bash_complete(script, "run", "--config", str(tmp_path / "ev")) == \
        [str(tmp_path / "event.json")]


def test_hidden_options_are_not_completed() -> None:
    from prompthooks.commands.completion import script

    for shell in ("bash", "zsh", "fish"):
        text = script(shell, build_parser())
        assert "managed-root" not in text and "managed-dir" not in text


def test_completion_of_an_unknown_shell_is_a_usage_error() -> None:
    proc = prompthooks("completion", "powershell")
    assert proc.returncode == 64
    assert proc.stdout == ""
    assert proc.stderr == ("prompthooks: argument SHELL: invalid choice: 'powershell' (choose "
                           "from 'bash', 'zsh', 'fish') (see: prompthooks completion --help)\n")


# --- colour ------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("env, coloured", [
    ({}, False),
    ({"FORCE_COLOR": "1"}, True),
    ({"FORCE_COLOR": ""}, False),  # empty counts as unset, as NO_COLOR's rule says
    ({"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),  # NO_COLOR wins
])
def test_force_color_and_no_color_on_a_pipe(tmp_path: Path, env: dict[str, str],
                                            coloured: bool) -> None:
    config = tmp_path / "hooks.json"
    config.write_text(json.dumps({"hooks": {"PreToolUSe": []}}))
    clean = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "NO_COLOR")}
    proc = subprocess.run([sys.executable, "-m", "prompthooks", "validate", "--config",
                           str(config)], capture_output=True, text=True, timeout=60,
                          env={**clean, **env})
    assert proc.returncode == 1
    assert ("\x1b[" in proc.stdout) is coloured
    assert "unknown Claude Code event" in proc.stdout
    json_out = subprocess.run([sys.executable, "-m", "prompthooks", "validate", "--json",
                               "--config", str(config)], capture_output=True, text=True,
                              timeout=60, env={**clean, **env})
    assert "\x1b[" not in json_out.stdout  # JSON is never coloured
    json.loads(json_out.stdout)


# --- a terminal with no input ----------------------------------------------------------------

def _read_line(fd: int, seconds: float) -> bytes:
    data = b""
    while not data.endswith(b"\n"):
        ready, _, _ = select.select([fd], [], [], seconds)
        assert ready, f"no line within {seconds} s; got {data!r}"
        chunk = os.read(fd, 1)
        assert chunk, f"stream closed; got {data!r}"
        data += chunk
    return data


@pytest.mark.slow
@pytest.mark.parametrize("command", ["run", "explain"])
def test_a_terminal_on_stdin_gets_a_hint(command: str, tmp_path: Path) -> None:
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "prompthooks", command], stdin=slave,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    os.close(slave)
    try:
        assert proc.stderr is not None
        hint = _read_line(proc.stderr.fileno(), 60)
        assert hint.decode() == (f"prompthooks {command}: reading the event as JSON from stdin "
                                 f"(end it with Ctrl-D), e.g. prompthooks {command} < "
                                 "event.json\n")
        os.write(master, b"\x04")  # Ctrl-D: end of input
        _, rest = proc.communicate(timeout=60)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 1  # an empty event is one error line, as from a pipe
    assert len(rest.decode().splitlines()) == 1
    assert "Traceback" not in rest.decode()


def test_a_pipe_gets_no_hint(tmp_path: Path) -> None:
    proc = prompthooks("explain", cwd=tmp_path, stdin="")
    assert proc.returncode == 1
    assert "reading the event" not in proc.stderr


# --- serve ---------------------------------------------------------------------------------

@pytest.mark.slow
def test_serve_says_where_it_listens(isolated_home: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "prompthooks", "serve", "--idle", "0.1"],
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    where = socket_path(os.environ)
    assert proc.stderr.splitlines()[0] == (f"prompthooks serve: listening on {where} (exits "
                                           "after 0.1 s without a request)")
    assert proc.stdout == ""


def test_serve_rejects_a_bad_idle() -> None:
    proc = prompthooks("serve", "--idle", "soon")
    assert proc.returncode == 64
    assert proc.stderr == ("prompthooks: argument --idle: not a number of seconds: 'soon' "
                           "(see: prompthooks serve --help)\n")
