"""Variables a non-managed hook's ``env`` reply may not set.

Cursor forwards a ``sessionStart`` reply's ``env`` to every later hook of the session, so a
project hook could otherwise steer later runs: point prompt hooks at another model or proxy
(``HTTPS_PROXY``, ``OPENAI_BASE_URL``), change where config and trust are read (``HOME``,
``XDG_*``, ``PROMPTHOOKS_*``), or what runs (``PATH``, ``LD_PRELOAD``, ``PYTHONPATH``). Only a
managed hook may set these.
"""

from __future__ import annotations

# Ours, the model providers' (as the warm worker's identity lists them), and the loaders'.
_PREFIXES = ("PROMPTHOOKS_", "LITELLM_", "OPENAI_", "ANTHROPIC_", "AZURE_", "GEMINI_",
             "GOOGLE_", "MISTRAL_", "GROQ_", "OLLAMA_", "AWS_", "VERTEX", "COHERE_",
             "DEEPSEEK_", "XAI_", "OPENROUTER_", "TOGETHER", "FIREWORKS_", "HF_",
             "HUGGINGFACE", "XDG_", "LD_", "DYLD_", "PYTHON", "SSL_", "CURL_", "REQUESTS_",
             "HTTPX_", "AIOHTTP_", "GIT_", "NODE_", "BASH_", "CLAUDE_", "CURSOR_", "CLINE_")
_NAMES = frozenset({"HOME", "PATH", "SHELL", "ENV", "BASH_ENV", "IFS", "TMPDIR", "USER",
                    "LOGNAME", "DISABLE_AIOHTTP_TRUST_ENV", "NETRC"})


def protected(name: str) -> bool:
    """Whether only a managed hook may set ``name`` for later events (any case)."""
    upper = name.upper()
    return (upper in _NAMES or upper.startswith(_PREFIXES) or upper.endswith("_PROXY")
            or "PROXY" in upper)


__all__ = ["protected"]
