"""Loading the sources a run uses: the trust check on every run, the cache of validated
configs, and the load of each admitted source (``loader``).

A project or user source loads only while approved (``trust``), checked on the real files
before the cache is consulted; the managed policy is loaded by itself (``managed``), never
from that cache, which lives in the user's folders. An approved source is loaded from the
bytes its check read (``files.served``), its templates' text and its hook files' digests put
into its hooks: nothing of it is opened by name again after the check.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from ..config import files
from ..config.load_result import Loaded, LoadFailure, TrustState
from ..core.hook import Hook, Source
from . import cache
from .managed import load as managed_load
from .managed import merge

# Part of the cache's key: entries written before hooks carried their approved bytes are
# not served.
_COVERED = "covered 1"


def load_sources(sources: Sequence[tuple[Source, Path]], project_dir: str,
                 environ: Mapping[str, str] | None = None, *,
                 trusted_only: bool = True) -> Loaded:
    """Load every source: the managed policy by itself (``loading.managed``), the others from
    the cache of validated configs when nothing changed.

    A project or user source loads only while approved (loading.trust): checked on every run,
    on the real files, before the cache is consulted (the approved hashes are part of the
    cache's key). ``trusted_only=False`` loads them all and only records their state (for
    ``validate`` and ``explain``, which run nothing)."""
    env = os.environ if environ is None else environ
    # The cache lives in the user's folders, which an agent running as the user can write:
    # the managed policy never comes from it, only from what its own folder's owner wrote.
    top = [(s, p) for s, p in sources if s.name == "managed"]
    rest = [(s, p) for s, p in sources if s.name != "managed"]
    managed = managed_load(top, project_dir, env) if top else Loaded()
    states: list[TrustState] = []
    if rest:
        from . import trust  # approvals: only a project, user or --config source needs them

        states = trust.states(rest, env)
    refused = [t for t in states if not t.trusted] if trusted_only else []
    admitted = _admitted(rest, refused)
    key = cache.fingerprint(admitted, project_dir) + json.dumps(
        [_COVERED, [[t.key, t.sha256, t.packs, t.pack_digests] for t in states if t.trusted]])
    if not rest:
        loaded = Loaded()
    elif managed.managed_only:  # the managed policy allows its own hooks only
        loaded = Loaded(failures=[LoadFailure(
            source, f"{source.name} config {source.path} is not loaded: the managed policy "
                    "allows managed hooks only (allow_managed_hooks_only)", False,
            kind="managed_only") for source, _ in rest])
    else:
        loaded = _load_rest(rest, admitted, refused, states, key, project_dir, env,
                            trusted_only)
        loaded.failures += [LoadFailure(t.source, t.message(), False, kind="untrusted")
                            for t in refused]
    loaded = merge(managed, loaded)
    loaded.trust = states
    loaded.fingerprint = managed.fingerprint + key
    return loaded


def _load_rest(rest: Sequence[tuple[Source, Path]], admitted: list[tuple[Source, Path]],
               refused: list[TrustState], states: Sequence[TrustState], key: str,
               project_dir: str, env: Mapping[str, str], trusted_only: bool) -> Loaded:
    """The project's, user's and ``--config`` sources, from the user's cache when it holds
    them (``refused`` gains a source that changed while being loaded)."""
    # Loads that admit unapproved sources (trusted_only=False) neither read nor fill it.
    loaded = _cached(key, env) if trusted_only else None
    if loaded is not None:
        return loaded
    checked = {t.source: t for t in states if t.covered is not None} if trusted_only else {}
    loaded = _load_admitted(rest, admitted, project_dir, checked)
    # A hook the check did not cover (a file created between the check and the load):
    # load again without its source.
    moved = _uncovered(loaded, checked)
    if moved:
        refused += moved
        return _load_admitted(rest, _admitted(rest, refused), project_dir, checked)
    if trusted_only and not (loaded.uses_packs and loaded.failures):
        cache.store(key, cache.to_data(loaded), env)
    return loaded


def _admitted(sources: Sequence[tuple[Source, Path]],
              refused: Sequence[TrustState]) -> list[tuple[Source, Path]]:
    return [(s, p) for s, p in sources if all(t.source != s for t in refused)]


def _cached(key: str, env: Mapping[str, str]) -> Loaded | None:
    cached = cache.load(key, env)
    if cached is None:
        return None
    try:
        loaded = cache.from_data(cached)
    except Exception:
        return None  # a cache from another layout, or damaged: rebuild it
    # A policy pack's files live outside the fingerprinted folders: check them again.
    from ..config import packs  # only a load that uses packs needs it

    if not all(packs.still_valid(check, env) for check in loaded.pack_checks):
        return None
    return loaded


def _load_admitted(sources: Sequence[tuple[Source, Path]],
                   admitted: Sequence[tuple[Source, Path]], project_dir: str,
                   checked: Mapping[Source, TrustState]) -> Loaded:
    """Load the admitted sources in priority order (an approved one from the bytes its check
    read)."""
    # The loader (and pydantic with it) only on a miss: a cached load never needs it.
    from .loader import load_path

    loaded = Loaded()
    for source, path in sources:
        if (source, path) in admitted:
            state = checked.get(source)
            first = len(loaded.hooks)
            with _as_checked(state):
                load_path(path, source, project_dir, loaded)
            if state is not None and state.covered is not None:
                loaded.hooks[first:] = [_with_covered(h, state) for h in loaded.hooks[first:]]
    return loaded


@contextlib.contextmanager
def _as_checked(state: TrustState | None) -> Iterator[None]:
    """Within the block, an approved source's files and packs are the ones checked."""
    if state is None or state.covered is None:
        yield
        return
    from ..config import packs  # only a miss loads, and only then with its packs

    with files.served(state.covered.view), packs.approved(dict(state.pack_digests)):
        yield


def _with_covered(hook: Hook, state: TrustState) -> Hook:
    """The hook with what its approval covered: a template's text as checked, a hook file's
    digest (it runs from a copy of those bytes). Unchanged when the check did not cover it
    (then :func:`_uncovered` refuses its source)."""
    covered = state.covered
    assert covered is not None
    if hook.judged and hook.prompt_file and hook.prompt is None:
        data = covered.templates.get((hook.config_dir or "", hook.prompt_file))
        if data is None:
            return hook
        from ..config.templates import parse_front_matter  # only for a template hook

        try:
            _, body = parse_front_matter(data.decode("utf-8-sig"))
        except UnicodeDecodeError:
            return hook
        return hook._replace(prompt=body)
    if hook.executable and hook.digest is None:
        sha = covered.executables.get(os.path.abspath(hook.executable))
        return hook if sha is None else hook._replace(digest=sha)
    return hook


def _uncovered(loaded: Loaded, checked: Mapping[Source, TrustState]
               ) -> list[TrustState]:
    """The approved sources with a hook whose bytes the check did not read: a template or
    hook file that appeared (or could not be read) between the check and the load."""
    out: dict[Source, TrustState] = {}
    shipped: Mapping[str, Path] | None = None
    for hook in loaded.hooks:
        state = checked.get(hook.source)
        if state is None or hook.source in out:
            continue
        template = False
        if hook.judged and hook.prompt_file and hook.prompt is None:
            if shipped is None:
                from ..config.templates import library  # only for a template hook

                shipped = library()
            template = hook.prompt_file not in shipped
        if template or (hook.executable and hook.digest is None):
            out[hook.source] = TrustState(
                hook.source, state.key, "changed", reason="it changed while being loaded")
    return list(out.values())
