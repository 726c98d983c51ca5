"""The http executor: the event POSTed to a URL as JSON, the reply read as a command hook's.

The request body is exactly what a command hook of the same dialect reads on stdin; a 2xx
reply's body is read exactly as that dialect's command hook's stdout on exit 0. Anything else
is a hook error that the hook's failure policy decides (fail-open lets the event through,
fail-closed blocks it): another status (a redirect included: none is followed), no
connection, a body over the cap or unreadable. One deadline holds for the whole exchange.

What the request may carry is bounded by the config: a header value's ``$VAR`` or ``${VAR}``
is filled only from the variables the hook's ``allowedEnvVars`` lists (any other is sent
empty, as Claude Code does), and a managed hook reads no proxy, certificate or ``.netrc``
setting from the environment (an agent can set those), only the proxy its file names.

Under a cassette (``run --record``/``--replay``, ``prompthooks test``) the reply is recorded or
replayed as a model's is, keyed by the method, the URL and the body's digest (never a
header); a managed hook's never are.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..core.events import Event
from ..core.hook import Hook, origin, shown_url, variable_reference
from ..core.result import HookResult, Status
from ..errors import excerpt
from .command import OUTPUT_CAP, hook_input
from .replies import result_from_reply

if TYPE_CHECKING:
    import httpx

    from ..model.chain import ModelChain
    from ..model.recording import Cassette

_CHUNK = 65536


def header_values(hook: Hook, environ: Mapping[str, str]) -> dict[str, str]:
    """The request's headers: the hook's own with each listed variable filled in and every
    other reference emptied, then ``Content-Type`` (the body is always JSON). ValueError for
    a value that a variable made more than one line."""
    allowed = set(hook.allowed_env_vars)

    def fill(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        return environ.get(name, "") if name in allowed else ""

    out = {name: variable_reference().sub(fill, value) for name, value in hook.headers
           if name.lower() != "content-type"}
    for name, value in out.items():
        # A variable's value must not add a header or end the request's head.
        if any(c in value for c in "\r\n\0"):
            raise ValueError(f"header {name!r}: a variable it names holds a line break; "
                             "the request was not sent")
    out["Content-Type"] = "application/json"
    return out


# TLS contexts by the settings they were made from: making one reads the CA bundle (some
# 40 ms), which a run would otherwise pay for each hook, http:// ones too.
_contexts: dict[tuple[str | None, ...], Any] = {}
_contexts_lock = threading.Lock()


def _tls_context(trust_env: bool) -> Any:
    import httpx  # only when an http hook runs, or is preloaded: see _client

    # Only a hook that follows the environment reads its CA settings (as httpx would).
    key = (("env", os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))
           if trust_env else ("none",))
    with _contexts_lock:
        context = _contexts.get(key)
        if context is None:
            context = _contexts[key] = httpx.create_ssl_context(trust_env=trust_env)
        return context


def preload() -> None:
    """What a first http hook would load, done ahead (the resident process, before it forks
    runs): httpx and the TLS context of a managed hook and of one following this process's
    environment, and the codec a request's host name is encoded with."""
    import encodings.idna  # noqa: F401  # loading it ahead is this function's work

    for trust_env in (False, True):
        with contextlib.suppress(OSError):  # an unreadable bundle: said when a hook uses it
            _tls_context(trust_env)


def _client(hook: Hook, timeout: float) -> httpx.Client:
    # httpx only when an http hook runs: an event with command hooks only never imports it.
    import httpx

    managed = hook.managed
    proxy = hook.prompt_settings.proxy if managed and hook.prompt_settings else None
    return httpx.Client(trust_env=not managed, proxy=proxy, follow_redirects=False,
                        timeout=httpx.Timeout(timeout), verify=_tls_context(not managed))


def probe(hook: Hook, seconds: float) -> tuple[bool, str]:
    """Whether the hook's URL answers at all (a HEAD request, through the same proxy rule as
    the hook's own requests, no event sent), and what it said."""
    import httpx  # doctor's probe: see _client

    where = origin(hook.url or "")
    try:
        with _client(hook, seconds) as client:
            response = client.head(hook.url or "")
    except httpx.HTTPError as exc:
        return False, f"{where}: cannot reach it: {_describe(exc)}"
    return True, f"{where} answers (HTTP {response.status_code} to HEAD)"


def request_key(hook: Hook, body: bytes) -> str:
    """An http hook's cassette key: the method, the URL and a digest of the body; never a
    header (they may carry a token)."""
    blob = json.dumps({"method": "POST", "url": hook.url,
                       "body": hashlib.sha256(body).hexdigest()}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


class _Exchange:
    """One request, made in a thread of its own so that the hook's deadline holds however
    the server answers (httpx's timeouts are per operation, not for the whole exchange);
    answered from the cassette in use instead when it holds the reply."""

    def __init__(self, hook: Hook, event: Event, deadline: float,
                 cassette: Cassette | None) -> None:
        self.hook, self.event, self.deadline = hook, event, deadline
        self.cassette = cassette
        self.result: HookResult | None = None
        self.client: httpx.Client | None = None
        self.start = time.monotonic()

    def run(self) -> None:
        try:
            self.result = self._exchange()
        except Exception as exc:  # whatever httpx raises for a bad header, a TLS fault...
            self.result = self._error(f"cannot reach {origin(self.hook.url or '')}: "
                                      f"{_describe(exc)}")
        finally:
            if self.client is not None:
                self.client.close()

    def _error(self, why: str, status: Status = "error",
               http_status: int | None = None) -> HookResult:
        return HookResult(hook=self.hook, status=status, error=why, http_status=http_status,
                          duration=time.monotonic() - self.start)

    def _exchange(self) -> HookResult:
        body = hook_input(self.hook, self.event)
        try:
            headers = header_values(self.hook, os.environ)
        except ValueError as exc:
            return self._error(str(exc))
        if self.cassette is None:
            answer = self._post(body, headers)
            return answer if isinstance(answer, HookResult) else self._judge(*answer)
        # only with a cassette: its modules are loaded already, and the redaction pass (for
        # what is recorded) is otherwise the audit's, loaded after the reply
        from ..model.recording import CassetteError
        from ..redaction import redact

        key = request_key(self.hook, body)
        try:
            entry = self.cassette.recorded(key, self.hook)
        except CassetteError as exc:
            return self._error(str(exc))
        if entry is not None:
            status = entry.get("status")
            if not isinstance(status, int):
                return self._error(f"cassette {self.cassette.path}: entry {key} has no status")
            return self._judge(status, str(entry["reply"]).encode())._replace(replayed=True)
        answer = self._post(body, headers)
        if isinstance(answer, HookResult):  # no answer: nothing to record
            return answer
        status, data = answer
        # What is stored passes the redaction pass, the headers' values hidden too (a
        # service may echo them): a cassette is committed and read by people.
        self.cassette.keep(self.hook, {
            "key": key, "hook": self.hook.name, "kind": "http",
            "url": shown_url(self.hook.url or ""), "status": status,
            "reply": redact(data.decode("utf-8", "replace"), list(headers.values()))})
        return self._judge(status, data)

    def _post(self, body: bytes, headers: dict[str, str]) -> HookResult | tuple[int, bytes]:
        """The status and body the URL answered, or the error result for no answer."""
        import httpx  # see _client

        hook, where = self.hook, origin(self.hook.url or "")
        self.client = _client(hook, max(self.deadline - time.monotonic(), 0.001))
        try:
            with self.client.stream("POST", hook.url or "", content=body,
                                    headers=headers) as response:
                status = response.status_code
                data = bytearray()
                for chunk in response.iter_bytes(_CHUNK):
                    data += chunk
                    if len(data) > OUTPUT_CAP:
                        return self._error(f"{where} answered more than "
                                           f"{OUTPUT_CAP // (1024 * 1024)} MB",
                                           http_status=status)
                    if time.monotonic() >= self.deadline:
                        raise httpx.ReadTimeout("the reply was still coming")
        except httpx.TimeoutException:
            return self._error(f"{where} did not answer within "
                               f"{time.monotonic() - self.start:.1f}s", "timeout")
        except httpx.HTTPError as exc:
            return self._error(f"cannot reach {where}: {_describe(exc)}")
        return status, bytes(data)

    def _judge(self, status: int, data: bytes) -> HookResult:
        """The hook's result for what the URL answered: a 2xx body read as the dialect's
        command hook's stdout on exit 0, any other status an error."""
        where = origin(self.hook.url or "")
        if 300 <= status < 400:
            return self._error(f"{where} answered HTTP {status}, a redirect (not followed)",
                               http_status=status)
        if not 200 <= status < 300:
            detail = excerpt(data)
            return self._error(f"{where} answered HTTP {status}"
                               + (f": {detail}" if detail else ""), http_status=status)
        result = result_from_reply(self.hook, self.event, 0, data, b"",
                                   time.monotonic() - self.start)
        return result._replace(http_status=status)


def _describe(exc: BaseException) -> str:
    return excerpt(str(exc)) or type(exc).__name__


class HttpExecutor:
    """Runs the http hooks of one run; each exchange is abandoned at its deadline."""

    # An exchange past its deadline is given up at once: nothing has to be stopped.
    stop_grace = 0.1

    def __init__(self, models: ModelChain | None = None) -> None:
        self._running: set[_Exchange] = set()
        self._lock = threading.Lock()
        self._models = models

    def _cassette(self, hook: Hook) -> Cassette | None:
        # A managed hook's requests are never replayed from, nor recorded into, a file the
        # user or an agent can write (as its prompt hooks' model calls).
        if hook.managed or (self._models is None and not os.environ.get("PROMPTHOOKS_CASSETTE")):
            return None  # no cassette in use: the model chain's modules are not needed
        from ..model.chain import ModelChain  # the model chain only with a cassette, as above

        return (self._models or ModelChain()).cassette_in_use()

    def run(self, hook: Hook, event: Event, deadline: float) -> HookResult:
        """POST the event and read the reply; never raises for the hook's own faults."""
        try:
            cassette = self._cassette(hook)
        except Exception as exc:  # PROMPTHOOKS_CASSETTE_MODE of no mode: the hook's error
            return HookResult(hook=hook, status="error", error=str(exc))
        exchange = _Exchange(hook, event, deadline, cassette)
        thread = threading.Thread(target=exchange.run, daemon=True)
        with self._lock:
            self._running.add(exchange)
        try:
            thread.start()
            thread.join(max(deadline - time.monotonic(), 0))
        finally:
            with self._lock:
                self._running.discard(exchange)
        if exchange.result is not None:
            return exchange.result
        # The thread ends by itself: each of httpx's timeouts is at most the time that was
        # left when the request started.
        return HookResult(hook=hook, status="timeout", duration=time.monotonic() - exchange.start,
                          error=f"{origin(hook.url or '')} did not answer within "
                                f"{time.monotonic() - exchange.start:.1f}s")

    def stop(self) -> None:
        with self._lock:
            running = list(self._running)
        for exchange in running:
            client: Any = exchange.client
            if client is not None:
                client.close()
