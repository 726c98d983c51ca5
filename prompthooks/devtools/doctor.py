"""The checks behind ``prompthooks doctor``: versions, config sources, the model each prompt
hook would use and whether it answers, the warm worker, the audit log and its export, the
host glue.

Each check is a plain dict ``{"check", "status", "detail"}`` with status ``ok``, ``warn``,
``fail`` or ``skip``; the command prints them and exits 1 if any failed. Details pass through
the redaction pass: a key never appears, only whether one is set.
"""

from __future__ import annotations

import os
import platform
import socket
import stat
import sys
import time
from collections.abc import Iterator, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from .._version import __version__
from ..api import Config
from ..core.hook import Hook
from ..redaction import redact

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
    from ..config.unread import unread_in_sources
    from ..model.pinned import unpinned_warnings

    for warning in [*config.warnings, *unpinned_warnings(config.hooks),
                    *unread_in_sources(config.loaded.sources)]:
        yield check("config warning", "warn", warning)
    kinds = [h.kind for h in config.hooks]
    yield check("hooks", "ok", f"{kinds.count('command')} command, {kinds.count('prompt')} "
                               "prompt")


def _endpoints(hooks: list[Hook]) -> dict[tuple[str, str | None, bool, bool], list[Hook]]:
    from ..model.settings import endpoint_for

    groups: dict[tuple[str, str | None, bool, bool], list[Hook]] = {}
    for hook in hooks:
        if hook.kind == "prompt":
            endpoint = endpoint_for(hook)
            key = (endpoint.model, endpoint.api_base, bool(endpoint.api_key), hook.managed)
            groups.setdefault(key, []).append(hook)
    return groups


def probe(hook: Hook) -> tuple[bool, str]:
    """One tiny request through the real call path (no cassette, no worker, no dead-endpoint
    memory; a managed hook's pinned path): the direct client or litellm, as a run would."""
    import os

    from ..model import direct
    from ..model.call import complete as through_litellm
    from ..model.call import prepare
    from ..model.chain import require_key
    from ..model.pinned import complete as pinned
    from ..model.route import direct_route
    from ..model.settings import endpoint_for
    from ..model.types import ModelError, ModelRequest

    endpoint = endpoint_for(hook)
    request = ModelRequest(endpoint=endpoint, max_tokens=20, messages=(
        {"role": "user", "content": 'Reply with exactly {"ok": true}'},))
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
    return True, f"answered in {time.monotonic() - start:.1f} s ({reply.model}, {path})"


def model_checks(config: Config, offline: bool) -> Iterator[dict[str, str]]:
    groups = _endpoints(config.hooks)
    if not groups:
        yield check("models", "skip", "no prompt hooks")
    for (model, api_base, has_key, _), hooks in groups.items():
        where = f"{model} at {api_base or 'the provider default'}, key " + (
            "set" if has_key else "not set (the provider's own variable, if any)")
        used = f"{len(hooks)} prompt hook{'s' * (len(hooks) != 1)}"
        if offline:
            yield check(f"model {model}", "skip", f"{where}; {used}; not probed (--offline)")
            continue
        ok, detail = probe(hooks[0])
        yield check(f"model {model}", "ok" if ok else "fail", f"{where}; {used}; {detail}")


def worker_check(environ: Mapping[str, str]) -> dict[str, str]:
    from ..model import worker

    if not worker.enabled(environ):
        return check("warm worker", "skip", "off (PROMPTHOOKS_WORKER=0)")
    path = worker.socket_path(environ)
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
    from ..audit import resolve

    settings = resolve(config.loaded.audit, environ)
    if not settings.enabled:
        return check("audit log", "skip", "off (prompthooks.audit.enabled is false)")
    path = settings.path
    blocked = _cannot_write(path)
    if blocked:
        return check("audit log", "fail", f"{path}: {blocked}")
    if not path.exists():
        return check("audit log", "ok", f"{path} (created on the first run)")
    import sqlite3

    from ..audit.store import AuditError, connect

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


def _glue_commands(place: Path) -> Iterator[str]:
    """The glue commands in a host config file, or in a Cline hook folder."""
    import json

    from ..hosts import FOLDER_DIALECT
    from ..hosts.cline.install import is_ours
    from ..install.glue import is_glue

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

    try:
        if place.is_dir():
            for event in FOLDER_DIALECT.CONFIG_EVENTS:
                text = (place / event).read_text(encoding="utf-8", errors="replace") \
                    if (place / event).is_file() else ""
                lines = text.splitlines()
                if is_ours(text.encode()) and len(lines) > 2:
                    yield lines[2].removeprefix("exec ")
        elif place.is_file():
            yield from walk(json.loads(place.read_text(encoding="utf-8-sig")))
    except (OSError, ValueError, RecursionError):
        return


def _path_warning(place: Path) -> str | None:
    """Why installed glue that names prompthooks by PATH may not find it, if it may not."""
    import shutil

    from ..install.glue import choose

    if not any(command.split() == ["prompthooks", "run"] for command in _glue_commands(place)):
        return None
    found = choose(shutil.which("prompthooks"), sys.executable, sys.argv[0], "bare")
    if found.warning is None:
        return None
    return (f"{place}: {found.warning.removeprefix('warning: ')}; reinstall from this "
            "installation with --glue absolute")


def export_checks(config: Config, offline: bool,
                  environ: Mapping[str, str]) -> Iterator[dict[str, str]]:
    """The audit export's targets: a JSON Lines file run could append to, and an OTLP
    collector that answers (an empty request, unless offline) with the extra installed."""
    from ..audit import resolve

    settings = resolve(config.loaded.audit, environ)
    if settings.jsonl is not None:
        path = settings.jsonl.path
        try:
            mode = os.stat(path).st_mode
        except OSError:
            mode = None
        folder = next((p for p in path.parents if p.exists()), Path("/"))
        if mode is not None and not stat.S_ISREG(mode):
            yield check("audit export (jsonl)", "fail", f"{path}: not a regular file; refused")
        elif not os.access(path if mode is not None else folder, os.W_OK):
            yield check("audit export (jsonl)", "fail", f"{path}: not writable; rows would "
                        "not be exported")
        else:
            yield check("audit export (jsonl)", "ok", str(path))
    if settings.otlp is not None:
        from ..audit.otlp import MISSING_EXTRA, send
        from ..audit.records import ExportError

        target = settings.otlp
        name = "audit export (otlp)"
        try:
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
    from ..errors import PromptHooksError
    from ..install.registry import HOSTS, location

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
                warning = _path_warning(place)
                if warning:
                    yield check(f"glue {glue.name} ({scope})", "warn", warning)
    if not found:
        from ..hosts import NAMES

        yield check("glue", "warn", "no host calls prompthooks yet: run "
                                    f"`prompthooks install --host {'|'.join(NAMES)}`")


def unjudged_checks(config: Config, environ: Mapping[str, str]) -> Iterator[dict[str, str]]:
    """First of all: the prompt hooks that could not judge in the last day for a reason of
    set-up (from the audit log), each a warning (the model checks say whether it works now)."""
    from ..audit.settings import resolve
    from ..audit.unjudged import recent, summary

    for item in recent(resolve(config.loaded.audit, environ).path):
        yield check("not judged", "warn", redact(f"{summary(item)}: {item.error}"))


def run_checks(config: Config, project: Path, offline: bool,
               environ: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    env = os.environ if environ is None else environ
    return [*unjudged_checks(config, env), *versions(), *config_checks(config),
            *model_checks(config, offline),
            worker_check(env), audit_check(config, env), *export_checks(config, offline, env),
            *glue_checks(project)]
