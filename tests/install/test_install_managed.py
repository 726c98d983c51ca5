"""`install --scope managed`: the glue goes into the host's own managed settings (which no
project or user config can remove), redirected under a temporary root by the hidden
``--managed-root`` option (never by an environment variable an agent could set)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from prompthooks.hosts.claude.install import managed_location as claude_managed
from prompthooks.hosts.cursor.install import managed_location as cursor_managed
from prompthooks.setup.starter import STARTER

SCRIPT = Path(sys.executable).parent / "prompthooks"


def cli(*args: str, cwd: Path, path: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": path or os.environ.get("PATH", "")}
    return subprocess.run([sys.executable, "-m", "prompthooks", *args], capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=60)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "root"
    folder.mkdir()
    return folder


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.slow
def test_claude_managed_scope_writes_managed_settings(tmp_path: Path, root: Path) -> None:
    # `prompthooks` is on PATH, yet the managed glue names this installation by absolute path:
    # a PATH the user controls must not decide what the managed gate runs.
    path = f"{SCRIPT.parent}:/usr/bin:/bin"
    proc = cli("install", "--host", "claude", "--scope", "managed", "--managed-root", str(root),
               cwd=tmp_path, path=path)
    assert proc.returncode == 0, proc.stderr
    settings = claude_managed(root)
    assert settings.relative_to(root).parts[-1] == "managed-settings.json"
    data = json.loads(settings.read_text())
    glue = {"hooks": [{"type": "command", "command": f"{SCRIPT} run"}]}
    assert data == {"hooks": {event: [glue] for event in
                              ("PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop")}}
    policy = root / "etc" / "prompthooks" / "hooks.json"
    assert policy.read_bytes() == STARTER
    assert _mode(settings) & 0o444 == 0o444 and _mode(settings) & 0o022 == 0
    assert _mode(policy) & 0o444 == 0o444
    # Compiled as it was written, by the folder's owner: events need not validate it.
    compiled = policy.parent / "compiled-policy.json"
    assert f"compiled {compiled}" in proc.stdout + proc.stderr
    assert _mode(compiled) == 0o644
    assert not (tmp_path / ".claude").exists() and not (tmp_path / ".prompthooks").exists()

    proc = cli("uninstall", "--host", "claude", "--scope", "managed", "--managed-root",
               str(root), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert not settings.exists() and not policy.exists() and not compiled.exists()


@pytest.mark.slow
def test_claude_managed_scope_keeps_the_administrators_settings(
        tmp_path: Path, root: Path) -> None:
    settings = claude_managed(root)
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"permissions": {"deny": ["Read(.env)"]}}))
    proc = cli("install", "--host", "claude", "--scope", "managed", "--managed-root", str(root),
               "--events", "PreToolUse", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(settings.read_text())
    assert data["permissions"] == {"deny": ["Read(.env)"]}
    assert list(data["hooks"]) == ["PreToolUse"]
    cli("uninstall", "--host", "claude", "--scope", "managed", "--managed-root", str(root),
        cwd=tmp_path)
    assert json.loads(settings.read_text()) == {"permissions": {"deny": ["Read(.env)"]}}


@pytest.mark.slow
def test_cursor_managed_scope_writes_the_enterprise_hooks_file(
        tmp_path: Path, root: Path) -> None:
    proc = cli("install", "--host", "cursor", "--scope", "managed", "--managed-root", str(root),
               "--events", "preToolUse", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    hooks = cursor_managed(root)
    assert hooks.name == "hooks.json"
    assert json.loads(hooks.read_text()) == {"version": 1, "hooks": {"preToolUse": [
        {"command": f"{SCRIPT} run", "timeout": 60}]}}
    proc = cli("uninstall", "--host", "cursor", "--scope", "managed", "--managed-root",
               str(root), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert not hooks.exists()


@pytest.mark.slow
def test_the_managed_starter_stays_while_another_hosts_managed_glue_uses_it(
        tmp_path: Path, root: Path) -> None:
    for host in ("claude", "cursor"):
        assert cli("install", "--host", host, "--scope", "managed", "--managed-root", str(root),
                   cwd=tmp_path).returncode == 0
    proc = cli("uninstall", "--host", "claude", "--scope", "managed", "--managed-root",
               str(root), cwd=tmp_path)
    assert "the Cursor glue still uses it" in proc.stdout
    assert (root / "etc" / "prompthooks" / "hooks.json").exists()


@pytest.mark.slow
def test_cline_has_no_managed_scope(tmp_path: Path, root: Path) -> None:
    for command in ("install", "uninstall"):
        proc = cli(command, "--host", "cline", "--scope", "managed", "--managed-root",
                   str(root), cwd=tmp_path)
        assert proc.returncode == 64
        assert proc.stdout == ""
        (line,) = proc.stderr.splitlines()
        assert "Cline has no managed hooks location" in line
        assert ".clinerules/hooks" in line and "~/Documents/Cline/Hooks" in line
    assert list(root.iterdir()) == []


def test_the_managed_root_option_is_not_advertised(tmp_path: Path) -> None:
    proc = cli("install", "--help", cwd=tmp_path)
    assert "managed" in proc.stdout and "--managed-root" not in proc.stdout
