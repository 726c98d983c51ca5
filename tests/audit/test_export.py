"""The audit export: every row mirrored to a JSON Lines file and/or an OTLP collector, after
the reply, bounded, redacted, and pinned by the managed policy. Real `prompthooks run`
processes, a real local collector."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from prompthooks.audit.records import FIELDS

from ..helpers import approve, claude_bash, reply, run_cli, write_json, write_script
from ..otlp_collector import Collector, collect

KEY = "sk-live-Q9zr81abcdefghijklmnopqrstuv"
GH = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
DEBUG = {"PROMPTHOOKS_DEBUG": "1"}


@pytest.fixture
def collector() -> Iterator[Collector]:
    server = collect()
    yield next(server)
    next(server, None)


def _config(tmp_path: Path, export: dict[str, Any], *, name: str = "hooks.json",
            **audit: Any) -> Path:
    """A config with a denying hook (named) whose reason is the event it read."""
    deny = write_script(tmp_path / "deny.sh", "cat >&2; exit 2")
    return write_json(tmp_path / name, {
        "prompthooks": {"audit": {"path": str(tmp_path / "audit.db"), "export": export,
                                  **audit}},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": str(deny), "name": "shell guard"}]}]}})


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _denied(proc: subprocess.CompletedProcess[str]) -> bool:
    return bool(reply(proc)["hookSpecificOutput"]["permissionDecision"] == "deny")


@pytest.mark.slow
def test_every_row_is_mirrored_as_one_json_line(tmp_path: Path) -> None:
    cfg = _config(tmp_path, {"jsonl": {"path": "out/decisions.jsonl"}})
    proc = run_cli(claude_bash("rm -rf /"), "--config", str(cfg))
    assert _denied(proc) and proc.returncode == 0, proc.stderr
    out = tmp_path / "out" / "decisions.jsonl"  # relative to the config's folder
    (line,) = _lines(out)
    assert list(line) == list(FIELDS)
    assert line["hook"] == "shell guard" and line["decision"] == "deny"
    assert line["host"] == "claude" and line["tool"] == "Bash" and line["source"] == "config"
    assert out.stat().st_mode & 0o777 == 0o600
    # The same row as the database's, as `log --format jsonl` prints it (which adds the id).
    logged = subprocess.run([sys.executable, "-m", "prompthooks", "log", "--db",
                             str(tmp_path / "audit.db"), "--format", "jsonl"],
                            capture_output=True, text=True, timeout=60)
    (stored,) = [json.loads(x) for x in logged.stdout.splitlines()]
    assert stored.pop("id") == 1 and stored == line


@pytest.mark.slow
def test_concurrent_runs_append_whole_lines(tmp_path: Path) -> None:
    cfg = _config(tmp_path, {"jsonl": {"path": str(tmp_path / "d.jsonl")}})
    # Long reasons: lines of many kilobytes, which would tear if they were not one write.
    events = [claude_bash(f"echo {i} " + "x" * 6000) for i in range(12)]
    with ThreadPoolExecutor(12) as pool:
        procs = list(pool.map(lambda e: run_cli(e, "--config", str(cfg)), events))
    assert all(_denied(p) for p in procs)
    lines = _lines(tmp_path / "d.jsonl")
    assert len(lines) == 12 and len({x["run_id"] for x in lines}) == 12
    assert sorted(int(x["reason"].split('"command": "echo ')[1].split()[0]) for x in lines) \
        == list(range(12))


@pytest.mark.slow
def test_the_export_runs_with_the_database_off(tmp_path: Path) -> None:
    cfg = _config(tmp_path, {"jsonl": {"path": "d.jsonl"}}, enabled=False)
    assert _denied(run_cli(claude_bash("rm -rf /"), "--config", str(cfg)))
    assert len(_lines(tmp_path / "d.jsonl")) == 1
    assert not (tmp_path / "audit.db").exists()


@pytest.mark.slow
def test_an_event_that_could_not_be_read_is_exported_too(tmp_path: Path) -> None:
    cfg = _config(tmp_path, {"jsonl": {"path": "d.jsonl"}})
    proc = run_cli(b"{not json", "--config", str(cfg))
    assert proc.returncode == 1
    (line,) = _lines(tmp_path / "d.jsonl")
    assert line["kind"] == "input" and line["status"] == "error"


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["fifo", "device", "symlink to a FIFO"])
def test_a_fifo_or_device_in_the_files_place_is_refused(tmp_path: Path, kind: str) -> None:
    target = tmp_path / "d.jsonl"
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "device":
        target.symlink_to("/dev/null")
    else:
        os.mkfifo(tmp_path / "pipe")
        target.symlink_to(tmp_path / "pipe")
    cfg = _config(tmp_path, {"jsonl": {"path": str(target)}})
    proc = run_cli(claude_bash("rm -rf /"), "--config", str(cfg), env=DEBUG, timeout=60)
    assert _denied(proc) and proc.returncode == 0
    (said,) = [x for x in proc.stderr.splitlines() if "audit export" in x]
    assert ("a FIFO, not a regular file" in said if kind == "fifo"
            else "is a symlink; refused" in said)
    assert "Traceback" not in proc.stderr
    # The database still has the row.
    assert (tmp_path / "audit.db").exists()


@pytest.mark.parametrize("link", ["symlink", "hard link"])
def test_a_link_planted_in_the_files_place_is_refused(tmp_path: Path, link: str) -> None:
    # The export's folder is often one the agent can write: a link to the user's shell
    # profile would have lines holding the agent's text ($(...) in a reason) appended to it.
    home = tmp_path / "home"
    home.mkdir()
    bashrc = home / ".bashrc"
    bashrc.write_text("export PATH=$PATH:~/bin\n")
    (tmp_path / "logs").mkdir()
    planted = tmp_path / "logs" / "decisions.jsonl"
    if link == "symlink":
        planted.symlink_to(bashrc)
    else:
        os.link(bashrc, planted)
    cfg = _config(tmp_path, {"jsonl": {"path": "logs/decisions.jsonl"}})
    proc = run_cli(claude_bash("echo $(touch /tmp/x)"), "--config", str(cfg), env=DEBUG)
    assert _denied(proc) and proc.returncode == 0
    assert bashrc.read_text() == "export PATH=$PATH:~/bin\n"
    (said,) = [x for x in proc.stderr.splitlines() if "audit export" in x]
    assert ("symlink" if link == "symlink" else "hard links") in said
    assert (tmp_path / "audit.db").exists()


@pytest.mark.slow
def test_a_full_file_is_rotated_once(tmp_path: Path) -> None:
    cfg = _config(tmp_path, {"jsonl": {"path": "d.jsonl", "max_mb": 0.0001}})  # ~100 bytes
    for command in ("first", "second", "third"):
        assert _denied(run_cli(claude_bash(command), "--config", str(cfg)))
    # Each row is larger than the cap: every write after the first finds the file full.
    assert '"command": "third"' in _lines(tmp_path / "d.jsonl")[0]["reason"]
    assert '"command": "second"' in _lines(tmp_path / "d.jsonl.1")[0]["reason"]
    assert not (tmp_path / "d.jsonl.2").exists()


@pytest.mark.slow
def test_records_reach_a_local_otlp_collector(tmp_path: Path, collector: Collector) -> None:
    cfg = _config(tmp_path, {"otlp": {"endpoint": collector.url, "headers_env": "SIEM_HEADERS"}})
    env = {"SIEM_HEADERS": "Authorization=Bearer%20siem-token-1234,x-team=sec"}
    proc = run_cli(claude_bash("rm -rf /"), "--config", str(cfg), env=env)
    assert _denied(proc), proc.stderr
    (request,) = collector.received
    assert request.path == "/v1/logs"
    assert request.headers["content-type"] == "application/x-protobuf"
    assert request.headers["authorization"] == "Bearer siem-token-1234"
    assert request.headers["x-team"] == "sec"
    (record,) = request.records()
    attributes = record["attributes"]
    assert attributes["prompthooks.decision"] == "deny"
    assert attributes["prompthooks.hook"] == "shell guard"
    assert attributes["prompthooks.event"] == "PreToolUse"
    assert attributes["prompthooks.tool"] == "Bash"
    assert "prompthooks.model" not in attributes  # unset fields are left out
    assert record["event_name"] == "prompthooks.decision" and record["severity"] == "WARN"
    assert record["body"] == "deny PreToolUse Bash by hook 'shell guard'"
    assert record["resource"]["service.name"] == "prompthooks"
    assert record["resource"]["host.name"]
    assert record["time_unix_nano"] > 1_700_000_000 * 10**9


@pytest.mark.slow
def test_headers_that_are_not_key_value_pairs_are_refused_unquoted(
        tmp_path: Path, collector: Collector) -> None:
    cfg = _config(tmp_path, {"otlp": {"endpoint": collector.url, "headers_env": "SIEM_HEADERS"}})
    secret = "siem-value-Zq81x7"
    env = {**DEBUG, "SIEM_HEADERS": f"authorization=Bearer {secret}\r\nx-smuggled: 1"}
    proc = run_cli(claude_bash("ls"), "--config", str(cfg), env=env)
    assert _denied(proc)
    (said,) = [x for x in proc.stderr.splitlines() if "audit export" in x]
    assert "SIEM_HEADERS does not hold key=value headers" in said
    assert secret not in proc.stderr
    assert collector.received == []


@pytest.mark.slow
def test_an_unreachable_collector_never_blocks_or_crashes(tmp_path: Path) -> None:
    import socket

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    cfg = _config(tmp_path, {"otlp": {"endpoint": f"http://127.0.0.1:{port}"},
                             "jsonl": {"path": "d.jsonl"}})
    quiet = run_cli(claude_bash("rm -rf /"), "--config", str(cfg))
    assert _denied(quiet) and quiet.returncode == 0
    assert quiet.stderr == ""  # one line with PROMPTHOOKS_DEBUG=1, nothing otherwise
    loud = run_cli(claude_bash("rm -rf /"), "--config", str(cfg), env=DEBUG)
    assert _denied(loud) and loud.returncode == 0
    said = [x for x in loud.stderr.splitlines() if "audit export" in x]
    assert len(said) == 1 and "cannot reach the collector" in said[0]
    assert "Traceback" not in loud.stderr
    # The other target and the database are not held back by it.
    assert len(_lines(tmp_path / "d.jsonl")) == 2


@pytest.mark.slow
def test_a_silent_collector_costs_at_most_the_export_timeout(tmp_path: Path,
                                                             collector: Collector) -> None:
    collector.delay = 60.0
    cfg = _config(tmp_path, {"otlp": {"endpoint": collector.url, "timeout": 1}})
    started = time.monotonic()
    proc = run_cli(claude_bash("rm -rf /"), "--config", str(cfg), "--budget", "30", env=DEBUG)
    took = time.monotonic() - started
    assert _denied(proc) and proc.returncode == 0
    assert took < 25  # the export's second, far inside the 30 s budget; never the collector's 60
    (said,) = [x for x in proc.stderr.splitlines() if "audit export" in x]
    assert "did not answer" in said or "not done in time" in said
    assert len(collector.received) == 1


@pytest.mark.slow
def test_no_secret_leaves_in_the_jsonl_file_or_the_otlp_payload(tmp_path: Path,
                                                                 collector: Collector) -> None:
    # The key is in the tool's command; the hook's own command carries a token; the reason
    # the hook gives is the whole event; and the event input is stored.
    hook = write_script(tmp_path / "guard.sh", "cat >&2; exit 2")
    cfg = write_json(tmp_path / "hooks.json", {
        "prompthooks": {"audit": {"path": str(tmp_path / "audit.db"), "store_events": True,
                                  "export": {"jsonl": {"path": "d.jsonl"},
                                             "otlp": {"endpoint": collector.url}}}},
        "hooks": {"PreToolUse": [{"hooks": [
            {"type": "command", "command": f"GH_TOKEN={GH} {hook}"}]}]}})
    command = f"curl -H 'Authorization: Bearer {KEY}' https://api.example.com/x"
    proc = run_cli(claude_bash(command), "--config", str(cfg))
    assert _denied(proc)
    assert KEY in reply(proc)["hookSpecificOutput"]["permissionDecisionReason"]  # the host's
    written = (tmp_path / "d.jsonl").read_text()
    (request,) = collector.received
    for exported in (written, request.body.decode("latin-1")):
        assert KEY not in exported and GH not in exported
        assert KEY[:12] not in exported  # not even cut in two
        assert "[redacted]" in exported
    (line,) = _lines(tmp_path / "d.jsonl")
    assert line["event_input"] and "api.example.com" in line["event_input"]
    assert line["hook"].startswith("GH_TOKEN=[redacted]")


OTEL_PROBE = """
import sys
from prompthooks.cli import main
code = main(["run", "--config", sys.argv[1]])
print("OTEL=" + str(any(m.split(".")[0] == "opentelemetry" for m in sys.modules)),
      file=sys.stderr)
sys.exit(code)
"""


@pytest.mark.slow
@pytest.mark.parametrize("export, imported", [({}, False),
                                              ({"jsonl": {"path": "d.jsonl"}}, False),
                                              ("otlp", True)])
def test_the_otel_sdk_is_imported_only_when_its_export_is_configured(
        tmp_path: Path, collector: Collector, export: Any, imported: bool) -> None:
    if export == "otlp":
        export = {"otlp": {"endpoint": collector.url}}
    cfg = _config(tmp_path, export)
    probe = tmp_path / "probe.py"
    probe.write_text(OTEL_PROBE)
    proc = subprocess.run([sys.executable, str(probe), str(cfg)], capture_output=True,
                          text=True, input=json.dumps(claude_bash("ls")), timeout=60)
    assert '"permissionDecision": "deny"' in proc.stdout
    assert f"OTEL={imported}" in proc.stderr


def _managed(tmp_path: Path, export: dict[str, Any]) -> Path:
    etc = tmp_path / "etc"
    write_json(etc / "hooks.json", {"prompthooks": {"audit": {"export": export}}})
    return etc


@pytest.mark.slow
def test_a_managed_export_cannot_be_removed_or_redirected(tmp_path: Path,
                                                          collector: Collector) -> None:
    etc = _managed(tmp_path, {"jsonl": {"path": str(tmp_path / "siem" / "all.jsonl")}})
    project = tmp_path / "project"
    deny = write_script(tmp_path / "deny.sh", "cat >/dev/null; echo no >&2; exit 2")
    # The project turns the log off and points the JSON Lines file elsewhere; it may add a
    # target of another kind.
    approve(write_json(project / ".prompthooks" / "hooks.json", {
        "prompthooks": {"audit": {"enabled": False, "export": {
            "jsonl": {"path": str(project / "mine.jsonl")},
            "otlp": {"endpoint": collector.url}}}},
        "hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": str(deny)}]}]}}
    ).parent)
    proc = run_cli(claude_bash("rm -rf /", cwd=str(project)), "--managed-dir", str(etc),
                   cwd=project)
    assert _denied(proc), proc.stderr
    (line,) = _lines(tmp_path / "siem" / "all.jsonl")
    assert line["source"] == "project" and line["decision"] == "deny"
    assert not (project / "mine.jsonl").exists()
    assert len(collector.records()) == 1


@pytest.mark.slow
def test_a_project_database_cannot_overwrite_a_managed_export(tmp_path: Path) -> None:
    # SQLite writing its database over the export's file would erase the exported lines.
    exported = tmp_path / "siem" / "all.jsonl"
    etc = _managed(tmp_path, {"jsonl": {"path": str(exported)}})
    project = tmp_path / "project"
    deny = write_script(tmp_path / "deny.sh", "cat >/dev/null; echo no >&2; exit 2")
    for database in (str(exported), f"{exported}.1"):
        approve(write_json(project / ".prompthooks" / "hooks.json", {
            "prompthooks": {"audit": {"path": database}},
            "hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": str(deny)}]}]}}
        ).parent)
        for _ in range(2):
            proc = run_cli(claude_bash("rm -rf /", cwd=str(project)), "--managed-dir",
                           str(etc), cwd=project)
            assert _denied(proc), proc.stderr
    lines = _lines(exported)  # every line still JSON: no database was written over them
    assert len(lines) == 4 and {x["decision"] for x in lines} == {"deny"}
    assert not exported.with_name("all.jsonl.1").exists()


@pytest.mark.slow
def test_a_silent_collector_cannot_be_given_longer_than_five_seconds(
        tmp_path: Path, collector: Collector) -> None:
    # The host waits for the process to end on every event: a config's timeout is capped.
    collector.delay = 60.0
    cfg = _config(tmp_path, {"otlp": {"endpoint": collector.url, "timeout": 1000}})
    started = time.monotonic()
    proc = run_cli(claude_bash("rm -rf /"), "--config", str(cfg), env=DEBUG)
    assert _denied(proc) and proc.returncode == 0
    assert time.monotonic() - started < 45  # 5 s and the run's own cost; never the 60 s delay
    assert len(collector.received) == 1


@pytest.mark.slow
def test_event_text_in_every_column_is_redacted(tmp_path: Path) -> None:
    # An MCP tool's name and a session id come from the agent like any other text.
    cfg = _config(tmp_path, {"jsonl": {"path": "d.jsonl"}})
    event = {**claude_bash("ls"), "tool_name": f"mcp__x__{GH}", "session_id": KEY}
    hooks = json.loads(cfg.read_text())
    hooks["hooks"]["PreToolUse"][0]["matcher"] = "mcp__.*"
    cfg.write_text(json.dumps(hooks))
    assert _denied(run_cli(event, "--config", str(cfg)))
    written = (tmp_path / "d.jsonl").read_text()
    assert GH not in written and KEY not in written and KEY[:12] not in written
    (line,) = _lines(tmp_path / "d.jsonl")
    assert line["tool"].startswith("mcp__x__") and "[redacted]" in line["tool"]
    assert line["session_id"] == "[redacted]"


@pytest.mark.slow
def test_an_unapproved_project_config_exports_nothing(tmp_path: Path,
                                                      collector: Collector) -> None:
    project = tmp_path / "project"
    write_json(project / ".prompthooks" / "hooks.json", {
        "prompthooks": {"audit": {"export": {"otlp": {"endpoint": collector.url}}}},
        "hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "exit 0"}]}]}})
    run_cli(claude_bash("ls", cwd=str(project)), cwd=project)
    assert collector.received == []


@pytest.mark.slow
@pytest.mark.parametrize("block, message", [
    ({"callbacks": ["langfuse"]}, "litellm callbacks are not read from config files"),
    ({"success_callback": ["s3"]}, "prompthooks.audit.export"),
    ({"audit": {"export": {"otlp": {"endpoint": "ftp://collector"}}}}, "http:// or https://"),
    ({"audit": {"export": {"otlp": {"endpoint": "http://:4318"}}}}, "http:// or https://"),
    ({"audit": {"export": {"otlp": {"endpoint": "http://h:port"}}}}, "http:// or https://"),
    ({"audit": {"export": {"kafka": {}}}}, "kafka"),
    ({"audit": {"export": {"jsonl": {"path": "x", "max_mb": 0}}}}, "max_mb"),
])
def test_bad_export_settings_are_config_errors(tmp_path: Path, block: dict[str, Any],
                                               message: str) -> None:
    cfg = write_json(tmp_path / "hooks.json", {"prompthooks": block, "hooks": {}})
    proc = subprocess.run([sys.executable, "-m", "prompthooks", "validate", "--config",
                           str(cfg)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert message in proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr


def _doctor(cfg: Path, *args: str) -> tuple[int, dict[str, dict[str, str]]]:
    proc = subprocess.run([sys.executable, "-m", "prompthooks", "doctor", "--json", "--config",
                           str(cfg), "--project", str(cfg.parent), *args],
                          capture_output=True, text=True, timeout=120)
    return proc.returncode, {c["check"]: c for c in json.loads(proc.stdout)["checks"]}


@pytest.mark.slow
def test_doctor_checks_the_export_targets(tmp_path: Path, collector: Collector) -> None:
    os.mkfifo(tmp_path / "pipe.jsonl")
    cfg = _config(tmp_path, {"jsonl": {"path": "pipe.jsonl"},
                             "otlp": {"endpoint": collector.url}})
    code, checks = _doctor(cfg, "--offline")
    assert code == 1
    assert checks["audit export (jsonl)"]["status"] == "fail"
    assert "not a regular file" in checks["audit export (jsonl)"]["detail"]
    assert checks["audit export (otlp)"]["detail"].endswith("(not contacted: --offline)")
    assert collector.received == []
    (tmp_path / "pipe.jsonl").unlink()
    code, checks = _doctor(cfg)  # online: one empty request, which the collector accepts
    assert checks["audit export (jsonl)"]["status"] == "ok"
    assert checks["audit export (otlp)"] == {"check": "audit export (otlp)", "status": "ok",
                                             "detail": f"{collector.url}/v1/logs answers"}
    (request,) = collector.received
    assert request.records() == []
    collector.status = 404
    _, checks = _doctor(cfg)
    assert checks["audit export (otlp)"]["status"] == "fail"
    assert "the collector answered 404" in checks["audit export (otlp)"]["detail"]


def _managed_export_run(tmp_path: Path, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    etc = _managed(tmp_path, {"jsonl": {"path": str(tmp_path / "siem" / "all.jsonl")}})
    project = tmp_path / "project"
    deny = write_script(project / "deny.sh", "cat >/dev/null; echo no >&2; exit 2")
    cfg = write_json(project / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "command", "command": str(deny)}]}]}})
    proc = run_cli(claude_bash("rm -rf /", cwd=str(project)), "--config", str(cfg),
                   "--managed-dir", str(etc), cwd=project, **kwargs)
    assert _denied(proc), proc.stderr
    assert "Traceback" not in proc.stderr
    return proc


def _hard_link_at_the_export(tmp_path: Path) -> tuple[Path, Path]:
    """A hard link to a shell profile planted where the managed export's file goes."""
    profile = tmp_path / "home" / ".bashrc"
    profile.parent.mkdir()
    profile.write_text("export PATH=$PATH:~/bin\n")
    exported = tmp_path / "siem" / "all.jsonl"
    exported.parent.mkdir()
    os.link(profile, exported)
    # The canary: the export's name and the profile are one file with two names.
    assert exported.stat().st_nlink == 2 and exported.samefile(profile)
    return exported, profile


@pytest.mark.slow
def test_a_hard_link_at_the_managed_export_is_moved_aside_and_the_export_goes_on(
        tmp_path: Path) -> None:
    """Not only with PROMPTHOOKS_DEBUG: a planted link must not silently stop the managed
    export. The link is moved aside, a new file begun where the log shipper looks, and one
    line says so; the next run finds a plain file and says nothing."""
    exported, profile = _hard_link_at_the_export(tmp_path)
    first = _managed_export_run(tmp_path)
    (said,) = [x for x in first.stderr.splitlines() if "audit export" in x]
    assert said.startswith(f"prompthooks: audit export to {exported}: {exported} is a file "
                           "with other names (hard links); refused; moved to all.jsonl.refused-")
    assert said.endswith(" and a new file begun")
    assert profile.read_text() == "export PATH=$PATH:~/bin\n"  # never written through
    (aside,) = exported.parent.glob("all.jsonl.refused-*")
    assert aside.samefile(profile)  # the planted name itself, moved
    assert exported.stat().st_nlink == 1 and not exported.samefile(profile)
    second = _managed_export_run(tmp_path)
    assert "audit export" not in second.stderr
    assert [x["decision"] for x in _lines(exported)] == ["deny", "deny"]


@pytest.mark.slow
def test_a_refused_export_file_that_cannot_be_replaced_is_said_on_every_run(
        tmp_path: Path) -> None:
    """Where the link cannot be moved aside (a folder the run may not write; root's override
    of file modes is dropped for the run), every run says its rows were not exported."""
    from ..helpers import file_modes_bind_root

    exported, profile = _hard_link_at_the_export(tmp_path)
    exported.parent.chmod(0o555)
    try:
        for _ in range(2):
            proc = _managed_export_run(tmp_path, preexec_fn=file_modes_bind_root)
            (said,) = [x for x in proc.stderr.splitlines() if "audit export" in x]
            assert "(hard links); refused; cannot begin a new file in its place (Permission " \
                   "denied): these rows are not exported" in said
    finally:
        exported.parent.chmod(0o755)
    assert profile.read_text() == "export PATH=$PATH:~/bin\n"
    assert exported.samefile(profile)


@pytest.mark.slow
@pytest.mark.parametrize("link", ["symlink", "hard link"])
def test_doctor_sees_a_link_at_the_export_file_as_run_does(tmp_path: Path, link: str) -> None:
    profile = tmp_path / "profile"
    profile.write_text("export PATH=$PATH:~/bin\n")
    cfg = _config(tmp_path, {"jsonl": {"path": "d.jsonl"}})
    assert _doctor(cfg, "--offline")[1]["audit export (jsonl)"]["status"] == "ok"  # canary
    if link == "symlink":
        (tmp_path / "d.jsonl").symlink_to(profile)
    else:
        os.link(profile, tmp_path / "d.jsonl")
    code, checks = _doctor(cfg, "--offline")
    assert code == 1
    assert checks["audit export (jsonl)"] == {
        "check": "audit export (jsonl)", "status": "fail",
        "detail": f"{tmp_path / 'd.jsonl'}: "
                  + ("a symbolic link" if link == "symlink"
                     else "a file with other names (hard links)")
                  + "; refused (run moves it aside and begins a new file there)"}


@pytest.mark.slow
def test_a_folder_at_the_export_path_is_never_moved_and_said_on_every_run(
        tmp_path: Path) -> None:
    """"." names the config's own folder: a path written wrong, which is not moved aside."""
    cfg = _config(tmp_path, {"jsonl": {"path": "."}})
    for _ in range(2):
        proc = run_cli(claude_bash("rm -rf /"), "--config", str(cfg))
        assert _denied(proc)
        (said,) = [x for x in proc.stderr.splitlines() if "audit export" in x]
        assert said.endswith("a folder, not a regular file; a folder is not moved aside: "
                             "these rows are not exported")
    assert cfg.exists() and not list(tmp_path.parent.glob("*.refused-*"))
