"""An approved hook file runs from a private copy of the bytes that were approved.

Run by its path, the file would be opened again by the kernel and its interpreter after the
check: a version renamed over it in between would run instead. So the file is read once
through a descriptor, its sha256 compared with the approval's, and exactly those bytes are
written to a new private folder (0700) under the file's own name, run from there and removed.
The hook keeps its working directory and environment (``PROMPTHOOKS_CONFIG_DIR`` names its
folder); only ``$0`` names the copy.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator

from .. import digests
from ..config.files import MAX_COVERED_FILE as MAX_FILE
from ..config.files import read_regular


class NotApproved(Exception):
    """The file is not the bytes approved (changed, gone, unreadable); one line."""


def _read(path: str) -> tuple[int, bytes]:
    try:
        info, data = read_regular(path, MAX_FILE)
    except OSError as exc:
        raise NotApproved(f"{path}: cannot read: {exc.strerror}") from None
    if data is None:  # not a regular file, or larger than any approved one
        raise NotApproved(f"{path} changed since it was approved; not run")
    return info.st_mode, data


@contextlib.contextmanager
def approved_copy(path: str, sha256: str) -> Iterator[str]:
    """The path of a private copy of ``path``'s bytes, which must hash to ``sha256``; removed
    when the block ends. Raises :class:`NotApproved`."""
    mode, data = _read(path)
    if digests.sha256(data).hexdigest() != sha256:
        raise NotApproved(f"{path} changed since it was approved; not run")
    folder = tempfile.mkdtemp(prefix="prompthooks-hook-")
    try:
        copy = os.path.join(folder, os.path.basename(path))
        fd = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC,
                     stat.S_IMODE(mode) & 0o700)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        yield copy
    finally:
        shutil.rmtree(folder, ignore_errors=True)
