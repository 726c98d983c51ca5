"""The model-client chain: how the prompt hooks of one run reach a model (:class:`ModelChain`,
built in one place), and how a managed hook's call keeps to the path its own file gives. The
call through the resident process's model process is :mod:`.model_process`'s."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import failures, keys
from .endpoint import (
    Endpoint,
    ModelError,
    ModelReply,
    ModelRequest,
    direct_route,
    endpoint_for,
    pinned_route,
)
from .model_process import WorkerUnavailable, ask_worker, start_in_background, worker_enabled

if TYPE_CHECKING:
    from ..core.hook import Hook
    from .recording import Cassette


# --- The chain -----------------------------------------------------------------------------------
# The model-client chain: how the prompt hooks of one run reach a model, built in one place.
#
# A :class:`ModelChain` is made by whoever starts the run (``prompthooks run``, ``test``, ``eval``,
# the pytest helpers, a library caller) and handed to ``dispatch``; nothing about it is global.
#
# - a managed hook: its own file's path, always in this process (below): the direct
#   client when it pins ``api_base``, else litellm;
# - otherwise (the verdict cache is looked up first, by the prompt executor): the cassette in
#   use (the one given, else ``PROMPTHOOKS_CASSETTE``), then for an OpenAI-compatible endpoint
#   the direct client in this process (endpoint.py); for any other, the warm worker when one
#   answers (started on demand under ``prompthooks run``), else litellm in this process.
#
# Start-up is never charged to a hook's own timeout: the time spent importing the client
# (httpx, or litellm's seconds) or waiting for a warm worker to start is added to the hook's
# deadline, up to ``cap``, the run's limit (see docs/performance.md, "The run's budget"). A
# client that started a worker waits for it and never imports litellm itself.

@dataclass(frozen=True)
class ModelChain:
    """How a run's prompt hooks call their model.

    ``cassette``: the one to use (None: ``PROMPTHOOKS_CASSETTE``, when set). ``model``: every
    non-managed prompt hook uses this model (``eval --model``). ``suite``: ``PROMPTHOOKS_MODEL``
    is ignored (a suite runs on the model its config names). ``start_worker``: a missing warm
    worker is started and waited for (``prompthooks run``; library callers never get a
    background process). ``environ``: the environment that decides the call (default: the
    process's)."""

    cassette: Cassette | None = None
    model: str | None = None
    suite: bool = False
    start_worker: bool = False
    environ: Mapping[str, str] | None = None

    @property
    def env(self) -> Mapping[str, str]:
        return os.environ if self.environ is None else self.environ

    def endpoint(self, hook: Hook) -> Endpoint:
        """The model and endpoint ``hook`` calls."""
        return endpoint_for(hook, self.env, override=self.model, suite=self.suite)

    def cassette_in_use(self) -> Cassette | None:
        if self.cassette is not None:
            return self.cassette
        if not self.env.get("PROMPTHOOKS_CASSETTE"):
            return None
        from .recording import from_environment  # the cassette code: only when one is named

        return from_environment(self.env)

    def complete(self, request: ModelRequest, deadline: float, hook: Hook,
                 cap: float | None = None) -> ModelReply:
        """The model's reply for ``hook``: ``deadline`` is its own (its timeout), ``cap`` the
        run's limit that start-up time may extend it to (default: ``deadline``)."""
        limit = deadline if cap is None else max(cap, deadline)
        if hook.managed:
            return self._pinned(request, deadline, limit)
        cassette = self.cassette_in_use()
        if cassette is None:
            return self.ask(request, deadline, limit)
        return cassette.complete(request, deadline, hook,
                                 lambda r, d: self.ask(r, d, max(limit, d)))

    def warm(self, hooks: Iterable[Hook]) -> bool:
        """Start the warm worker in the background (never waited for) when a prompt hook of
        ``hooks`` would use it: a non-managed hook whose endpoint is on litellm's path. For a
        session's start, so that its first prompt event finds the worker ready. Whether one
        was started."""
        env = self.env
        if not (self.start_worker and worker_enabled(env)) or self.cassette_in_use():
            return False
        for hook in hooks:
            if (hook.kind == "prompt" and not hook.managed
                    and direct_route(self.endpoint(hook), env) is None):
                return start_in_background(env)
        return False

    def _pinned(self, request: ModelRequest, deadline: float, cap: float) -> ModelReply:
        begun = time.monotonic()
        if request.endpoint.api_base:
            from . import direct  # httpx: only for a call on the direct path

            direct.prepare(pinned_route(request.endpoint))
        elif unpinned_problem(os.environ) is None:
            from .litellm_client import prepare  # litellm: only for a call on its path

            prepare(request, within=max(cap - time.monotonic(), 0.0))
        return complete_pinned(request, _after_start_up(deadline, begun, cap))

    def ask(self, request: ModelRequest, deadline: float, cap: float) -> ModelReply:
        """The model itself (no cassette): direct, else the warm worker, else litellm."""
        begun = time.monotonic()
        env = self.env
        require_key(request.endpoint, env)
        route = direct_route(request.endpoint, env)
        if route is not None:
            from . import direct  # httpx: only for a call on the direct path

            direct.prepare(route)
            return direct.complete(request, _after_start_up(deadline, begun, cap), route, env)
        endpoint = request.endpoint
        name = failures.endpoint_name(endpoint.api_base, endpoint.model)
        # The warm worker's protocol carries no tools: a tool-calling request is made here.
        if worker_enabled(env) and not request.tools:
            seen = failures.recall_dead(name, env)
            if seen is not None:
                raise ModelError(failures.dead_message(seen, endpoint.model))
            try:
                return ask_worker(request, deadline, cap, self.start_worker)
            except WorkerUnavailable:
                pass
            except ModelError as exc:
                _remember_dead(name, str(exc), env)
                raise
        from .litellm_client import complete, prepare  # litellm: only for a call on its path

        prepare(request, within=max(cap - time.monotonic(), 0.0))
        return complete(request, _after_start_up(deadline, begun, cap), env)


def require_key(endpoint: Endpoint, env: Mapping[str, str]) -> None:
    """A hosted provider's call with no key anywhere is not made: it could only be refused,
    after importing its client, with a provider's page of error text. One line instead."""
    name = keys.missing(endpoint.model, endpoint.api_base, endpoint.api_key, env)
    if name is not None:
        raise ModelError(f"{failures.NO_KEY}{name}: {keys.variable(name)} is not set and no key is "
                         f"stored ({endpoint.model}; run: prompthooks keys set {name})")


def _after_start_up(deadline: float, begun: float, cap: float) -> float:
    """``deadline`` moved by the start-up time spent since ``begun``, never past ``cap``."""
    return min(deadline + (time.monotonic() - begun), max(cap, deadline))


def _remember_dead(name: str, error: str, env: Mapping[str, str]) -> None:
    """The warm worker's call found the endpoint dead: remembered here (the worker's own
    memory is not the client's)."""
    for what in failures.DEAD:
        if error.startswith(what + " ("):
            failures.remember_dead(name, what, env)


# --- A managed hook's call -----------------------------------------------------------------------
# How a managed prompt hook calls its model: only where its own file says.
#
# With ``api_base`` pinned, through the direct client (direct.py), which reads nothing from the
# environment. Without it the call goes through litellm, whose provider defaults and variables
# decide the URL; that call is refused while the environment holds a variable that could send it
# elsewhere (a proxy, a provider base URL), because an agent can set those: the hook fails with
# a message saying to pin ``api_base`` in the managed file (a fail-closed hook then denies).

# litellm's base-URL variables end like these (OPENAI_BASE_URL, ANTHROPIC_API_BASE,
# AZURE_API_BASE, AWS_BEDROCK_RUNTIME_ENDPOINT...); any name holding PROXY is a proxy
# (HTTPS_PROXY, all_proxy, USE_LITELLM_PROXY, LITELLM_PROXY_API_BASE).
_SUFFIXES = ("_API_BASE", "_BASE_URL", "_API_BASE_URL", "_ENDPOINT", "_ENDPOINT_URL",
             "_API_URL")
_NOT_REDIRECTS = frozenset({"NO_PROXY"})


def redirecting_variables(environ: Mapping[str, str]) -> list[str]:
    """The set variables that could redirect a model call made through litellm."""
    found = []
    for name, value in environ.items():
        upper = name.upper()
        if not value or upper in _NOT_REDIRECTS:
            continue
        if "PROXY" in upper or upper.endswith(_SUFFIXES):
            found.append(name)
    return sorted(found)


def unpinned_problem(environ: Mapping[str, str]) -> str | None:
    """Why an unpinned managed hook may not be called now (None: it may)."""
    names = redirecting_variables(environ)
    if not names:
        return None
    shown = ", ".join(names[:6]) + (", ..." if len(names) > 6 else "")
    return (f"the environment sets {shown}, which could redirect this managed prompt hook; "
            "pin api_base in the managed file")


def unpinned_warnings(hooks: Iterable[Hook]) -> list[str]:
    """One line per managed file whose prompt hooks do not pin ``api_base`` (for validate and
    doctor)."""
    paths = sorted({h.source.path for h in hooks if h.managed and h.judged
                    and not (h.prompt_settings and h.prompt_settings.api_base)})
    return [f"{path}: a managed prompt hook without api_base goes through litellm, which "
            "reads proxy and base-URL variables; it refuses to run while one is set: pin "
            "api_base in the managed file" for path in paths]


def complete_pinned(request: ModelRequest, deadline: float,
                    environ: Mapping[str, str] | None = None) -> ModelReply:
    """The managed hook's model call (always in this process: see model/recording.py)."""
    if request.endpoint.api_base:
        from .direct import complete as direct  # httpx: only for a call on the direct path

        return direct(request, deadline)
    problem = unpinned_problem(os.environ if environ is None else environ)
    if problem:
        raise ModelError(problem)
    from .litellm_client import complete as through_litellm  # litellm: only on its path

    return through_litellm(request, deadline)
