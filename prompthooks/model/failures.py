"""What went wrong with a model call, in one line, and whether another attempt may help.

Both paths (direct.py and litellm's call.py) describe a failure here, so a 401 reads the same
whichever client met it. The line names the fault in our words and adds the server's own
message when it sent one (``error.message`` or ``detail`` of a JSON body), never a traceback
or a whole HTML page. A refused connection and a name that does not resolve are not retried:
nothing will be listening a few hundred milliseconds later, and every retry would spend the
hook's deadline (dead.py remembers them for a while). A ``Retry-After`` is honoured: no retry
starts that could not finish before the deadline.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import excerpt
from . import dead

if TYPE_CHECKING:
    from .settings import Endpoint
    from .types import ModelReply

# No retry starts with less time left than this: it could only time out, and the error would
# then say "did not answer in time" instead of what every earlier attempt ran into.
MIN_ATTEMPT = 0.25
_MESSAGE_CHARS = 200
TIMEOUT = "the model did not answer in time"
REFUSED = "cannot connect to the model endpoint (connection refused)"
UNRESOLVED = "cannot connect to the model endpoint (its host name does not resolve)"
UNTRUSTED = "cannot connect to the model endpoint (its TLS certificate is not trusted)"
DEAD = (REFUSED, UNRESOLVED)  # not retried, and remembered (dead.py)


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
        # would fail the same way (structured.py asks again without the schema).
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
    import email.utils

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
            import ast

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
    from ..redaction import redact

    return redact(text, extra=[endpoint.api_key])


def dead_message(seen: tuple[str, float], model: str) -> str:
    """The line for an endpoint dead.py remembers as unreachable: the call is not tried."""
    why, age = seen
    return (f"{why} ({model}; seen {age:.0f} s ago, not tried again for "
            f"{dead.DEAD_SECONDS:g} s)")


def retrying(describe: Callable[[BaseException], Failure], deadline: float) -> Any:
    """tenacity's retry loop for one call: jittered backoff, never shorter than what the
    endpoint asked for, and no attempt started that could not finish before ``deadline``."""
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


__all__ = ["DEAD", "MIN_ATTEMPT", "NO_KEY", "REFUSED", "TIMEOUT", "UNKNOWN_MODEL", "UNRESOLVED",
           "Failure",
           "connection_failure", "dead_message", "from_status", "message", "parse_retry_after",
           "redact_error", "retrying", "server_message", "set_up_fault", "unjudged"]


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
    from .keys import provider

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
    import concurrent.futures

    from . import loop
    from .types import ModelError, ModelTimeout

    if environ is not None:
        seen = dead.recall(name, environ)
        if seen is not None:
            raise ModelError(dead_message(seen, endpoint.model))
    if time.monotonic() >= deadline:  # not even an import: it could only be wasted
        raise ModelTimeout(f"{TIMEOUT} ({endpoint.model})")
    attempts = [0]
    try:
        reply = loop.run(call(attempts), deadline - time.monotonic() + loop.SETTLE)
    except concurrent.futures.TimeoutError:
        raise ModelTimeout(f"{TIMEOUT} ({endpoint.model})") from None
    except Failed as failed:
        failure = failed.failure
        line = message(failure, endpoint.model, max(attempts[0], 1),
                       lambda t: redact_error(t, endpoint), deadline)
        if failure.dead and environ is not None:
            dead.remember(name, failure.what, environ)
        if failure.timeout:
            raise ModelTimeout(line) from None
        raise ModelError(line) from None
    if environ is not None:
        dead.forget(name, environ)
    return reply

