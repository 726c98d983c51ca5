"""The checks behind ``prompthooks doctor``: versions, config sources, the model each prompt
hook would use and whether it answers, whether each http hook's URL answers, the warm worker,
the audit log and its export, the host glue.

Each check is a plain dict ``{"check", "status", "detail"}`` with status ``ok``, ``warn``,
``fail`` or ``skip``; the command prints them and exits 1 if any failed. Details pass through
the redaction pass: a key never appears, only whether one is set.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shlex
import shutil
import socket
import sqlite3
import stat
import sys
import time
from collections.abc import Iterator, Mapping
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._version import __version__
from ..api import Config
from ..audit import resolve
from ..audit.otlp import MISSING_EXTRA, send
from ..audit.records import ExportError
from ..audit.store import AuditError, connect
from ..audit.unjudged import recent, summary
from ..config.files import read_regular
from ..core.hook import Hook, origin
from ..errors import PromptHooksError
from ..executors import http
from ..executors.project_tools import TOOLS
from ..hosts import FOLDER_DIALECT, NAMES, Host, get
from ..install import launcher
from ..install.glue import choose, is_glue
from ..loading.ignored_files import unread_in_sources
from ..loading.managed import compiled_notes
from ..model import model_process
from ..model.chain import complete_pinned as pinned
from ..model.chain import require_key, unpinned_warnings
from ..model.endpoint import ModelError, ModelRequest, direct_route, endpoint_for
from ..redaction import redact
from ..setup.registry import HOSTS, location

if TYPE_CHECKING:
    from ..install.glue import HostGlue

PACKAGES = ("litellm", "pydantic", "tenacity", "PyYAML", "rich")
PROBE_SECONDS = 10.0  # retries included: long enough for a cold start, short for a person


def check(name: str, status: str, detail: str) -> dict[str, str]:
    return {"check": name, "status": status, "detail": redact(detail)}


def versions() -> Iterator[dict[str, str]]:
    yield check("python", "ok", f"{platform.python_version()} ({sys.executable})")
    yield check("prompthooks", "ok", __version__)
    for name in PACKAGES:
        try:
            yield check(name, "ok", metadata.version(name))
        except metadata.PackageNotFoundError:
            yield check(name, "fail", "not installed: reinstall prompthooks")


def config_checks(config: Config) -> Iterator[dict[str, str]]:
    if not config.loaded.sources and not config.loaded.trust:
        yield check("config", "warn", "no config found: create .prompthooks/hooks.json "
                                      "(prompthooks install writes a starter)")
    for source in config.loaded.sources:
        yield check(f"config {source.name}", "ok", source.path)
    for state in config.loaded.trust:  # a source whose hooks do not run fails the check
        advice = f"; {state.advice()}" if state.advice() else ""
        yield check(f"trust {state.source.name}", "ok" if state.trusted else "fail",
                    f"{state.source.path}: {state.describe()}{advice}")
    for failure in config.loaded.failures:
        if failure.kind == "managed_only":
            yield check(f"config {failure.source.name}", "warn", failure.message)
        elif failure.kind == "config":  # an untrusted source has its trust check above
            for message in failure.details or (failure.message,):
                yield check("config error", "fail", message)
    for message in config.unknown_events:
        yield check("config error", "fail", message)

    for warning in [*config.warnings, *unpinned_warnings(config.hooks),
                    *unread_in_sources(config.loaded.sources)]:
        yield check("config warning", "warn", warning)

    for note in compiled_notes(config.loaded.sources):  # it works, but validates each event
        yield check("managed compiled", "warn", note)
    kinds = [h.kind for h in config.hooks]
    http = f", {kinds.count('http')} http" if "http" in kinds else ""
    yield check("hooks", "ok", f"{kinds.count('command')} command, {kinds.count('prompt')} "
                               f"prompt, {kinds.count('agent')} agent{http}")


def http_checks(config: Config, offline: bool) -> Iterator[dict[str, str]]:
    """Each http hook's URL answers (once per URL and proxy rule): one that does not blocks
    every event a fail-closed hook applies to, and lets them all through if fail-open."""
    hooks: dict[tuple[str | None, bool, str | None], list[Hook]] = {}
    for hook in config.hooks:
        if hook.kind == "http":
            proxy = hook.prompt_settings.proxy if hook.prompt_settings else None
            hooks.setdefault((hook.url, hook.managed, proxy), []).append(hook)
    if not hooks:
        return
    for group in hooks.values():
        hook = group[0]
        if offline:
            yield check(f"http {hook.name}", "ok",
                        f"{origin(hook.url or '')} (not contacted: --offline)")
            continue
        ok, detail = http.probe(hook, 3.0)
        closed = any(h.fail_closed for h in group)
        status = "ok" if ok else "fail" if closed else "warn"
        if not ok:
            detail += ("; its fail-closed hooks block every event they apply to" if closed
                       else "; its hooks let every event through until it answers")
        yield check(f"http {hook.name}", status, detail)


def _endpoints(hooks: list[Hook]) -> dict[tuple[str, str | None, bool, bool], list[Hook]]:
    groups: dict[tuple[str, str | None, bool, bool], list[Hook]] = {}
    for hook in hooks:
        if hook.judged:
            endpoint = endpoint_for(hook)
            key = (endpoint.model, endpoint.api_base, bool(endpoint.api_key), hook.managed)
            groups.setdefault(key, []).append(hook)
    return groups


def probe(hook: Hook) -> tuple[bool, str]:
    """One tiny request through the real call path (no cassette, no worker, no dead-endpoint
    memory; a managed hook's pinned path): the direct client or litellm, as a run would."""
    # The model call's modules (asyncio with them) only when a model is probed: install
    # imports this module for this function, and a doctor --offline calls none.
    from ..model import direct
    from ..model.litellm_client import complete as through_litellm
    from ..model.litellm_client import prepare

    endpoint = endpoint_for(hook)
    # An agent hook's model must take tools: its probe offers them, so an endpoint that
    # refuses them fails here rather than at the first event.
    tools = TOOLS if hook.kind == "agent" else ()
    request = ModelRequest(endpoint=endpoint, max_tokens=20, tools=tools, json_mode=not tools,
                           messages=({"role": "user",
                                      "content": 'Reply with exactly {"ok": true}'},))
    if not hook.managed:
        try:  # no key for a hosted provider: said at once, without importing its client
            require_key(endpoint, os.environ)
        except ModelError as exc:
            return False, str(exc)
    route = None if hook.managed else direct_route(endpoint, os.environ)
    is_direct = route is not None or (hook.managed and bool(endpoint.api_base))
    # The probe times the model, not the client's import (litellm's takes seconds on a busy
    # machine): imported before the clock starts, so a slow import is never reported as a
    # model that timed out.
    if is_direct:
        direct.prepare(route)
    else:
        prepare(request)
    start = time.monotonic()
    try:
        if hook.managed:
            reply = pinned(request, start + PROBE_SECONDS)
        elif route is not None:
            reply = direct.complete(request, start + PROBE_SECONDS, route)
        else:
            reply = through_litellm(request, start + PROBE_SECONDS)
    except ModelError as exc:
        return False, str(exc)
    path = "direct" if is_direct else "litellm"
    offered = ", tools offered" if tools else ""
    return True, f"answered in {time.monotonic() - start:.1f} s ({reply.model}, {path}{offered})"



def model_checks(config: Config, offline: bool) -> Iterator[dict[str, str]]:
    groups = _endpoints(config.hooks)
    if not groups:
        yield check("models", "skip", "no prompt hooks")
    for (model, api_base, has_key, _), hooks in groups.items():
        where = f"{model} at {api_base or 'the provider default'}, key " + (
            "set" if has_key else "not set (the provider's own variable, if any)")
        agents = sum(h.kind == "agent" for h in hooks)
        used = f"{len(hooks)} prompt hook{'s' * (len(hooks) != 1)}" + (
            f" ({agents} agent)" if agents else "")
        if offline:
            yield check(f"model {model}", "skip", f"{where}; {used}; not probed (--offline)")
            continue
        ok, detail = probe(next((h for h in hooks if h.kind == "agent"), hooks[0]))
        yield check(f"model {model}", "ok" if ok else "fail", f"{where}; {used}; {detail}")


def worker_check(environ: Mapping[str, str]) -> dict[str, str]:
    if not model_process.worker_enabled(environ):
        return check("warm worker", "skip", "off (PROMPTHOOKS_RESIDENT=0)")
    path = model_process.socket_path(environ)
    if not path.exists():
        return check("warm worker", "ok", f"not running; `prompthooks run` starts one on the "
                                          f"first prompt hook ({path})")
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(2.0)
            conn.connect(str(path))
    except OSError as exc:
        return check("warm worker", "warn", f"stale socket {path}: {exc.strerror or exc}")
    return check("warm worker", "ok", f"running ({path})")


def _cannot_write(path: Path) -> str | None:
    """Why ``run`` could not write the audit log at ``path``, and what becomes of the rows, or
    None. SQLite needs the database, its ``-wal`` and ``-shm`` files and, to make them, the
    folder; the spool beside it needs only the folder."""
    folder = next((p for p in path.parents if p.exists()), Path("/"))
    if not folder.is_dir():
        return f"{folder} is a file, not a folder; rows would be lost"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"{folder} is not writable; rows would be lost"
    for file in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        if file.exists() and not (file.is_file() and os.access(file, os.W_OK)):
            return (f"{file} is not a writable file; rows would wait in "
                    f"{path.name}.pending until it is")
    return None


def audit_check(config: Config, environ: Mapping[str, str]) -> dict[str, str]:
    settings = resolve(config.loaded.audit, environ)
    if not settings.enabled:
        return check("audit log", "skip", "off (prompthooks.audit.enabled is false)")
    path = settings.path
    blocked = _cannot_write(path)
    if blocked:
        return check("audit log", "fail", f"{path}: {blocked}")
    if not path.exists():
        return check("audit log", "ok", f"{path} (created on the first run)")
    try:
        conn = connect(path, create=False)
        try:
            count = conn.execute("SELECT count(*) FROM decisions").fetchone()[0]
        finally:
            conn.close()
    except (AuditError, sqlite3.Error) as exc:
        return check("audit log", "fail", str(exc))
    stored = ", storing event inputs (redacted)" if settings.store_events else ""
    return check("audit log", "ok", f"{path}: {count} rows{stored}")


# A host's config file or glue hook file larger than this is not read for glue.
_GLUE_FILE_CAP = 1 << 20


def _glue_commands(place: Path) -> Iterator[str]:
    """The glue commands in a host config file, or in a Cline hook folder."""
    def walk(value: Any) -> Iterator[str]:
        if isinstance(value, dict):
            command = value.get("command")
            if is_glue(command):
                yield str(command)
            for item in value.values():
                yield from walk(item)
        elif isinstance(value, list):
            for item in value:
                yield from walk(item)

    def bounded(path: Path) -> bytes:
        """The file's bytes; none for a FIFO, a device or a file past the cap (never waited
        for or read whole: the project's files are the agent's to write)."""
        _, data = read_regular(path, _GLUE_FILE_CAP)
        return data if data is not None and len(data) <= _GLUE_FILE_CAP else b""

    try:
        if place.is_dir():
            for event in FOLDER_DIALECT.wire.CONFIG_EVENTS:
                data = bounded(place / event) if (place / event).is_file() else b""
                lines = data.decode("utf-8", "replace").splitlines()
                if FOLDER_DIALECT.glue.file_is_glue(data) and len(lines) > 2:
                    yield lines[2].removeprefix("exec ")
        elif place.is_file():
            yield from walk(json.loads(bounded(place).decode("utf-8-sig")))
    except (OSError, ValueError, RecursionError):
        return


def _import_path_warning(place: Path) -> str | None:
    """Installed glue of the ``python -m prompthooks run`` form without ``-P`` (written by
    earlier versions): the host runs it in the project, whose folder then comes first on the
    import path, so a ``prompthooks/`` written there would run instead."""

    for command in _glue_commands(place):
        with contextlib.suppress(ValueError):
            if shlex.split(command)[1:] == ["-m", "prompthooks", "run"]:
                return (f"{place}: the glue `{command}` imports from the project folder first "
                        "(a prompthooks/ written there would run in its place); run "
                        "`prompthooks uninstall` then `prompthooks install` to write it with -P")
    return None


def _path_warning(place: Path, scope: str) -> str | None:
    """Why installed glue that names prompthooks by PATH may not find it, if it may not."""

    if not any(command.split() == ["prompthooks", "run"] for command in _glue_commands(place)):
        return None
    found = choose(shutil.which("prompthooks"), sys.executable, sys.argv[0], "bare")
    if found.warning is None:
        return None
    # A project's files are committed: the launcher, not this machine's path, is the fix.
    fix = "--glue auto (the project launcher)" if scope == "project" else "--glue absolute"
    return (f"{place}: {found.warning.removeprefix('warning: ')}; reinstall from this "
            f"installation with {fix}")


def export_checks(config: Config, offline: bool,
                  environ: Mapping[str, str]) -> Iterator[dict[str, str]]:
    """The audit export's targets: a JSON Lines file run could append to, and an OTLP
    collector that answers (an empty request, unless offline) with the extra installed."""
    settings = resolve(config.loaded.audit, environ)
    if settings.jsonl is not None:
        path = settings.jsonl.path
        try:
            info: os.stat_result | None = os.lstat(path)
        except OSError:
            info = None
        mode = None if info is None else info.st_mode
        folder = next((p for p in path.parents if p.exists()), Path("/"))
        # as run sees it (audit/export.py): the entry itself, a link is not the file
        what = ("a symbolic link" if mode is not None and stat.S_ISLNK(mode) else
                "not a regular file" if mode is not None and not stat.S_ISREG(mode) else
                "a file with other names (hard links)" if info is not None
                and info.st_nlink > 1 else None)
        if what is not None:
            yield check("audit export (jsonl)", "fail", f"{path}: {what}; refused (run moves "
                        "it aside and begins a new file there)")
        elif not os.access(path if mode is not None else folder, os.W_OK):
            yield check("audit export (jsonl)", "fail", f"{path}: not writable; rows would "
                        "not be exported")
        else:
            yield check("audit export (jsonl)", "ok", str(path))
    if settings.otlp is not None:
        target = settings.otlp
        name = "audit export (otlp)"
        try:
            # the optional otel extra: whether it is installed is what is checked
            import opentelemetry.exporter.otlp.proto.common
            import opentelemetry.sdk  # noqa: F401
        except ImportError:
            yield check(name, "fail", MISSING_EXTRA)
            return
        if offline:
            yield check(name, "ok", f"{target.endpoint} (not contacted: --offline)")
            return
        try:
            send(target, [], min(target.timeout, 10.0), environ)
        except ExportError as exc:
            yield check(name, "fail", f"{target.endpoint}: {exc}")
        else:
            yield check(name, "ok", f"{target.endpoint} answers")


def glue_checks(project: Path) -> Iterator[dict[str, str]]:
    """Where each host's glue is installed (every scope)."""
    found = False
    for glue in HOSTS.values():
        for scope in ("project", "local", "user", "managed"):
            if (scope == "managed" and glue.managed is None) or \
                    (scope == "local" and glue.local is None):
                continue
            place = location(glue, scope, project)
            try:
                installed = glue.installed(place)
            except PromptHooksError as exc:
                yield check(f"glue {glue.name} ({scope})", "warn", exc.message)
                continue
            if installed:
                found = True
                yield check(f"glue {glue.name} ({scope})", "ok", f"installed in {place}")
                for warning in (_path_warning(place, scope), _import_path_warning(place)):
                    if warning:
                        yield check(f"glue {glue.name} ({scope})", "warn", warning)
            if scope == "project":
                yield from _launcher_checks(glue, project, place)
    if not found:
        yield check("glue", "warn", "no host calls prompthooks yet: run "
                                    f"`prompthooks install --host {'|'.join(NAMES)}`")


def _launcher_checks(glue: HostGlue, project: Path, place: Path) -> Iterator[dict[str, str]]:
    """A project launcher that is not what install writes: something rewrote it (it is a
    file the agent can write), and it may skip prompthooks altogether."""
    altered = list(glue.altered(place))
    if glue.launcher:
        path = project / glue.launcher
        if launcher.intact(path, launcher.text(len(Path(glue.launcher).parts) - 1)) is False:
            altered.insert(0, path)
    if altered:
        yield check(f"glue {glue.name} (project)", "fail",
                    f"{', '.join(map(str, altered))}: not what install writes (rewritten "
                    "since?); read it, then put it back: prompthooks install --host "
                    f"{glue.name}")


def _keys_reaching(host: Host, hook: Hook) -> list[str]:
    """The host's event keys that would run ``hook`` (its canonical event, and the host's
    rule for which of its events serve which hooks), in the host's order."""
    keys = []
    wire = host.wire
    for key, config_event in wire.CONFIG_EVENTS.items():
        if config_event.trigger.event != hook.trigger.event:
            continue
        sample = wire.sample_event(key, {})
        try:
            event = wire.parse(sample, json.dumps(sample).encode(), key, {})
        except PromptHooksError:
            continue
        if hook.served_by(event):
            keys.append(key)
    return keys


def reach_checks(config: Config, project: Path) -> Iterator[dict[str, str]]:
    """Hooks no installed glue calls prompthooks for: a host calls it only for the events its
    glue is on, and Cursor runs each of its events' own hooks (a Cursor style
    ``beforeShellExecution`` handler never runs from ``preToolUse``)."""
    for glue in HOSTS.values():
        glued: set[str] = set()
        for scope in ("project", "local", "user", "managed"):
            try:
                glued.update(glue.glued(location(glue, scope, project)))
            except PromptHooksError:
                continue
        if not glued:
            continue
        host = get(glue.name)
        missing: dict[str, list[str]] = {}
        for hook in config.hooks:
            keys = _keys_reaching(host, hook)
            if keys and not glued & set(keys):
                missing.setdefault(keys[0], []).append(hook.label)
        for key, labels in missing.items():
            yield check(f"glue {glue.name}", "warn",
                        f"{len(labels)} hook(s) never run under {glue.title}, which calls "
                        f"prompthooks for {', '.join(sorted(glued))} only: "
                        f"{'; '.join(labels)}; add the glue: prompthooks install --host "
                        f"{glue.name} --events {key}")


def unjudged_checks(config: Config, environ: Mapping[str, str]) -> Iterator[dict[str, str]]:
    """First of all: the prompt hooks that could not judge in the last day for a reason of
    set-up (from the audit log), each a warning (the model checks say whether it works now)."""
    for item in recent(resolve(config.loaded.audit, environ).path):
        yield check("not judged", "warn", redact(f"{summary(item)}: {item.error}"))


def run_checks(config: Config, project: Path, offline: bool,
               environ: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    env = os.environ if environ is None else environ
    return [*unjudged_checks(config, env), *versions(), *config_checks(config),
            *model_checks(config, offline), *http_checks(config, offline),
            worker_check(env), audit_check(config, env), *export_checks(config, offline, env),
            *glue_checks(project), *reach_checks(config, project)]
