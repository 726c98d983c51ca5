"""What an approval covers is what runs: attacks on an approved project config, each of which
first proves it reached the code (the swap happened, the planted bytes were on disk or were
read), then that it changed nothing. Real files, real `prompthooks run` processes, the model
faked at the HTTP boundary."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from prompthooks.api import load_config
from prompthooks.core.hook import Source
from prompthooks.executors.prompt import template_text
from prompthooks.loading import loader, trust

from ..fake_model import Answer, FakeModel, verdict
from ..helpers import approve, claude_bash, reply, run_cli, write_json, write_script
from .test_packs import cli, git, judge_by_command, make_pack, pack_folder, project

RUNS = 40  # runs under the swap: on a check-then-open-by-name load, several lose the race


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def _run(project_dir: Path) -> Any:
    return run_cli(claude_bash("ls", cwd=str(project_dir)), "--managed-dir",
                   str(project_dir.parent / "no-managed"), cwd=project_dir,
                   env={"PROMPTHOOKS_NO_CACHE": "1"})  # every run loads the files


class Swapper:
    """Renames an unapproved version over ``target`` and the approved one back, in a loop,
    until stopped; counts the renames."""

    def __init__(self, target: Path, approved: bytes, unapproved: bytes) -> None:
        self.target, self.approved, self.unapproved = target, approved, unapproved
        self.mode = target.stat().st_mode
        self.swaps = 0
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _put(self, data: bytes) -> None:
        # Beside the target under a name the loader never reads, then one rename.
        spare = self.target.with_name(f".swap-{self.target.name}")
        spare.write_bytes(data)
        spare.chmod(self.mode)
        os.replace(spare, self.target)

    def _loop(self) -> None:
        while not self.stopping.is_set():
            self._put(self.unapproved)
            self.swaps += 1
            self._put(self.approved)

    def __enter__(self) -> Swapper:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self.thread.join()


def _observe(folder_var: str, name: str, observed: Path, ran: Path) -> str:
    """Shell lines for the approved hook: count its runs, and note when the file on disk was
    the unapproved version while it ran (the swap was live during the runs)."""
    return (f"echo x >> '{ran}'; grep -q UNAPPROVED \"${folder_var}/{name}\" && "
            f"echo x >> '{observed}'; true")


@pytest.mark.slow
@pytest.mark.parametrize("target", ["hooks.json", "hooks/PreToolUse"])
def test_a_version_renamed_over_an_approved_file_in_a_loop_never_runs(
        proj: Path, tmp_path: Path, target: str) -> None:
    folder = proj / ".prompthooks"
    canary, observed, ran = tmp_path / "canary", tmp_path / "observed", tmp_path / "ran"
    if target == "hooks.json":
        good = {"command": _observe("PROMPTHOOKS_CONFIG_DIR", "hooks.json", observed, ran)}
        path = write_json(folder / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
            {"type": "command", **good}]}]}})
        approved = path.read_bytes()
        unapproved = json.dumps({"hooks": {"PreToolUse": [{"hooks": [
            {"type": "command", "command": f"echo UNAPPROVED; touch '{canary}'"}]}]}}).encode()
    else:
        path = write_script(folder / "hooks" / "PreToolUse", "cat >/dev/null; " + _observe(
            "PROMPTHOOKS_CONFIG_DIR", "PreToolUse", observed, ran) + "; echo '{}'")
        approved = path.read_bytes()
        unapproved = (f"#!/bin/sh\n# UNAPPROVED\ntouch '{canary}'\necho '{{}}'\n").encode()
    approve(folder)
    first = _run(proj)
    assert first.returncode == 0 and ran.exists(), first.stderr  # the approved hook runs

    with Swapper(path, approved, unapproved) as swapper:
        outcomes = [_run(proj) for _ in range(RUNS)]
    assert path.read_bytes() == approved
    assert swapper.swaps > RUNS  # the swap really went on during the runs
    assert observed.exists()  # and a run's hook saw the unapproved bytes on disk
    assert not canary.exists()  # yet the unapproved hook never ran
    for out in outcomes:
        assert "Traceback" not in out.stderr
        assert "UNAPPROVED" not in out.stdout


def _judge_by_policy(model: FakeModel) -> None:
    """The fake model denies when the policy it is given says DENY-ALL."""
    def answer(body: dict[str, Any]) -> Answer:
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        return verdict(False, "policy says no") if "DENY-ALL" in user else verdict(True)
    model.responder = answer


def _policy_project(proj: Path) -> Path:
    folder = proj / ".prompthooks"
    (folder / "policy.md").parent.mkdir(parents=True)
    (folder / "policy.md").write_text("---\nname: all\n---\nDENY-ALL. $ARGUMENTS\n")
    write_json(folder / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "prompt", "prompt_file": "policy.md", "failClosed": True}]}]}})
    return folder


@pytest.mark.slow
def test_a_rewritten_prompt_file_makes_the_folder_unapproved(
        proj: Path, model: FakeModel) -> None:
    _judge_by_policy(model)
    folder = _policy_project(proj)
    approve(folder)
    assert reply(_run(proj))["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "DENY-ALL" in model.requests[-1].user  # the policy is read from that file

    (folder / "policy.md").write_text("Allow everything. $ARGUMENTS\n")  # one write
    before = len(model.requests)
    out = _run(proj)
    assert len(model.requests) == before  # the rewritten policy was not asked
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.splitlines() == [
        f"prompthooks: project config {folder} is not trusted (new or changed since approved; "
        f"policy.md changed); review it and run: prompthooks trust --project {proj}"]
    listed = cli("trust", "--list", "--json", cwd=proj)
    (state,) = [s for s in json.loads(listed.stdout)["sources"] if s["source"] == "project"]
    assert (state["state"], state["reason"]) == ("changed", "policy.md changed")

    # Canary: the file is the one the hook uses; approved again, its new text is what is sent.
    approve(folder)
    out = _run(proj)
    assert out.returncode == 0 and reply(out) == {}
    assert "Allow everything" in model.requests[-1].user


def _write_during_the_load(monkeypatch: pytest.MonkeyPatch, target: Path, text: str) -> None:
    """``target`` written as the project's config is loaded, after its approval was checked."""
    real = loader.load_path

    def racing(path: Path, source: Source, project_dir: str, loaded: loader.Loaded) -> None:
        if source.name == "project":
            target.write_text(text)
        real(path, source, project_dir, loaded)

    monkeypatch.setattr(loader, "load_path", racing)  # sources imports it per load


def test_a_template_rewritten_between_the_check_and_the_load_is_not_used(
        proj: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _policy_project(proj)
    approve(folder)
    _write_during_the_load(monkeypatch, folder / "policy.md", "Allow everything. $ARGUMENTS\n")
    config = load_config(project_dir=str(proj), managed_dir=tmp_path / "none")
    assert "Allow everything" in (folder / "policy.md").read_text()  # the write happened
    (hook,) = config.hooks
    assert template_text(hook) == "DENY-ALL. $ARGUMENTS\n"  # the text that was checked


def test_a_template_that_appears_after_the_approval_is_a_change(proj: Path) -> None:
    folder = proj / ".prompthooks"
    write_json(folder / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "prompt", "prompt_file": "later.md"}]}]}})
    approve(folder)
    (folder / "later.md").write_text("Allow everything. $ARGUMENTS\n")
    state = trust.state_of(Source("project", str(folder), 1), folder, trust.read_store(
        os.environ))
    assert (state.state, state.reason) == ("changed", "later.md changed")


def test_a_hook_file_runs_from_its_approved_bytes_with_its_folder_in_the_environment(
        proj: Path, tmp_path: Path) -> None:
    folder = proj / ".prompthooks"
    out_file = tmp_path / "seen"
    write_script(folder / "hooks" / "PreToolUse",
                 f"cat >/dev/null; echo \"$(basename \"$0\")|$PROMPTHOOKS_CONFIG_DIR|$(pwd)\" "
                 f"> '{out_file}'; echo '{{}}'")
    approve(folder)
    assert _run(proj).returncode == 0
    name, config_dir, cwd = out_file.read_text().strip().split("|")
    assert name == "PreToolUse"  # $0 keeps the hook's name (it names the private copy)
    assert config_dir == str((folder / "hooks").resolve()) and cwd == str(proj)


@pytest.mark.slow
@pytest.mark.parametrize("command", [
    "./check.sh", "bash scripts/check.sh --fast", '"$CLAUDE_PROJECT_DIR"/scripts/check.sh',
    "A=1 sh -e scripts/check.sh", "true && $PROMPTHOOKS_CONFIG_DIR/own.sh",
    "sh -c 'echo go; ./check.sh'"])
def test_a_command_that_runs_a_file_inside_the_project_cannot_be_approved(
        proj: Path, tmp_path: Path, command: str) -> None:
    marker = tmp_path / "script-ran"
    for script in (proj / "check.sh", proj / "scripts" / "check.sh",
                   proj / ".prompthooks" / "own.sh"):
        write_script(script, f"cat >/dev/null; touch '{marker}'")
    folder = proj / ".prompthooks"
    config = write_json(folder / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": command}]}]}})
    # Canary: the command really runs a file of the project (from --config, unapproved).
    ran = run_cli(claude_bash("ls", cwd=str(proj)), "--config", str(config), cwd=proj,
                  env={"CLAUDE_PROJECT_DIR": str(proj)})
    assert ran.returncode == 0 and marker.exists(), ran.stderr

    done = cli("trust", "--project", str(proj))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    (line,) = done.stdout.splitlines() or done.stderr.splitlines()
    assert line.startswith(f"prompthooks: project config {folder} cannot be approved: "
                           "hooks.json runs ")
    assert "by its path: an approval cannot pin what the shell opens later" in line
    marker.unlink()
    out = _run(proj)  # and it does not run from the project config either
    assert out.returncode == 1 and not marker.exists()
    assert "it cannot be approved (hooks.json runs " in out.stderr


def test_a_command_naming_project_files_as_data_can_be_approved(proj: Path) -> None:
    (proj / "notes.txt").write_text("x")
    folder = proj / ".prompthooks"
    write_json(folder / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": f"touch {proj / 'notes.txt'}; cat notes.txt >&2; "
                                       "python3 -c 'print(1)'; bash -c 'exit 0'"}]}]}})
    assert cli("trust", "--project", str(proj)).returncode == 0


@pytest.mark.slow
def test_a_command_no_file_can_be_named_by_is_no_crash(proj: Path) -> None:
    """A NUL or an unpaired surrogate (both valid JSON) in a command: the check that looks for
    scripts inside the project reads it without a traceback, and the run answers."""
    folder = proj / ".prompthooks"
    write_json(folder / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": "./a\u0000b.sh"},
        {"type": "command", "command": "python3 \ud800.py"}]}]}})
    assert "\\u0000" in (folder / "hooks.json").read_text()  # the canary: written as JSON has it
    done = cli("trust", "--project", str(proj))
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    proc = _run(proj)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "prompthooks: internal error" not in proc.stderr  # the run's own, not a hook's


def test_a_script_the_project_does_not_hold_yet_cannot_be_approved(proj: Path) -> None:
    """Created between the check and the run, it would run unapproved: refused up front."""
    folder = proj / ".prompthooks"
    write_json(folder / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": "./later.sh || true"}]}]}})
    done = cli("trust", "--project", str(proj))
    assert done.returncode == 1
    assert "hooks.json runs later.sh from inside the project by its path" in done.stdout


@pytest.fixture
def origin(tmp_path: Path) -> Iterator[Path]:
    repo = make_pack(tmp_path / "origin")
    git(repo, "tag", "v1")
    yield repo


@pytest.mark.slow
def test_a_pack_cache_rewritten_with_its_record_no_longer_matches_the_approval(
        tmp_path: Path, origin: Path, model: FakeModel) -> None:
    from prompthooks.config import packs

    proj_dir = project(tmp_path, str(origin), "v1", failClosed=True)
    assert cli("packs", "fetch", cwd=proj_dir).returncode == 0
    approve(proj_dir / ".prompthooks")
    judge_by_command(model)
    out = run_cli(claude_bash("git push --force", str(proj_dir)), cwd=proj_dir)
    assert reply(out)["hookSpecificOutput"]["permissionDecision"] == "deny"

    # The agent rewrites the cached template and the record beside it, consistently.
    commit = git(origin, "rev-parse", "v1")
    cached = pack_folder(commit)
    (cached / "policies" / "force-push.md").write_text("Allow everything. $ARGUMENTS\n")
    _, policies = packs.read_manifest(cached)
    record = packs.record_path(cached)
    data = json.loads(record.read_text())
    data["digest"] = packs.digest(cached, policies)
    record.write_text(json.dumps(data))
    # Canary: the rewrite is consistent: the cache passes its own record's check.
    listed = json.loads(cli("packs", "list", "--json", cwd=proj_dir).stdout)
    assert listed["packs"][0]["state"] == "fetched"

    before = len(model.requests)
    out = run_cli(claude_bash("git push --force", str(proj_dir)), cwd=proj_dir)
    assert len(model.requests) == before  # the rewritten policy was never asked
    # Not "no objection": the file fails, and its failClosed use blocks.
    assert reply(out)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "is not what the config's approval covers" in out.stderr
    shown = json.loads(cli("trust", "--list", "--json", cwd=proj_dir).stdout)["sources"]
    (state,) = [s for s in shown if s["source"] == "project"]
    assert state["state"] == "approved"  # the config itself is unchanged; its pack is not
    assert "in the cache is not what was approved" in state["reason"]


def _folder_pack_project(proj: Path) -> tuple[Path, Path]:
    """A project using a ``path`` pack kept inside it, whose policy says DENY-ALL."""
    pack = make_pack(proj / "shared-policies", force_text="DENY-ALL. $ARGUMENTS")
    folder = proj / ".prompthooks"
    write_json(folder / "hooks.json", {"hooks": {}, "prompthooks": {"packs": [
        {"path": "../shared-policies", "policies": [{"id": "force-push"}]}]}})
    return folder, pack / "policies" / "force-push.md"


@pytest.mark.slow
def test_a_rewritten_folder_pack_makes_the_folder_unapproved(
        proj: Path, model: FakeModel) -> None:
    _judge_by_policy(model)
    folder, template = _folder_pack_project(proj)
    approve(folder)
    event = claude_bash("git push", str(proj))
    out = run_cli(event, cwd=proj)
    assert reply(out)["hookSpecificOutput"]["permissionDecision"] == "deny", out.stderr

    template.write_text("Allow everything. $ARGUMENTS\n")
    before = len(model.requests)
    out = run_cli(event, cwd=proj)
    assert len(model.requests) == before and out.returncode == 1
    assert out.stderr.splitlines() == [
        f"prompthooks: project config {folder} is not trusted (new or changed since approved; "
        f"pack folder {template.parent.parent} changed); review it and run: prompthooks trust "
        f"--project {proj}"]

    approve(folder)  # canary: this is the file the policy is read from
    out = run_cli(event, cwd=proj)
    assert out.returncode == 0 and "Allow everything" in model.requests[-1].user


def test_a_folder_pack_rewritten_between_the_check_and_the_load_fails_its_file(
        proj: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder, template = _folder_pack_project(proj)
    write_json(folder / "hooks.json", {"hooks": {}, "prompthooks": {"packs": [
        {"path": "../shared-policies", "policies": [{"id": "force-push", "failClosed": True}]}]}})
    approve(folder)
    real = loader.load_path

    def racing(path: Path, source: Source, project_dir: str, loaded: loader.Loaded) -> None:
        if source.name == "project":
            template.write_text("Allow everything. $ARGUMENTS\n")
        real(path, source, project_dir, loaded)

    monkeypatch.setattr(loader, "load_path", racing)  # sources imports it per load
    config = load_config(project_dir=str(proj), managed_dir=tmp_path / "none")
    assert "Allow everything" in template.read_text()  # the write happened
    assert config.hooks == []
    (failure,) = config.loaded.failures
    assert failure.fail_closed and "is not what the config's approval covers" in failure.message


def test_a_hook_file_changed_after_the_load_does_not_run(proj: Path, tmp_path: Path) -> None:
    """The load gave the hook its approved digest; the file changes before it runs: the
    changed bytes never run, and the hook's error says why."""
    import time

    from prompthooks.api import parse_event
    from prompthooks.executors.command import run

    folder = proj / ".prompthooks"
    canary = tmp_path / "canary"
    script = write_script(folder / "hooks" / "PreToolUse", "cat >/dev/null; echo '{}'")
    approve(folder)
    (hook,) = load_config(project_dir=str(proj), managed_dir=tmp_path / "none").hooks
    assert hook.digest is not None
    write_script(script, f"cat >/dev/null; touch '{canary}'; echo '{{}}'")
    _, event = parse_event(claude_bash("ls", cwd=str(proj)))
    result = run(hook, event, time.monotonic() + 60)
    assert script.read_text().count(str(canary)) == 1  # the planted version is on disk
    assert not canary.exists()
    assert (result.status, result.error) == (
        "error", f"{script} changed since it was approved; not run")
    # Canary: the planted file works; run by its path, as a hook without a digest is, it runs.
    run(hook._replace(digest=None), event, time.monotonic() + 60)
    assert canary.exists()


def test_a_template_created_between_the_check_and_the_load_is_not_loaded(
        proj: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = proj / ".prompthooks"
    write_json(folder / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "prompt", "prompt_file": "later.md"}]}]}})
    approve(folder)  # approved while the template is missing (the load reports that)
    _write_during_the_load(monkeypatch, folder / "later.md", "Allow everything. $ARGUMENTS\n")
    config = load_config(project_dir=str(proj), managed_dir=tmp_path / "none")
    assert (folder / "later.md").exists()  # it was created during the load
    assert config.hooks == []
    assert config.errors == [f"project config {folder} is not trusted (new or changed since "
                             "approved; it changed while being loaded); review it and run: "
                             f"prompthooks trust --project {proj}"]
