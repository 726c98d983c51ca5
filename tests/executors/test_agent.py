"""Agent hooks end to end: a scripted model server asks for tool calls over real HTTP, the
tools read a real project folder, and every attack on confinement is proved to reach the
tools (the server got the tool call) before it is shown to fail (the canary never left)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from prompthooks.api import Outcome, dispatch
from prompthooks.model.chain import ModelChain
from prompthooks.model.recording import Cassette

from ..fake_model import Answer, FakeModel, calls, error, verdict
from ..helpers import approve, claude_event, cline_event, cursor_event, run_cli, write_json

POLICY = "Do not let the agent stop while the project's tests fail. $ARGUMENTS"


def _config(folder: Path, event: str = "Stop", **handler: Any) -> Path:
    fields = {"type": "agent", "prompt": POLICY, **handler}
    return write_json(folder / "hooks.json", {"hooks": {event: [{"hooks": [fields]}]}})


def _stop(project: Path, cfg: Path, budget: float = 60,
          models: ModelChain | None = None) -> Outcome:
    return dispatch(claude_event("Stop", str(project), stop_hook_active=False),
                    config_paths=[str(cfg)], budget=budget, models=models)


def _tool_messages(request: Any) -> list[str]:
    return [m["content"] for m in request.body["messages"] if m.get("role") == "tool"]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".pytest_cache" / "v" / "cache").mkdir(parents=True)
    (root / ".pytest_cache" / "v" / "cache" / "lastfailed").write_text(
        json.dumps({"tests/test_app.py::test_login": True}))
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("def login():\n    return None\n")
    return root


@pytest.fixture
def canary(tmp_path: Path) -> tuple[Path, str]:
    """A secret file outside the project, holding a string found nowhere else."""
    secret = f"CANARY-{uuid.uuid4().hex}"
    path = tmp_path / "outside" / "secret.txt"
    path.parent.mkdir()
    path.write_text(f"{secret}\n")
    return path, secret


def test_the_loop_reads_a_file_and_rules(project: Path, tmp_path: Path,
                                         model: FakeModel) -> None:
    model.script(calls(("read_file", {"path": ".pytest_cache/v/cache/lastfailed"})),
                 verdict(False, "tests/test_app.py::test_login fails; fix it first."))
    outcome = _stop(project, _config(tmp_path))
    assert outcome.decision.permission == "deny", outcome.problems
    assert outcome.decision.reason == "tests/test_app.py::test_login fails; fix it first."
    first, second = model.requests
    assert [t["function"]["name"] for t in first.body["tools"]] == [
        "read_file", "search", "list_files"]
    assert "response_format" not in first.body
    assert "read-only" in first.system
    (result,) = _tool_messages(second)
    assert "test_login" in result and result.startswith("<tool-data-")
    assistant = next(m for m in second.body["messages"] if m["role"] == "assistant")
    assert assistant["tool_calls"][0]["function"]["name"] == "read_file"
    (hook_result,) = outcome.decision.results
    (call,) = hook_result.tool_calls
    assert call["tool"] == "read_file" and call["result_chars"] > 0


def test_search_and_list_files(project: Path, tmp_path: Path, model: FakeModel) -> None:
    model.script(calls(("list_files", {"pattern": "**/*.py"}),
                       ("search", {"pattern": r"def \w+", "glob": "*.py"})),
                 verdict(True))
    outcome = _stop(project, _config(tmp_path))
    assert outcome.decision.permission is None and not outcome.problems
    listed, found = _tool_messages(model.requests[1])
    assert "src/app.py" in listed
    assert "src/app.py:1: def login():" in found


ATTACKS: dict[str, Callable[[Path, Path], str]] = {
    "dotdot": lambda project, secret: "../outside/secret.txt",
    "absolute": lambda project, secret: str(secret),
    "symlink": lambda project, secret: _link(project / "notes.txt", secret),
    "hard link": lambda project, secret: _hard(project / "copy.txt", secret),
    "symlinked folder": lambda project, secret: _link(project / "docs", secret.parent)
    + "/secret.txt",
    "fifo": lambda project, secret: _fifo(project / "pipe"),
    "proc environ": lambda project, secret: "/proc/self/environ",
}


def _link(path: Path, target: Path) -> str:
    path.symlink_to(target)
    return path.name


def _hard(path: Path, target: Path) -> str:
    os.link(target, path)
    return path.name


def _fifo(path: Path) -> str:
    os.mkfifo(path)
    return path.name


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_read_outside_the_project_is_refused(
        attack: str, project: Path, tmp_path: Path, canary: tuple[Path, str],
        model: FakeModel, monkeypatch: pytest.MonkeyPatch) -> None:
    secret_path, secret = canary
    monkeypatch.setenv("CANARY_VALUE", secret)  # /proc/self/environ of a child would hold it
    asked = ATTACKS[attack](project, secret_path)
    model.script(calls(("read_file", {"path": asked})), verdict(True))
    began = time.monotonic()
    outcome = _stop(project, _config(tmp_path, timeout=30))
    assert time.monotonic() - began < 25  # a FIFO is never waited on
    assert len(model.requests) == 2, outcome.problems
    # The canary: the attack reached the tools (the server sent the call, and a result for
    # that very call came back in the next request) ...
    second = model.requests[1]
    assistant = next(m for m in second.body["messages"] if m["role"] == "assistant")
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {"path": asked}
    (result,) = _tool_messages(second)
    assert "error:" in result
    # ... and the secret never reached the model.
    for request in model.requests:
        assert secret not in json.dumps(request.body)
    (hook_result,) = outcome.decision.results
    assert hook_result.tool_calls[0].get("error") is True


@pytest.mark.parametrize("tool,args", [
    ("search", {"pattern": "CANARY"}),
    ("list_files", {"pattern": "**"}),
])
def test_walks_do_not_follow_links_out(tool: str, args: dict[str, str], project: Path,
                                       tmp_path: Path, canary: tuple[Path, str],
                                       model: FakeModel) -> None:
    secret_path, secret = canary
    (project / "docs").symlink_to(secret_path.parent)
    (project / "notes.txt").symlink_to(secret_path)
    os.link(secret_path, project / "copy.txt")
    model.script(calls((tool, args)), verdict(True))
    _stop(project, _config(tmp_path))
    assert len(model.requests) == 2
    (result,) = _tool_messages(model.requests[1])
    for request in model.requests:
        assert secret not in json.dumps(request.body)
    if tool == "list_files":
        assert "src/app.py" in result and "docs/secret.txt" not in result
        assert "notes.txt" not in result


def test_a_key_in_a_project_file_is_redacted(project: Path, tmp_path: Path,
                                             model: FakeModel) -> None:
    key = "sk-ant-api03-" + "Q" * 40
    (project / ".env").write_text(f"ANTHROPIC_API_KEY={key}\n")
    model.script(calls(("read_file", {"path": ".env"})), verdict(True))
    _stop(project, _config(tmp_path))
    (result,) = _tool_messages(model.requests[1])
    assert "ANTHROPIC_API_KEY" in result and "[redacted]" in result  # the read happened
    assert all(key not in json.dumps(r.body) for r in model.requests)


@pytest.mark.parametrize("wanted,said", [
    (("run_shell", {"command": "rm -rf ~"}), "unknown tool 'run_shell'"),
    (("read_file", "{not json"), "not a JSON object"),
    (("read_file", {"path": 7}), "'path' must be a non-empty string"),
    (("search", {"pattern": "(unclosed"}), "not an RE2 regular expression"),
])
def test_unknown_tools_and_bad_arguments_get_an_error_result(
        wanted: tuple[str, Any], said: str, project: Path, tmp_path: Path,
        model: FakeModel) -> None:
    model.script(calls(wanted), verdict(False, "tests fail"))
    outcome = _stop(project, _config(tmp_path))
    assert outcome.decision.permission == "deny" and not outcome.problems
    (result,) = _tool_messages(model.requests[1])
    assert said in result


@pytest.mark.parametrize("fail_closed", [False, True])
def test_the_turn_limit_holds(fail_closed: bool, project: Path, tmp_path: Path,
                              model: FakeModel) -> None:
    model.script(calls(("list_files", {"pattern": "*"})))  # forever
    cfg = _config(tmp_path, max_turns=3, failClosed=fail_closed)
    for run in (1, 2):  # the second from the config cache, which keeps the limit
        outcome = _stop(project, cfg)
        assert len(model.requests) == 3 * run
        (problem,) = outcome.problems
        assert "used its 3 turns without a verdict" in problem
        assert outcome.decision.permission == ("deny" if fail_closed else None)


@pytest.mark.slow
def test_the_deadline_holds_over_the_loop(project: Path, tmp_path: Path,
                                          model: FakeModel) -> None:
    slow = calls(("list_files", {"pattern": "*"}))
    slow.delay = 0.5
    model.script(slow)
    began = time.monotonic()
    outcome = _stop(project, _config(tmp_path, timeout=2, max_turns=50, failClosed=True))
    assert time.monotonic() - began < 20  # well before the 50 turns' half a second each
    (result,) = outcome.decision.results
    assert result.status == "timeout" and outcome.decision.permission == "deny"
    assert 1 <= len(model.requests) < 50


@pytest.mark.slow
@pytest.mark.parametrize("direct", ["1", "0"])
def test_an_endpoint_without_tools_fails_in_one_line(
        direct: str, project: Path, tmp_path: Path, model: FakeModel,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROMPTHOOKS_DIRECT", direct)
    # A server that refuses any request offering tools, and answers one that does not.
    model.responder = lambda body: (error(400, "tools are not supported by this model")
                                    if "tools" in body else verdict(True))
    outcome = _stop(project, _config(tmp_path, failClosed=True))
    assert model.requests and all("tools" in r.body for r in model.requests)
    assert outcome.decision.permission == "deny"
    (problem,) = outcome.problems
    assert "\n" not in problem and "tool calling" in problem and "(400)" in problem


def test_through_litellm(project: Path, tmp_path: Path, model: FakeModel,
                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROMPTHOOKS_DIRECT", "0")
    model.script(calls(("read_file", {"path": ".pytest_cache/v/cache/lastfailed"})),
                 verdict(False, "test_login fails"))
    outcome = _stop(project, _config(tmp_path))
    assert outcome.decision.permission == "deny", outcome.problems
    assert model.requests[0].body["tools"][0]["function"]["name"] == "read_file"
    assert "test_login" in _tool_messages(model.requests[1])[0]


def test_record_then_replay_offline(project: Path, tmp_path: Path, model: FakeModel,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    tape = tmp_path / "agent.cassette.yaml"
    model.script(calls(("read_file", {"path": ".pytest_cache/v/cache/lastfailed"})),
                 verdict(False, "test_login fails"))
    recorded = _stop(project, _config(tmp_path), models=ModelChain(Cassette(tape, "record")))
    assert recorded.decision.permission == "deny"
    text = tape.read_text()
    assert "tool_calls" in text and "tool_results" in text
    monkeypatch.setenv("PROMPTHOOKS_API_BASE", "http://127.0.0.1:9/v1")  # nothing there
    asked = len(model.requests)
    replayed = _stop(project, _config(tmp_path), models=ModelChain(Cassette(tape, "replay")))
    assert len(model.requests) == asked
    assert replayed.decision.permission == "deny" and not replayed.problems
    assert replayed.decision.reason == "test_login fails"
    assert all(r.replayed for r in replayed.decision.results)
    # The project changed: the tool's result, so the key, differs: no stale verdict.
    (project / ".pytest_cache" / "v" / "cache" / "lastfailed").write_text("{}")
    changed = _stop(project, _config(tmp_path), models=ModelChain(Cassette(tape, "replay")))
    assert "no recorded reply" in " ".join(changed.problems)


@pytest.mark.slow
@pytest.mark.parametrize("turns,said", [(500, "less than or equal to 50"),
                                         (0, "greater than or equal to 1")])
def test_validate_bounds_the_turn_limit(turns: int, said: str, tmp_path: Path) -> None:
    cfg = _config(tmp_path, max_turns=turns)
    proc = subprocess.run([sys.executable, "-m", "prompthooks", "validate", "--config",
                           str(cfg)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert f"hooks.Stop[0].hooks[0].max_turns: Input should be {said}" in proc.stdout


def test_the_home_folder_is_no_project(tmp_path: Path, model: FakeModel,
                                       isolated_home: Path) -> None:
    outcome = dispatch(claude_event("Stop", str(isolated_home)),
                       config_paths=[str(_config(tmp_path, failClosed=True))], budget=30)
    assert outcome.decision.permission == "deny" and not model.requests
    assert "not a project" in " ".join(outcome.problems)


@pytest.mark.slow
@pytest.mark.parametrize("host", ["claude", "cursor", "cline"])
def test_prompthooks_run_per_host(host: str, project: Path, tmp_path: Path,
                                  model: FakeModel, isolated_home: Path) -> None:
    model.script(calls(("read_file", {"path": ".pytest_cache/v/cache/lastfailed"})),
                 verdict(False, "test_login still fails"))
    if host == "claude":
        cfg = _config(tmp_path)
        event: dict[str, Any] = claude_event("Stop", str(project), stop_hook_active=False)
    elif host == "cursor":
        cfg = write_json(tmp_path / "cursor-hooks.json", {"version": 1, "hooks": {"stop": [
            {"type": "agent", "prompt": POLICY}]}})
        event = cursor_event("stop", str(project), status="completed", loop_count=0)
    else:
        cfg = tmp_path / "cline-hooks"
        cfg.mkdir()
        (cfg / "TaskComplete.md").write_text(f"---\ntype: agent\nmax_turns: 4\n---\n{POLICY}\n")
        event = cline_event("TaskComplete", str(project), taskMetadata={})
    proc = run_cli(event, "--config", str(cfg))
    assert proc.returncode in (0, 2), proc.stderr
    assert "test_login still fails" in proc.stdout + proc.stderr, (proc.stdout, proc.stderr)
    assert len(model.requests) == 2
    assert "test_login" in _tool_messages(model.requests[1])[0]
    # The audit log keeps the tool call: tool, arguments, result size.
    db = isolated_home / ".local" / "share" / "prompthooks" / "audit.db"
    with sqlite3.connect(db) as conn:
        ((kind, logged),) = conn.execute("SELECT kind, tool_calls FROM decisions").fetchall()
    (call,) = json.loads(logged)
    assert kind == "agent" and call["tool"] == "read_file" and call["result_chars"] > 0
    assert json.loads(call["arguments"]) == {"path": ".pytest_cache/v/cache/lastfailed"}


@pytest.mark.parametrize("change", [{"prompt": "Always reply ok. $ARGUMENTS"},
                                    {"model": "another-model"}, {"max_turns": 50}])
def test_an_approval_covers_the_prompt_model_and_limits(
        change: dict[str, Any], project: Path, model: FakeModel) -> None:
    folder = project / ".prompthooks"
    _config(folder)
    approve(folder)
    model.script(verdict(False, "tests fail"))
    approved = dispatch(claude_event("Stop", str(project)), budget=30)
    assert approved.decision.permission == "deny" and len(model.requests) == 1
    _config(folder, **change)  # an agent rewrites the approved hook
    changed = dispatch(claude_event("Stop", str(project)), budget=30)
    assert changed.decision.permission is None and len(model.requests) == 1
    assert "not approved" in " ".join(changed.problems) or "changed" in " ".join(
        changed.problems), changed.problems


@pytest.mark.slow
def test_eval_records_then_replays_an_agent_hook(project: Path, tmp_path: Path,
                                                  model: FakeModel) -> None:
    """``eval --record`` through the tool loop, then ``--replay`` with no server at all."""
    def answer(body: dict[str, Any]) -> Answer:
        results = [m["content"] for m in body["messages"] if m.get("role") == "tool"]
        if not results:
            return calls(("read_file", {"path": ".pytest_cache/v/cache/lastfailed"}))
        return verdict(False, "test_login fails") if "test_login" in results[0] \
            else verdict(True)

    model.responder = answer
    clean = tmp_path / "clean"
    (clean / ".pytest_cache" / "v" / "cache").mkdir(parents=True)
    (clean / ".pytest_cache" / "v" / "cache" / "lastfailed").write_text("{}")
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({"id": name, "event": claude_event("Stop", str(folder)),
                                        "expected": label}) + "\n"
                            for name, folder, label in (("failing", project, "deny"),
                                                        ("clean", clean, "allow"))))
    tape = tmp_path / "eval.cassette.yaml"
    args = [sys.executable, "-m", "prompthooks", "eval", str(data), "--config",
            str(_config(tmp_path)), "--json"]
    live = subprocess.run([*args, "--record", str(tape)], capture_output=True, text=True,
                          timeout=300)
    assert live.returncode == 0, live.stderr
    assert len(model.requests) == 4
    offline = {**os.environ, "PROMPTHOOKS_API_BASE": "http://127.0.0.1:9/v1"}
    replayed = subprocess.run([*args, "--replay", str(tape)], capture_output=True, text=True,
                              timeout=300, env=offline)
    assert replayed.returncode == 0, replayed.stderr
    assert len(model.requests) == 4
    for proc in (live, replayed):
        (report,) = json.loads(proc.stdout)
        assert report["overall"]["confusion"] == {"tp": 1, "fp": 0, "fn": 0, "tn": 1}


@pytest.mark.slow
def test_doctor_probes_an_agent_hooks_model_with_its_tools(tmp_path: Path,
                                                           model: FakeModel) -> None:
    model.responder = lambda body: (error(400, "tools are not supported by this model")
                                    if "tools" in body else verdict(True))
    cfg = _config(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "prompthooks", "doctor", "--json", "--config",
                           str(cfg), "--project", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    report = json.loads(proc.stdout)
    (probe,) = [c for c in report["checks"] if c["check"].startswith("model ")]
    assert probe["status"] == "fail" and "(400)" in probe["detail"], probe
    assert "1 prompt hook (1 agent)" in probe["detail"]
    assert model.requests and "tools" in model.requests[0].body
    assert proc.returncode == 1


@pytest.mark.slow
def test_reads_are_bounded_per_call_and_per_hook(project: Path, tmp_path: Path,
                                                 model: FakeModel) -> None:
    from prompthooks.executors import project_tools

    (project / "big.log").write_text("".join(f"line {i} " + "x" * 90 + "\n"
                                             for i in range(20_000)))  # about 2 MB
    reads = 2 + project_tools.HOOK_BYTES // project_tools.READ_BYTES
    model.script(calls(*[("read_file", {"path": "big.log", "offset": 1 + 600 * i})
                         for i in range(reads)]), verdict(True))
    _stop(project, _config(tmp_path))
    results = _tool_messages(model.requests[1])
    assert len(results) == reads
    assert all(len(r.encode()) < project_tools.READ_BYTES + 200 for r in results)
    assert "[cut: the read stops at" in results[0]
    assert "has read its" in results[-1] and "error:" in results[-1]


@pytest.mark.slow
def test_explain_shows_the_tools_limits_and_root(project: Path, tmp_path: Path) -> None:
    event = json.dumps(claude_event("Stop", str(project)))
    proc = subprocess.run([sys.executable, "-m", "prompthooks", "explain", "--json",
                           "--config", str(_config(tmp_path, max_turns=4))], input=event,
                          capture_output=True, text=True, timeout=60)
    (hook,) = json.loads(proc.stdout)["hooks"]
    agent = hook["prompt"]["agent"]
    assert hook["kind"] == "agent" and agent["max_turns"] == 4
    assert agent["root"] == os.path.realpath(project)
    assert agent["tools"].startswith("read_file(path, offset, limit); search(")
    assert "512 KiB read" in agent["limits"]


@pytest.mark.slow
def test_the_pytest_plugin_replays_the_shipped_agent_suite(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """The library's agent suite as a user's pytest suite: each case reads its own project
    folder and replays offline (no server: the model address goes nowhere)."""
    import shutil

    from prompthooks.config.templates import library_dir

    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.setenv("PROMPTHOOKS_API_BASE", "http://127.0.0.1:9/v1")
    shipped = library_dir()
    assert shipped is not None
    folder = pytester.mkdir("policies")
    for name in ("tests-pass.yaml", "tests-pass.cassette.yaml"):
        shutil.copy(shipped / "tests" / name, folder / name)
    shutil.copytree(shipped / "tests" / "projects", folder / "projects")
    pytester.makeini("[pytest]\nprompthooks_cases =\n    tests-pass.yaml\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "--override-ini", "addopts=", "-rA")
    result.assert_outcomes(passed=6)
