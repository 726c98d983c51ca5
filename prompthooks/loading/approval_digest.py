"""What an approval covers, read once: the files prompthooks loads from a config folder
(``hooks.json``, the Cline-style hook files in it and in its ``hooks/`` folder) and the
templates its ``hooks.json`` names (``prompt_file``, unless a shipped template's short name).

Each file is read through one descriptor, and the bytes read are the bytes hashed and the
bytes used: the load parses them (``files.served``), a template's text goes into its hook, and
a hook file runs from a private copy of them (``Hook.digest``). A file renamed over an approved
one after the check is never opened by name again.

A ``hooks.json`` command that runs a file inside the project by its path cannot be covered
that way (the shell opens the file by name when the hook runs, and the agent writes the
project), so a folder holding one cannot be approved at all.
"""

from __future__ import annotations

import json
import os
import shlex
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .. import digests
from ..config import files
from ..config.files import View
from ..config.load_result import Digest as Digest
from ..config.shell_words import ASSIGNMENT, INTERPRETERS
from ..hosts import FOLDER_DIALECT

MAX_FILE = files.MAX_COVERED_FILE
_CONFIG_FILE = files.CONFIG_FILE
_HOOKS_DIR = files.HOOKS_DIR
# Variables a hook's command may start a path with; they all name the project's root.
_PROJECT_VARIABLES = ("CLAUDE_PROJECT_DIR", "CURSOR_PROJECT_DIR", "PROMPTHOOKS_PROJECT_DIR")


class Unapprovable(Exception):
    """The folder holds something that cannot be covered safely (not a regular file, too big,
    unreadable, a script run from inside the project): it cannot be approved, so it never
    runs."""


def _is_hook_name(name: str) -> bool:
    """Whether the folder dialect loads a file of this name (an event's, or its ``.md``)."""
    events = FOLDER_DIALECT.hook_files
    return name in events or (name.endswith(".md") and name[:-3] in events)


def read_bounded(path: Path, cap: int = MAX_FILE) -> tuple[os.stat_result, bytes]:
    """(status, bytes) of a regular file, read through one descriptor without ever blocking
    (a FIFO) or reading more than ``cap`` bytes. Symlinks are followed; their targets are
    hashed by the caller."""
    try:
        info, data = files.read_regular(path, cap)
    except OSError as exc:
        raise Unapprovable(f"{path.name}: cannot read: {exc.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise Unapprovable(f"{path.name} is not a regular file")
    if data is None or len(data) > cap:  # larger, or it grew while being read
        raise Unapprovable(f"{path.name} is larger than {cap // 1024} KB")
    return info, data


def _entries(folder: Path) -> Iterator[tuple[str, Path]]:
    """(relative name, path) of every file the loader would load from ``folder``."""
    found = [(_CONFIG_FILE, folder / _CONFIG_FILE)] if os.path.lexists(folder / _CONFIG_FILE) \
        else []
    for prefix, where in (("", folder), (f"{_HOOKS_DIR}/", folder / _HOOKS_DIR)):
        if prefix and not where.is_dir():
            continue
        try:
            names = sorted(os.listdir(where))
        except OSError as exc:
            raise Unapprovable(f"{prefix or where.name}: cannot list: {exc.strerror}") from None
        for name in names:
            path = where / name
            if _is_hook_name(name) and not path.is_dir():  # the loader skips folders
                found.append((prefix + name, path))
    yield from found


def _strings(value: Any, key: str) -> Iterator[str]:
    """Every string given to ``key`` anywhere in a parsed JSON value (any dialect's shape)."""
    if isinstance(value, dict):
        for k, v in value.items():
            if k == key and isinstance(v, str):
                yield v
            else:
                yield from _strings(v, key)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v, key)


def _parsed(data: bytes) -> Any:
    try:
        return json.loads(data.decode("utf-8-sig"))
    except Exception:  # the load reports a broken file; nothing in it runs
        return None


# Options after which an interpreter runs code given inline or a module, not a file.
_INLINE = frozenset({"-c", "-m", "-e", "-E", "--eval", "-p", "--print"})
_PREFIXES = frozenset({"env", "exec", "nohup", "command", "builtin", "time"})


def _inline(interpreter: str, option: str) -> bool:
    if interpreter.endswith("sh"):  # sh -c '...', bash -lc '...'; sh -e is errexit
        return not option.startswith("--") and "c" in option
    return option in _INLINE


def _run_words(command: str) -> Iterator[str]:
    """The words of a shell command that name a file it runs: each simple command's program
    when it is a path (a bare name is looked up in PATH) and, after an interpreter (``bash``,
    ``python3``, ``node``, ``source``...), its first argument that is not an option."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        words = list(lexer)
    except ValueError:  # unbalanced quotes: the shell fails on it too, but look anyway
        words = command.split()
    program: str | None = None
    interpreter = ""
    code = False  # the next word is a shell's inline code (sh -c '...'): looked into too
    for word in words:
        if word and all(c in "();&|<>" for c in word):  # an operator: a new command
            program, interpreter, code = None, "", False
        elif code:
            code = False
            yield from _run_words(word)
        elif program is None:
            if ASSIGNMENT.match(word) or word in _PREFIXES:
                continue
            program = word
            name = os.path.basename(word)
            interpreter = name if INTERPRETERS.fullmatch(name) else ""
            if "/" in word:
                yield word
        elif interpreter:
            if word.startswith("-"):
                if _inline(interpreter, word):
                    code = interpreter.endswith("sh")
                    interpreter = ""
                continue
            interpreter = ""
            yield word


def _expand(word: str, folder: Path, root: Path | None) -> str | None:
    """``word`` with the variables that name the project or the config folder, and ``~``,
    expanded (None: it depends on something else)."""
    text = word.replace("${PROMPTHOOKS_CONFIG_DIR}", str(folder)).replace(
        "$PROMPTHOOKS_CONFIG_DIR", str(folder))
    for name in _PROJECT_VARIABLES:
        if root is None and name in text:
            return None  # a user config's project is whichever one runs it
        text = text.replace("${" + name + "}", str(root)).replace(f"${name}", str(root))
    home = os.path.expanduser("~")
    text = os.path.expanduser(text.replace("${HOME}", home).replace("$HOME", home))
    return None if not text or "$" in text else text


def _script_inside(word: str, folder: Path, root: Path | None) -> Path | None:
    """The path ``word`` names when it is inside ``root`` (the project) or ``folder``, there
    or not (a file created there later would run just as well)."""
    text = _expand(word, folder, root)
    if text is None:
        return None
    if not os.path.isabs(text):
        if root is None:
            return None
        text = os.path.join(root, text)
    try:
        os.fsencode(text)
    except UnicodeEncodeError:
        return None
    if "\0" in text:  # no file has such a name: the hook fails to start, and runs nothing
        return None
    path = Path(os.path.normpath(text))
    for base in {folder, *([root] if root else [])}:
        for candidate, where in ((path, base), (path.resolve(), base.resolve())):
            if candidate.is_relative_to(where):
                return path
    return None


def _check_commands(data: Any, folder: Path, root: Path | None) -> None:
    for command in _strings(data, "command"):
        try:
            words = list(_run_words(command))
        except RecursionError:  # sh -c inside sh -c, thousands deep
            raise Unapprovable(f"{_CONFIG_FILE}: a command is nested too deeply to "
                               "read") from None
        for word in words:
            script = _script_inside(word, folder, root)
            if script is not None:
                where = root if root is not None and script.is_relative_to(root) else folder
                raise Unapprovable(
                    f"{_CONFIG_FILE} runs {script.relative_to(where)} from inside the "
                    f"{'project' if where == root else 'config folder'} by its path: an "
                    "approval cannot pin what the shell opens later; put the script outside "
                    "the project")


def digest(folder: Path, root: Path | None = None) -> Digest:
    """The sha256 over every loaded file's name, link target (when a symlink), mode and bytes,
    over the ``hooks/`` folder's own link target, and over every template ``hooks.json``
    names; ``root`` is the project the folder belongs to (None for the user's folder). Raises
    :class:`Unapprovable`."""
    sha = digests.sha256(b"prompthooks trust 1\0")
    names: list[str] = []
    each: dict[str, str] = {}
    served: dict[str, tuple[int, bytes]] = {}
    executables: dict[str, str] = {}
    contents: dict[str, bytes] = {}

    def add(name: str, *parts: bytes) -> None:
        one = digests.sha256()
        for part in parts:
            framed = len(part).to_bytes(8, "big") + part
            sha.update(framed)
            one.update(framed)
        names.append(name)
        each[name] = one.hexdigest()

    hooks = folder / _HOOKS_DIR
    config: Any = None
    try:
        if hooks.is_symlink():  # a swapped link to another folder is another config
            link = os.fsencode(os.readlink(hooks))
            sha.update(len(b"link").to_bytes(8, "big") + b"link")
            for part in (_HOOKS_DIR.encode(), link):
                sha.update(len(part).to_bytes(8, "big") + part)
        for name, path in _entries(folder):
            target = os.readlink(path) if path.is_symlink() else ""
            info, data = read_bounded(path)
            add(name, b"file", os.fsencode(name), os.fsencode(target),
                f"{stat.S_IMODE(info.st_mode):o}".encode(), data)
            served[os.path.abspath(path)] = (info.st_mode, data)
            contents[name] = data
            if name == _CONFIG_FILE:
                config = _parsed(data)
            elif not name.endswith(".md"):
                executables[os.path.abspath(path)] = digests.sha256(data).hexdigest()
    except OSError as exc:  # a link replaced while being read
        raise Unapprovable(f"{exc.filename or folder}: cannot read: {exc.strerror}") from None
    if config is not None:
        _check_commands(config, folder, root)
    missing: set[str] = set()
    templates = _templates(config, folder, add, missing, contents)
    view = View(served, frozenset({os.path.abspath(folder), os.path.abspath(hooks)}),
                frozenset({_CONFIG_FILE,
                           *files.hook_file_names(FOLDER_DIALECT.hook_files)}))
    found = tuple(n for n in names if n not in missing)
    return Digest(sha.hexdigest(), found, each, view, templates, executables, contents)


def _templates(config: Any, folder: Path, add: Any, missing: set[str],
               contents: dict[str, bytes]) -> dict[tuple[str, str], bytes]:
    """Read and add every template ``config`` names; (config folder, name) -> bytes. The
    names of those not found go to ``missing``."""
    wanted = sorted(set(_strings(config, "prompt_file"))) if config is not None else []
    if not wanted:
        return {}
    from ..config.templates import (  # only a config with templates: runs load no model module
        TemplateError,
        library,
        resolve_prompt_file,
    )

    shipped = library()
    config_dir = str(folder.resolve())
    out: dict[tuple[str, str], bytes] = {}
    for name in wanted:
        if name in shipped:  # part of the installed prompthooks, not of the project
            continue
        try:
            path = resolve_prompt_file(name, config_dir)
        except TemplateError:  # the load reports it; were it created later, this changes
            add(name, b"template", name.encode(), b"missing")
            missing.add(name)
            continue
        _, data = read_bounded(path)
        shown = (str(path.relative_to(config_dir)) if path.is_relative_to(config_dir)
                 else str(path.absolute()))
        add(shown, b"template", name.encode(), os.fsencode(str(path)), data)
        contents[shown] = data
        out[(config_dir, name)] = data
    return out
