"""``prompthooks trust [--project DIR] [--user] [--force] [--revoke | --list] [--json]``:
approve the current content of the project's and/or the user's config (loading.trust) after
showing what is approved (its hooks, what changed since the last approval: commands.review;
a config that fails validation only with ``--force``), take an approval back, or list every
source with its state."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from .. import paths
from ..config import discovery, files, packs
from ..config.load_result import Loaded
from ..core.hook import Source
from ..errors import EXIT_ERROR, EXIT_OK, PromptHooksError
from ..loading import trust
from ..loading.sources import load_sources
from ..redaction import config_keys, redact
from . import output, review

_T = TypeVar("_T")


def _targets(args: argparse.Namespace, both: bool = False) -> list[tuple[Source, Path]]:
    """The sources named: the project's (``--project``, default the current directory) and/or
    the user's (``--user``); ``both`` when neither is named."""
    named = bool(args.project or args.user)
    out: list[tuple[Source, Path]] = []
    if args.project or not args.user:
        folder = Path(args.project or os.getcwd()).absolute() / discovery.PROJECT_DIR_NAME
        out.append((Source("project", str(folder), 1), folder))
    if args.user or (both and not named):
        folder = paths.config_home(os.environ)
        out.append((Source("user", str(folder), 2), folder))
    return out


def _entry(state: trust.TrustState) -> dict[str, Any]:
    return {"source": state.source.name, "path": state.source.path, "state": state.state,
            "sha256": state.sha256, "files": list(state.files),
            "approved_at": state.approved_at, "reason": state.reason}


def _list(args: argparse.Namespace) -> int:
    store = trust.read_store(os.environ)
    shown: list[trust.TrustState] = []
    for source, folder in _targets(args, both=True):
        if folder.is_dir():
            shown.append(trust.state_of(source, folder, store))
    # An approved config whose pinned pack's cache is not the approved bytes fails to load.
    drift = {s.key: trust.pack_drift(s, store, os.environ) for s in shown
             if s.state == "approved" and s.packs}
    shown = [s._replace(reason=drift[s.key]) if drift.get(s.key) else s for s in shown]
    seen = {s.key for s in shown}
    for key, record in sorted(store.records.items()):  # approved elsewhere
        if key not in seen:
            source = Source(str(record.get("source", "?")), key, 0)
            shown.append(trust.state_of(source, Path(key), store) if Path(key).is_dir()
                         else trust.TrustState(source, key, "new", reason="folder is gone"))
    if args.json:
        output.print_json({"store": str(store.path), "problem": store.problem,
                           "sources": [_entry(s) for s in shown]})
        return EXIT_OK
    if store.problem:
        output.line(f"warning: {store.problem}", "yellow")
    if not shown:
        output.line(f"no project or user config here, and no approvals in {store.path}")
        return EXIT_OK
    output.table(("source", "path", "state"),
                 ([s.source.name, s.source.path,
                   "approval kept, folder is gone" if s.reason == "folder is gone"
                   else s.describe() + (f"; {s.reason}" if s.trusted and s.reason else "")]
                  for s in shown))
    return EXIT_OK


def _store_write(change: Callable[..., _T], *args: Any) -> _T:
    """A store that cannot be written is one line, exit 1."""
    try:
        return change(*args)
    except OSError as exc:
        raise PromptHooksError(f"cannot write the trust store {trust.store_path(os.environ)}: "
                               f"{exc.strerror or exc}") from None


def _count(count: int, word: str) -> str:
    return f"{count} {word}{'s' * (count != 1)}"


def _load(source: Source, folder: Path, current: trust.Digest,
          pack_digests: dict[str, str]) -> Loaded:
    """The folder's hooks loaded from the bytes ``current`` read and the packs as checked
    (those the approval covers; a pack changed since fails to load), whether approved or
    not: to show them, never to run them."""
    env = {**os.environ, "PROMPTHOOKS_NO_CACHE": "1"}  # the files themselves
    project = folder.parent if source.name == "project" else Path(os.getcwd())
    with files.served(current.view), packs.approved(pack_digests):
        return load_sources([(source, folder)], str(project), env, trusted_only=False)


def _shown(shown: dict[str, Any]) -> dict[str, Any]:
    """What ``--json`` says of a review (the digest and rows are for the approval)."""
    return {k: v for k, v in shown.items() if k not in ("digest", "packs", "rows", "kept")}


def _review(source: Source, folder: Path, quiet: bool) -> dict[str, Any]:
    """Show what an approval of ``folder`` would approve: its hooks, and what changed since
    it was last approved; its validation errors, each once. Raises trust.Unapprovable."""
    current = trust.digest(folder)
    if not current.files:
        raise trust.Unapprovable("it holds no hooks.json and no hook files: nothing to approve")
    pack_digests = trust.check_packs(folder, current, os.environ)
    loaded = _load(source, folder, current, pack_digests)
    keys = config_keys((h.api_key_env for h in loaded.hooks), os.environ)
    errors = list(dict.fromkeys(
        [*(redact(d, keys) for f in loaded.failures if f.kind == "config"
           for d in (f.details or (f.message,))), *loaded.unknown_events]))
    rows = review.rows(loaded.hooks, folder, keys, os.environ)
    # A path pack is part of the config: its files are kept and diffed as the folder's are.
    kept = {**current.contents, **_folder_pack_files(pack_digests)}
    shown: dict[str, Any] = {"digest": current, "packs": pack_digests, "rows": rows,
                             "kept": kept, "errors": errors, "hooks": review.as_json(rows)}
    store = trust.read_store(os.environ)
    record = store.records.get(trust.key_of(folder))
    summary: list[str] = []
    diff: list[str] = []
    hooks_changed: list[str] = []
    since: str | None = None
    moved: list[tuple[str, dict[str, list[str]]]] = []
    # Changed as run sees it: its files, a pinned pack's commit, a path pack's files.
    if record is not None and trust.state_of(source, folder, store).state == "changed":
        since = str(record.get("approved_at"))
        copy = trust.read_copy(trust.key_of(folder), record.get("copy_sha256"), os.environ)
        if isinstance(copy, str):
            summary = [copy]
        else:
            summary, diff = review.file_diff(copy.files, kept, keys, os.environ)
            hooks_changed = ([] if copy.hooks is None
                             else review.hook_changes(copy.hooks, rows))
        with files.served(current.view):
            pins = trust.pack_pins(folder, os.environ)
        moved = _moved_packs(record, pins)
        shown.update(changed_since=since, files_changed=summary, diff=diff,
                     hooks_changed=hooks_changed,
                     packs_changed=[{"pack": what, **changes} for what, changes in moved])
    if quiet:
        return shown
    where = f"{source.name} config {folder}"
    review.say(f"{where}: {_count(len(rows), 'hook')} in {', '.join(current.files)}", "bold")
    review.print_hooks(rows)
    if since is not None:
        output.line(f"changed since approved {since}:", "bold")
        for text in summary:
            review.say(f"  {text}")
        review.print_diff(diff)
        for text in hooks_changed:
            review.say(text, review.style_of(text))
        for what, changes in moved:
            review.say(what, "bold")
            review.print_pack_changes(changes)
    elif record is not None:
        output.line(f"unchanged since approved {record.get('approved_at')}")
    for error in errors:
        review.say(f"error: {error}", "red")
    return shown


def _folder_pack_files(pack_digests: dict[str, str]) -> dict[str, bytes]:
    """The files of each ``path`` pack the review checked, by absolute path, while they are
    still the bytes checked (else :func:`trust.approve` refuses the approval anyway)."""
    out: dict[str, bytes] = {}
    for key, digest in sorted(pack_digests.items()):
        if not key.startswith("path "):
            continue
        root = Path(key.removeprefix("path "))
        try:
            pack = packs.open_folder(root)
        except packs.PackError:
            continue
        if pack.digest == digest:
            out.update({str(root / name): data for name, data in pack.texts.items()})
    return out


def _moved_packs(record: dict[str, Any], pins: dict[str, str]
                 ) -> list[tuple[str, dict[str, list[str]]]]:
    """For each pinned pack now at another commit than the approval's (a tag moved, or a new
    rev), what changed in it: from the approved commit's files in the cache (checked against
    the digest the approval recorded) to the new one's. Nothing is fetched."""
    approved = record.get("packs")
    approved = approved if isinstance(approved, dict) else {}
    contents = record.get("pack_files")
    contents = contents if isinstance(contents, dict) else {}
    out: list[tuple[str, dict[str, list[str]]]] = []
    for ref, commit in sorted(pins.items()):
        repo, _, rev = ref.rpartition(" ")
        # The same rev, else the one rev of the same pack the approval pinned (autoupdate).
        same = [r for r in approved if r.rpartition(" ")[0] == repo]
        was_ref = ref if ref in approved else same[0] if len(same) == 1 else None
        was = approved.get(was_ref) if was_ref else None
        if not isinstance(was, str) or was == commit:
            continue
        what = f"pack {repo} at {rev}: {was[:12]} (approved) -> {commit[:12]}"
        kept = contents.get(was_ref)
        try:
            old = packs.open_pinned(repo, was, os.environ)
            if not (isinstance(kept, dict) and kept.get("digest") == old.digest):
                raise packs.PackError(f"the cache's {was[:12]} is not what was approved")
            changes = review.pack_changes(old, packs.open_pinned(repo, rev, os.environ))
        except packs.PackError as exc:
            changes = {"files": [f"its changes cannot be shown: {exc}"]}
        out.append((what, changes))
    return out


def main(args: argparse.Namespace) -> int:
    if args.list:
        return _list(args)
    results: list[dict[str, Any]] = []
    failed = False
    for source, folder in _targets(args):
        where = f"{source.name} config {folder}"
        if args.revoke:
            gone = _store_write(trust.revoke, folder, os.environ)
            results.append({"source": source.name, "path": str(folder), "revoked": gone})
            if not args.json:
                output.line(f"revoked the approval of {where}" if gone
                            else f"{where} was not approved: nothing to revoke")
            continue
        if not folder.is_dir():
            failed = True
            results.append({"source": source.name, "path": str(folder),
                            "error": "no such folder"})
            if not args.json:
                output.line(f"prompthooks: no {where}: nothing to approve", "red")
            continue
        try:
            shown = _review(source, folder, args.json)
            if shown["errors"] and not args.force:
                failed = True
                results.append({"source": source.name, "path": str(folder),
                                "error": "the config has errors", **_shown(shown)})
                if not args.json:
                    output.line(f"prompthooks: {where} is not approved: it has "
                                f"{_count(len(shown['errors']), 'error')}; fix "
                                f"{'it' if len(shown['errors']) == 1 else 'them'}, or approve "
                                "it as it is with --force", "red")
                continue
            state, problem = _store_write(trust.approve, source, folder, os.environ,
                                          shown["digest"], shown["rows"], shown["packs"],
                                          shown["kept"])
        except trust.Unapprovable as exc:
            failed = True
            results.append({"source": source.name, "path": str(folder), "error": str(exc)})
            if not args.json:
                output.line(f"prompthooks: {where} cannot be approved: {exc}", "red")
            continue
        results.append({**_entry(state), **_shown(shown)})
        if not args.json:
            if problem:
                output.line(f"warning: {problem}; a new store was written", "yellow")
            output.line(f"approved {where} (sha256 {state.sha256}): {', '.join(state.files)}",
                        "green")
    if args.json:
        output.print_json({"store": str(trust.store_path(os.environ)), "results": results})
    return EXIT_ERROR if failed else EXIT_OK
