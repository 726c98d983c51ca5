"""The work of one run: read the config, judge the event, send the reply, then log it.

It reports to its supervisor through a :class:`~.channel.Channel`: the guard as soon as the
config is loaded (so that whatever happens next, the supervisor can answer for a managed or
fail-closed gate), then the reply or why there is none. Nothing after the reply (the audit
log, redaction) can change it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from .. import paths
from ..address import resident_enabled
from ..api import dispatch, load_config, parse_event
from ..config.discovery import managed_dirs
from ..errors import InputError
from .channel import Channel
from .fallback import gate_could_apply, guess_event, print_redacted

if TYPE_CHECKING:
    from ..api import Outcome
    from ..core.hook import Hook
    from ..model.chain import ModelChain
    from ..model.recording import Cassette
    from .job import Job


class Case(NamedTuple):
    """One event to judge: a run's :class:`~.job.Job` with what judging it takes (the managed
    policy's folders, the model client, the budget the engine keeps)."""

    data: bytes
    host: str | None
    event: str | None
    config: Sequence[str]
    managed: Sequence[Path]
    started: float  # time.monotonic() instant the run's budget counts from
    budget: float | None  # seconds from ``started`` to answer by (None: the host's default)
    debug: bool = False
    unreadable: str | None = None  # why the event could not be read from stdin, if it could not
    models: ModelChain | None = None  # how prompt hooks reach their model (None: see models_for)
    cassette: Cassette | None = None  # --record/--replay's, for the models made by models_for
    # After the reply: start the resident process unless one runs (the process a host
    # started, so that the session's next events find it).
    start_resident: bool = False

    def models_for(self, hooks: Sequence[Hook]) -> ModelChain | None:
        """The model client for a run of ``hooks``: ``models`` if given, else one made only
        when a hook may reach a model or a cassette is named (a command-only event never
        loads the model modules)."""
        if self.models is not None or (self.cassette is None
                                       and all(hook.kind == "command" for hook in hooks)):
            return self.models
        from ..model.chain import ModelChain  # the model modules: only for a run that needs them

        return ModelChain(cassette=self.cassette, start_worker=True)


def case_of(job: Job) -> Case:
    """The case for ``job``: its managed policy's folders, and how to make its model client
    (a missing resident process is started when a prompt hook needs it; ``--record``/
    ``--replay`` name the cassette)."""
    cassette = None
    if job.record or job.replay:
        # The model modules: only for a run that records or replays.
        from ..model.recording import ENV_MODEL_OPTION, Cassette

        cassette = Cassette(Path(job.record or job.replay or ""),
                            "record" if job.record else "replay", model_option=ENV_MODEL_OPTION)
    return Case(job.data, job.host, job.event, job.config, managed_dirs(job.managed_dir),
                job.started, job.budget, os.environ.get("PROMPTHOOKS_DEBUG") == "1",
                job.unreadable, cassette=cassette)


def judge(job: Case, channel: Channel, cancel: threading.Event | None = None) -> None:
    """Judge ``job`` and send the reply on ``channel``; never raises: a failure is sent as a
    message and left to the supervisor's failure policy."""
    try:
        _judge(job, channel, cancel)
    except Exception as exc:
        if job.debug:
            import traceback  # (and textwrap): only to show a failure's traceback

            traceback.print_exc()
        channel.send(failed=f"internal error: {exc!r} (set PROMPTHOOKS_DEBUG=1 for the "
                            "traceback)", kind="internal")


def _project_of_unreadable() -> str:
    return paths.project_dir()


def _judge(job: Case, channel: Channel, cancel: threading.Event | None) -> None:
    problem: str | None = job.unreadable
    canonical: str | None
    try:
        if problem is not None:
            raise InputError(problem)
        _, event = parse_event(job.data, job.host, job.event)
        project, canonical = event.project_dir, event.name
    except InputError as exc:
        problem = exc.message
        project, canonical = _project_of_unreadable(), guess_event(job.data, job.host,
                                                             job.event).canonical
    config = load_config(job.config or None, project, managed_dir=job.managed)
    channel.send(guard=gate_could_apply(config.loaded, canonical), audit=config.loaded.audit)
    if problem is not None:
        channel.send(failed=problem, kind="input")
        return
    models = job.models_for(config.loaded.hooks)
    # Only the reply may reach stdout: anything a library prints goes to stderr.
    with contextlib.redirect_stdout(sys.stderr):
        outcome = dispatch(job.data, host=job.host, event_name=job.event, config=config,
                           budget=job.budget, started=job.started, cancel=cancel,
                           models=models)
    channel.send(reply=outcome.stdout, exit=outcome.exit_code)
    if outcome.event.name == "SessionStart" and models is not None:
        # After the reply, never delaying it: the session's first prompt event then finds a
        # warm worker (install --warm-start covers this event).
        with contextlib.suppress(Exception):
            models.warm(config.loaded.hooks)
    if job.start_resident:
        _start_resident(job.managed)
    channel.lower_priority()
    # After the reply: the lines pass the redaction pass, which must never delay the answer.
    if job.debug:
        for warning in outcome.config.warnings:
            print_redacted(f"prompthooks: warning: {warning}")
    for line in outcome.problems:
        print_redacted(f"prompthooks: {line}")
    _warn_once(outcome)
    for result in outcome.decision.results:
        if result.cached:
            print_redacted(f"prompthooks: hook '{result.hook.name}': verdict from the "
                           "verdict cache")
    _log(outcome)


def _start_resident(managed: Sequence[Path]) -> None:
    """The resident process for this user and model environment, started in the background
    unless one runs or is starting, or it is turned off: the session's next events are handed
    to it, whatever their hooks. Not where a managed policy applies: its events are never
    handed over."""
    if any(os.path.lexists(folder) for folder in managed) or not resident_enabled(os.environ):
        return
    # The host waits for this process (and for whatever holds its stdout and stderr), and a
    # resident process starting takes a core for a while: the start is left to a process of
    # its own, spawned here (a vfork and exec: this process waits for nothing more, and the
    # exec closes every descriptor of the run's but those named below), which holds none of
    # the host's streams and leaves this session. It is a shell that waits for this process
    # to end, then becomes the interpreter that starts it: until then it takes no core from
    # the rest of this run (its audit rows).
    if not sys.executable:
        return
    try:
        # The write end stays open in this process (and in no other: it is not inherited)
        # until it exits.
        ended, _end = os.pipe()
    except OSError:
        return
    try:
        _keep_to_this_process(ended)
        os.set_inheritable(ended, True)  # also as descriptor 3 if it is 3 already
        null = os.open(os.devnull, os.O_RDWR)
        try:
            os.posix_spawn("/bin/sh", ["/bin/sh", "-c", _WAIT_THEN_START, sys.executable,
                                       _STARTER],
                           os.environ, setsid=True,
                           setsigdef=(signal.SIGTERM, signal.SIGINT, signal.SIGPIPE),
                           file_actions=[(os.POSIX_SPAWN_DUP2, null, 0),
                                         (os.POSIX_SPAWN_DUP2, null, 1),
                                         (os.POSIX_SPAWN_DUP2, null, 2),
                                         (os.POSIX_SPAWN_DUP2, ended, 3)])
        finally:
            os.close(null)
    except OSError:  # nothing here may change the run's end
        pass
    finally:
        os.close(ended)


def _keep_to_this_process(but: int) -> None:
    """Mark every descriptor above stderr but ``but`` close-on-exec. Those this process
    inherited open across an exec (a host's or its shell's pipe, an agent's file) would
    otherwise pass to the starter's shell and interpreter, which outlive the run: a host that
    reads such a pipe to its end would wait for them. Hooks never get them (they are spawned
    with ``close_fds``), and nothing of this run's execs after this."""
    try:
        names = os.listdir("/dev/fd")  # this process's descriptors (Linux and macOS)
    except OSError:
        return
    for name in names:
        fd = int(name)
        if fd > 2 and fd != but:
            with contextlib.suppress(OSError):  # the listing's own, closed by now
                os.set_inheritable(fd, False)


# Descriptor 3 reads its end of file once the run's process has ended (its supervisor kills
# it by the run's deadline at the latest); the shell's read waits for that, then it becomes
# the starter, in ``/``: the interpreter starts outside the project (the agent writes it), so
# an empty or relative ``PYTHONPATH`` entry names nothing of it, even while ``site`` runs.
_WAIT_THEN_START = 'read -r _ <&3; cd / && exec "$0" -P -c "$1"'
# The starter, run by the installation's interpreter (``-P``: its folder is not put first on
# the import path; no relative entry either, as in the ``prompthooks`` script):
# it starts the resident process unless one runs or is starting; a start that hangs ends
# anyway.
_STARTER = """\
import os, signal, sys
sys.path[:] = [entry for entry in sys.path if os.path.isabs(entry)]
os.close(3)
signal.alarm(30)
try:
    from prompthooks.model.model_process import start_in_background
    start_in_background(os.environ)
except Exception:
    pass
"""


def _warn_once(outcome: Outcome) -> None:
    """A config problem that makes hooks silently never run, said once per config change."""
    # After the reply (as the audit rows below): never on the answer's path.
    from ..loading.ignored_files import unread_in_sources
    from .config_warnings import to_say

    loaded = outcome.config.loaded
    notices = [*loaded.unknown_events, *unread_in_sources(loaded.sources)]
    for line in to_say(loaded.fingerprint, notices):
        print_redacted(f"prompthooks: warning: {line} (said once until the config changes; "
                       "prompthooks validate lists every problem)")


def _log(outcome: Outcome) -> None:
    """The audit rows, after the reply: the host is never kept waiting for them, and nothing
    here can change the answer."""
    from .. import audit  # after the reply: the audit modules are never on the answer's path

    try:
        trouble = audit.record(outcome)
    except Exception as exc:
        trouble = f"audit log: cannot write: {exc!r}"
    if trouble:
        print_redacted(f"prompthooks: {trouble}")
