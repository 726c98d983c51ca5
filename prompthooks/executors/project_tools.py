"""An agent hook's read-only tools over the project: read a file, search contents, list files.

Confinement is the point. A hostile project (or a model steered by one) names the paths, so:

- every path is taken relative to the project folder (the event's project dir, resolved once
  and opened as a directory); an absolute path is accepted only when it names a place inside
  that folder; ``..`` is refused before anything is opened;
- each component is opened with ``O_NOFOLLOW`` relative to its parent's descriptor, so no
  symbolic link is followed anywhere (a link to a file or a folder outside is refused, and a
  link swapped in between two checks is never followed either);
- a file is opened ``O_NONBLOCK`` and checked after the open: a FIFO, device or socket is
  refused without waiting on it, and so is a file with other names (``st_nlink > 1``: a hard
  link to a file outside the project);
- sizes are bounded per call and per hook (bytes read, entries listed, matches returned), the
  walk and the search stop at the hook's deadline, and search patterns are RE2 (linear time).

Nothing here writes, runs or reaches the network. The text a tool returns is raw: the agent
executor redacts and fences it before the model sees it.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import re2  # type: ignore[import-untyped]

from ..paths import read_upto

# Per call.
READ_BYTES = 64 * 1024  # of one file's text returned by one read
READ_LINES = 2000  # lines returned by one read
LIST_ENTRIES = 200  # paths returned by one list
SEARCH_MATCHES = 100  # matching lines returned by one search
LINE_CHARS = 300  # of one matching line shown
# Per hook.
HOOK_BYTES = 512 * 1024  # returned by all its reads
HOOK_ENTRIES = 2000  # returned by all its lists
HOOK_MATCHES = 500  # returned by all its searches
HOOK_SCANNED = 16 * 1024 * 1024  # of file contents its searches look through
FILE_SCANNED = 1024 * 1024  # of one file a search looks through
HOOK_VISITED = 50_000  # directory entries its walks look at
# Where a cut falls inside a word, the word's piece is dropped (looking this far back for its
# start): a key cut in two would reach the model in part, too short for the redaction to know
# it by its shape. The separators are the redaction's; none can be part of a key.
WORD_BACK = 1024
SEPARATORS = " \t\r\n\"',;:=&|()[]{}<>"
# The bounds, in words, for explain.
LIMITS = (f"per call: {READ_BYTES // 1024} KiB read, {LIST_ENTRIES} paths listed, "
          f"{SEARCH_MATCHES} matches; per hook: {HOOK_BYTES // 1024} KiB read, {HOOK_ENTRIES} "
          f"paths, {HOOK_MATCHES} matches, {HOOK_SCANNED // 1024 // 1024} MiB searched")

# The tools as the model is offered them (OpenAI tool calling).
TOOLS: tuple[dict[str, Any], ...] = (
    {"type": "function", "function": {
        "name": "read_file",
        "description": ("Read a text file of the project. Returns numbered lines. Paths are "
                        "relative to the project folder."),
        "parameters": {"type": "object", "properties": {
            "path": {"type": "string", "description": "the file, relative to the project"},
            "offset": {"type": "integer", "description": "first line (1-based; default 1)"},
            "limit": {"type": "integer", "description": f"lines (default {READ_LINES})"}},
            "required": ["path"]}}},
    {"type": "function", "function": {
        "name": "search",
        "description": ("Search the contents of the project's files for a regular "
                        "expression (RE2 syntax). Returns path:line: text for each match."),
        "parameters": {"type": "object", "properties": {
            "pattern": {"type": "string", "description": "an RE2 regular expression"},
            "path": {"type": "string",
                     "description": "a folder or file to search (default: the project)"},
            "glob": {"type": "string", "description": "only files whose path matches this"}},
            "required": ["pattern"]}}},
    {"type": "function", "function": {
        "name": "list_files",
        "description": ("List the project's files whose path matches a glob pattern "
                        "(`*` within a name, `**` across folders, e.g. `reports/**/*.xml`; "
                        "a pattern without `/` matches a file's name in any folder)."),
        "parameters": {"type": "object", "properties": {
            "pattern": {"type": "string", "description": "a glob, relative to the project"}},
            "required": ["pattern"]}}},
)
NAMES = tuple(t["function"]["name"] for t in TOOLS)


class Refused(Exception):
    """A tool call that is not answered: the message is the error result the model gets."""


@dataclass
class Spent:
    """What one hook's tool calls have used of its budget."""

    read: int = 0
    listed: int = 0
    matches: int = 0
    scanned: int = 0
    visited: int = 0


def unusable_root(root: str) -> str | None:
    """Why ``root`` cannot be an agent hook's project folder (None: it can): the whole file
    system or a home folder is no project, and reading it would reach every secret there."""
    real = os.path.realpath(root)
    if real == "/" or real == os.path.realpath(os.path.expanduser("~")):
        return f"the project folder {real} is not a project (the root or a home folder)"
    if not os.path.isdir(real):
        return f"the project folder {real} is not a folder"
    return None


@dataclass
class ProjectTools:
    """The tools of one agent hook's run, confined to ``root`` until ``deadline``."""

    root: str
    deadline: float
    spent: Spent = field(default_factory=Spent)

    def __post_init__(self) -> None:
        self.root = os.path.realpath(self.root)
        # Opened once: every path is then opened from this descriptor, so a project folder
        # renamed and replaced by a link while the hook runs is not followed either.
        self._fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
                           | os.O_CLOEXEC)

    def close(self) -> None:
        os.close(self._fd)

    def __enter__(self) -> ProjectTools:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def call(self, name: str, arguments: str) -> str:
        """The result of one tool call; :class:`Refused` for a call that gets an error."""
        tool: dict[str, Callable[[dict[str, Any]], str]] = {
            "read_file": self._read, "search": self._search, "list_files": self._list}
        if name not in tool:
            raise Refused(f"unknown tool {name[:80]!r}; the tools are {', '.join(NAMES)}")
        try:
            args = json.loads(arguments or "{}")
        except (ValueError, RecursionError):
            raise Refused("the arguments are not a JSON object") from None
        if not isinstance(args, dict):
            raise Refused("the arguments are not a JSON object")
        return tool[name](args)

    # The tools.

    def _read(self, args: dict[str, Any]) -> str:
        path = _required(args, "path")
        offset, limit = _number(args, "offset", 1), _number(args, "limit", READ_LINES)
        left = HOOK_BYTES - self.spent.read
        if left <= 0:
            raise Refused(f"this hook has read its {HOOK_BYTES} bytes; decide with what you have")
        fd = self._open(path, directory=False)
        try:
            data = read_upto(fd, FILE_SCANNED)
        finally:
            os.close(fd)
        lines = _decoded(data, len(data) >= FILE_SCANNED).splitlines()
        chosen = lines[max(offset, 1) - 1:][:max(min(limit, READ_LINES), 1)]
        out, size = [], 0
        cap = min(READ_BYTES, left)
        for number, line in enumerate(chosen, start=max(offset, 1)):
            text = f"{number:6}\t{line}"
            bytes_ = len(text.encode("utf-8", "replace")) + 1
            if size + bytes_ > cap:
                if cap < READ_BYTES:  # the hook's own budget, not this call's, is spent
                    out.append(f"[cut: this hook has read its {HOOK_BYTES} bytes]")
                    size = left
                else:
                    out.append(f"[cut: the read stops at {cap} bytes; ask for a later offset]")
                break
            out.append(text)
            size += bytes_
        self.spent.read += size
        if not chosen:
            whole = "" if len(data) < FILE_SCANNED else f" in its first {FILE_SCANNED} bytes"
            return f"(no lines from line {offset}; the file has {len(lines)}{whole})"
        return "\n".join(out)

    def _list(self, args: dict[str, Any]) -> str:
        pattern = _required(args, "pattern")
        matcher = _glob(pattern)
        found: list[str] = []
        room = min(LIST_ENTRIES, HOOK_ENTRIES - self.spent.listed)
        if room <= 0:
            raise Refused(f"this hook has listed its {HOOK_ENTRIES} paths")
        more = False
        for rel in self._walk(""):
            if matcher(rel):
                if len(found) == room:
                    more = True
                    break
                found.append(rel)
        self.spent.listed += len(found)
        if more:
            found.append(f"[cut: more than {room} paths match; narrow the pattern]")
        return "\n".join(found) if found else "(no file matches)"

    def _search(self, args: dict[str, Any]) -> str:
        pattern = _required(args, "pattern")
        where = _text(args, "path") or ""
        only = _glob(_text(args, "glob")) if _text(args, "glob") else None
        options = re2.Options()
        options.log_errors = False
        try:
            regex = re2.compile(pattern, options)
        except (re2.error, UnicodeError) as exc:
            raise Refused(f"the pattern is not an RE2 regular expression: {exc}") from None
        room = min(SEARCH_MATCHES, HOOK_MATCHES - self.spent.matches)
        if room <= 0:
            raise Refused(f"this hook has had its {HOOK_MATCHES} matches")
        start = self._relative(where) if where else ""
        files = [start] if start and self._is_file(start) else self._walk(start)
        out: list[str] = []
        for rel in files:
            if only is not None and not only(rel):
                continue
            if self.spent.scanned >= HOOK_SCANNED:
                out.append("[cut: this hook's searches have looked through all they may]")
                break
            try:
                fd = self._open(rel, directory=False)
            except Refused:
                continue  # a link, a FIFO, a file with other names: not searched
            cap = min(FILE_SCANNED, HOOK_SCANNED - self.spent.scanned)
            try:
                data = read_upto(fd, cap)
            finally:
                os.close(fd)
            self.spent.scanned += len(data)
            if b"\0" in data[:8192]:
                continue  # binary
            for number, line in enumerate(_decoded(data, len(data) >= cap).splitlines(), 1):
                if regex.search(line):
                    shown = line if len(line) <= LINE_CHARS else _whole(line[:LINE_CHARS + 1])
                    out.append(f"{rel}:{number}: {shown[:LINE_CHARS]}")
                    if len(out) >= room:
                        break
            if len(out) >= room:
                out.append(f"[cut: at {room} matches; narrow the pattern]")
                break
        self.spent.matches += len(out)
        return "\n".join(out) if out else "(no match)"

    # Confinement.

    def _relative(self, path: str) -> str:
        """``path`` as a relative path inside the project, or :class:`Refused`."""
        if "\0" in path:
            raise Refused("a path cannot hold a NUL character")
        if os.path.isabs(path):
            inside = os.path.normpath(path)
            if inside != self.root and not inside.startswith(self.root.rstrip("/") + "/"):
                raise Refused(f"{path[:200]} is outside the project folder; paths are "
                              "relative to it")
            path = os.path.relpath(inside, self.root)
        parts = [p for p in path.split("/") if p not in ("", ".")]
        if ".." in parts:
            raise Refused("'..' is not allowed: paths stay inside the project folder")
        return "/".join(parts)

    def _open(self, path: str, directory: bool) -> int:
        """A descriptor for ``path`` inside the project, no link followed on the way; a file
        must be a regular file with no other name. Never blocks."""
        parts = [p for p in self._relative(path).split("/") if p]
        fd = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=self._fd)
        try:
            for i, part in enumerate(parts):
                last = i == len(parts) - 1
                flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY
                if not last or directory:
                    flags |= os.O_DIRECTORY
                try:
                    child = os.open(part, flags, dir_fd=fd)
                except OSError as exc:
                    raise Refused(_why(path, exc)) from None
                os.close(fd)
                fd = child
            info = os.fstat(fd)
            if directory:
                return fd
            if not stat.S_ISREG(info.st_mode):
                raise Refused(f"{path[:200]} is not a regular file")
            if info.st_nlink > 1:
                raise Refused(f"{path[:200]} has other names (a hard link); not read")
            return fd
        except BaseException:
            os.close(fd)
            raise

    def _is_file(self, rel: str) -> bool:
        try:
            os.close(self._open(rel, directory=False))
        except Refused:
            return False
        return True

    def _walk(self, start: str) -> Iterator[str]:
        """Every regular file's relative path under ``start``, breadth first, in name order;
        symbolic links are neither followed nor listed. Stops at the budget or deadline."""
        queue = [start]
        while queue:
            folder = queue.pop(0)
            try:
                fd = self._open(folder, directory=True)
            except Refused:
                continue
            try:
                with os.scandir(fd) as entries:
                    names = sorted((e.name, e.is_dir(follow_symlinks=False),
                                    e.is_file(follow_symlinks=False)) for e in entries)
            except OSError:
                continue
            finally:
                os.close(fd)
            for name, is_dir, is_file in names:
                self.spent.visited += 1
                if self.spent.visited > HOOK_VISITED or time.monotonic() >= self.deadline:
                    return
                rel = f"{folder}/{name}" if folder else name
                if is_dir:
                    queue.append(rel)
                elif is_file:
                    yield rel


def _why(path: str, exc: OSError) -> str:
    shown = path[:200]
    if exc.errno == errno.ELOOP or exc.errno == errno.EMLINK:
        return f"{shown} is or passes through a symbolic link; links are not followed"
    if exc.errno == errno.ENOTDIR:
        return f"{shown}: a part of it is not a folder (or is a symbolic link)"
    if exc.errno == errno.ENOENT:
        return f"{shown}: no such file in the project"
    return f"{shown}: {exc.strerror or exc}"


def _decoded(data: bytes, cut: bool) -> str:
    """A file's bytes as text; when ``cut`` (the read stopped at a cap), without the piece of
    a word the cap went through."""
    text = data.decode("utf-8", "replace")
    return _whole(text) if cut else text


def _whole(text: str) -> str:
    """``text``, cut at its end, without the piece of a word the cut went through (kept when
    no separator is near: a word that long is no key)."""
    start = max(len(text) - WORD_BACK, 0)
    end = max(text.rfind(c, start) for c in SEPARATORS)
    return text[:end] if end >= 0 else text


def _text(args: dict[str, Any], key: str) -> str | None:
    value = args.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise Refused(f"'{key}' must be a string")
    return value


def _required(args: dict[str, Any], key: str) -> str:
    value = args.get(key)
    if not isinstance(value, str) or not value:
        raise Refused(f"'{key}' must be a non-empty string")
    return value


def _number(args: dict[str, Any], key: str, default: int) -> int:
    value = args.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise Refused(f"'{key}' must be a whole number")
    return value


def _glob(pattern: str | None) -> Callable[[str], bool]:
    """A glob (``*``, ``?``, ``[...]``, ``**``) as a full-path matcher on RE2."""
    text = (pattern or "*").lstrip("/")
    if text.startswith("./"):
        text = text[2:]
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if text.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if text.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = text.find("]", i + 2)
            if end < 0:
                out.append(re.escape(c))
            else:
                body = text[i + 1:end].replace("\\", "\\\\")
                out.append("[^" + body[1:] + "]" if body.startswith("!") else f"[{body}]")
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    options = re2.Options()
    options.log_errors = False
    options.dot_nl = True  # `**` matches a name holding a newline too: no file is unlisted
    try:
        regex = re2.compile("".join(out), options)
    except (re2.error, UnicodeError):
        raise Refused(f"{pattern!r} is not a glob pattern") from None
    # A pattern without a folder part matches a name anywhere, as `*.xml` would for a search.
    anywhere = "/" not in text
    return lambda rel: bool(regex.fullmatch(rel) or (anywhere and
                                                     regex.fullmatch(rel.rsplit("/", 1)[-1])))


__all__ = ["LIMITS", "NAMES", "TOOLS", "ProjectTools", "Refused", "unusable_root"]
