"""The model-client chain: how the prompt hooks of one run reach a model, built in one place.

A :class:`Models` is made by whoever starts the run (``prompthooks run``, ``test``, ``eval``,
the pytest helpers, a library caller) and handed to ``dispatch``; nothing about it is global.

- a managed hook: its own file's path, always in this process (model/pinned.py): the direct
  client when it pins ``api_base``, else litellm;
- otherwise (the verdict cache is looked up first, by the prompt executor): the cassette in
  use (the one given, else ``PROMPTHOOKS_CASSETTE``), then for an OpenAI-compatible endpoint
  the direct client in this process (route.py); for any other, the warm worker when one
  answers (started on demand under ``prompthooks run``), else litellm in this process.

Start-up is never charged to a hook's own timeout: the time spent importing the client
(httpx, or litellm's seconds) or waiting for a warm worker to start is added to the hook's
deadline, up to ``cap``, the run's limit (see docs/performance.md, "The run's budget"). A
client that started a worker waits for it and never imports litellm itself.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .settings import Endpoint, endpoint_for
from .types import ModelError, ModelReply, ModelRequest

if TYPE_CHECKING:
    from ..core.hook import Hook
    from .cassette import Cassette


@dataclass(frozen=True)
class Models:
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
        from .cassette import from_environment

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
        from . import worker
        from .route import direct_route

        env = self.env
        if not (self.start_worker and worker.enabled(env)) or self.cassette_in_use():
            return False
        for hook in hooks:
            if (hook.kind == "prompt" and not hook.managed
                    and direct_route(self.endpoint(hook), env) is None):
                return worker.start_in_background(env)
        return False

    def _pinned(self, request: ModelRequest, deadline: float, cap: float) -> ModelReply:
        from . import pinned

        begun = time.monotonic()
        if request.endpoint.api_base:
            from . import direct
            from .route import pinned_route

            direct.prepare(pinned_route(request.endpoint))
        elif pinned.unpinned_problem(os.environ) is None:
            from .call import prepare

            prepare(request, within=max(cap - time.monotonic(), 0.0))
        return pinned.complete(request, _after_start_up(deadline, begun, cap))

    def ask(self, request: ModelRequest, deadline: float, cap: float) -> ModelReply:
        """The model itself (no cassette): direct, else the warm worker, else litellm."""
        from .route import direct_route

        begun = time.monotonic()
        env = self.env
        require_key(request.endpoint, env)
        route = direct_route(request.endpoint, env)
        if route is not None:
            from . import direct

            direct.prepare(route)
            return direct.complete(request, _after_start_up(deadline, begun, cap), route, env)
        from . import dead, worker

        endpoint = request.endpoint
        name = dead.address(endpoint.api_base, endpoint.model)
        # The warm worker's protocol carries no tools: a tool-calling request is made here.
        if worker.enabled(env) and not request.tools:
            from .failures import dead_message

            seen = dead.recall(name, env)
            if seen is not None:
                raise ModelError(dead_message(seen, endpoint.model))
            try:
                return worker.ask(request, deadline, cap, self.start_worker)
            except worker.WorkerUnavailable:
                pass
            except ModelError as exc:
                _remember_dead(name, str(exc), env)
                raise
        from .call import complete, prepare

        prepare(request, within=max(cap - time.monotonic(), 0.0))
        return complete(request, _after_start_up(deadline, begun, cap), env)


def require_key(endpoint: Endpoint, env: Mapping[str, str]) -> None:
    """A hosted provider's call with no key anywhere is not made: it could only be refused,
    after importing its client, with a provider's page of error text. One line instead."""
    from . import keys
    from .failures import NO_KEY

    name = keys.missing(endpoint.model, endpoint.api_base, endpoint.api_key, env)
    if name is not None:
        raise ModelError(f"{NO_KEY}{name}: {keys.variable(name)} is not set and no key is "
                         f"stored ({endpoint.model}; run: prompthooks keys set {name})")


def _after_start_up(deadline: float, begun: float, cap: float) -> float:
    """``deadline`` moved by the start-up time spent since ``begun``, never past ``cap``."""
    return min(deadline + (time.monotonic() - begun), max(cap, deadline))


def _remember_dead(name: str, error: str, env: Mapping[str, str]) -> None:
    """The warm worker's call found the endpoint dead: remembered here (the worker's own
    memory is not the client's)."""
    from . import dead, failures

    for what in failures.DEAD:
        if error.startswith(what + " ("):
            dead.remember(name, what, env)


__all__ = ["Models", "require_key"]
