"""The library API, for agents written in Python and for the ``run`` command.

    from prompthooks import dispatch
    outcome = dispatch(event_json, host="claude")
    if outcome.decision.blocked: ...

``dispatch`` is synchronous; ``adispatch`` runs it in a worker thread for asyncio callers.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from . import executors, hosts, notices
from .config import discovery
from .config.load_result import Loaded
from .core.engine import decide
from .core.events import Event
from .core.hook import Source
from .core.merge import Decision
from .errors import InputError
from .hosts import Host
from .hosts.protocol import Reply
from .loading.sources import load_sources

if TYPE_CHECKING:
    from .model.chain import ModelChain

# The run's whole budget per host (seconds), each host's own BUDGET (a few of its events have
# less: ``hosts.budget``).
DEFAULT_BUDGET: dict[str, float] = {name: host.budget for name, host in hosts.HOSTS.items()}
_BOM = b"\xef\xbb\xbf"


class Config:
    """Loaded config sources: hooks, warnings and sources that failed to load.

    A plain class, not a tuple: one is given where a list of config paths may be, and must
    not be taken for one."""

    __slots__ = ("_loaded",)

    def __init__(self, loaded: Loaded) -> None:
        self._loaded = loaded

    @property
    def loaded(self) -> Loaded:
        return self._loaded

    @property
    def hooks(self) -> list[Any]:
        return self.loaded.hooks

    @property
    def warnings(self) -> list[str]:
        return self.loaded.warnings

    @property
    def errors(self) -> list[str]:
        """Every problem of the sources that failed to load (a file may have several)."""
        return [d for f in self.loaded.failures for d in (f.details or (f.message,))]

    @property
    def unknown_events(self) -> list[str]:
        return self.loaded.unknown_events


class Outcome(NamedTuple):
    """One dispatched event: the merged decision and the host reply rendered from it."""

    event: Event
    decision: Decision
    reply: Reply
    config: Config
    deadline: float  # the time.monotonic() instant the run had to answer by

    @property
    def problems(self) -> tuple[str, ...]:
        """One line per hook (or config source) that failed."""
        return self.decision.errors

    @property
    def stdout(self) -> str:
        return self.reply.stdout

    @property
    def exit_code(self) -> int:
        return self.reply.exit_code


def read_event_bytes(data: bytes) -> tuple[dict[str, Any], bytes]:
    """Parse stdin bytes into a JSON object; the BOM some Cursor builds send is dropped."""
    if data.startswith(_BOM):
        data = data[len(_BOM):]
    if not data.strip():
        raise InputError("no event on stdin: expected one JSON object")
    try:
        value = json.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        detail = exc.msg if isinstance(exc, json.JSONDecodeError) else (
            "nested too deeply" if isinstance(exc, RecursionError) else str(exc))
        raise InputError(f"the event on stdin is not valid JSON: {detail}") from None
    if not isinstance(value, dict):
        raise InputError(f"the event on stdin must be a JSON object, not {type(value).__name__}")
    return value, data


def parse_event(data: bytes | str | Mapping[str, Any], host: str | None = None,
                event_name: str | None = None,
                environ: Mapping[str, str] | None = None) -> tuple[Host, Event]:
    """The host and the canonical event for one input (bytes as read from stdin, or an object)."""
    env = os.environ if environ is None else environ
    if isinstance(data, Mapping):
        raw, raw_bytes = dict(data), json.dumps(data).encode()
    else:
        raw, raw_bytes = read_event_bytes(data.encode() if isinstance(data, str) else data)
    module = hosts.get(host) if host else hosts.detect(raw)
    event = module.wire.parse(raw, raw_bytes, event_name, env)
    return module, event._replace(env=module.wire.hook_env(event))


def load_config(paths: Sequence[str] | None = None, project_dir: str | None = None,
                environ: Mapping[str, str] | None = None,
                managed_dir: discovery.Managed = discovery.MANAGED_DIR,
                keep_managed: bool = True, trusted_only: bool = True) -> Config:
    """Load ``paths`` (in priority order) under the managed policy, or discover the managed,
    project and user configs. ``keep_managed=False`` loads ``paths`` alone (to test or
    measure a policy, never to guard a real event). A discovered project or user config
    loads only while approved (``prompthooks trust``); ``trusted_only=False`` loads it anyway
    (to show what it holds, never to guard a real event)."""
    env = os.environ if environ is None else environ
    project = project_dir or os.getcwd()
    sources = (discovery.explicit(paths, managed_dir if keep_managed else None) if paths
               else discovery.discover(project, env, managed_dir))
    return Config(load_sources(sources, project, env, trusted_only=trusted_only))


def config_from_data(data: Mapping[str, Any], path: str,
                     project_dir: str | None = None) -> Config:
    """A config from an object already in memory (Claude Code or Cursor style); ``path`` is
    where it came from, for messages and for relative ``prompt_file`` names."""
    loaded = Loaded()
    source = Source("inline", path, 0)
    loaded.sources.append(source)
    from .loading.loader import load_file  # validation: never needed by a run's cached load

    load_file(Path(path), source, project_dir or os.getcwd(), loaded, dict(data))
    return Config(loaded)


def dispatch(data: bytes | str | Mapping[str, Any], *, host: str | None = None,
             event_name: str | None = None, config: Config | None = None,
             config_paths: Sequence[str] | None = None, budget: float | None = None,
             environ: Mapping[str, str] | None = None,
             managed_dir: discovery.Managed = discovery.MANAGED_DIR, started: float | None = None,
             cancel: threading.Event | None = None, count_stops: bool = True,
             models: ModelChain | None = None) -> Outcome:
    """Run every hook that applies to one event and merge their answers, within ``budget``
    seconds (default: the host's for that event, see ``hosts.budget``) of ``started`` (a
    ``time.monotonic()`` instant; default: now). Setting ``cancel`` makes the run answer at
    once: the hooks still running count as timed out. ``count_stops``: a stop's blocks count
    towards the session's cap (core.stop_cap); test suites, which replay events, leave it off.
    ``models`` is how prompt hooks reach their model (a cassette, a suite's model...; default:
    the environment's, see :class:`prompthooks.model.chain.ModelChain`).

    Raises :class:`~prompthooks.errors.InputError` when the event cannot be read.
    """
    start = time.monotonic() if started is None else started
    module, event = parse_event(data, host, event_name, environ)
    if config is None:
        config = load_config(config_paths, event.project_dir, environ, managed_dir)
    deadline = start + (budget if budget is not None
                        else hosts.budget(module, event.host_event))
    env = os.environ if environ is None else environ
    decision = _decide(config, event, deadline, cancel, count_stops, env, models)
    # A real event, not a suite's replay: the person is told once per session.
    notice = notices.pending(notices.line(decision.results), event.session_id,
                             env) if count_stops else None
    if notice:
        decision = decision._replace(system_message="\n".join(
            m for m in (decision.system_message, notice) if m))
    reply = module.wire.render(decision, event)
    if notice and notices.shown(notice, reply.stdout):
        notices.record(notice, event.session_id, env)
    if config.errors and reply.exit_code == 0 and _says_nothing(decision):
        reply = Reply(reply.stdout, 1)  # our own failure, and nothing else to report
    return Outcome(event, decision, reply, config, deadline)


def _decide(config: Config, event: Event, deadline: float, cancel: threading.Event | None,
            count_stops: bool, environ: Mapping[str, str], models: ModelChain | None) -> Decision:
    """The merged decision; on a stop whose session's blocks reached the cap, without the
    project and user hooks, and with a line saying why."""
    # only when an event is judged: validate imports this module and judges none
    from .core import stop_cap

    cap = stop_cap.for_event(event, config.loaded.hooks, environ) if count_stops else None
    hooks = config.loaded.hooks
    failed = [f.stand_in(event, hosts.CANONICAL.name) for f in config.loaded.failures]
    capped = cap is not None and cap.reached
    if capped:
        hooks = [h for h in hooks if h.managed]
        failed = [r for r in failed if r.hook.managed]
    decision = decide(hooks, event, deadline, executors.for_run(models, deadline), reread=_reread,
                      host_tool=hosts.host_tool, cancel=cancel, failed=failed)
    if cap is not None:
        if capped:
            note = cap.message()
            decision = decision._replace(system_message="\n".join(
                m for m in (note, decision.system_message) if m))
        cap.record(decision.blocked)
    return decision


def _reread(event: Event, tool_input: Mapping[str, Any]) -> Event:
    """``event`` with a rewritten tool input, as its host would send it."""
    return hosts.get(event.host).wire.with_input(event, tool_input)


def _says_nothing(decision: Decision) -> bool:
    return not (decision.permission or decision.contexts or decision.halt
                or decision.system_message or decision.updated_input is not None)


async def adispatch(data: bytes | str | Mapping[str, Any], **kwargs: Any) -> Outcome:
    """:func:`dispatch` for asyncio callers (runs in a worker thread)."""
    import asyncio  # only for asyncio callers: a run never loads it (some 30 ms)

    return await asyncio.to_thread(dispatch, data, **kwargs)
