"""Prompt templates: the shipped library, ``$ARGUMENTS`` rendering, fencing and truncation.

``$ARGUMENTS`` is replaced by the event with a literal replacement (a function, not a regex
replacement string, so ``$&``, ``\\1`` or ``\\g<0>`` inside the event stay as they are);
``\\$`` is a literal dollar; a template without ``$ARGUMENTS`` gets
``\\n\\nARGUMENTS: <event>`` appended.
The event is always put inside a fence whose boundary carries a random nonce the event does
not contain, so the data cannot close the fence and pose as instructions.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from os import urandom
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

from .files import UnsafeFile, read_text

PLACEHOLDER = re.compile(r"\\\$|\$ARGUMENTS")
# The shipped library: prompthooks/prompts when installed from a wheel, or <repo>/prompts in a
# source or editable install.
_PACKAGE = Path(__file__).resolve().parent.parent  # prompthooks/
LIBRARY_DIRS = (_PACKAGE / "prompts", _PACKAGE.parent / "prompts")
DEFAULT_MAX_EVENT_CHARS = 20_000
_MARK = "...[prompthooks: {} more characters cut]"


class TemplateError(ValueError):
    """A template that cannot be found or read."""


class Template(NamedTuple):
    """A policy template: its text and the front matter that describes it."""

    text: str
    meta: Mapping[str, Any] = MappingProxyType({})
    path: str | None = None


def library_dir() -> Path | None:
    return next((d for d in LIBRARY_DIRS if d.is_dir()), None)


def library() -> dict[str, Path]:
    """Short name -> file of every shipped template."""
    folder = library_dir()
    return {p.stem: p for p in sorted(folder.glob("*.md"))} if folder else {}


def parse_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """``---``-fenced ``key: value`` lines (``[a, b]`` lists) and the body after them."""
    if not text.startswith("---\n"):
        return {}, text
    end = text.find("\n---\n", 4)
    if end < 0:
        return {}, text
    meta: dict[str, Any] = {}
    for line in text[4:end].splitlines():
        key, sep, value = line.partition(":")
        if not sep or not key.strip() or line.startswith((" ", "#")):
            continue
        value = value.strip()
        if value.startswith("[") and value.endswith("]"):
            meta[key.strip()] = [v.strip() for v in value[1:-1].split(",") if v.strip()]
        else:
            meta[key.strip()] = value
    return meta, text[end + 5:].lstrip("\n")


def load_template_file(path: Path) -> Template:
    """A prompt file: a regular file of at most 1 MiB (a FIFO or a huge file is refused,
    never waited for or read whole)."""
    try:
        meta, body = parse_front_matter(read_text(path))
    except UnsafeFile as exc:
        raise TemplateError(f"prompt file {path} {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TemplateError(f"cannot read prompt file {path}: {exc}") from None
    return Template(body, meta, str(path))


def resolve_prompt_file(name: str, config_dir: str | None) -> Path:
    """A short library name (``destructive-shell``), or a path relative to the config's folder
    (then to the library's parent, so ``prompts/destructive-shell.md`` always works)."""
    shipped = library()
    if name in shipped:
        return shipped[name]
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", name):
        # Nothing is fetched while a hook runs: shared prompts come from a fetched pack.
        raise TemplateError(f"prompt file {name!r} is a URL; prompthooks never fetches a "
                            "prompt at run time: share policies as a pack (prompthooks.packs, "
                            "see docs/packs-and-trust.md, 'Policy packs')")
    path = Path(name).expanduser()
    bases = [Path(config_dir)] if config_dir else []
    folder = library_dir()
    if folder:
        bases.append(folder.parent)
    candidates = [path] if path.is_absolute() else [base / path for base in bases]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    known = ", ".join(shipped) or "none"
    raise TemplateError(f"prompt file {name!r} not found (shipped templates: {known})")


def render(template: str, arguments: str) -> str:
    """Substitute ``arguments`` for ``$ARGUMENTS``; ``\\$`` is a literal dollar."""
    found = False

    def replace(match: re.Match[str]) -> str:
        nonlocal found
        if match.group() == "\\$":
            return "$"
        found = True
        return arguments

    text = PLACEHOLDER.sub(replace, template)
    return text if found else f"{text}\n\nARGUMENTS: {arguments}"


def new_nonce(data: str) -> str:
    """A random boundary token that does not occur in ``data``."""
    while True:
        # secrets.token_hex's own bytes; the secrets module would load OpenSSL (hmac's
        # hashlib), about 3 ms of the run
        nonce = urandom(8).hex()
        if nonce not in data:
            return nonce


def fence(data: str, nonce: str) -> str:
    return f"<event-data-{nonce}>\n{data}\n</event-data-{nonce}>"


def _cap_strings(value: Any, cap: int) -> Any:
    if isinstance(value, str) and len(value) > cap:
        return value[:cap] + _MARK.format(len(value) - cap)
    if isinstance(value, Mapping):
        return {k: _cap_strings(v, cap) for k, v in value.items()}
    if isinstance(value, list):
        return [_cap_strings(v, cap) for v in value]
    return value


def _longest_string(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, Mapping):
        return max((_longest_string(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return max((_longest_string(v) for v in value), default=0)
    return 0


def _dumps(value: Any) -> str:
    """The event's canonical JSON: keys sorted, fixed separators, non-ASCII text kept readable,
    so key order and whitespace in the host's bytes (an indented file, ``echo`` adding a
    newline) change neither the prompt nor its cassette key. A lone surrogate (``"\\ud800"``
    in the host's JSON) is written back as its ``\\u`` escape: raw, it cannot be encoded as
    UTF-8, so the request could not be sent (nor keyed in a cassette) and the hook would fail
    open."""
    return (json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(", ", ": "))
            .encode("utf-8", "backslashreplace").decode())


def event_json(raw: Mapping[str, Any], budget: int) -> tuple[str, bool]:
    """The event's canonical JSON for a prompt (see :func:`_dumps`), at most ``budget``
    characters, and whether it was cut.

    Long strings (a file's content, a tool's output) are cut first, with a visible marker, by
    the largest cap that fits; if the structure alone is too big the text itself is cut.
    """
    raw_text = _dumps(raw)
    if len(raw_text) <= budget:
        return raw_text, False
    low, high = 0, _longest_string(raw)
    best = None
    while low <= high:  # the largest per-string cap whose JSON fits the budget
        cap = (low + high) // 2
        text = _dumps(_cap_strings(raw, cap))
        if len(text) <= budget:
            best, low = text, cap + 1
        else:
            high = cap - 1
    if best is not None:
        return best, True
    marker = _MARK.format(len(raw_text) - budget)
    return raw_text[: max(budget - len(marker), 0)] + marker, True
