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

from typing import Protocol


class Hash(Protocol):
    """A sha256 being taken: ``hashlib.sha256()``'s interface, as much as prompthooks uses."""

    def update(self, data: bytes, /) -> None: ...

    def digest(self) -> bytes: ...

    def hexdigest(self) -> str: ...


class Constructor(Protocol):
    def __call__(self, data: bytes = ..., /) -> Hash: ...


# Where Python keeps its own sha256: 3.12 and later, then 3.11.
BUILTIN_MODULES = ("_sha2", "_sha256")


def pick() -> Constructor:
    """Python's own sha256, else ``hashlib``'s."""
    for name in BUILTIN_MODULES:
        try:
            module = __import__(name)
        except ImportError:
            continue
        found: Constructor = module.sha256
        return found
    # a Python built without its own sha256: OpenSSL's (hashlib's cost, on every run that
    # hashes, is what the modules above avoid)
    import hashlib

    return hashlib.sha256


sha256: Constructor = pick()
