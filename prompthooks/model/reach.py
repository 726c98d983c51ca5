"""Whether a prompt hook's model can be reached at all, told without calling it: for
``validate``, which runs nothing and sends nothing.

Only what is certain to fail is named: OpenAI with no key, a provider whose key variable is
unset, a model name no path knows without an ``api_base``. A model behind an ``api_base`` (a
LiteLLM Proxy, vLLM, Ollama's ``/v1``) may need no key, and providers that sign requests with
cloud credentials (Bedrock, Vertex AI) are not judged; ``prompthooks doctor`` asks the model.
"""

from __future__ import annotations

from collections.abc import Mapping

from .route import direct_route
from .settings import Endpoint

# litellm's providers reached with a key from the environment: the variables it reads.
_PROVIDER_KEYS: dict[str, tuple[str, ...]] = {
    "anthropic": ("ANTHROPIC_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "mistral": ("MISTRAL_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY", "OR_API_KEY"),
    "together_ai": ("TOGETHERAI_API_KEY", "TOGETHER_API_KEY", "TOGETHER_AI_TOKEN"),
    "cohere": ("COHERE_API_KEY", "CO_API_KEY"),
    "fireworks_ai": ("FIREWORKS_API_KEY", "FIREWORKS_AI_API_KEY", "FIREWORKSAI_API_KEY"),
    "perplexity": ("PERPLEXITYAI_API_KEY", "PERPLEXITY_API_KEY"),
    "cerebras": ("CEREBRAS_API_KEY",),
    "azure": ("AZURE_API_KEY", "AZURE_OPENAI_API_KEY"),
}
# Providers that need no key of ours (a local server, cloud credentials): not judged.
_OTHER_PROVIDERS = frozenset({
    "ollama", "ollama_chat", "lm_studio", "vllm", "bedrock", "bedrock_converse", "vertex_ai",
    "vertex_ai_beta", "sagemaker", "sagemaker_chat", "huggingface", "watsonx", "databricks",
    "cloudflare", "github", "github_copilot", "nvidia_nim", "llamafile", "triton",
})
# Bare model names litellm sends to a provider it tells from the name.
_BARE_PREFIXES = {"claude-": "anthropic"}


def _provider(model: str) -> str | None:
    prefix, _, rest = model.partition("/")
    if rest:
        return prefix
    return next((p for start, p in _BARE_PREFIXES.items() if model.startswith(start)), None)


def problem(endpoint: Endpoint, environ: Mapping[str, str]) -> str | None:
    """Why neither the direct client nor litellm can reach ``endpoint`` (None: nothing seen
    against it)."""
    model = endpoint.model
    route = direct_route(endpoint, environ)
    if route is not None:
        if route.openai and not route.key:
            return (f"model {model!r} is OpenAI's and no key is set: set OPENAI_API_KEY (or "
                    "PROMPTHOOKS_API_KEY, or name the variable with prompthooks.api_key_env)")
        return None
    if endpoint.api_base:
        return None  # wherever it points, the endpoint decides what it needs
    provider = _provider(model)
    if provider is None or not (provider in _PROVIDER_KEYS or provider in _OTHER_PROVIDERS):
        what = (f"no provider is known for {model!r}" if provider is None
                else f"the provider prefix {provider!r} of {model!r} is not one prompthooks "
                     "knows")
        return (f"{what} and no api_base is set: name the provider (anthropic/..., "
                "gemini/..., openai/...), or set prompthooks.api_base to your endpoint")
    keys = _PROVIDER_KEYS.get(provider, ())
    if keys and not endpoint.api_key and not any(environ.get(k) for k in keys):
        return (f"model {model!r} needs a key for {provider} and none is set: run prompthooks "
                f"keys set {provider} (or set {keys[0]}, or PROMPTHOOKS_API_KEY, or name the "
                "variable with prompthooks.api_key_env)")
    return None
