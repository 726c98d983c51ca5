"""Where the resident process listens: one Unix socket per user, version and model environment.

Standard library only (``os``, ``zlib``): the thin client computes the same name as the server
without importing ``json``, ``pathlib`` or anything of prompthooks beyond this module. A base
module, below ``paths`` (whose runtime folder it names), the runner and the resident process.
"""

from __future__ import annotations

import os
import stat
import zlib

from ._version import __version__

TYPE_CHECKING = False  # not typing's: the thin client imports this module
if TYPE_CHECKING:
    from collections.abc import Mapping

APP = "prompthooks"
# A Unix socket's path has room for 107 bytes (108 with the NUL); a longer one cannot be bound.
MAX_SOCKET_PATH = 108
ENV_PREFIXES = ("PROMPTHOOKS_", "LITELLM_", "OPENAI_", "ANTHROPIC_", "AZURE_", "GEMINI_",
                "GOOGLE_", "MISTRAL_", "GROQ_", "OLLAMA_", "AWS_", "VERTEX", "COHERE_",
                "DEEPSEEK_", "XAI_", "OPENROUTER_", "TOGETHER", "FIREWORKS_", "HTTP_PROXY",
                "HTTPS_PROXY", "NO_PROXY", "SSL_CERT")
# The system resident process's socket (``prompthooks serve --system``): its folder is
# root's and closed to writes by others, the socket open to every user.
SYSTEM_SOCKET = "/run/prompthooks/socket"
# The variable with which a client hands the worker it starts the lock it took.
LOCK_FD_VAR = "PROMPTHOOKS_WORKER_LOCK_FD"
# Not part of a worker's identity: ours that do not change a model call, and the two that
# prompthooks itself sets before importing litellm.
SKIP = frozenset({"PROMPTHOOKS_CASSETTE", "PROMPTHOOKS_CASSETTE_MODE", "PROMPTHOOKS_DEBUG",
                  "PROMPTHOOKS_WORKER", "PROMPTHOOKS_WORKER_IDLE", "PROMPTHOOKS_NO_CACHE",
                  "PROMPTHOOKS_DISPATCH", "PROMPTHOOKS_RESIDENT", LOCK_FD_VAR,
                  "LITELLM_LOCAL_MODEL_COST_MAP", "LITELLM_MODE"})


# The one switch for the resident process (``0``: every run in the process a host starts,
# every model call in that process too), and its older spellings.
SWITCHES = ("PROMPTHOOKS_RESIDENT", "PROMPTHOOKS_DISPATCH", "PROMPTHOOKS_WORKER")


def resident_enabled(environ: Mapping[str, str]) -> bool:
    return all(environ.get(name) != "0" for name in SWITCHES)


# The key store's entry in a model environment: no variable can have this name (no "=").
KEY_STORE = "=keys"


def key_store_stamp(environ: Mapping[str, str]) -> str:
    """What identifies the user's key store (model/keys.py) as it is now: its inode, size and
    change time, or "none". A resident process started with other stored keys is not this
    environment's: a key set, changed or removed since is never served by it."""
    home = environ.get("HOME") or os.path.expanduser("~")
    base = environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    try:
        st = os.stat(os.path.join(base, APP, "keys.json"))
    except OSError:
        return "none"
    return f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"


def model_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The variables that can change how a model is called, and the key store's stamp."""
    found = {k: v for k, v in sorted(environ.items())
             if k.upper().startswith(ENV_PREFIXES) and k not in SKIP}
    # A model environment computed before keeps its stamp: the resident process compares each
    # run's store with the one it started with, not with the store as it is now.
    found[KEY_STORE] = environ.get(KEY_STORE) or key_store_stamp(environ)
    return found


def model_environment_of(environb: Mapping[bytes, bytes]) -> dict[str, str]:
    """:func:`model_environment` of an environment in bytes, decoding only the variables that
    may count (every name that is not ASCII may: ``str.upper`` is not ASCII's) and the two
    that place the key store."""
    prefixes = tuple(p.encode() for p in ENV_PREFIXES)
    return model_environment({os.fsdecode(k): os.fsdecode(v) for k, v in environb.items()
                              if k.upper().startswith(prefixes) or not k.isascii()
                              or k in (b"HOME", b"XDG_CONFIG_HOME")})


def runtime_dir(environ: Mapping[str, str]) -> str:
    """Sockets and locks: ``$XDG_RUNTIME_DIR/prompthooks`` when that folder exists, else
    ``run`` in the cache folder (``$XDG_CACHE_HOME/prompthooks``, ``~/.cache/...``)."""
    base = environ.get("XDG_RUNTIME_DIR")
    if base and os.path.isdir(base):
        return os.path.join(base, APP)
    cache = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, APP, "run")


def socket_name(environ: Mapping[str, str]) -> str:
    """The path of the socket for this version and model environment."""
    env = "\0".join(f"{k}={v}" for k, v in model_environment(environ).items())
    digest = zlib.crc32(env.encode("utf-8", "surrogateescape"))
    return os.path.join(runtime_dir(environ), f"worker-{__version__}-{digest:08x}.sock")


def private_dir(folder: str) -> bool:
    """The folder exists, is ours and is closed to everyone else."""
    try:
        st = os.lstat(folder)
    except OSError:
        return False
    return (stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid()
            and stat.S_IMODE(st.st_mode) & 0o077 == 0)


def owned_closed_dir(folder: str, owner: int) -> bool:
    """The folder exists (not a link), is ``owner``'s and no one else can write in it."""
    try:
        st = os.lstat(folder)
    except OSError:
        return False
    return (stat.S_ISDIR(st.st_mode) and st.st_uid == owner
            and stat.S_IMODE(st.st_mode) & 0o022 == 0)
