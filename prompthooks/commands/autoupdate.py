"""``prompthooks autoupdate [--freeze] [--config PATH]...``: move each pinned pack to its
newest tag, as ``pre-commit autoupdate`` does (``--freeze``: to that tag's commit SHA).

The new revision is fetched into the cache and its manifest must still hold every policy the
config uses, or that pack is left where it is. What the move changes (policies, files, the
diff of their text) is printed. Each config file is rewritten atomically, with only the
``rev`` values changed; an approved project or user config then needs ``prompthooks trust``
again, like any other change to it, before the new revision runs."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from ..config import json_edit, pack_fetch, packs
from ..errors import EXIT_ERROR, EXIT_OK, PromptHooksError
from ..install.files import atomic_write
from . import output
from .packs import config_files, read_config
from .review import pack_changes, print_pack_changes


def _used_ids(use: Any) -> list[str]:
    chosen = use.get("policies") if isinstance(use, dict) else None
    return [p["id"] for p in chosen or [] if isinstance(p, dict) and isinstance(p.get("id"), str)]


def _update(repo: str, rev: str, ids: list[str], freeze: bool
            ) -> tuple[str, dict[str, list[str]]]:
    """The new rev of one pack (fetched and checked) and what changed since ``rev`` (see
    :func:`_changes`), or PackError."""
    store = packs.store_dir(os.environ)
    store.mkdir(parents=True, exist_ok=True, mode=0o700)
    with tempfile.TemporaryDirectory(dir=store, prefix=".update-") as tmp:
        new_rev, _ = pack_fetch.newest(repo, Path(tmp) / "repo", freeze)
    if new_rev == rev:
        return rev, {}
    fetched = pack_fetch.fetch(repo, new_rev, os.environ)
    _, policies = packs.read_manifest(fetched.folder)
    missing = sorted(set(ids) - set(policies))
    if missing:
        raise packs.PackError(f"cannot update to {new_rev}: it has no policy "
                              f"{', '.join(missing)}")
    return new_rev, _changes(repo, rev, new_rev, ids)


def _pack(repo: str, rev: str) -> packs.Pack:
    """The pack at ``rev`` from the cache, fetched first when it is not there."""
    try:
        return packs.open_pinned(repo, rev, os.environ)
    except packs.PackError:
        pack_fetch.fetch(repo, rev, os.environ)
        return packs.open_pinned(repo, rev, os.environ)


def _changes(repo: str, old_rev: str, new_rev: str, used: list[str]) -> dict[str, list[str]]:
    """What a move from ``old_rev`` to ``new_rev`` changes (commands.review.pack_changes)."""
    try:
        old = _pack(repo, old_rev)
    except packs.PackError as exc:
        return {"policies": [], "files": [f"{old_rev} cannot be compared: {exc}"], "diff": []}
    return pack_changes(old, packs.open_pinned(repo, new_rev, os.environ), used)


def main(args: argparse.Namespace) -> int:
    report: list[dict[str, Any]] = []
    failed = False
    for path in config_files(args.config):
        text, data = read_config(path)
        uses = data.get("prompthooks", {}).get("packs") if isinstance(data, dict) else None
        changes: dict[json_edit.Path, str] = {}
        for index, use in enumerate(uses if isinstance(uses, list) else []):
            if not (isinstance(use, dict) and isinstance(use.get("repo"), str)
                    and isinstance(use.get("rev"), str)):
                continue
            repo, rev = use["repo"], use["rev"]
            full = packs.normalize(repo, str(path.parent.resolve()))
            entry: dict[str, Any] = {"config": str(path), "repo": repo, "old": rev}
            try:
                new, changes_made = _update(full, rev, _used_ids(use), args.freeze)
            except packs.PackError as exc:
                entry.update(new=rev, error=str(exc))
                failed = True
            else:
                entry["new"] = new
                if changes_made:
                    entry["changes"] = changes_made
                if new != rev:
                    changes[("prompthooks", "packs", index, "rev")] = new
            report.append(entry)
        if changes:
            _rewrite(path, text, changes)
    if args.json:
        output.print_json({"packs": report})
    else:
        for entry in report:
            if "error" in entry:
                print(f"prompthooks: {entry['repo']}: {entry['error']}", file=sys.stderr)
            elif entry["new"] == entry["old"]:
                output.line(f"{entry['repo']}: already up to date ({entry['old']})")
            else:
                output.line(f"{entry['repo']}: updating {entry['old']} -> {entry['new']}")
                print_pack_changes(entry.get("changes") or {})
        if any(e["new"] != e["old"] for e in report):
            output.line("the changed configs do not run until approved: review the changes "
                        "above, then run: prompthooks trust")
        if not report:
            output.line("no config here pins a pack (prompthooks.packs)")
    return EXIT_ERROR if failed else EXIT_OK


def _rewrite(path: Path, text: str, changes: dict[json_edit.Path, str]) -> None:
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    try:
        new = bom + json_edit.replace_strings(text[len(bom):], changes)
    except (ValueError, KeyError) as exc:
        raise PromptHooksError(f"config {path}: cannot be rewritten: {exc}") from None
    atomic_write(path, new.encode())
