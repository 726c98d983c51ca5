"""Fetching policy packs with git, into the user's cache (``config.packs`` reads them).

git runs as a subprocess with a deadline, never with a prompt (``GIT_TERMINAL_PROMPT=0``),
always inside a repository of our own in the cache (so a project's ``.git/config``, with its
``url.*.insteadOf``, ``core.sshCommand`` or hooks, never applies), without the caller's
``GIT_*`` variables that would point it elsewhere, with no hook templates, and allowed only the
https, http, ssh, git and file transports (never ``ext::``, which runs a command). The user's
own git config still applies: it holds the credentials and proxies a private repository needs.

A fetched commit is checked out, checked to be the commit the rev resolved to (a full SHA pin
must be itself), its manifest validated, and its ``.git`` dropped; the folder is then moved
into place in one rename, with a record of its files' sha256.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .. import paths
from ..paths import read_state
from . import packs
from .packs import PackError, is_full_sha

GIT_TIMEOUT = 120.0  # seconds for one git command: a clone of a small repository
# Variables of the caller's environment that git may still read: how to reach a host.
_KEEP = ("GIT_SSH", "GIT_SSH_COMMAND", "GIT_SSL_CAINFO", "GIT_SSL_CAPATH")
_SAFE = ("-c", "protocol.allow=never", "-c", "protocol.https.allow=always",
         "-c", "protocol.http.allow=always", "-c", "protocol.ssh.allow=always",
         "-c", "protocol.git.allow=always", "-c", "protocol.file.allow=always",
         "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false",
         "-c", "submodule.recurse=false", "-c", "advice.detachedHead=false",
         "-c", "init.defaultBranch=main")


@dataclass(frozen=True, slots=True)
class Fetched:
    repo: str
    rev: str
    commit: str
    folder: Path
    already: bool  # it was in the cache already


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in _KEEP}
    env.update(GIT_TERMINAL_PROMPT="0", GIT_PROTOCOL_FROM_USER="0", GIT_ASKPASS="true",
               SSH_ASKPASS="true", GCM_INTERACTIVE="never", LC_ALL="C")
    return env


def git(repo_dir: Path, *args: str, timeout: float = GIT_TIMEOUT) -> str:
    """Run git in our own repository ``repo_dir``; its stdout, or PackError with git's last
    line of stderr."""
    command = ["git", *_SAFE, "-C", str(repo_dir), *args]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                              env=_env(), stdin=subprocess.DEVNULL, cwd=repo_dir)
    except FileNotFoundError:
        raise PackError("git is not installed: packs are fetched with git") from None
    except subprocess.TimeoutExpired:
        raise PackError(f"git {args[0]} did not finish within {timeout:.0f} s") from None
    if done.returncode != 0:
        lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
        said = [line for line in lines if line.startswith(("fatal:", "error:"))] or lines
        raise PackError(f"git {args[0]} failed: {said[0] if said else done.returncode}")
    return done.stdout


def check_repo(repo: str) -> None:
    if not repo or repo.startswith("-") or "\0" in repo or "\n" in repo:
        raise PackError(f"{repo!r} is not a repository URL or path")
    if "::" in repo.split("/", 1)[0]:  # transport::address runs a remote helper
        raise PackError(f"{repo!r}: only https, http, ssh, git and file repositories are used")


def _init(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    git(folder, "init", "-q", "--template=", ".")


def checkout(repo: str, rev: str, dest: Path) -> str:
    """``repo`` at ``rev`` checked out in ``dest`` (a new folder) without its ``.git``; the
    commit, verified."""
    check_repo(repo)
    if rev.startswith("-") or not rev.strip():
        raise PackError(f"{rev!r} is not a revision")
    _init(dest)
    try:
        git(dest, "fetch", "-q", "--no-tags", "--depth=1", "--", repo, rev)
        commit = git(dest, "rev-parse", "--verify", "FETCH_HEAD^{commit}").strip()
    except PackError:
        # A server that does not serve a commit by its SHA: fetch its branches and tags.
        git(dest, "fetch", "-q", "--no-tags", "--", repo, "+refs/heads/*:refs/remotes/r/*",
            "+refs/tags/*:refs/tags/*")
        commit = git(dest, "rev-parse", "--verify", "--end-of-options",
                     f"{rev}^{{commit}}").strip()
    if is_full_sha(rev) and commit != rev.lower():
        raise PackError(f"{repo} at {rev}: the fetched commit is {commit}, not the pinned SHA")
    git(dest, "checkout", "-q", "--detach", commit)
    head = git(dest, "rev-parse", "HEAD").strip()
    if head != commit:
        raise PackError(f"{repo} at {rev}: checked out {head}, expected {commit}")
    shutil.rmtree(dest / ".git")
    return commit


def _write_json(path: Path, data: Mapping[str, object]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        paths.atomic_write(path, (json.dumps(data, indent=2, sort_keys=True) + "\n").encode(),
                           durable=True)
    except OSError as exc:
        raise PackError(f"cannot write {path}: {exc.strerror or exc}") from None


def fetch(repo: str, rev: str, environ: Mapping[str, str]) -> Fetched:
    """Fetch ``repo`` at ``rev`` into the cache (unless the commit it names is there and
    intact) and pin ``rev`` to its commit. ``repo`` is normalized already."""
    store = packs.store_dir(environ)
    store.mkdir(parents=True, exist_ok=True, mode=0o700)
    known = packs.pinned_commit(repo, rev, environ)
    if known and is_full_sha(rev):
        try:
            pack = packs.open_pinned(repo, rev, environ)
            return Fetched(repo, rev, known, pack.root, True)
        except PackError:
            pass
    with tempfile.TemporaryDirectory(dir=store, prefix=".fetch-") as tmp:
        work = Path(tmp) / "tree"
        commit = checkout(repo, rev, work)
        name, policies = packs.read_manifest(work)
        folder = packs.pack_dir(repo, commit, environ)
        record = {"repo": repo, "commit": commit, "digest": packs.digest(work, policies),
                  "name": name}
        already = _intact(folder, record)
        if not already:
            if folder.exists():
                shutil.rmtree(folder)
            try:
                os.replace(work, folder)
            except OSError:
                # Another fetch of the same commit moved its copy in first: keep that one.
                if not _intact(folder, record):
                    raise
            else:
                _write_json(packs.record_path(folder), record)
    if not is_full_sha(rev):
        _write_json(packs.pin_path(repo, rev, environ),
                    {"repo": repo, "rev": rev, "commit": commit})
    return Fetched(repo, rev, commit, folder, already and known == commit)


def _intact(folder: Path, record: Mapping[str, object]) -> bool:
    try:
        old = json.loads(read_state(packs.record_path(folder), 64 * 1024) or b"null")
        _, policies = packs.read_manifest(folder)
        return bool(old == record and packs.digest(folder, policies) == record["digest"])
    except Exception:
        return False


def newest(repo: str, work: Path, freeze: bool) -> tuple[str, str]:
    """(rev, commit) of the newest tag reachable from the repository's HEAD, as pre-commit's
    autoupdate finds it (the HEAD commit when it has no tag); ``freeze``: the rev is the
    commit's SHA."""
    check_repo(repo)
    _init(work)
    git(work, "fetch", "-q", "--tags", "--", repo, "HEAD")
    try:
        tag = git(work, "describe", "--tags", "--abbrev=0", "FETCH_HEAD").strip()
        commit = git(work, "rev-parse", "--verify", "--end-of-options",
                     f"refs/tags/{tag}^{{commit}}").strip()
    except PackError:
        commit = git(work, "rev-parse", "--verify", "FETCH_HEAD^{commit}").strip()
        tag = commit
    return (commit if freeze else tag), commit


def fetch_all(refs: Sequence[tuple[str, str]], environ: Mapping[str, str]
              ) -> list[Fetched | PackError]:
    """Fetch every (normalized repo, rev) once; a failure is kept in the list, in its place."""
    out: list[Fetched | PackError] = []
    for repo, rev in dict.fromkeys(refs):
        try:
            out.append(fetch(repo, rev, environ))
        except PackError as exc:
            out.append(PackError(f"{repo} at {rev}: {exc}"))
        except OSError as exc:  # the cache cannot be written
            where = f" {exc.filename}" if exc.filename else ""
            out.append(PackError(f"{repo} at {rev}: cannot write the pack cache{where}: "
                                 f"{exc.strerror or exc}"))
    return out
