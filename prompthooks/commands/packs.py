"""``prompthooks packs fetch|list [--config PATH]... [--json]``: fetch every pack the configs
pin into the user's cache (the only way a pinned pack gets there: ``run`` never fetches), or
list them with their state."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from ..config import discovery, files, pack_fetch, packs
from ..errors import EXIT_ERROR, EXIT_OK, PromptHooksError
from ..paths import config_home
from . import output
from .review import pack_changes, print_pack_changes


def config_files(paths: list[str]) -> list[Path]:
    """The JSON config files named (a folder stands for its ``hooks.json``), or the project's
    (the current directory's) and the user's."""
    if paths:
        named = [Path(p) / files.CONFIG_FILE if Path(p).is_dir() else Path(p) for p in paths]
        missing = [str(p) for p in named if not p.is_file()]
        if missing:
            raise PromptHooksError(f"{missing[0]}: no such config file")
        return named
    folders = [Path(os.getcwd()) / discovery.PROJECT_DIR_NAME, config_home(os.environ)]
    return [f / files.CONFIG_FILE for f in folders if (f / files.CONFIG_FILE).is_file()]


def read_config(path: Path) -> tuple[str, Any]:
    """A config file's text and its parsed content; one line if it cannot be read."""
    try:
        text = files.read_bytes(path).decode("utf-8")  # a BOM is kept, to be written back
        return text, json.loads(text.removeprefix("\ufeff"))
    except (OSError, ValueError, RecursionError, files.UnsafeFile) as exc:
        raise PromptHooksError(f"config {path}: cannot be read: {files.describe(exc)}"
                               ) from None


def pinned(paths: list[str]) -> list[tuple[Path, str, str, str]]:
    """(config file, repo as written, normalized repo, rev) of every pinned pack."""
    out = []
    for path in config_files(paths):
        _, data = read_config(path)
        for repo, rev in packs.references(data):
            out.append((path, repo, packs.normalize(repo, str(path.parent.resolve())), rev))
    return out


def _state(repo: str, rev: str) -> tuple[str, str | None]:
    try:
        pack = packs.open_pinned(repo, rev, os.environ)
    except packs.PackError as exc:
        return str(exc), packs.pinned_commit(repo, rev, os.environ)
    return "fetched", pack.commit


def _moved(fetched: pack_fetch.Fetched, was: str | None) -> dict[str, list[str]]:
    """What changed in a pin whose rev now names another commit (a moved tag), from the
    cache's copy of the commit it named before; nothing more is fetched."""
    try:
        old = packs.open_pinned(fetched.repo, was or "", os.environ)
        return pack_changes(old, packs.open_pinned(fetched.repo, fetched.rev, os.environ))
    except packs.PackError as exc:
        return {"files": [f"its changes cannot be shown: {exc}"]}


def main(args: argparse.Namespace) -> int:
    refs = pinned(args.config)
    if args.action == "list":
        rows = [{"config": str(path), "repo": repo, "rev": rev,
                 **dict(zip(("state", "commit"), _state(full, rev), strict=True))}
                for path, repo, full, rev in refs]
        if args.json:
            output.print_json({"packs": rows})
        elif rows:
            output.table(("repo", "rev", "commit", "state", "config"),
                         ([r["repo"], r["rev"], (r["commit"] or "-")[:12], r["state"],
                           r["config"]] for r in rows), optional=("commit", "config"))
        else:
            output.line("no config here pins a pack (prompthooks.packs)")
        return EXIT_OK
    before = {(full, rev): packs.pinned_commit(full, rev, os.environ) for _, _, full, rev in refs}
    results = pack_fetch.fetch_all([(full, rev) for _, _, full, rev in refs], os.environ)
    moved = {(r.repo, r.rev): _moved(r, before.get((r.repo, r.rev))) for r in results
             if isinstance(r, pack_fetch.Fetched) and before.get((r.repo, r.rev))
             not in (None, r.commit)}
    failed = [r for r in results if isinstance(r, packs.PackError)]
    done = [r for r in results if isinstance(r, pack_fetch.Fetched)]
    if args.json:
        output.print_json({"fetched": [{"repo": r.repo, "rev": r.rev, "commit": r.commit,
                                        "folder": str(r.folder), "already": r.already,
                                        **({"moved_from": before[(r.repo, r.rev)],
                                            "changes": moved[(r.repo, r.rev)]}
                                           if (r.repo, r.rev) in moved else {})}
                                       for r in done],
                           "errors": [str(e) for e in failed]})
    else:
        for r in done:
            what = "already in the cache" if r.already else "fetched"
            output.line(f"{r.repo} {r.rev}: {what} ({r.commit[:12]})")
            if (r.repo, r.rev) in moved:
                was = before[(r.repo, r.rev)] or ""
                output.line(f"  {r.rev} moved from {was[:12]}: the configs that pin it do not "
                            "run until approved again (prompthooks trust)", "yellow")
                print_pack_changes(moved[(r.repo, r.rev)])
        for error in failed:
            print(f"prompthooks: {error}", file=sys.stderr)
        if not results:
            output.line("no config here pins a pack (prompthooks.packs)")
    return EXIT_ERROR if failed else EXIT_OK
