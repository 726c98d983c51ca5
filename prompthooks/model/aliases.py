"""Model aliases: short names the user gives models (``prompthooks aliases set fast
openai/gpt-4.1-mini``), as ``llm aliases`` keeps them: ``aliases.json`` in the user's config
folder, read with :func:`paths.read_state`. A hook's model (its handler's, ``PROMPTHOOKS_MODEL``
or its file's) that is an alias is called as the model it names; one level, never a chain. A
managed hook's model is its file's as written: the user's aliases do not reach it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

from .. import paths

FILE = "aliases.json"
LIMIT = 64 << 10
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class AliasError(OSError):
    """The aliases file cannot be read or written; one line naming the file."""


def path_of(environ: Mapping[str, str]) -> Path:
    return paths.config_home(environ) / FILE


def read(environ: Mapping[str, str]) -> dict[str, str]:
    """The aliases ({} when there are none). Raises AliasError for a file that is there but
    is not one prompthooks wrote."""
    path = path_of(environ)
    try:
        raw = paths.read_state(path, LIMIT)
        data = json.loads(raw) if raw is not None else {}
    except paths.BadStateFile as exc:
        raise AliasError(str(exc)) from None
    except OSError as exc:
        raise AliasError(f"{path}: {exc.strerror or exc}") from None
    except ValueError:
        raise AliasError(f"{path}: not JSON; remove it and set the aliases again") from None
    if not isinstance(data, dict):
        raise AliasError(f"{path}: not an aliases file; remove it and set the aliases again")
    return {k: v for k, v in data.items()
            if isinstance(k, str) and isinstance(v, str) and NAME.match(k) and v}


def resolve(model: str, environ: Mapping[str, str]) -> str:
    """The model ``model`` names: itself, or what the alias of that name stands for (a file
    that cannot be read names nothing: the hook calls the model as written, and ``aliases
    list`` says what is wrong)."""
    try:
        return read(environ).get(model, model)
    except AliasError:
        return model


def write(aliases: Mapping[str, str], environ: Mapping[str, str]) -> Path:
    path = path_of(environ)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    data = (json.dumps(dict(sorted(aliases.items())), indent=2) + "\n").encode()
    paths.atomic_write(path, data, mode=0o600, durable=True)
    return path


__all__ = ["FILE", "AliasError", "path_of", "read", "resolve", "write"]
