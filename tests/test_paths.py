"""read_state: the one reader of prompthooks' own files. Each hostile stand-in is made for real
(a FIFO with no writer, a symlink to a secret, a hard link, a folder, a socket, a huge file);
the canary is that the plain regular file beside it reads back, so a reader that refused
everything would fail."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import pytest

from prompthooks.paths import BadStateFile, open_state, read_state


def test_a_regular_file_reads_back_and_a_missing_one_is_none(tmp_path: Path) -> None:
    (tmp_path / "record").write_bytes(b'{"a": 1}')
    assert read_state(tmp_path / "record") == b'{"a": 1}'
    assert read_state(tmp_path / "absent") is None


def test_a_fifo_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "record"
    os.mkfifo(fifo)
    started = time.monotonic()
    with pytest.raises(BadStateFile, match="not a regular file"):
        read_state(fifo)
    # an open() that blocked would never return: no writer ever comes
    assert time.monotonic() - started < 5


def test_links_are_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_bytes(b"planted")
    (tmp_path / "soft").symlink_to(secret)
    os.link(secret, tmp_path / "hard")
    with pytest.raises(BadStateFile, match="symbolic link"):
        read_state(tmp_path / "soft")
    with pytest.raises(BadStateFile, match="hard link"):
        read_state(tmp_path / "hard")


def test_a_folder_and_a_socket_are_refused(tmp_path: Path) -> None:
    (tmp_path / "folder").mkdir()
    with pytest.raises(BadStateFile):
        read_state(tmp_path / "folder")
    path = tmp_path / "sock"
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(str(path))
        with pytest.raises(BadStateFile, match="not a regular file"):
            read_state(path)


def test_a_file_past_its_limit_is_refused(tmp_path: Path) -> None:
    (tmp_path / "big").write_bytes(b"x" * 101)
    (tmp_path / "fits").write_bytes(b"x" * 100)
    assert read_state(tmp_path / "fits", limit=100) == b"x" * 100
    with pytest.raises(BadStateFile, match="larger than 100 bytes"):
        read_state(tmp_path / "big", limit=100)


def test_open_state_creates_and_appends_but_never_through_a_link_or_fifo(
        tmp_path: Path) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND
    fd = open_state(tmp_path / "spool", flags)  # the canary: a plain file is made and written
    os.write(fd, b"row\n")
    os.close(fd)
    assert (tmp_path / "spool").read_bytes() == b"row\n"
    profile = tmp_path / "profile"
    profile.write_bytes(b"kept")
    (tmp_path / "soft").symlink_to(profile)
    os.link(profile, tmp_path / "hard")
    os.mkfifo(tmp_path / "fifo")
    for name, what in (("soft", "symbolic link"), ("hard", "hard link"),
                       ("fifo", "not a regular file")):
        with pytest.raises(BadStateFile, match=what):
            open_state(tmp_path / name, flags)
    assert profile.read_bytes() == b"kept"
    with pytest.raises(FileNotFoundError):
        open_state(tmp_path / "absent")
