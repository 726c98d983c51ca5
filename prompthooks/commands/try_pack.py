"""``prompthooks try-pack PATH|URL [--rev REV]``: run a pack's suites without using it, as
``pre-commit try-repo`` runs a hook repository's hooks.

A folder holding a manifest is used as it is (uncommitted edits included) unless ``--rev`` is
given; anything else is fetched with git into a temporary folder, at ``--rev`` (default
``HEAD``), checked like any fetched pack, and removed afterwards. No config and no cache is
changed. Each policy's case files run against that policy alone, with its suggested events
and matcher, exactly as ``prompthooks test`` runs them (cassettes, PASS/FAIL/ERROR)."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from ..api import Config, config_from_data
from ..config import pack_fetch, packs
from ..devtools import cases
from ..errors import PromptHooksError
from ..model.recording import Mode
from .test import run_suites


def _suites(root: Path, only: list[str]) -> list[tuple[Path, Config | None]]:
    try:
        name, policies = packs.read_manifest(root)
    except packs.PackError as exc:
        raise PromptHooksError(f"pack {root}: {exc}") from None
    unknown = sorted(set(only) - set(policies))
    if unknown:
        raise PromptHooksError(f"pack {name} has no policy {', '.join(unknown)} (it has: "
                               f"{', '.join(sorted(policies))})")
    suites: list[tuple[Path, Config | None]] = []
    for policy in policies.values():
        if only and policy.id not in only:
            continue
        data = {"prompthooks": {"packs": [{"path": str(root),
                                           "policies": [{"id": policy.id}]}]}}
        config = config_from_data(data, str(root / packs.MANIFEST), str(root))
        if config.errors:
            raise PromptHooksError(config.errors[0])
        for case in policy.cases:
            _cassette_inside(root, root / case)
            suites.append((root / case, config))
    if not suites:
        raise PromptHooksError(f"pack {name} has no case files (a policy's 'cases')")
    return suites


def _cassette_inside(root: Path, case_file: Path) -> None:
    """A pack's suite records into the pack, nowhere else: its case file names its cassette,
    and a pack is someone else's text (``cassette: ~/.bash_profile`` would have a recording
    written there, prompts included)."""
    try:
        spec = cases.read_case_file(case_file)
    except PromptHooksError:
        return  # reported when the suite runs
    cassette = cases.cassette_path(case_file, spec)
    try:
        cassette.resolve().relative_to(root.resolve())
    except ValueError:
        raise PromptHooksError(f"pack {root}: the suite {case_file.name} names a cassette "
                               f"outside the pack ({spec.cassette})") from None


def main(args: argparse.Namespace) -> int:
    mode: Mode = "record" if args.record else "rerecord" if args.rerecord else "replay"
    local = Path(args.pack)
    if args.rev is None and (local / packs.MANIFEST).is_file():
        return run_suites(_suites(local.resolve(), args.policy), mode, args.model, args.json)
    repo = packs.normalize(args.pack, None)
    with tempfile.TemporaryDirectory(prefix="prompthooks-try-pack-") as tmp:
        try:
            pack_fetch.checkout(repo, args.rev or "HEAD", Path(tmp) / "pack")
        except packs.PackError as exc:
            raise PromptHooksError(f"{args.pack} at {args.rev or 'HEAD'}: {exc}") from None
        return run_suites(_suites(Path(tmp) / "pack", args.policy), mode, args.model,
                          args.json)
