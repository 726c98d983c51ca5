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
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
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
from ..model import keys

POLICY = "destructive-shell"
# 20 s leaves room inside the shortest run budget (Cline's 28 s).
_HOOKS = {"PreToolUse": [{"matcher": "Bash", "hooks": [
    {"type": "prompt", "prompt_file": POLICY, "timeout": 20}]}]}


def content(settings: Mapping[str, str] | None = None) -> bytes:
    """The starter's bytes, with a ``prompthooks`` block naming its model when install found
    one other than the default (:func:`find_model`, below)."""
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

# The starter's model -----------------------------------------------------------------------
# Which model the starter policy uses: one the user can actually call, found the way a person
# would look: prompthooks' own variables, a LiteLLM Proxy's, a provider's key in the environment
# or the key store, an Ollama answering on its port. Nothing found is said in plain words by
# install, with the command that fixes it: a gate must never look on while it is off.
#
# The looks over the network are bounded (an Ollama or proxy that does not answer at once is
# not there); none sends a key anywhere but to the endpoint it belongs to.

LOOK_SECONDS = 1.5  # an Ollama or a proxy on this machine or network answers well within it
OLLAMA = "127.0.0.1:11434"
# Providers with one key, in the order looked at, and the fast model the starter names.
_FAST = (("anthropic", None), ("openai", "gpt-4.1-mini"), ("gemini", "gemini/gemini-2.5-flash"))


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """The starter's model: ``model`` and ``api_base`` for its ``prompthooks`` block (None:
    none written, the environment's or the default model), and what it was chosen by."""

    model: str | None
    api_base: str | None
    why: str

    @property
    def shown(self) -> str:
        return self.model or "the default model"


def _get_json(url: str, key: str | None = None) -> object:
    """A bounded GET of a JSON document on a local or configured endpoint (no proxy: the
    address is the user's own), or None."""
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {key}"}
                                     if key else {})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=LOOK_SECONDS) as answer:
            return json.loads(answer.read(1 << 20))
    except (OSError, ValueError):
        return None


def ollama_models(environ: Mapping[str, str]) -> tuple[str, list[str]]:
    """Ollama's address (``OLLAMA_HOST`` or its default) and the models it has pulled ([]:
    none, or nothing answers there)."""
    host = (environ.get("OLLAMA_HOST") or OLLAMA).removeprefix("http://").rstrip("/")
    if host.startswith("0.0.0.0"):  # a server's listening address, not one to call
        host = "127.0.0.1" + host[len("0.0.0.0"):]
    found = _get_json(f"http://{host}/api/tags")
    names = [str(m.get("name")) for m in found.get("models", [])
             if isinstance(m, dict) and m.get("name")] if isinstance(found, dict) else []
    return f"http://{host}", names


def _proxy_model(environ: Mapping[str, str]) -> str | None:
    """The first model a LiteLLM Proxy (``LITELLM_PROXY_API_BASE``) serves, or None."""
    base = environ.get("LITELLM_PROXY_API_BASE", "").rstrip("/")
    if not base:
        return None
    found = _get_json(f"{base}/models", environ.get("LITELLM_PROXY_API_KEY"))
    data = found.get("data") if isinstance(found, dict) else None
    ids = [str(m["id"]) for m in data or [] if isinstance(m, dict) and m.get("id")]
    return f"litellm_proxy/{ids[0]}" if ids else None


def find_model(environ: Mapping[str, str]) -> ModelChoice | None:
    """The model the starter should use, or None when nothing the user could call was found."""
    chosen = [n for n in ("PROMPTHOOKS_MODEL", "PROMPTHOOKS_API_BASE") if environ.get(n)]
    if chosen:
        return ModelChoice(None, None, f"{' and '.join(chosen)} set")
    proxy = _proxy_model(environ)
    if proxy:
        return ModelChoice(proxy, None, "LITELLM_PROXY_API_BASE set")
    try:
        stored = keys.read(environ)
    except keys.KeyStoreError:
        stored = {}  # a store run cannot use either: `prompthooks keys list` says why
    for name, model in _FAST:
        var = keys.variable(name)
        if environ.get(var):
            return ModelChoice(model, None, f"{var} set")
        if stored.get(name):
            return ModelChoice(model, None, f"a stored key for {name}")
    base, models = ollama_models(environ)
    if models:
        return ModelChoice(models[0], f"{base}/v1", f"Ollama answers at {base}")
    return None


def model_settings(choice: ModelChoice | None) -> dict[str, str] | None:
    """The starter's ``prompthooks`` block for a choice (None: no block)."""
    if choice is None or choice.model is None:
        return None
    block = {"model": choice.model}
    if choice.api_base:
        block["api_base"] = choice.api_base
    return block


# What a user with no model runs next: a key for the hosted default (the other ways are named
# beside it).
MODEL_NEXT = "prompthooks keys set anthropic"
