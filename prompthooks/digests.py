"""sha256, the one hash a run takes (approvals, hook files, the config cache, pack contents,
cassette and verdict cache keys, the names of state files), without OpenSSL.

``import hashlib`` initialises OpenSSL (about 3 ms, a third of an interpreter's start), paid
by every event of a run that hashes anything. Python's own sha256 (``_sha2`` from 3.12,
``_sha256`` before) gives the same digests without it, slower per byte, and a run hashes
small things (a config, a template, a hook file of at most a MiB, a prompt). A Python built
without its own sha256 gets ``hashlib``'s. An http hook keeps ``hashlib`` (its client loads
OpenSSL anyway, and a replayed request's body may be a 10 MB event). Standard library only.
"""

from __future__ import annotations

import sys
from typing import Protocol


class Hash(Protocol):
    """A sha256 being taken: ``hashlib.sha256()``'s interface, as much as prompthooks uses."""

    def update(self, data: bytes, /) -> None: ...

    def digest(self) -> bytes: ...

    def hexdigest(self) -> str: ...


class Constructor(Protocol):
    def __call__(self, data: bytes = ..., /) -> Hash: ...


# Where this Python keeps its own sha256 (3.12 and later, then 3.11), beside the standard
# library. Only that name is asked for: the other one does not exist there, so an import of
# it would search every folder on the path after the standard library (site-packages, the
# user's), where a module of that name could be put.
BUILTIN_MODULE = "_sha2" if sys.version_info >= (3, 12) else "_sha256"


def pick() -> Constructor:
    """Python's own sha256, else ``hashlib``'s."""
    try:
        module = __import__(BUILTIN_MODULE)
    except ImportError:
        # a Python built without its own sha256: OpenSSL's (hashlib's cost, on every run
        # that hashes, is what the module above avoids)
        import hashlib

        return hashlib.sha256
    found: Constructor = module.sha256
    return found


sha256: Constructor = pick()
