"""Config sources a hostile agent can plant: each is one failure of its source, answered on
time, and a managed or fail-closed one still blocks. Real files, FIFOs, sparse files and
`prompthooks run` processes."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from prompthooks.api import load_config
from prompthooks.config import files
from prompthooks.config.discovery import discover
from prompthooks.config.templates import TemplateError, load_template_file
from prompthooks.hosts.claude import config as claude_config_reader
from prompthooks.loading import loader

from ..helpers import (
    approve,
    claude_bash,
    claude_config,
    cline_event,
    cursor_event,
    file_modes_bind_root,
    reply,
    run_cli,
    write_json,
    write_script,
)

HUGE_INT = "9" * 5000
DEEP = "[" * 100_000 + "]" * 100_000
TERABYTE = 1 << 40


def _huge_int_file(path: Path, fail_closed: bool = True) -> Path:
    """A Claude Code style file whose only flaw is a 5000-digit timeout."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", '
                    f'"command": "true", "failClosed": {json.dumps(fail_closed)}, '
                    f'"timeout": {HUGE_INT}}}]}}]}}}}')
    return path


def _sparse(path: Path, size: int = TERABYTE) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        handle.truncate(size)
    return path


def _fifo(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return path


def _failure(folder: Path) -> loader.LoadFailure:
    loaded = load_config([str(folder)]).loaded
    assert len(loaded.failures) == 1, loaded.failures
    return loaded.failures[0]


# --- one failure of its source, with a clear message ------------------------------------------

def test_a_5000_digit_number_is_a_failure_that_keeps_failclosed(tmp_path: Path) -> None:
    failure = _failure(_huge_int_file(tmp_path / "hooks.json"))
    assert "not valid JSON: holds a number of more than 4300 digits" in failure.message
    # Which events it marks failClosed can still be told: PreToolUse stays guarded.
    assert failure.fail_closed and failure.events == frozenset({"PreToolUse"})


def test_a_5000_digit_number_in_a_fail_open_file_is_fail_open(tmp_path: Path) -> None:
    failure = _failure(_huge_int_file(tmp_path / "hooks.json", fail_closed=False))
    assert not failure.fail_closed


def test_json_nested_100000_deep_is_a_failure(tmp_path: Path) -> None:
    cfg = tmp_path / "hooks.json"
    cfg.write_text(DEEP)
    failure = _failure(cfg)
    assert failure.message == f"{cfg}: not valid JSON: nested too deeply"
    assert not failure.fail_closed  # a project file that cannot be read says nothing more


@pytest.mark.parametrize("make", [_fifo, _sparse], ids=["fifo", "sparse-terabyte"])
def test_hooks_json_that_is_a_fifo_or_a_terabyte_is_refused_unread(
        tmp_path: Path, make: Callable[[Path], Path]) -> None:
    cfg = make(tmp_path / "conf" / "hooks.json")
    failure = _failure(cfg.parent)
    expected = "is not a regular file (a FIFO)" if make is _fifo else "is larger than 1024 KiB"
    assert failure.message.startswith(f"{cfg}: {expected}")


def test_a_config_path_that_is_a_fifo_is_refused_unread(tmp_path: Path) -> None:
    fifo = _fifo(tmp_path / "policy.json")
    assert _failure(fifo).message == f"{fifo}: is not a regular file (a FIFO)"


def test_hooks_json_that_is_a_device_is_refused_unopened(tmp_path: Path) -> None:
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "hooks.json").symlink_to("/dev/zero")
    assert "is not a regular file (a device)" in _failure(tmp_path / "conf").message


def test_files_reads_at_most_its_cap(tmp_path: Path) -> None:
    big = tmp_path / "big"
    big.write_bytes(b"x" * (files.MAX_FILE_BYTES + 1))
    with pytest.raises(files.UnsafeFile, match="larger than"):
        files.read_bytes(big)
    assert files.read_bytes(big, 10, head=True) == b"x" * 10
    assert files.read_bytes(_sparse(tmp_path / "sparse"), 4, head=True) == b"\0" * 4


@pytest.mark.parametrize("exc", [MemoryError(), RecursionError(), KeyError("x"),
                                 OSError(5, "Input/output error")])
def test_any_exception_while_loading_is_one_failure(tmp_path: Path, exc: BaseException,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = claude_config(tmp_path / "managed" / "hooks.json", "PreToolUse", {"command": "true"})

    def explode(*args: Any, **kwargs: Any) -> Any:
        raise exc

    monkeypatch.setattr(claude_config_reader, "load_file", explode)
    loaded = load_config(None, str(tmp_path / "project"), {"PROMPTHOOKS_NO_CACHE": "1"},
                         managed_dir=cfg.parent).loaded
    assert [f.source.name for f in loaded.failures] == ["managed"]
    assert loaded.failures[0].fail_closed and loaded.failures[0].events is None
    assert loaded.failures[0].message.startswith(f"{cfg}: ")


def test_an_exception_outside_any_file_is_a_failure_of_its_source(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "managed"
    folder.mkdir()

    def explode(*args: Any, **kwargs: Any) -> Any:
        raise PermissionError(13, "Permission denied", str(folder / "hooks.json"))

    monkeypatch.setattr(loader, "file_type", explode)
    loaded = load_config(None, str(tmp_path), {"PROMPTHOOKS_NO_CACHE": "1"},
                         managed_dir=folder).loaded
    assert [(f.source.name, f.fail_closed) for f in loaded.failures] == [("managed", True)]
    assert "cannot read" in loaded.failures[0].message
    assert "Permission denied" in loaded.failures[0].message


def test_a_project_folder_that_is_a_symlink_loop_is_a_failure(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / ".prompthooks").symlink_to(project / ".prompthooks")
    sources = discover(str(project), {"XDG_CONFIG_HOME": str(tmp_path / "none")},
                       tmp_path / "no-managed")
    assert [s.name for s, _ in sources] == ["project"]
    loaded = load_config(None, str(project), {"XDG_CONFIG_HOME": str(tmp_path / "none")},
                         managed_dir=tmp_path / "no-managed").loaded
    assert len(loaded.failures) == 1 and not loaded.failures[0].fail_closed


# --- Cline-style folders --------------------------------------------------------------------

def test_a_fifo_named_like_a_prompt_hook_is_a_failure_of_its_event(tmp_path: Path) -> None:
    fifo = _fifo(tmp_path / "PreToolUse.md")
    failure = _failure(tmp_path)
    assert failure.message == f"{fifo}: is not a regular file (a FIFO); not run"
    assert failure.events == frozenset({"PreToolUse"}) and not failure.fail_closed


def test_a_fifo_named_like_an_executable_hook_is_not_run(tmp_path: Path) -> None:
    _fifo(tmp_path / "hooks" / "PreToolUse")
    write_script(tmp_path / "hooks" / "TaskStart", "echo '{}'")
    loaded = load_config([str(tmp_path)]).loaded
    assert [h.config_event for h in loaded.hooks] == ["TaskStart"]
    assert [f.events for f in loaded.failures] == [frozenset({"PreToolUse"})]


def test_a_huge_prompt_file_that_says_failclosed_still_blocks_its_event(tmp_path: Path) -> None:
    prompt = tmp_path / "PreToolUse.md"
    prompt.write_text("---\nfailClosed: true\n---\n" + "x" * files.MAX_FILE_BYTES)
    failure = _failure(tmp_path)
    assert "is larger than 1024 KiB" in failure.message
    assert failure.fail_closed and failure.events == frozenset({"PreToolUse"})


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "0"])
def test_a_prompt_hook_timeout_must_be_a_positive_finite_number(tmp_path: Path,
                                                                 value: str) -> None:
    (tmp_path / "PreToolUse.md").write_text(f"---\ntimeout: {value}\n---\nJudge it.\n")
    assert "bad front matter value: timeout must be a positive number" in (
        _failure(tmp_path).message)


def test_a_folder_of_many_other_files_is_not_listed(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    write_script(tmp_path / "PreToolUse", "echo '{}'")

    def no_listing(*args: Any) -> Any:
        raise AssertionError("the folder was listed")

    monkeypatch.setattr(os, "scandir", no_listing)
    monkeypatch.setattr(os, "listdir", no_listing)
    assert [h.config_event for h in load_config([str(tmp_path)]).hooks] == ["PreToolUse"]


# --- prompt_file templates ------------------------------------------------------------------

def test_a_prompt_file_that_is_a_fifo_or_a_terabyte_is_refused(tmp_path: Path) -> None:
    with pytest.raises(TemplateError, match="is not a regular file"):
        load_template_file(_fifo(tmp_path / "policy.md"))
    with pytest.raises(TemplateError, match="is larger than 1024 KiB"):
        load_template_file(_sparse(tmp_path / "big.md"))


# --- the config cache ------------------------------------------------------------------------

def test_the_fingerprint_never_reads_a_sparse_terabyte_or_opens_a_fifo(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "conf"
    claude_config(folder / "hooks.json", "PreToolUse", {"command": "true"})
    _sparse(folder / "big.bin")
    _sparse(folder / "PreCompact.md")
    _fifo(folder / "hooks" / "PreToolUse.md")
    opened: list[str] = []
    real_open = os.open

    def spy(path: Any, *args: Any, **kwargs: Any) -> int:
        opened.append(os.fspath(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", spy)
    from prompthooks.core.hook import Source
    from prompthooks.loading import cache

    key = cache.fingerprint([(Source("project", str(folder), 1), folder)], str(tmp_path))
    assert opened == [str(folder / "hooks.json")]  # the only regular file under the cap
    assert json.loads(key)  # plain data


def test_a_planted_cache_entry_is_a_miss(tmp_path: Path) -> None:
    from prompthooks.core.hook import Source
    from prompthooks.loading import cache

    cfg = claude_config(tmp_path / "conf" / "hooks.json", "PreToolUse", {"command": "first"})
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    key = cache.fingerprint([(Source("config", str(cfg), 0), cfg)], str(tmp_path))
    target = cache.entry_path(key, env)
    target.parent.mkdir(parents=True)
    target.write_text(DEEP)
    assert cache.load(key, env) is None
    target.unlink()
    _fifo(target)
    assert cache.load(key, env) is None


# --- end to end: `prompthooks run` answers, and a managed source blocks ------------------------

def _managed_run(tmp_path: Path, managed: Path, host: str) -> Any:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    event = {"claude": claude_bash("ls", cwd=str(project)),
             "cursor": cursor_event("preToolUse", str(project), tool_name="Shell",
                                    tool_input={"command": "ls"}),
             "cline": cline_event("PreToolUse", str(project), toolName="execute_command",
                                  parameters={"command": "ls"})}[host]
    return run_cli(event, "--budget", "5", "--managed-dir", str(managed), cwd=project,
                   env={"CLAUDE_PROJECT_DIR": str(project)}, timeout=60)


def _blocked(proc: Any, host: str) -> bool:
    out = reply(proc)
    if host == "claude":
        return bool(out.get("hookSpecificOutput", {}).get("permissionDecision") == "deny")
    if host == "cursor":
        return bool(out.get("permission") == "deny")
    return bool(out.get("cancel") is True)


HOSTILE: dict[str, Callable[[Path], object]] = {
    "5000-digit-number": lambda folder: _huge_int_file(folder / "hooks.json", False),
    "nested-100000-deep": lambda folder: (folder / "hooks.json").write_text(DEEP),
    "hooks-json-fifo": lambda folder: _fifo(folder / "hooks.json"),
    "prompt-md-fifo": lambda folder: _fifo(folder / "PreToolUse.md"),
    "sparse-terabyte": lambda folder: _sparse(folder / "notes.bin"),
}


@pytest.mark.parametrize("host", ["claude", "cursor", "cline"])
@pytest.mark.parametrize("attack", sorted(HOSTILE))
def test_a_hostile_managed_folder_still_blocks_on_time(tmp_path: Path, attack: str,
                                                       host: str) -> None:
    managed = tmp_path / "managed"
    managed.mkdir()
    HOSTILE[attack](managed)
    if attack == "sparse-terabyte":  # the folder loads; its deny answers
        deny = write_script(tmp_path / "deny.sh", "cat >/dev/null; echo 'no' >&2; exit 2")
        claude_config(managed / "hooks.json", "PreToolUse", {"command": str(deny)})
    proc = _managed_run(tmp_path, managed, host)
    assert _blocked(proc, host), (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr


def test_a_sparse_terabyte_in_the_project_folder_does_not_stop_its_hooks(tmp_path: Path) -> None:
    project = tmp_path / "project"
    deny = write_script(tmp_path / "deny.sh", "cat >/dev/null; echo 'no' >&2; exit 2")
    claude_config(project / ".prompthooks" / "hooks.json", "PreToolUse", {"command": str(deny)})
    _sparse(project / ".prompthooks" / "junk.bin")
    approve(project / ".prompthooks")  # junk the loader never reads is not part of it
    for _ in range(2):  # a cold run, then one from the config cache
        proc = run_cli(claude_bash("ls", cwd=str(project)), "--budget", "5", "--managed-dir",
                       str(tmp_path / "no-managed"), cwd=project,
                       env={"CLAUDE_PROJECT_DIR": str(project)}, timeout=60)
        assert _blocked(proc, "claude"), proc.stderr


def test_an_unreadable_managed_folder_blocks(tmp_path: Path) -> None:
    managed = tmp_path / "managed"
    claude_config(managed / "hooks.json", "PreToolUse", {"command": "true"})
    managed.chmod(0)
    try:
        proc = run_cli(claude_bash("ls", cwd=str(tmp_path)), "--budget", "5", "--managed-dir",
                       str(managed), cwd=tmp_path, timeout=60, preexec_fn=file_modes_bind_root)
    finally:
        managed.chmod(stat.S_IRWXU)
    assert _blocked(proc, "claude"), (proc.stdout, proc.stderr)
    assert "Permission denied" in proc.stderr and "Traceback" not in proc.stderr


def test_an_unreadable_project_folder_is_one_failure_not_a_crash(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write_json(project / ".prompthooks" / "hooks.json", {"hooks": {}})
    (project / ".prompthooks").chmod(0)
    try:
        proc = run_cli(claude_bash("ls", cwd=str(project)), "--budget", "5", "--managed-dir",
                       str(tmp_path / "no-managed"), cwd=project,
                       env={"CLAUDE_PROJECT_DIR": str(project)}, timeout=60,
                       preexec_fn=file_modes_bind_root)
    finally:
        (project / ".prompthooks").chmod(stat.S_IRWXU)
    assert proc.returncode == 1, proc.stderr  # fail-open: a non-blocking error
    assert "Permission denied" in proc.stderr and "Traceback" not in proc.stderr
    assert "internal error" not in proc.stderr
