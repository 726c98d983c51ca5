"""How a managed prompt hook calls its model: only where its own file says.

With ``api_base`` pinned, through the direct client (direct.py), which reads nothing from the
environment. Without it the call goes through litellm, whose provider defaults and variables
decide the URL; that call is refused while the environment holds a variable that could send it
elsewhere (a proxy, a provider base URL), because an agent can set those: the hook fails with
a message saying to pin ``api_base`` in the managed file (a fail-closed hook then denies).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from .types import ModelError, ModelReply, ModelRequest

if TYPE_CHECKING:
    from ..core.hook import Hook

# litellm's base-URL variables end like these (OPENAI_BASE_URL, ANTHROPIC_API_BASE,
# AZURE_API_BASE, AWS_BEDROCK_RUNTIME_ENDPOINT...); any name holding PROXY is a proxy
# (HTTPS_PROXY, all_proxy, USE_LITELLM_PROXY, LITELLM_PROXY_API_BASE).
_SUFFIXES = ("_API_BASE", "_BASE_URL", "_API_BASE_URL", "_ENDPOINT", "_ENDPOINT_URL",
             "_API_URL")
_NOT_REDIRECTS = frozenset({"NO_PROXY"})


def redirecting_variables(environ: Mapping[str, str]) -> list[str]:
    """The set variables that could redirect a model call made through litellm."""
    found = []
    for name, value in environ.items():
        upper = name.upper()
        if not value or upper in _NOT_REDIRECTS:
            continue
        if "PROXY" in upper or upper.endswith(_SUFFIXES):
            found.append(name)
    return sorted(found)


def unpinned_problem(environ: Mapping[str, str]) -> str | None:
    """Why an unpinned managed hook may not be called now (None: it may)."""
    names = redirecting_variables(environ)
    if not names:
        return None
    shown = ", ".join(names[:6]) + (", ..." if len(names) > 6 else "")
    return (f"the environment sets {shown}, which could redirect this managed prompt hook; "
            "pin api_base in the managed file")


def unpinned_warnings(hooks: Iterable[Hook]) -> list[str]:
    """One line per managed file whose prompt hooks do not pin ``api_base`` (for validate and
    doctor)."""
    paths = sorted({h.source.path for h in hooks if h.managed and h.judged
                    and not (h.prompt_settings and h.prompt_settings.api_base)})
    return [f"{path}: a managed prompt hook without api_base goes through litellm, which "
            "reads proxy and base-URL variables; it refuses to run while one is set: pin "
            "api_base in the managed file" for path in paths]


def complete(request: ModelRequest, deadline: float,
             environ: Mapping[str, str] | None = None) -> ModelReply:
    """The managed hook's model call (always in this process: see model/cassette.py)."""
    import os

    if request.endpoint.api_base:
        from .direct import complete as direct

        return direct(request, deadline)
    problem = unpinned_problem(os.environ if environ is None else environ)
    if problem:
        raise ModelError(problem)
    from .call import complete as through_litellm

    return through_litellm(request, deadline)


__all__ = ["complete", "redirecting_variables", "unpinned_problem", "unpinned_warnings"]
