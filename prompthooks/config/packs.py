"""Policy packs on the run path: reading a pack's manifest and finding a pinned pack in the
user's cache, never touching the network (fetching is ``config.pack_fetch``).

A pack is a folder (a git repository's tree at one commit, or a local folder) holding
``prompthooks-pack.yaml``: its policies by id, each a prompt template file with suggested
events, matcher and settings, and its case files. A config uses it from its ``prompthooks``
block::

    "packs": [{"repo": "https://git.example.com/policies", "rev": "v1.2.0",
               "policies": [{"id": "force-push"}, {"id": "secrets", "failClosed": true}]}]

Fetched packs live in ``$XDG_CACHE_HOME/prompthooks/packs/``: one folder per repository and
commit (``<repo key>-<commit>``), beside it a record of what was fetched (the repository, the
commit and a sha256 of the files a load reads), and under ``pins/`` what each (repository,
rev) resolved to when it was fetched. A load reads each file once, hashes those bytes and uses
them; it refuses a folder that differs from its record and, for an approved config, from the
digest the approval recorded (which lives with the approval, not beside the cache: a cache
rewritten together with its record no longer matches). Every path a manifest names stays
inside the pack: no absolute path, no ``..``, no symlink on the way, regular files under the
config size cap only.
"""

# Annotations are evaluated here (no `from __future__ import annotations`): typing.NamedTuple
# compiles every string annotation of its fields when the class is made, on every run.

import contextlib
import functools
import json
import os
import re
import stat
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

from .. import digests
from ..paths import BadStateFile, cache_home, read_state
from . import files

MANIFEST = "prompthooks-pack.yaml"
_HEX = frozenset("0123456789abcdefABCDEF")
FETCH_COMMAND = "prompthooks packs fetch"


class PackError(Exception):
    """A pack that cannot be used; the message is one line for the user."""


class Policy(NamedTuple):
    """One policy of a manifest: a prompt template and what it suggests."""

    id: str
    prompt_file: str  # relative to the pack's root
    events: tuple[str, ...]
    matcher: str | None = None
    timeout: float | None = None
    fail_closed: bool = False
    model: str | None = None
    cases: tuple[str, ...] = ()


class Pack(NamedTuple):
    """A pack ready to use: its root, its policies, and the files a load reads (its repr
    leaves out their bytes)."""

    root: Path
    name: str
    policies: Mapping[str, Policy]
    repo: str | None = None
    commit: str | None = None
    # The bytes of the files a load reads (the manifest, then each template), read once:
    # what was hashed is what is used.
    texts: Mapping[str, bytes] = MappingProxyType({})
    digest: str = ""

    def __repr__(self) -> str:
        return (f"Pack(root={self.root!r}, name={self.name!r}, policies={self.policies!r}, "
                f"repo={self.repo!r}, commit={self.commit!r}, digest={self.digest!r})")


# "<repo> <rev>" -> the digest an approval recorded, while an approved config loads.
_approved: ContextVar[Mapping[str, str] | None] = ContextVar("prompthooks_approved_packs",
                                                             default=None)


@contextlib.contextmanager
def approved(digests: Mapping[str, str] | None) -> Iterator[None]:
    """Within the block a pinned pack must hash to the digest ``digests`` gives it (None: no
    approval applies, the fetch record is the reference)."""
    token = _approved.set(digests)
    try:
        yield
    finally:
        _approved.reset(token)


def is_full_sha(rev: str) -> bool:
    """Whether ``rev`` is a whole commit id (40 hex digits)."""
    return len(rev) == 40 and _HEX.issuperset(rev)


@functools.cache
def _address_forms() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """(URL, scp-like ``git@host:owner/repo``, ``transport::address``, refused by fetch):
    compiled on first use, since a run whose config names no pack never needs them."""
    return (re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://"), re.compile(r"^[^/:]+@[^/:]+:"),
            re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*::"))


def is_remote(repo: str) -> bool:
    url, scp, _ = _address_forms()
    return bool(url.match(repo) or scp.match(repo))


def normalize(repo: str, config_dir: str | None) -> str:
    """A URL as written; a local repository's path made absolute (relative to the config's
    folder), so that two configs naming it differently share one cache entry."""
    if is_remote(repo) or _address_forms()[2].match(repo):
        return repo
    base = Path(config_dir) if config_dir else Path.cwd()
    return str((base / os.path.expanduser(repo)).resolve())


def store_dir(environ: Mapping[str, str]) -> Path:
    return cache_home(environ) / "packs"


def _key(*parts: str) -> str:
    return digests.sha256("\0".join(parts).encode()).hexdigest()


def pack_dir(repo: str, commit: str, environ: Mapping[str, str]) -> Path:
    return store_dir(environ) / f"{_key(repo)[:16]}-{commit.lower()}"


def record_path(folder: Path) -> Path:
    return folder.with_name(folder.name + ".json")


def pin_path(repo: str, rev: str, environ: Mapping[str, str]) -> Path:
    return store_dir(environ) / "pins" / f"{_key(repo, rev)[:32]}.json"


def pinned_commit(repo: str, rev: str, environ: Mapping[str, str]) -> str | None:
    """The commit ``rev`` names: itself when it is a full SHA, else what it resolved to when
    it was last fetched (None: never fetched)."""
    if is_full_sha(rev):
        return rev.lower()
    try:
        data = json.loads(read_state(pin_path(repo, rev, environ), 64 * 1024) or b"null")
    except Exception:  # missing, damaged or planted: not fetched
        return None
    commit = data.get("commit") if isinstance(data, dict) else None
    if (isinstance(commit, str) and is_full_sha(commit) and data.get("repo") == repo
            and data.get("rev") == rev):
        return commit.lower()
    return None


# --- reading a pack's files ------------------------------------------------------------------

def inside(root: Path, relative: str) -> Path:
    """``relative`` under ``root``, refusing anything that could leave it: an absolute path,
    ``..``, a symlink anywhere on the way, or something other than a regular file."""
    parts = Path(relative).parts
    if not relative or Path(relative).is_absolute() or ".." in parts:
        raise PackError(f"{relative!r} points outside the pack")
    path = root
    for part in parts:
        path = path / part
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            raise PackError(f"{relative!r} does not exist in the pack") from None
        if stat.S_ISLNK(mode):
            raise PackError(f"{relative!r} goes through a symlink; a pack's files must be "
                            "regular files inside it")
    if not stat.S_ISREG(os.lstat(path).st_mode):
        raise PackError(f"{relative!r} is not a regular file")
    return path


def read(root: Path, relative: str, cached: bool = False) -> bytes:
    """A file of the pack; ``cached``: of a fetched pack, in prompthooks' own cache folder (read
    as every file there is, ``paths.read_state``)."""
    try:
        path = inside(root, relative)
        if not cached:
            return files.read_bytes(path)
        data = read_state(path, files.MAX_FILE_BYTES)
        if data is None:
            raise PackError(f"{relative!r} does not exist in the pack")
        return data
    except BadStateFile as exc:
        raise PackError(str(exc)) from None
    except files.UnsafeFile as exc:
        raise PackError(f"{relative} {exc}") from None
    except OSError as exc:
        raise PackError(f"{relative}: cannot read: {exc.strerror or exc}") from None


@functools.cache
def _manifest_model() -> Any:
    # pydantic only to read a manifest (a fetch, a cache miss), never on a cached run
    from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr

    class PolicyEntry(BaseModel):
        model_config = ConfigDict(extra="forbid", frozen=True)

        id: StrictStr = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", max_length=100)
        prompt_file: StrictStr
        events: list[StrictStr] = Field(min_length=1)
        matcher: StrictStr | None = None
        timeout: float | None = Field(default=None, gt=0, allow_inf_nan=False)
        failClosed: StrictBool = False
        model: StrictStr | None = None
        cases: StrictStr | list[StrictStr] = Field(default_factory=list)

    class ManifestFile(BaseModel):
        model_config = ConfigDict(extra="forbid", frozen=True)

        name: StrictStr | None = None
        description: StrictStr | None = None
        policies: list[PolicyEntry] = Field(min_length=1, max_length=500)

    return ManifestFile


def read_manifest(root: Path, raw: bytes | None = None) -> tuple[str, dict[str, Policy]]:
    """The pack's name and its policies by id (from ``raw`` when the manifest was read
    already); PackError for a manifest that is missing, unsafe, not YAML, or names a file
    outside the pack."""
    # yaml and pydantic only to read a manifest (a fetch, a cache miss)
    import yaml
    from pydantic import ValidationError

    raw = read(root, MANIFEST) if raw is None else raw
    try:
        data = yaml.safe_load(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, yaml.YAMLError, RecursionError) as exc:
        raise PackError(f"{MANIFEST} is not valid YAML: {' '.join(str(exc).split())[:200]}"
                        ) from None
    try:
        model = _manifest_model().model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise PackError(f"{MANIFEST}: {where}: {first['msg']}") from None
    policies: dict[str, Policy] = {}
    for entry in model.policies:
        if entry.id in policies:
            raise PackError(f"{MANIFEST}: policy id {entry.id!r} is given twice")
        inside(root, entry.prompt_file)
        cases = [entry.cases] if isinstance(entry.cases, str) else list(entry.cases)
        for case in cases:
            inside(root, case)
        policies[entry.id] = Policy(entry.id, entry.prompt_file, tuple(entry.events),
                                    entry.matcher, entry.timeout, entry.failClosed,
                                    entry.model, tuple(cases))
    return model.name or root.name, policies


def loaded_files(policies: Mapping[str, Policy]) -> list[str]:
    """The files a load reads: the manifest and every policy's template."""
    return [MANIFEST, *sorted({p.prompt_file for p in policies.values()})]


def digest_texts(texts: Mapping[str, bytes]) -> str:
    """The sha256 of files read already, by name, in their order."""
    sha = digests.sha256(b"prompthooks pack 1\0")
    for name, data in texts.items():
        for part in (name.encode(), data):
            sha.update(len(part).to_bytes(8, "big") + part)
    return sha.hexdigest()


def digest_files(root: Path, names: list[str]) -> str:
    return digest_texts({name: read(root, name) for name in names})


def _read_pack(root: Path, cached: bool = False
               ) -> tuple[str, dict[str, Policy], dict[str, bytes]]:
    """The manifest and templates read once: the name, the policies and the bytes."""
    raw = read(root, MANIFEST, cached)
    name, policies = read_manifest(root, raw)
    texts = {MANIFEST: raw}
    for file in loaded_files(policies)[1:]:
        texts[file] = read(root, file, cached)
    return name, policies, texts


def digest(root: Path, policies: Mapping[str, Policy]) -> str:
    """The sha256 of what a load reads: the manifest and every policy's template."""
    return digest_files(root, loaded_files(policies))


def check_of(pack: Pack, rev: str | None) -> dict[str, Any]:
    """What a cached load of a config using ``pack`` depends on (see :func:`still_valid`)."""
    return {"root": str(pack.root), "files": list(pack.texts), "digest": pack.digest,
            "repo": pack.repo, "rev": rev, "commit": pack.commit}


def still_valid(check: Mapping[str, Any], environ: Mapping[str, str]) -> bool:
    """Whether a cached load's pack is unchanged: the same files with the same bytes, and,
    for a pinned pack, its rev still resolving to the same commit. Reads no YAML."""
    try:
        if check["repo"] is not None and pinned_commit(check["repo"], check["rev"],
                                                       environ) != check["commit"]:
            return False
        return bool(digest_files(Path(check["root"]), list(check["files"]))
                    == check["digest"])
    except Exception:  # gone, unreadable, or a damaged entry: load it anew
        return False


def open_folder(root: Path) -> Pack:
    """A local folder used in place (``"path"`` in a config, ``try-pack PATH``)."""
    if not root.is_dir():
        raise PackError(f"pack folder {root} does not exist")
    name, policies, texts = _read_pack(root)
    now = digest_texts(texts)
    approvals = _approved.get()
    if approvals is not None and approvals.get(folder_key(root)) != now:
        raise PackError(f"pack folder {root} is not what the config's approval covers; "
                        "review it and run: prompthooks trust")
    return Pack(root, name, policies, texts=texts, digest=now)


def folder_key(root: Path) -> str:
    """How an approval names a folder pack's content (a pinned pack's is "<repo> <rev>")."""
    return f"path {root}"


def open_pinned(repo: str, rev: str, environ: Mapping[str, str]) -> Pack:
    """The pack ``repo`` at ``rev`` from the cache, its files checked against what was
    fetched. Never touches the network: a pack not in the cache is an error that says which
    command fetches it."""
    commit = pinned_commit(repo, rev, environ)
    fetch = f"run: {FETCH_COMMAND}"
    if commit is None:
        raise PackError(f"pack {repo} at {rev} is not fetched; {fetch}")
    folder = pack_dir(repo, commit, environ)
    try:
        record = json.loads(read_state(record_path(folder), 64 * 1024) or b"null")
    except Exception:  # missing, damaged or planted
        record = None
    if not folder.is_dir() or not isinstance(record, dict):
        raise PackError(f"pack {repo} at {rev} ({commit[:12]}) is not fetched; {fetch}")
    if record.get("repo") != repo or record.get("commit") != commit:
        raise PackError(f"pack cache {folder} does not hold {repo} at {commit[:12]}; {fetch}")
    try:
        name, policies, texts = _read_pack(folder, cached=True)
    except PackError:
        texts = {}
    now = digest_texts(texts) if texts else ""
    if not now or now != record.get("digest"):
        raise PackError(f"pack cache {folder} changed since it was fetched; {fetch}")
    approvals = _approved.get()
    if approvals is not None and approvals.get(f"{repo} {rev}") != now:
        raise PackError(f"pack cache {folder} is not what the config's approval covers; "
                        f"{fetch}, review it and run: prompthooks trust")
    return Pack(folder, name, policies, repo, commit, texts, now)


def references(data: Any) -> list[tuple[str, str]]:
    """(repo as written, rev) of every pinned pack a parsed config file names, read leniently
    (for trust and fetching, which must not fail on a file the loader will report)."""
    block = data.get("prompthooks") if isinstance(data, dict) else None
    uses = block.get("packs") if isinstance(block, dict) else None
    if not isinstance(uses, list):
        return []
    return [(use["repo"], use["rev"]) for use in uses
            if isinstance(use, dict) and isinstance(use.get("repo"), str)
            and isinstance(use.get("rev"), str)]


def folders(data: Any, config_dir: Path) -> list[Path]:
    """The folder of every ``path`` pack a parsed config file names, as a load finds it,
    read leniently (for trust)."""
    block = data.get("prompthooks") if isinstance(data, dict) else None
    uses = block.get("packs") if isinstance(block, dict) else None
    if not isinstance(uses, list):
        return []
    return [config_dir / Path(use["path"]).expanduser() for use in uses
            if isinstance(use, dict) and isinstance(use.get("path"), str)]


def resolutions(config_file: Path, environ: Mapping[str, str]) -> dict[str, str]:
    """``"<repo> <rev>"`` -> commit for the pinned packs a config file names that are
    fetched (for trust: an approval records them; a moved tag is a change)."""
    try:
        data = json.loads(files.read_bytes(config_file))
    except Exception:
        return {}
    out: dict[str, str] = {}
    for repo, rev in references(data):
        full = normalize(repo, str(config_file.parent))
        commit = pinned_commit(full, rev, environ)
        if commit:
            out[f"{full} {rev}"] = commit
    return out
