"""http hooks through the engine and through `prompthooks run`: a real policy service on
127.0.0.1 scripted per test, real HTTP, the failure policy, the deadline, the caps, redirects,
proxies and the variables a header may carry."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from prompthooks.api import Outcome, dispatch, load_config

from ..fake_model import POLL
from ..helpers import (
    approve,
    claude_bash,
    claude_config,
    cline_event,
    cursor_config,
    cursor_event,
    reply,
    run_cli,
    write_json,
)

DENY = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                               "permissionDecisionReason": "the service says no"}}


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    delay: float = 0.0  # before the status line
    trickle: float = 0.0  # seconds between the body's bytes
    length: int | None = None  # a Content-Length other than the body's
    location: str | None = None


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Service:
    """A scripted policy service: the last scripted reply repeats; every request is kept."""

    url: str = ""
    replies: list[Reply] = field(default_factory=lambda: [Reply()])
    seen: list[Seen] = field(default_factory=list)
    connections: int = 0

    def script(self, *replies: Reply) -> None:
        self.replies = list(replies)

    def next_reply(self) -> Reply:
        return self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]


def _serve(state: Service) -> Iterator[Service]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def handle(self) -> None:
            state.connections += 1
            super().handle()

        def _answer(self) -> None:
            size = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(size)
            state.seen.append(Seen(self.command, self.path,
                                   {k.lower(): v for k, v in self.headers.items()}, body))
            answer = state.next_reply()
            time.sleep(answer.delay)
            try:
                self.send_response(answer.status)
                if answer.location:
                    self.send_header("Location", answer.location)
                self.send_header("Content-Length", str(answer.length if answer.length
                                                       is not None else len(answer.body)))
                self.end_headers()
                if answer.trickle:
                    for byte in answer.body:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(answer.trickle)
                else:
                    self.wfile.write(answer.body)
            except OSError:  # the client gave up: as it should
                pass

        do_POST = do_GET = do_HEAD = _answer

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, args=(POLL,), daemon=True)
    thread.start()
    yield state
    server.shutdown()
    server.server_close()


@pytest.fixture
def service() -> Iterator[Service]:
    yield from _serve(Service())


@pytest.fixture
def other() -> Iterator[Service]:
    """A second service: another origin (its port differs)."""
    yield from _serve(Service())


def _hook(url: str, **extra: Any) -> dict[str, Any]:
    return {"type": "http", "url": url, **extra}


def _run(tmp_path: Path, *handlers: dict[str, Any], event: dict[str, Any] | None = None,
         budget: float = 30) -> Outcome:
    cfg = claude_config(tmp_path / "hooks.json", "PreToolUse", *handlers, matcher="Bash")
    return dispatch(event or claude_bash("rm -rf /"), config_paths=[str(cfg)], budget=budget)


@pytest.mark.slow
def test_the_event_is_posted_as_json_and_a_2xx_json_reply_blocks(
        tmp_path: Path, service: Service) -> None:
    service.script(Reply(body=json.dumps(DENY).encode()))
    outcome = _run(tmp_path, _hook(service.url + "/check"))
    assert outcome.decision.permission == "deny"
    assert outcome.decision.reason == "the service says no"
    (seen,) = service.seen
    assert seen.method == "POST" and seen.path == "/check"
    assert seen.headers["content-type"] == "application/json"
    # The body is exactly what a command hook of the dialect reads on stdin.
    assert seen.body == outcome.event.raw_bytes


def test_an_empty_2xx_is_no_objection(tmp_path: Path, service: Service) -> None:
    service.script(Reply(status=204))
    outcome = _run(tmp_path, _hook(service.url, failClosed=True))
    assert outcome.decision.permission is None and not outcome.decision.results[0].failed


@pytest.mark.parametrize("fail_closed", [False, True])
def test_a_non_2xx_answer_goes_by_the_failure_policy(
        tmp_path: Path, service: Service, fail_closed: bool) -> None:
    # A 500 whose body even says "allow" is not read: only a 2xx body is a reply.
    service.script(Reply(status=500, body=b'{"decision": "approve"}'))
    outcome = _run(tmp_path, _hook(service.url, failClosed=fail_closed))
    (result,) = outcome.decision.results
    assert result.status == "error" and "answered HTTP 500" in (result.error or "")
    assert len(service.seen) == 1
    if fail_closed:
        assert outcome.decision.permission == "deny"
        assert "HTTP 500" in (outcome.decision.reason or "")
    else:
        assert outcome.decision.permission is None


def test_nothing_listening_under_fail_closed_blocks_with_one_line(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again before the hook runs: nothing listens
    outcome = _run(tmp_path, _hook(f"http://user:pw@127.0.0.1:{port}/x?token=t0k3n",
                                   failClosed=True))
    assert outcome.decision.permission == "deny"
    reason = outcome.decision.reason or ""
    assert f"cannot reach http://127.0.0.1:{port}" in reason and "\n" not in reason
    assert "t0k3n" not in reason and "pw" not in reason


def test_a_2xx_body_that_is_not_a_reply_is_an_error(tmp_path: Path, service: Service) -> None:
    service.script(Reply(body=b'{"hookSpecificOutput": {"permissionDecision": "perhaps"}}'))
    outcome = _run(tmp_path, _hook(service.url, failClosed=True))
    assert outcome.decision.permission == "deny"
    assert "unknown value" in (outcome.decision.results[0].error or "")


@pytest.mark.slow
def test_a_server_that_never_answers_is_given_up_at_the_hook_deadline(
        tmp_path: Path, service: Service) -> None:
    service.script(Reply(delay=20, body=json.dumps(DENY).encode()))
    start = time.monotonic()
    outcome = _run(tmp_path, _hook(service.url, timeout=1, failClosed=True), budget=30)
    took = time.monotonic() - start
    (result,) = outcome.decision.results
    assert len(service.seen) == 1  # the request reached the service
    assert result.status == "timeout" and outcome.decision.permission == "deny"
    assert took < 10  # well before the server's 20 s and the run's 30 s budget


@pytest.mark.slow
def test_a_trickling_reply_does_not_stretch_the_deadline(
        tmp_path: Path, service: Service) -> None:
    # Each byte comes well within any per-read timeout, the whole far past the hook's.
    service.script(Reply(body=json.dumps(DENY).encode(), trickle=0.1))
    start = time.monotonic()
    outcome = _run(tmp_path, _hook(service.url, timeout=1), budget=30)
    took = time.monotonic() - start
    (result,) = outcome.decision.results
    assert len(service.seen) == 1
    assert result.status == "timeout" and outcome.decision.permission is None
    assert took < 8  # the whole body would take over 10 s


def test_a_huge_body_is_cut_off_as_an_error(tmp_path: Path, service: Service) -> None:
    service.script(Reply(body=b" " * (3 * 1024 * 1024)))
    outcome = _run(tmp_path, _hook(service.url, failClosed=True))
    (result,) = outcome.decision.results
    assert len(service.seen) == 1
    assert result.status == "error" and "more than 1 MB" in (result.error or "")
    assert outcome.decision.permission == "deny"


def test_a_redirect_is_not_followed_to_another_origin_nor_the_same(
        tmp_path: Path, service: Service, other: Service) -> None:
    other.script(Reply(body=b'{"decision": "approve"}'))
    service.script(Reply(status=307, location=other.url + "/steal"))
    outcome = _run(tmp_path, _hook(service.url, failClosed=True))
    assert len(service.seen) == 1  # canary: the redirect was sent
    assert other.seen == [] and other.connections == 0
    assert outcome.decision.permission == "deny"
    assert "a redirect (not followed)" in (outcome.decision.results[0].error or "")
    # The same origin's other path is not followed to either.
    service.script(Reply(status=308, location="/elsewhere"), Reply(body=json.dumps(
        DENY).encode()))
    outcome = _run(tmp_path, _hook(service.url + "/first"))
    assert [s.path for s in service.seen] == ["/", "/first"]
    assert outcome.decision.permission is None and outcome.decision.results[0].failed


def test_headers_carry_only_the_allow_listed_variables(
        tmp_path: Path, service: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POLICY_TOKEN", "tok-allowed-123")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret-never-sent-456")
    outcome = _run(tmp_path, _hook(
        service.url, allowedEnvVars=["POLICY_TOKEN"],
        headers={"Authorization": "Bearer ${POLICY_TOKEN}", "X-Leak": "[$AWS_SECRET_ACCESS_KEY]",
                 "X-Plain": "team-a"}))
    assert not outcome.decision.results[0].failed
    (seen,) = service.seen
    assert seen.headers["authorization"] == "Bearer tok-allowed-123"  # canary: it is filled
    assert seen.headers["x-leak"] == "[]"
    assert seen.headers["x-plain"] == "team-a"
    assert all("secret-never-sent" not in v for v in seen.headers.values())
    assert b"secret-never-sent" not in seen.body


def test_a_header_naming_an_unlisted_variable_is_warned_of(tmp_path: Path) -> None:
    cfg = claude_config(tmp_path / "hooks.json", "PreToolUse", _hook(
        "http://127.0.0.1:9/", headers={"X-Key": "$SECRET"}))
    config = load_config([str(cfg)], str(tmp_path))
    assert any("names $SECRET, which allowedEnvVars does not list" in w
               for w in config.loaded.warnings)
    assert not any("unencrypted" in w for w in config.loaded.warnings)
    cfg = claude_config(tmp_path / "hooks.json", "PreToolUse",
                        _hook("http://policy.example.com/check"),
                        _hook("https://policy.example.com/check"))
    warned = [w for w in load_config([str(cfg)], str(tmp_path)).loaded.warnings
              if "unencrypted" in w]
    assert len(warned) == 1 and "hooks[0]: url is plain http:// to another machine" in warned[0]


@pytest.mark.parametrize(("url", "headers", "said"), [
    ("file:///etc/passwd", {}, "an http hook needs a 'url'"),
    ("ftp://127.0.0.1/", {}, "an http hook needs a 'url'"),
    ("/relative", {}, "an http hook needs a 'url'"),
    ("http://", {}, "an http hook needs a 'url'"),
    ("http://127.0.0.1:99999/", {}, "an http hook needs a 'url'"),
    ("http://127.0.0.1:9/", {"Bad Name": "x"}, "is not a valid HTTP header name"),
    ("http://127.0.0.1:9/", {"X-Two": "a\r\nX-Injected: 1"}, "a value is one line")])
def test_a_bad_url_or_header_fails_the_file(tmp_path: Path, url: str, headers: dict[str, str],
                                            said: str) -> None:
    cfg = claude_config(tmp_path / "hooks.json", "PreToolUse",
                        _hook(url, failClosed=True, headers=headers), matcher="Bash")
    outcome = dispatch(claude_bash("ls"), config_paths=[str(cfg)], budget=30)
    assert outcome.decision.permission == "deny"
    assert said in (outcome.decision.reason or "")


class _Proxy:
    """A TCP server that records every connection and answers 502: a proxy an agent set."""

    def __init__(self) -> None:
        self.connections = 0
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            with conn:
                conn.recv(65536)
                conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")


@pytest.fixture
def proxy() -> Iterator[_Proxy]:
    found = _Proxy()
    yield found
    found.sock.close()


def _proxied(monkeypatch: pytest.MonkeyPatch, proxy: _Proxy) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                 "all_proxy"):
        monkeypatch.setenv(name, proxy.url)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)


def test_a_managed_http_hook_ignores_the_environments_proxy(
        tmp_path: Path, service: Service, proxy: _Proxy,
        monkeypatch: pytest.MonkeyPatch) -> None:
    _proxied(monkeypatch, proxy)
    service.script(Reply(body=json.dumps(DENY).encode()))
    # Canary: a project's http hook follows the proxy variables, so they reach the client.
    outcome = _run(tmp_path, _hook(service.url))
    assert proxy.connections == 1 and service.seen == []
    assert "HTTP 502" in (outcome.decision.results[0].error or "")
    etc = claude_config(tmp_path / "etc" / "hooks.json", "PreToolUse", _hook(service.url),
                        matcher="Bash").parent
    outcome = dispatch(claude_bash("ls"), managed_dir=etc, budget=30)
    assert outcome.decision.permission == "deny"
    assert proxy.connections == 1 and len(service.seen) == 1


def test_a_managed_http_hook_uses_the_proxy_its_file_names(
        tmp_path: Path, service: Service, proxy: _Proxy) -> None:
    etc = tmp_path / "etc"
    write_json(etc / "hooks.json", {"prompthooks": {"proxy": proxy.url}, "hooks": {
        "PreToolUse": [{"hooks": [_hook(service.url, failClosed=True)]}]}})
    outcome = dispatch(claude_bash("ls"), managed_dir=etc, budget=30)
    assert proxy.connections == 1 and service.seen == []
    assert outcome.decision.permission == "deny"


# Each host's dialect end to end through `prompthooks run`, a real process.

@pytest.mark.slow
def test_claude_code_run(tmp_path: Path, service: Service) -> None:
    service.script(Reply(body=json.dumps(DENY).encode()))
    claude_config(tmp_path / ".prompthooks" / "hooks.json", "PreToolUse", _hook(service.url),
                  matcher="Bash")
    approve(tmp_path / ".prompthooks")
    proc = run_cli(claude_bash("rm -rf /", cwd=str(tmp_path)), "--managed-dir",
                   str(tmp_path / "none"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    specific = reply(proc)["hookSpecificOutput"]
    assert specific["permissionDecision"] == "deny"
    assert specific["permissionDecisionReason"] == "the service says no"
    assert json.loads(service.seen[0].body)["tool_input"]["command"] == "rm -rf /"


@pytest.mark.slow
def test_cursor_run(tmp_path: Path, service: Service) -> None:
    service.script(Reply(body=json.dumps({"permission": "deny",
                                          "agent_message": "cursor: no"}).encode()))
    cursor_config(tmp_path / ".prompthooks" / "hooks.json", "beforeShellExecution",
                  _hook(service.url))
    approve(tmp_path / ".prompthooks")
    event = cursor_event("beforeShellExecution", str(tmp_path), command="rm -rf /",
                         cwd=str(tmp_path))
    proc = run_cli(event, "--managed-dir", str(tmp_path / "none"), cwd=tmp_path)
    assert proc.returncode in (0, 2), proc.stderr
    out = reply(proc)
    assert out["permission"] == "deny" and out["agent_message"] == "cursor: no"
    assert json.loads(service.seen[0].body)["command"] == "rm -rf /"


@pytest.mark.slow
def test_cline_run(tmp_path: Path, service: Service) -> None:
    # Cline's hooks come from prompthooks' own file, here in Claude Code's style: the hook
    # gets the event translated into that dialect.
    service.script(Reply(body=json.dumps(DENY).encode()))
    claude_config(tmp_path / ".prompthooks" / "hooks.json", "PreToolUse", _hook(service.url),
                  matcher="Bash")
    approve(tmp_path / ".prompthooks")
    event = cline_event("PreToolUse", str(tmp_path), toolName="execute_command",
                        parameters={"command": "rm -rf /"})
    proc = run_cli(event, "--managed-dir", str(tmp_path / "none"), cwd=tmp_path)
    out = reply(proc)
    assert out["cancel"] is True and "the service says no" in out["errorMessage"]
    sent = json.loads(service.seen[0].body)
    assert sent["tool_name"] == "Bash" and sent["tool_input"]["command"] == "rm -rf /"


# What an approval covers, the audit row, explain and doctor.

def _project(tmp_path: Path, url: str, **extra: Any) -> Path:
    project = tmp_path / "project"
    claude_config(project / ".prompthooks" / "hooks.json", "PreToolUse", _hook(url, **extra),
                  matcher="Bash")
    return project


def test_a_changed_url_needs_approval_again(tmp_path: Path, service: Service,
                                            other: Service) -> None:
    service.script(Reply(body=json.dumps(DENY).encode()))
    project = _project(tmp_path, service.url)
    approve(project / ".prompthooks")
    event = claude_bash("ls", cwd=str(project))
    first = dispatch(event, managed_dir=tmp_path / "none", budget=30)
    assert first.decision.permission == "deny" and len(service.seen) == 1  # canary: it ran
    # The agent points the approved hook at a service of its own.
    _project(tmp_path, other.url)
    second = dispatch(event, managed_dir=tmp_path / "none", budget=30)
    assert other.seen == [] and other.connections == 0 and len(service.seen) == 1
    assert all(r.hook.kind != "http" for r in second.decision.results)


@pytest.mark.slow
def test_the_audit_row_names_the_url_and_status_and_no_header_value(
        tmp_path: Path, service: Service, isolated_home: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlite3

    monkeypatch.setenv("POLICY_TOKEN", "tok-in-header-789")
    service.script(Reply(status=503, body=b"down for maintenance"))
    project = _project(tmp_path, service.url + "/check?key=q-secret-1", failClosed=True,
                       headers={"Authorization": "Bearer $POLICY_TOKEN"},
                       allowedEnvVars=["POLICY_TOKEN"])
    approve(project / ".prompthooks")
    proc = run_cli(claude_bash("ls", cwd=str(project)), "--managed-dir",
                   str(tmp_path / "none"), cwd=project)
    assert reply(proc)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert service.seen[0].headers["authorization"] == "Bearer tok-in-header-789"
    db = isolated_home / ".local" / "share" / "prompthooks" / "audit.db"
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    (row,) = [dict(r) for r in conn.execute("SELECT * FROM decisions")]
    conn.close()
    assert row["kind"] == "http" and row["http_status"] == 503
    assert row["url"] == f"{service.url}/check?..."
    assert row["status"] == "error" and row["decision"] == "deny"
    assert row["duration_ms"] > 0
    text = json.dumps(row)
    assert "tok-in-header-789" not in text and "q-secret-1" not in text


@pytest.mark.slow
def test_explain_shows_where_it_posts_and_contacts_nothing(
        tmp_path: Path, service: Service) -> None:
    import subprocess
    import sys

    project = _project(tmp_path, service.url + "/check", timeout=7,
                       headers={"Authorization": "Bearer $POLICY_TOKEN"},
                       allowedEnvVars=["POLICY_TOKEN"])
    approve(project / ".prompthooks")
    proc = subprocess.run([sys.executable, "-m", "prompthooks", "explain", "--managed-dir",
                           str(tmp_path / "none")],
                          input=json.dumps(claude_bash("ls", cwd=str(project))), text=True,
                          capture_output=True, cwd=project, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert f"RUNS  http {service.url}" in proc.stdout and "timeout 7 s" in proc.stdout
    assert f"POST {service.url}/check; proxy: the environment's proxy variables" in proc.stdout
    assert "headers: Authorization; variables they may fill: POLICY_TOKEN" in proc.stdout
    assert service.connections == 0


def test_doctor_says_whether_the_url_answers(tmp_path: Path, service: Service) -> None:
    from prompthooks.api import load_config
    from prompthooks.devtools.doctor import http_checks

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}/"
    cfg = claude_config(tmp_path / "hooks.json", "PreToolUse", _hook(service.url),
                        _hook(dead, failClosed=True), matcher="Bash")
    config = load_config([str(cfg)], str(tmp_path), managed_dir=tmp_path / "none")
    up, down = list(http_checks(config, offline=False))
    assert up["status"] == "ok" and "answers (HTTP 200 to HEAD)" in up["detail"]
    assert [s.method for s in service.seen] == ["HEAD"]
    assert down["status"] == "fail" and "cannot reach it" in down["detail"]
    assert "block every event" in down["detail"]
    offline = list(http_checks(config, offline=True))
    assert all("not contacted" in c["detail"] for c in offline) and len(service.seen) == 1


@pytest.mark.slow
def test_recorded_then_replayed_offline(tmp_path: Path, service: Service,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POLICY_TOKEN", "tok-never-recorded-321")
    # The service echoes the header's token in its reason: the recording must hide it.
    service.script(Reply(body=json.dumps({**DENY, "hookSpecificOutput": {
        **DENY["hookSpecificOutput"],
        "permissionDecisionReason": "no (tok-never-recorded-321)"}}).encode()))
    cfg = claude_config(tmp_path / "hooks.json", "PreToolUse", _hook(
        service.url + "/check", headers={"Authorization": "Bearer $POLICY_TOKEN"},
        allowedEnvVars=["POLICY_TOKEN"]), matcher="Bash")
    tape = tmp_path / "tape.yaml"
    event = claude_bash("rm -rf /")
    recorded = run_cli(event, "--config", str(cfg), "--managed-dir", str(tmp_path / "none"),
                       "--record", str(tape))
    assert reply(recorded)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert len(service.seen) == 1
    text = tape.read_text()
    assert "tok-never-recorded-321" not in text and "status: 200" in text
    # Offline: the service is gone; the replay answers as it did.
    service.script(Reply(status=500))
    replayed = run_cli(event, "--config", str(cfg), "--managed-dir", str(tmp_path / "none"),
                       "--replay", str(tape))
    assert len(service.seen) == 1  # not contacted
    assert reply(replayed)["hookSpecificOutput"]["permissionDecision"] == "deny"
    # Another event has no recording: under replay that is the hook's error, never a call.
    missed = run_cli(claude_bash("ls"), "--config", str(cfg), "--managed-dir",
                     str(tmp_path / "none"), "--replay", str(tape))
    assert len(service.seen) == 1
    assert "no recorded reply for hook" in missed.stderr + missed.stdout


def test_the_shipped_example_service_and_config(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess
    import sys

    from ..helpers import REPO

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    service = subprocess.Popen(
        [sys.executable, str(REPO / "config" / "examples" / "policy_service.py"), str(port)],
        stdout=subprocess.PIPE, text=True, env={"POLICY_TOKEN": "team-token-1"})
    try:
        assert service.stdout is not None and "policy service on" in service.stdout.readline()
        data = json.loads((REPO / "config" / "examples" / "http-hook.json").read_text())
        handler = data["hooks"]["PreToolUse"][0]["hooks"][0]
        handler["url"] = handler["url"].replace(":8700", f":{port}")
        cfg = write_json(tmp_path / "hooks.json", data)
        monkeypatch.setenv("POLICY_TOKEN", "team-token-1")

        def decide(command: str) -> Outcome:
            return dispatch(claude_bash(command), config_paths=[str(cfg)],
                            managed_dir=tmp_path / "none", budget=30)

        blocked = decide("rm -rf /")
        assert blocked.decision.permission == "deny"
        assert "recursive deletes" in (blocked.decision.reason or "")
        assert decide("rm -rf ./build").decision.permission is None
        assert not decide("ls").decision.results[0].failed
        # Without the token the service refuses, and the fail-closed hook blocks.
        monkeypatch.setenv("POLICY_TOKEN", "wrong")
        refused = decide("ls")
        assert refused.decision.permission == "deny"
        assert "answered HTTP 401" in (refused.decision.reason or "")
    finally:
        service.terminate()
        service.wait(10)


@pytest.mark.slow
def test_prompthooks_test_records_then_replays_an_http_hook(tmp_path: Path,
                                                           service: Service) -> None:
    import subprocess
    import sys

    service.script(Reply(body=json.dumps(DENY).encode()))
    claude_config(tmp_path / "hooks.json", "PreToolUse", _hook(service.url + "/check"),
                  matcher="Bash")
    cases = tmp_path / "cases.yaml"
    cases.write_text(
        "config: hooks.json\n"
        "cases:\n"
        "  - name: the service blocks it\n"
        "    event: {session_id: s, hook_event_name: PreToolUse, cwd: /tmp,\n"
        "            tool_name: Bash, tool_input: {command: 'rm -rf /'}}\n"
        "    expect: {decision: deny, reason_contains: service}\n")

    def test(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "prompthooks", "test", str(cases), *args],
                              capture_output=True, text=True, cwd=tmp_path, timeout=120)

    recorded = test("--record")
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    assert len(service.seen) == 1 and "kind: http" in (tmp_path / "cases.cassette.yaml"
                                                       ).read_text()
    service.script(Reply(status=500))
    replayed = test()
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "1 passed" in replayed.stdout and len(service.seen) == 1


@pytest.mark.slow
def test_validate_names_each_http_problem(tmp_path: Path) -> None:
    import subprocess
    import sys

    folder = tmp_path / "cfg"
    write_json(folder / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        _hook("http://127.0.0.1:9/", headers={"X-Key": "${SECRET}"}, allowedEnvVars=["TOKEN"],
              urll="typo"),
        _hook("gopher://127.0.0.1/")]}]}})
    proc = subprocess.run([sys.executable, "-m", "prompthooks", "validate", "--config",
                           str(folder / "hooks.json")], capture_output=True, text=True,
                          cwd=tmp_path, timeout=60)
    assert proc.returncode == 1
    assert "hooks[1]: an http hook needs a 'url': an absolute http:// or https:// URL" in (
        proc.stdout)
    folder.joinpath("hooks.json").write_text(json.dumps({"hooks": {"PreToolUse": [{"hooks": [
        _hook("http://127.0.0.1:9/", headers={"X-Key": "${SECRET}"}, allowedEnvVars=["TOKEN"],
              urll="typo")]}]}}))
    proc = subprocess.run([sys.executable, "-m", "prompthooks", "validate", "--config",
                           str(folder / "hooks.json")], capture_output=True, text=True,
                          cwd=tmp_path, timeout=60)
    assert proc.returncode == 0, proc.stdout
    assert "unknown key 'urll' ignored" in proc.stdout
    assert "header 'X-Key' names $SECRET, which allowedEnvVars does not list" in proc.stdout


def test_a_variable_cannot_inject_a_header(tmp_path: Path, service: Service,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POLICY_TOKEN", "tok\r\nX-Injected: 1")
    outcome = _run(tmp_path, _hook(service.url, failClosed=True, allowedEnvVars=["POLICY_TOKEN"],
                                   headers={"Authorization": "Bearer $POLICY_TOKEN"}))
    (result,) = outcome.decision.results
    # Canary: the listed variable's value was read into the header, and refused there.
    assert result.error == ("header 'Authorization': a variable it names holds a line break; "
                            "the request was not sent")
    assert outcome.decision.permission == "deny"
    assert service.seen == [] and service.connections == 0


_IMPORTS = """
import sys
from prompthooks.cli import main
code = main(["run", "--config", sys.argv[1], "--managed-dir", sys.argv[2]])
print("LOADED=" + ",".join(sorted(m for m in sys.modules if m.split(".")[0] in
      ("httpx", "litellm", "openai") or m == "prompthooks.executors.http")), file=sys.stderr)
sys.exit(code)
"""


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["command", "http"])
def test_httpx_is_imported_only_when_an_http_hook_runs(tmp_path: Path, service: Service,
                                                       kind: str) -> None:
    import subprocess
    import sys

    handler = _hook(service.url) if kind == "http" else {"command": "exit 0"}
    cfg = claude_config(tmp_path / "hooks.json", "PreToolUse", handler, matcher="Bash")
    proc = subprocess.run([sys.executable, "-c", _IMPORTS, str(cfg), str(tmp_path / "none")],
                          input=json.dumps(claude_bash("ls")), capture_output=True, text=True,
                          timeout=60)
    loaded = next(line for line in proc.stderr.splitlines() if line.startswith("LOADED="))
    names = loaded.removeprefix("LOADED=").split(",")
    assert not any(n.split(".")[0] in ("litellm", "openai") for n in names)
    if kind == "http":
        assert "httpx" in names and len(service.seen) == 1  # canary: the probe sees imports
    else:
        assert names == [""]


@pytest.mark.slow
def test_a_forked_http_hook_run_imports_nothing(tmp_path: Path, service: Service) -> None:
    # The resident process warms httpx and this executor before it forks: a run pays neither.
    from ..dispatcher.test_warm import _forked_run

    service.script(Reply(body=json.dumps(DENY).encode()))
    out, imported = _forked_run(tmp_path, _hook(service.url))
    assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert len(service.seen) == 1  # the request was made in the forked run
    assert imported == set()
