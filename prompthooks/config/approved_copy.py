"""The copy of what an approval covered, kept so that the next ``prompthooks trust`` can show
what changed since: the text of each covered file and the hooks the approval listed.

It lives in the data folder beside the trust store (``approved/<sha256 of the folder's
key>.json``), is written only by ``prompthooks trust`` under the store's lock, and its sha256
is recorded with the approval: a copy rewritten afterwards (the agent can write the data
folder too) is not shown as what was approved. It is only ever shown, never loaded or run.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .. import paths

MAX_COPY = 1024 * 1024  # bytes of one copy: files past it are named but not kept
_FOLDER = "approved"
_FORMAT = 1


@dataclass(frozen=True, slots=True)
class Copy:
    """The approved text of each covered file (None: not kept, being binary or past
    :data:`MAX_COPY`) and the approval's hook rows (commands.review; None when the approval
    listed none, as ``install``'s of its starter)."""

    files: Mapping[str, str | None] = field(default_factory=dict)
    hooks: Sequence[Sequence[str]] | None = None


def path_of(key: str, environ: Mapping[str, str]) -> Path:
    name = hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return paths.data_home(environ) / _FOLDER / f"{name}.json"


def encode(contents: Mapping[str, bytes], hooks: Sequence[Sequence[str]] | None) -> bytes:
    """The copy's bytes: each file's text while the whole stays within :data:`MAX_COPY`."""
    rows = None if hooks is None else [list(row) for row in hooks]
    if rows is not None and len(json.dumps(rows)) > MAX_COPY // 2:
        rows = None  # thousands of hooks, or huge commands: the files' diff says it all
    kept: dict[str, str | None] = {}
    room = MAX_COPY - len(json.dumps(rows)) - 4096  # the rows and the JSON framing
    for name, data in sorted(contents.items()):
        try:
            text: str | None = data.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if text is not None and len(json.dumps(text)) > room:
            text = None
        room -= len(json.dumps(text)) + len(json.dumps(name)) + 4
        kept[name] = text
    return json.dumps({"format": _FORMAT, "files": kept, "hooks": rows},
                      sort_keys=True).encode()


def write(key: str, body: bytes, environ: Mapping[str, str]) -> str:
    """Write the copy (owner-only) and return its sha256, to record with the approval."""
    path = path_of(key, environ)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    paths.atomic_write(path, body)
    return hashlib.sha256(body).hexdigest()


def remove(key: str, environ: Mapping[str, str]) -> None:
    # None kept, or not removable: either way it is never read without its recorded hash.
    with contextlib.suppress(OSError):
        path_of(key, environ).unlink()


def read(key: str, sha256: object, environ: Mapping[str, str]) -> Copy | str:
    """The copy kept with the approval whose record says ``sha256``, or why there is none."""
    if not isinstance(sha256, str):
        return "no copy of the approved files was kept (approved by an older prompthooks)"
    path = path_of(key, environ)
    try:
        body = paths.read_state(path, MAX_COPY)
    except OSError as exc:
        return f"the copy of the approved files cannot be read: {exc}"
    if body is None:
        return f"the copy of the approved files is gone ({path})"
    if hashlib.sha256(body).hexdigest() != sha256:
        return f"the copy of the approved files ({path}) is not the one kept at approval"
    try:
        data = json.loads(body)
        files = {str(k): v if isinstance(v, str) else None for k, v in data["files"].items()}
        hooks = (None if data["hooks"] is None
                 else [[str(c) for c in row] for row in data["hooks"]])
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return f"the copy of the approved files ({path}) cannot be read"
    return Copy(files, hooks)
