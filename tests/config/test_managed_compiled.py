"""The managed policy without validating it on every event: remembered in the process while its
files' bytes are the same, or read from the compiled policy its folder's owner wrote, never
from a file anybody else could have written (the attacks below plant one that drops the
managed deny; each is first shown to be served when its owner and modes are right)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from prompthooks.api import load_config
from prompthooks.core.hook import Source
from prompthooks.loading import managed
from prompthooks.loading.managed import COMPILED_NAME, compiled_state

from ..helpers import claude_bash, claude_config

NOBODY = 65534
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="file ownership needs root")


def _deny(folder: Path, message: str = "managed: no") -> None:
    claude_config(folder / "hooks.json", "PreToolUse",
                  {"command": f"echo '{message}' >&2; exit 2"}, matcher="Bash")


def _reachable(path: Path) -> bool:
    """Whether any user can reach and read ``path`` (each folder above it searchable)."""
    return all(p.stat().st_mode & 0o001 for p in path.parents) and \
        bool(path.stat().st_mode & 0o004)


def _python(user: int | None) -> tuple[str, dict[str, str]]:
    """An interpreter ``user`` can run, and the environment that finds prompthooks with it:
    this one, or the same Python version installed where every user can reach it."""
    here = Path(sys.executable).resolve()
    if user is None or _reachable(here):
        return sys.executable, {}
    import site

    import prompthooks

    other = Path(f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}")
    found = [str(Path(prompthooks.__file__).parent.parent), *site.getsitepackages()]
    if not (other.exists() and _reachable(other) and all(_reachable(Path(p)) for p in found)):
        pytest.skip(f"no Python {sys.version_info.major}.{sys.version_info.minor} here that "
                    "another user can run")
    return str(other), {"PYTHONPATH": os.pathsep.join(found)}


def _as(user: int | None, argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """``python -m prompthooks ARGV`` as ``user`` (None: as this process), with no group of
    this process kept."""
    python, extra = _python(user)
    env = {**kwargs.pop("env", os.environ), **extra}
    return subprocess.run([python, "-m", "prompthooks", *argv], capture_output=True,
                          text=True, timeout=120, user=user, group=user,
                          extra_groups=[] if user is not None else None, env=env, **kwargs)


def _compile(folder: Path, *, user: int | None = None) -> subprocess.CompletedProcess[str]:
    return _as(user, ["managed", "compile", "--managed-dir", str(folder)])


def _weaken(folder: Path, to: Path | None = None) -> Path:
    """The folder's compiled policy with its hooks dropped (its key kept), written to ``to``."""
    data = json.loads((folder / COMPILED_NAME).read_text())
    data["loaded"]["hooks"] = []
    target = to or folder / COMPILED_NAME
    target.unlink(missing_ok=True)
    target.write_text(json.dumps(data))
    target.chmod(0o644)
    return target


@pytest.fixture
def world() -> Iterator[Path]:
    """A folder outside pytest's private tmp (which only root can enter), open to read."""
    top = Path(tempfile.mkdtemp(prefix="managed-"))
    top.chmod(0o755)
    yield top
    shutil.rmtree(top, ignore_errors=True)


def _run(top: Path, folder: Path, user: int | None = None) -> subprocess.CompletedProcess[str]:
    """A command-only event, in process, with a project and home of the running user that the
    managed folder does not lie inside."""
    home = top / f"home-{user}"
    project = home / "project"
    project.mkdir(parents=True, exist_ok=True)
    if user is not None:
        for path in (home, project):
            os.chown(path, user, user)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "PROMPTHOOKS"))}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / "config"),
               XDG_CACHE_HOME=str(home / "cache"), XDG_DATA_HOME=str(home / "data"),
               XDG_RUNTIME_DIR=str(home / "run"), PROMPTHOOKS_DISPATCH="0")
    return _as(user, ["run", "--managed-dir", str(folder)],
               input=json.dumps(claude_bash("ls", str(project))), cwd=project, env=env)


def _decision(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode in (0, 2), proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout or "{}")
    return str(out.get("hookSpecificOutput", {}).get("permissionDecision", "allow"))


def _count_validations(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The folders validated from now on (the process's memo emptied first)."""
    calls: list[Path] = []
    real = managed.validate

    def counted(source: Source, path: Path, project_dir: str) -> Any:
        calls.append(path)
        return real(source, path, project_dir)

    monkeypatch.setattr(managed, "validate", counted)
    monkeypatch.setattr(managed, "_MEMO", {})
    return calls


def test_a_process_validates_the_managed_policy_once_while_its_bytes_stay_the_same(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "etc"
    _deny(folder, "first")
    project = tmp_path / "project"
    project.mkdir()
    calls = _count_validations(monkeypatch)
    for _ in range(3):
        config = load_config(project_dir=str(project), managed_dir=folder)
        assert [h.command for h in config.hooks] == ["echo 'first' >&2; exit 2"]
    assert calls == [folder]
    # Same size, same mtime, another byte: the digest tells it apart.
    stat = (folder / "hooks.json").stat()
    _deny(folder, "other")
    os.utime(folder / "hooks.json", ns=(stat.st_atime_ns, stat.st_mtime_ns))
    config = load_config(project_dir=str(project), managed_dir=folder)
    assert [h.command for h in config.hooks] == ["echo 'other' >&2; exit 2"]
    assert calls == [folder, folder]


@pytest.mark.slow
def test_a_compiled_policy_is_served_without_pydantic(world: Path) -> None:
    folder = world / "etc"
    _deny(folder)
    folder.chmod(0o755)
    proc = _compile(folder)
    assert proc.returncode == 0, proc.stderr
    assert (folder / COMPILED_NAME).stat().st_mode & 0o777 == 0o644
    assert compiled_state(Source("managed", str(folder), 0), folder) is None
    home = world / "home-None"
    (home / "project").mkdir(parents=True)
    env = {**os.environ, "PROMPTHOOKS_DISPATCH": "0", "HOME": str(home),
           "XDG_CACHE_HOME": str(home / "cache"), "XDG_CONFIG_HOME": str(home / "config"),
           "XDG_DATA_HOME": str(home / "data")}
    run = subprocess.run([sys.executable, "-X", "importtime", "-m", "prompthooks", "run",
                          "--managed-dir", str(folder)],
                         input=json.dumps(claude_bash("ls", str(home / "project"))),
                         capture_output=True, text=True, timeout=120, cwd=home / "project",
                         env=env)
    assert json.loads(run.stdout)["hookSpecificOutput"]["permissionDecisionReason"] == \
        "managed: no"
    imported = {line.rsplit("|", 1)[1].strip() for line in run.stderr.splitlines()
                if line.startswith("import time:") and "|" in line}
    assert "prompthooks.loading.managed" in imported  # the canary: the managed load ran
    assert not {m.split(".")[0] for m in imported} & {"pydantic", "litellm", "httpx"}
    assert "prompthooks.loading.loader" not in imported


@pytest.mark.slow
@as_root
def test_a_compiled_policy_the_user_could_write_is_never_read(world: Path) -> None:
    folder = world / "etc"
    _deny(folder)
    folder.chmod(0o755)
    assert _compile(folder).returncode == 0
    source = Source("managed", str(folder), 0)
    assert _decision(_run(world, folder, NOBODY)) == "deny"
    # The canary: the weakened file, root's and 0644, is served (the deny is gone).
    planted = _weaken(folder)
    assert _decision(_run(world, folder, NOBODY)) == "allow"

    os.chown(planted, NOBODY, NOBODY)  # owned by the running user
    assert "owned by uid 65534" in str(compiled_state(source, folder))
    assert _decision(_run(world, folder, NOBODY)) == "deny"

    os.chown(planted, 0, 0)
    planted.chmod(0o666)  # anybody could have written it
    assert "writable by group or others" in str(compiled_state(source, folder))
    assert _decision(_run(world, folder, NOBODY)) == "deny"

    planted.chmod(0o644)
    folder.chmod(0o777)  # in a folder the user can write
    assert "folder" in str(compiled_state(source, folder))
    assert _decision(_run(world, folder, NOBODY)) == "deny"
    folder.chmod(0o755)
    assert _decision(_run(world, folder, NOBODY)) == "allow"  # the canary still holds

    # A link to a file the user owns, with the same weakened content.
    theirs = world / "theirs"
    theirs.mkdir()
    os.chown(theirs, NOBODY, NOBODY)
    target = theirs / "policy.json"
    planted.rename(target)
    os.chown(target, NOBODY, NOBODY)
    planted.symlink_to(target)
    assert "symbolic link" in str(compiled_state(source, folder))
    assert _decision(_run(world, folder, NOBODY)) == "deny"


@pytest.mark.slow
@as_root
def test_root_never_reads_a_compiled_policy_the_folders_owner_did_not_write(
        world: Path) -> None:
    folder = world / "etc"
    _deny(folder)
    folder.chmod(0o755)
    os.chown(folder, NOBODY, NOBODY)  # this folder's administrator is another user
    os.chown(folder / "hooks.json", NOBODY, NOBODY)
    proc = _compile(folder)  # by root: the file is given to the folder's owner
    assert proc.returncode == 0, proc.stderr
    assert (folder / COMPILED_NAME).stat().st_uid == NOBODY
    planted = _weaken(folder)
    os.chown(planted, NOBODY, NOBODY)
    assert _decision(_run(world, folder)) == "allow"  # the canary: its owner's file is served
    os.chown(planted, 0, 0)  # written by the running user (root), not by the folder's owner
    assert _decision(_run(world, folder)) == "deny"


@pytest.mark.slow
@as_root
def test_a_stale_compiled_policy_is_ignored_and_the_changed_source_decides(
        world: Path) -> None:
    folder = world / "etc"
    _deny(folder, "old")
    folder.chmod(0o755)
    assert _compile(folder).returncode == 0
    _weaken(folder)
    assert _decision(_run(world, folder, NOBODY)) == "allow"  # the canary: it is served
    _deny(folder, "new rule")  # the administrator changes the policy, not the compiled file
    source = Source("managed", str(folder), 0)
    assert "stale" in str(compiled_state(source, folder))
    proc = _run(world, folder, NOBODY)
    assert _decision(proc) == "deny"
    assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecisionReason"] == \
        "new rule"


@pytest.mark.slow
@as_root
def test_compile_refuses_a_folder_that_is_not_the_callers(world: Path) -> None:
    folder = world / "etc"
    _deny(folder)
    folder.chmod(0o755)
    proc = _compile(folder, user=NOBODY)
    assert proc.returncode == 1
    assert proc.stderr.strip().endswith("a file anybody else writes there is never read")
    assert not (folder / COMPILED_NAME).exists()


def test_compile_refuses_a_broken_policy_in_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "etc"
    folder.mkdir()
    (folder / "hooks.json").write_text("{")
    proc = _compile(folder)
    assert proc.returncode == 1
    assert len(proc.stderr.strip().splitlines()) == 1 and "not compiled" in proc.stderr
    assert not (folder / COMPILED_NAME).exists()


@pytest.mark.slow
def test_doctor_and_validate_say_once_how_to_rebuild_it(world: Path) -> None:
    folder = world / "etc"
    _deny(folder)
    folder.chmod(0o755)

    def said() -> list[str]:
        proc = _as(None, ["doctor", "--offline", "--json", "--managed-dir", str(folder)],
                   cwd=world)
        return [c["detail"] for c in json.loads(proc.stdout)["checks"]
                if c["check"] == "managed compiled"]

    [missing] = said()
    assert "no compiled policy" in missing
    assert missing.endswith(f"prompthooks managed compile --managed-dir {folder}")
    assert _compile(folder).returncode == 0
    assert said() == []
    _deny(folder, "changed")
    [stale] = said()
    assert "stale" in stale and "managed compile" in stale
    # validate reads /etc/prompthooks only: its note comes from the same call.
    assert compiled_state(Source("managed", str(folder), 0), folder) == stale


@pytest.mark.slow
def test_a_template_removed_after_compiling_makes_the_policy_broken_as_validating_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "etc"
    folder.mkdir()
    (folder / "judge.md").write_text("Judge it. $ARGUMENTS")
    (folder / "hooks.json").write_text(json.dumps({"hooks": {"PreToolUse": [{"hooks": [
        {"type": "prompt", "prompt_file": "judge.md"}]}]}}))
    project = tmp_path / "project"
    project.mkdir()
    assert _compile(folder).returncode == 0
    calls = _count_validations(monkeypatch)
    config = load_config(project_dir=str(project), managed_dir=folder)
    assert [h.prompt_file for h in config.hooks] == ["judge.md"] and calls == []  # served
    (folder / "judge.md").unlink()
    config = load_config(project_dir=str(project), managed_dir=folder)
    assert calls == [folder]
    [failure] = config.loaded.failures
    assert failure.fail_closed and "judge.md" in failure.message


@pytest.mark.slow
def test_compile_refuses_an_audit_path_in_each_users_home(tmp_path: Path) -> None:
    folder = tmp_path / "etc"
    folder.mkdir()
    (folder / "hooks.json").write_text(json.dumps({
        "prompthooks": {"audit": {"path": "~/audit.db"}},
        "hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "exit 0"}]}]}}))
    proc = _compile(folder)
    assert proc.returncode == 1 and "audit path starts with ~" in proc.stderr
    assert not (folder / COMPILED_NAME).exists()
