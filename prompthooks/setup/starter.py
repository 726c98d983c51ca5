"""The starter prompthooks config install writes when a scope has none: one shipped policy
(``destructive-shell``: block shell commands that wipe data outside the project) on Bash in
Claude Code style, which serves every host. Uninstall removes it only while it is byte for
byte what install wrote and no other host's glue of the same scope still uses it.

Install approves the starter for ``run`` (loading.trust) when it wrote it, or when the folder
holds exactly the starter and nothing else prompthooks would load: anything else the user
approves with ``prompthooks trust`` after reading it."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .. import paths
from ..config.discovery import MANAGED_DIR, PROJECT_DIR_NAME
from ..core.hook import Source
from ..hosts import FOLDER_DIALECT
from ..install import files
from ..install.glue import Say, Scope
from ..loading import trust
from ..loading.loader import CONFIG_FILE, HOOKS_DIR
from ..loading.managed import compile_folder, compiled_path

POLICY = "destructive-shell"
# 20 s leaves room inside the shortest run budget (Cline's 28 s).
_HOOKS = {"PreToolUse": [{"matcher": "Bash", "hooks": [
    {"type": "prompt", "prompt_file": POLICY, "timeout": 20}]}]}


def content(settings: Mapping[str, str] | None = None) -> bytes:
    """The starter's bytes, with a ``prompthooks`` block naming its model when install found
    one other than the default (setup/model_choice.py)."""
    data: dict[str, Any] = {"hooks": _HOOKS}
    if settings:
        data = {"prompthooks": dict(settings), **data}
    return (json.dumps(data, indent=2) + "\n").encode()


STARTER: bytes = content()


def is_starter(raw: bytes | None) -> bool:
    """Whether ``raw`` is byte for byte a starter install writes (on any model)."""
    if raw is None:
        return False
    if raw == STARTER:
        return True
    try:
        block = json.loads(raw).get("prompthooks")
    except (ValueError, AttributeError):
        return False
    return (isinstance(block, dict) and set(block) <= {"model", "api_base"}
            and all(isinstance(v, str) for v in block.values()) and raw == content(block))


def folder(scope: Scope, project: Path, root: Path = Path("/")) -> Path:
    """The scope's prompthooks config folder (managed: /etc/prompthooks under ``root``; local:
    the user's, since the project's own folder is shared with everyone who clones it)."""
    if scope == "managed":
        return root / MANAGED_DIR.relative_to("/")
    return project / PROJECT_DIR_NAME if scope == "project" else paths.config_home(os.environ)


def _holds_config(location: Path) -> bool:
    """Whether prompthooks would load anything from this folder (see loading.loader)."""
    if files.exists(location / CONFIG_FILE) or files.exists(location / HOOKS_DIR):
        return True
    return any(files.exists(location / name) or files.exists(location / f"{name}.md")
               for name in FOLDER_DIALECT.wire.CONFIG_EVENTS)


def write(location: Path, say: Say, scope: Scope = "project",
          settings: Mapping[str, str] | None = None) -> bool:
    """Write the starter (on the model ``settings`` name) unless the folder holds a config,
    and approve it; whether the folder holds a starter now."""
    path = location / CONFIG_FILE
    if is_starter(files.read_bytes(path)):
        say(f"already installed: starter config {path}")
    elif _holds_config(location):
        say(f"kept {location}: it holds a prompthooks config already, so no starter was written")
        return False
    else:
        files.atomic_write(path, content(settings))
        on = f", on {settings['model']}" if settings else ""
        say(f"wrote {path} (starter config: the {POLICY} policy on Bash commands{on})")
    if scope != "managed":  # the managed policy needs no approval
        _approve(location, "project" if scope == "project" else "user", say)
    return True


def _approve(location: Path, scope: str, say: Say) -> None:
    """Approve the folder if all prompthooks would load from it is the starter."""
    source = Source(scope, str(location), 1 if scope == "project" else 2)
    command = trust.approve_command(source)
    path = location / CONFIG_FILE
    if files.is_dry_run() and not os.path.lexists(path):
        # The starter is only planned, so there is nothing to digest: what would happen.
        if is_starter(files.read_bytes(path)) and not _holds_more(location):
            files.note_approval(path)
            say(f"approved {path} for prompthooks run (see: prompthooks trust --list)")
        return
    try:
        current = trust.digest(location)
        if current.files != (CONFIG_FILE,) or not is_starter(files.read_bytes(path)):
            say(f"not approved: {location} holds more than the starter; review it, then run: "
                f"{command}")
            return
        store = trust.read_store(os.environ)
        if store.records.get(trust.key_of(location), {}).get("sha256") == current.sha256:
            return  # approved already: nothing to write
        if not files.is_dry_run():
            trust.approve(source, location, os.environ, expected=current)
        files.note_approval(path)
    except (trust.Unapprovable, OSError) as exc:
        say(f"not approved: {location}: {exc}; run: {command}")
        return
    say(f"approved {path} for prompthooks run (see: prompthooks trust --list)")


def _holds_more(location: Path) -> bool:
    """Whether the folder holds anything prompthooks loads besides ``hooks.json``."""
    if files.exists(location / HOOKS_DIR):
        return True
    return any(files.exists(location / name) or files.exists(location / f"{name}.md")
               for name in FOLDER_DIALECT.wire.CONFIG_EVENTS)


def compile_managed(location: Path, say: Say) -> None:
    """Compile the managed policy install just wrote (see loading.managed)."""
    try:
        path = compile_folder(Source("managed", str(location), 0), location)
    except (ValueError, OSError) as exc:
        say(f"not compiled: {exc}")
        return
    say(f"compiled {path}; after changing the policy, run: prompthooks managed compile")


def remove(location: Path, used_by: list[str], say: Say) -> None:
    path = location / CONFIG_FILE
    raw = files.read_bytes(path)
    if raw is None:
        return
    if not is_starter(raw):
        say(f"kept {path}: it is not the starter config install wrote")
    elif used_by:
        say(f"kept {path}: the {' and '.join(used_by)} glue still uses it")
    else:
        files.remove(path)
        say(f"removed {path}")

        if os.path.lexists(compiled_path(location)):
            files.remove(compiled_path(location))
            say(f"removed {compiled_path(location)}")
