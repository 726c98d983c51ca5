"""sha256 without OpenSSL: Python's own sha256 gives hashlib's digests, is what a run uses
(hashlib is never imported for it), and hashlib's is taken where Python has none."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

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
    monkeypatch.setitem(sys.modules, digests.BUILTIN_MODULE, None)  # an import of it fails
    assert digests.pick() is hashlib.sha256


def test_a_module_planted_on_the_path_is_not_taken_for_pythons_sha256(tmp_path: Path) -> None:
    """Each Python keeps its own sha256 under one name; the other name exists nowhere in its
    standard library, so an import of it reaches every folder on the path after it
    (site-packages, the user's, which an agent running as the user can write). Neither name
    planted there replaces the digest an approval is checked with."""
    for name in ("_sha2", "_sha256"):
        (tmp_path / f"{name}.py").write_text(
            "class sha256:\n    def __init__(self, data=b''): pass\n"
            "    def update(self, data): pass\n    def hexdigest(self): return '0' * 64\n")
    probe = ("import sys, importlib.util; sys.path.append(sys.argv[1]); "
             "from prompthooks import digests; "
             "print(importlib.util.find_spec('_sha2' if sys.version_info < (3, 12) "
             "else '_sha256').origin); print(digests.sha256(b'abc').hexdigest())")
    found, digest = subprocess.run([sys.executable, "-c", probe, str(tmp_path)],
                                   capture_output=True, text=True, timeout=60,
                                   check=True).stdout.split()
    assert found == str(tmp_path / ("_sha2.py" if sys.version_info < (3, 12)
                                    else "_sha256.py"))  # the canary: the plant is reachable
    assert digest == hashlib.sha256(b"abc").hexdigest()
