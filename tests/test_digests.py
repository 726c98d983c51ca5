"""sha256 without OpenSSL: Python's own sha256 gives hashlib's digests, is what a run uses
(hashlib is never imported for it), and hashlib's is taken where Python has none."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import pytest

from prompthooks import digests

INPUTS = [b"", b"abc", "sûr — 検証 🔒".encode(), os.urandom(3 * 1024 * 1024 + 7)]


@pytest.mark.parametrize("data", INPUTS, ids=["empty", "ascii", "non-ascii", "3 MiB"])
def test_the_digest_is_hashlibs(data: bytes) -> None:
    assert digests.sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
    assert digests.sha256(data).digest() == hashlib.sha256(data).digest()
    taken = digests.sha256()
    for start in range(0, len(data), 1000):  # fed in parts, as the approval digest is
        taken.update(data[start:start + 1000])
    assert taken.hexdigest() == hashlib.sha256(data).hexdigest()


def test_it_is_pythons_own_sha256_not_openssls() -> None:
    assert digests.sha256 is not hashlib.sha256  # canary for the probe below: they differ
    probe = ("import sys; from prompthooks import digests; digests.sha256(b'x').hexdigest(); "
             "print(sorted(m for m in sys.modules if m in ('hashlib', '_hashlib')))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout.strip() == "[]"


def test_without_pythons_own_sha256_hashlibs_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    assert digests.pick() is digests.sha256  # canary: the modules are found when present
    for name in digests.BUILTIN_MODULES:
        monkeypatch.setitem(sys.modules, name, None)  # an import of it fails
    assert digests.pick() is hashlib.sha256
