"""How a model call runs and fails: the shared event loop both paths (direct and litellm) run
their calls on, the one deadline and the retries of a call, the one line a failure reads as
(whichever client met it), and the endpoints remembered for a while as dead (nothing listening,
a name that does not resolve) so that no run pays for them again."""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
import time
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

from .. import digests, paths
from ..errors import excerpt

if TYPE_CHECKING:
    import asyncio

    from .endpoint import Endpoint, ModelReply


# --- A failure in one line -----------------------------------------------------------------------
# What went wrong with a model call, in one line, and whether another attempt may help.
#
# Both paths (direct.py and litellm_client.py) describe a failure here, so a 401 reads the same
# whichever client met it. The line names the fault in our words and adds the server's own
# message when it sent one (``error.message`` or ``detail`` of a JSON body), never a traceback
# or a whole HTML page. A refused connection and a name that does not resolve are not retried:
# nothing will be listening a few hundred milliseconds later, and every retry would spend the
# hook's deadline (remembered for a while, below). A ``Retry-After`` is honoured: no retry
# starts that could not finish before the deadline.

# No retry starts with less time left than this: it could only time out, and the error would
# then say "did not answer in time" instead of what every earlier attempt ran into.
MIN_ATTEMPT = 0.25
_MESSAGE_CHARS = 200
TIMEOUT = "the model did not answer in time"
REFUSED = "cannot connect to the model endpoint (connection refused)"
UNRESOLVED = "cannot connect to the model endpoint (its host name does not resolve)"
UNTRUSTED = "cannot connect to the model endpoint (its TLS certificate is not trusted)"
DEAD = (REFUSED, UNRESOLVED)  # not retried, and remembered (below)


@dataclass(frozen=True, slots=True)
class Failure:
    """One failed attempt, described."""

    what: str  # our words, one line
    retry: bool = False
    dead: bool = False  # nothing listens there, or the name does not resolve: remembered
    detail: str = ""  # the server's own message, one line
    retry_after: float | None = None  # seconds the endpoint asked to wait

    @property
    def timeout(self) -> bool:
        return self.what == TIMEOUT


def _budget(text: str) -> bool:
    low = text.lower()
    return "budget" in low and ("exceed" in low or "exhaust" in low)


def from_status(status: int, body: str, headers: Mapping[str, str] | None = None) -> Failure:
    """The failure an HTTP error status stands for (a LiteLLM Proxy's gateway errors apart)."""
    detail = server_message(body)
    retry_after = parse_retry_after(headers)
    if "no connected db" in body.lower():
        return Failure(f"the LiteLLM Proxy has no database connected, so it cannot check "
                       f"keys or budgets ({status})", detail=detail)
    if _budget(body):
        return Failure(f"the LiteLLM Proxy's budget for this key or team is exceeded "
                       f"({status})", detail=detail)
    if status == 429:
        return Failure("rate limited (429)", True, detail=detail, retry_after=retry_after)
    if status == 401:
        return Failure("authentication failed (401); check the API key", detail=detail)
    if status == 403:
        return Failure("permission denied (403); the key may not use this model or endpoint",
                       detail=detail)
    if status == 404:
        return Failure("not found (404); check the model name and api_base", detail=detail)
    if status == 422:
        return Failure("the request was refused as invalid (422)", detail=detail)
    if status == 408:
        return Failure(TIMEOUT, True, detail=detail)
    if 400 <= status < 500:
        return Failure(f"the request was refused ({status})", detail=detail)
    if status >= 500:
        # A 500 naming the request's response format is a refusal of the request
        # (llama-cpp-python's server validates so), not a failing server: the same request
        # would fail the same way (verdict.py asks again without the schema).
        refusal = "response_format" in body or "json_schema" in body
        return Failure(f"the model endpoint failed ({status})", not refusal, detail=detail,
                       retry_after=retry_after)
    return Failure(f"the model call failed ({status})", detail=detail)


def connection_failure(exc: BaseException) -> Failure:
    """A connection that could not be made: refused, or a host name that does not resolve
    (neither retried), or something else on the way (retried)."""
    text = _chain_text(exc).lower()
    if any(s in text for s in ("name or service not known", "nodename nor servname",
                               "temporary failure in name resolution", "name resolution",
                               "no address associated", "getaddrinfo failed")):
        return Failure(UNRESOLVED, dead=True)
    if any(s in text for s in ("connection refused", "errno 111", "connect call failed",
                               "network is unreachable", "no route to host")):
        return Failure(REFUSED, dead=True)
    if "certificate verify failed" in text:  # the same certificate on every attempt
        return Failure(UNTRUSTED)
    return Failure("cannot connect to the model endpoint", True)


def _chain_text(exc: BaseException) -> str:
    parts = []
    link: BaseException | None = exc
    for _ in range(10):
        if link is None:
            break
        parts.append(f"{type(link).__name__}: {link}")
        link = link.__cause__ or link.__context__
    return " | ".join(parts)


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds from ``Retry-After`` (seconds or an HTTP date) or ``retry-after-ms``."""
    if not headers:
        return None
    getter: Callable[[str], Any] = headers.get
    millis = getter("retry-after-ms")
    if millis is not None:
        try:
            return max(float(millis) / 1000, 0.0)
        except ValueError:
            pass
    value = getter("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    import email.utils  # only for a Retry-After given as a date

    try:
        when = email.utils.parsedate_to_datetime(str(value)).timestamp()
    except (TypeError, ValueError, IndexError):
        return None
    return max(when - time.time(), 0.0)


_LITELLM_NOISE = re.compile(r"^(litellm\.\w+:\s*)?(\w+Error:\s*)?(\w+Exception\s*-\s*)?")


def server_message(body: str) -> str:
    """The server's own message in an error body, one line (empty when there is none)."""
    text = _LITELLM_NOISE.sub("", body.strip())
    if not text or text.startswith("<"):
        return ""  # nothing, or an HTML page: our words say enough
    found = _json_message(text)
    if found is None:
        start = text.find("{")
        found = _json_message(text[start:]) if start >= 0 else None
    line = found if found is not None else text
    line = _LITELLM_NOISE.sub("", " ".join(line.split()))
    if "Traceback (most recent call last)" in line:
        line = line.split("Traceback (most recent call last)", 1)[0].strip()
    return excerpt(line, _MESSAGE_CHARS)


def _json_message(text: str) -> str | None:
    try:
        data = json.loads(text)
    except ValueError:
        try:
            import ast  # only for a body that is not JSON

            data = ast.literal_eval(text)  # litellm quotes a body as a Python dict
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None
    for _ in range(3):
        if isinstance(data, dict):
            inner = data.get("error", data.get("detail", data.get("message")))
            if isinstance(inner, str):
                return inner
            data = inner
    return None


def message(failure: Failure, model: str, attempts: int, redact: Callable[[str], str],
            deadline: float | None = None) -> str:
    """The one line a hook error shows."""
    tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
    line = f"{failure.what} ({model}, {tries})"
    if (failure.retry and failure.retry_after and deadline is not None
            and time.monotonic() + failure.retry_after + MIN_ATTEMPT >= deadline):
        line += f"; it asks to wait {failure.retry_after:g} s, past the hook's deadline"
    detail = redact(failure.detail) if failure.detail else ""
    return f"{line}: {detail}" if detail else line


def redact_error(text: str, endpoint: Endpoint) -> str:
    """A model error's text, fit to show: the redaction pass, the key in use hidden too."""
    from ..redaction import redact  # its patterns: only for an error shown

    return redact(text, extra=[endpoint.api_key])


def dead_message(seen: tuple[str, float], model: str) -> str:
    """The line for an endpoint remembered as unreachable: the call is not tried."""
    why, age = seen
    return (f"{why} ({model}; seen {age:.0f} s ago, not tried again for "
            f"{DEAD_SECONDS:g} s)")


def retrying(describe: Callable[[BaseException], Failure], deadline: float) -> Any:
    """tenacity's retry loop for one call: jittered backoff, never shorter than what the
    endpoint asked for, and no attempt started that could not finish before ``deadline``."""
    # tenacity: only for a call made (a replay, a cached verdict and the audit need none)
    from tenacity import AsyncRetrying, RetryCallState, retry_if_exception
    from tenacity.wait import wait_random_exponential

    backoff = wait_random_exponential(multiplier=0.25, max=4)

    def wait(state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        asked = describe(exc).retry_after if exc is not None else None
        return max(backoff(state), asked or 0.0)

    def stop(state: RetryCallState) -> bool:
        return time.monotonic() + (state.upcoming_sleep or 0) + MIN_ATTEMPT >= deadline

    return AsyncRetrying(retry=retry_if_exception(lambda e: describe(e).retry),
                         wait=wait, stop=stop, reraise=True)




NO_KEY = "no key for "
UNKNOWN_MODEL = "the model name is unknown"


_SET_UP = (("authentication failed; no API key", "no API key"),
           ("authentication failed (401)", "a key refused (401)"),
           ("permission denied (403)", "a key not allowed (403)"),
           ("not found (404)", "no such model (404)"),
           (UNKNOWN_MODEL, "an unknown model"),
           (REFUSED, "nothing listening (connection refused)"),
           (UNRESOLVED, "a host name that does not resolve"))


def set_up_fault(error: str) -> str | None:
    """What in the set-up a model error's line says is wrong, in a few words (``no key for
    anthropic``), or None when it is not a fault of set-up (see :func:`unjudged`)."""
    if error.startswith(NO_KEY):
        return error.partition(":")[0]
    return next((short for prefix, short in _SET_UP if error.startswith(prefix)), None)


def unjudged(error: str, endpoint: Endpoint, managed: bool = False) -> str | None:
    """For a model error met because of how things are set up rather than by chance (no key,
    a key refused, an unknown model, nothing listening), the short reason and what to do:
    ``no key for anthropic (run: prompthooks keys set anthropic)``; None for any other error
    (a timeout, a 500, a reply that is not a verdict). Read from the error's line, so an error
    that came back from the warm worker reads the same. A managed hook's set-up is its
    administrator's: the user's key store and variables do not reach it."""
    from .keys import provider  # the audit reads this module's lines: the key store only here

    model = endpoint.model
    name = None if managed else provider(model, endpoint.api_base)
    fix = ("the managed policy's setting: ask its administrator" if managed
           else f"run: prompthooks keys set {name}" if name
           else "set PROMPTHOOKS_API_KEY, or the variable api_key_env names")
    whose = f"the key for {name}" if name else "the key"
    if error.startswith(NO_KEY) or error.startswith("authentication failed; no API key"):
        return f"no key for {name or model} ({fix})"
    if error.startswith("authentication failed (401)"):
        return f"{whose} was refused (401) ({fix})"
    doctor = "the managed policy's setting: ask its administrator" if managed else (
        "run: prompthooks doctor")
    if error.startswith("permission denied (403)"):
        return f"{whose} may not use {model} (403) ({doctor})"
    if error.startswith("not found (404)") or error.startswith(UNKNOWN_MODEL):
        return f"no model {model} there ({doctor})"
    for what in DEAD:
        if error.startswith(what):
            where = endpoint.api_base or model
            return f"nothing answers at {where} ({what.partition('(')[2].rstrip(')')}) ({doctor})"
    return None


class Failed(Exception):
    """A call's failure, described on the event loop (where its exception is)."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.what)
        self.failure = failure


def settled(name: str, endpoint: Endpoint, deadline: float, environ: Mapping[str, str] | None,
            call: Callable[[list[int]], Coroutine[Any, Any, ModelReply]]) -> ModelReply:
    """One model call on either path (litellm or direct), in the frame both share: a
    remembered dead endpoint (``name``, in ``environ``; None: no memory, as for managed
    hooks) answers at once, no call starts past ``deadline``, and a failure (``Failed``)
    becomes one accurate line, remembering a dead endpoint; a success forgets it. ``call``
    counts its attempts in the list it is given."""
    # Imported here: the audit reads this module's lines without loading the endpoint's
    from .endpoint import ModelError, ModelTimeout

    if environ is not None:
        seen = recall_dead(name, environ)
        if seen is not None:
            raise ModelError(dead_message(seen, endpoint.model))
    if time.monotonic() >= deadline:  # not even an import: it could only be wasted
        raise ModelTimeout(f"{TIMEOUT} ({endpoint.model})")
    attempts = [0]
    try:
        reply = run_on_loop(call(attempts), deadline - time.monotonic() + SETTLE)
    except TimeoutError:  # the future's (concurrent.futures' is the builtin since 3.11)
        raise ModelTimeout(f"{TIMEOUT} ({endpoint.model})") from None
    except Failed as failed:
        failure = failed.failure
        line = message(failure, endpoint.model, max(attempts[0], 1),
                       lambda t: redact_error(t, endpoint), deadline)
        if failure.dead and environ is not None:
            remember_dead(name, failure.what, environ)
        if failure.timeout:
            raise ModelTimeout(line) from None
        raise ModelError(line) from None
    if environ is not None:
        forget_dead(name, environ)
    return reply


# --- Dead endpoints ------------------------------------------------------------------------------
# Endpoints that refused the connection or whose host name did not resolve, remembered for
# :data:`DEAD_SECONDS`.
#
# A stopped Ollama or an offline laptop would otherwise cost every tool call a connection
# attempt, or a DNS lookup that can take seconds. While an endpoint is remembered, a call to it
# fails at once with the same message, and the hook's failure policy applies as for any model
# error (a fail-closed hook still blocks). A success forgets it.
#
# One small file per endpoint, ``dead-<hash>.json`` in the user's runtime folder (see
# ``paths.runtime_home``), named by a hash of the endpoint's address alone (a URL with its
# credentials and query removed, or litellm's provider name); it holds the time it was seen dead
# and the reason, never a key. A managed hook neither reads nor writes it: it is a file the user,
# and so an agent, can write, and a managed hook must not be turned off by one.

DEAD_SECONDS = 10.0
_DEAD_LIMIT = 4096  # bytes: a record is a time and one line


def endpoint_name(base: str | None, model: str) -> str:
    """What names an endpoint: its URL's scheme, host, port and path, or for litellm's own
    provider defaults the provider's name."""
    if not base:
        return "litellm:" + (model.split("/", 1)[0] if "/" in model else model)
    parts = urlsplit(base)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path.rstrip('/')}"


def _dead_file(name: str, environ: Mapping[str, str]) -> Path:
    digest = digests.sha256(name.encode()).hexdigest()[:20]
    return paths.runtime_home(environ) / f"dead-{digest}.json"


def recall_dead(name: str, environ: Mapping[str, str]) -> tuple[str, float] | None:
    """(the reason, seconds since) when ``name`` was seen dead within DEAD_SECONDS."""
    try:
        # read_state: a FIFO, link or huge file planted here is not a memory (BadStateFile
        # is an OSError): the endpoint is tried, so nothing planted can hold the run
        data = json.loads(paths.read_state(_dead_file(name, environ), _DEAD_LIMIT) or b"null")
        age = time.time() - float(data["time"])
        why = str(data["why"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return (why, age) if 0 <= age < DEAD_SECONDS else None


def remember_dead(name: str, why: str, environ: Mapping[str, str]) -> None:
    path = _dead_file(name, environ)
    with contextlib.suppress(OSError):  # a memory that cannot be written is not used
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        body = json.dumps({"time": time.time(), "why": why}).encode()
        paths.atomic_write(path, body)


def forget_dead(name: str, environ: Mapping[str, str]) -> None:
    with contextlib.suppress(OSError):
        os.unlink(_dead_file(name, environ))


# --- The shared event loop -----------------------------------------------------------------------
# One background event loop for every model call of the process.
#
# litellm caches its async HTTP clients; a client made on one event loop cannot be used on
# another, so all prompt hooks (each running in its own engine thread) share this loop.

T = TypeVar("T")
SETTLE = 1.0  # seconds a caller waits past its deadline for a call on the loop to give up
_loop: asyncio.AbstractEventLoop | None = None
_loop_lock = threading.Lock()


def _get_loop() -> asyncio.AbstractEventLoop:
    global _loop
    # asyncio (some 15 ms) only for a call made: validate, explain, a replay and the audit,
    # which read this module, never start the loop
    import asyncio

    with _loop_lock:
        if _loop is None or _loop.is_closed():
            _loop = asyncio.new_event_loop()
            threading.Thread(target=_loop.run_forever, name="prompthooks-model",
                             daemon=True).start()
        return _loop


def shared_loop() -> asyncio.AbstractEventLoop:
    """The shared loop (started if it is not running)."""
    return _get_loop()


def run_on_loop(coro: Coroutine[Any, Any, T], timeout: float) -> T:
    """Run ``coro`` on the shared loop and wait at most ``timeout`` seconds for it."""
    import asyncio  # as in _get_loop

    future = asyncio.run_coroutine_threadsafe(coro, _get_loop())
    try:
        return future.result(max(timeout, 0.0))
    except TimeoutError:  # as in settled
        future.cancel()
        raise
