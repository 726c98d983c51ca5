"""The redaction pass: run on everything prompthooks stores or shows besides the host's reply
(audit rows, cassettes, error messages, ``explain`` and ``doctor`` output).

It hides the values of environment variables whose names say they hold a secret, common key
formats (OpenAI/Anthropic ``sk-``, GitHub, GitLab, Slack, AWS, Google, Stripe, JWTs, PEM
private keys), ``Authorization``/bearer tokens, URL credentials, and ``.env``-style or JSON
assignments to names like ``API_KEY``, ``TOKEN``, ``SECRET`` or ``PASSWORD``. The model itself
still receives the event unredacted: a policy must be able to see a secret to judge it.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

MARK = "[redacted]"
# Variable names that hold secrets: their values are hidden wherever they appear.
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|PRIVATE", re.IGNORECASE)
_MIN_SECRET = 6  # shorter values ("1", "true") would blank out ordinary text

# Compiled on first use: most runs store no text that needs the pass, and compiling every
# pattern costs more than the rest of an audit write.
_PEM = r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)"
_KEY_FORMATS = "|".join((
    r"\b(?:sk|pk|rk)-(?:ant-|proj-|live-|test-)?[A-Za-z0-9_\-]{12,}",  # OpenAI, Anthropic...
    r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,}",  # Stripe
    r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}",
    r"\bglpat-[A-Za-z0-9_\-]{16,}",
    r"\bxox[abposr]-[A-Za-z0-9\-]{10,}",
    r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
    r"\bAIza[0-9A-Za-z_\-]{20,}",
    r"\b(?:gsk|xai|hf)_[A-Za-z0-9]{16,}",
    r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",  # JWT
))
# "Bearer x", "Basic x" ("token: x" is an assignment, below; "the token x" is prose).
_BEARER = r"(?i)\b(bearer|basic)(\s+|\s*[:=]\s*)([A-Za-z0-9._~+/=\-]{8,})"
_AUTH_HEADER = (r"(?i)(\b(?:proxy-)?authorization\b[\"']?\s*[:=]\s*[\"']?)"
                r"(?!\[redacted\])[^\s\"',}\\]+(?:\s+[^\s\"',}\\]+)?")
_URL_CREDENTIALS = r"(?i)(\b[a-z][a-z0-9+.\-]*://)[^/\s:@]+:[^/\s@]+@"
# NAME=value, NAME: value, "name": "value" (also inside escaped JSON) where NAME says it is a
# secret; a quoted value is hidden up to its closing quote.
_ASSIGNMENT = (
    r"(?i)(\b[A-Z0-9_.\-]*(?:api[_\-]?key|secret|token|passw(?:or)?d|passwd|credential"
    r"|private[_\-]?key|access[_\-]?key)[A-Z0-9_.\-]*\\*[\"']?\s*[:=]\s*)"
    r"(?:(\\*[\"'])(?!\[redacted\])[^\"'\\\n]+"
    # Unquoted: not a number or a JSON literal ("max_tokens": 300 is no secret).
    r"|(?!\[redacted\]|[0-9.]+\b|(?:true|false|null|none)\b)[^\s\"'\\,;}&]{4,})")


@functools.cache
def _rules() -> tuple[tuple[re.Pattern[str], Any], ...]:
    """(pattern, replacement) in the order they run."""
    return (
        (re.compile(_PEM, re.DOTALL), MARK),
        (re.compile(_KEY_FORMATS), MARK),
        (re.compile(_URL_CREDENTIALS), rf"\1{MARK}@"),
        (re.compile(_AUTH_HEADER), rf"\1{MARK}"),
        (re.compile(_BEARER), rf"\1\2{MARK}"),
        (re.compile(_ASSIGNMENT), _hide_value),
    )


def _hide_value(match: re.Match[str]) -> str:
    return f"{match.group(1)}{match.group(2) or ''}{MARK}"


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """Values of the environment's secret-named variables, longest first."""
    env = os.environ if environ is None else environ
    # A path ("SSH_KEY_PATH=/home/me/.ssh/id") names a secret, it is not one.
    values = {v for k, v in env.items() if SECRET_NAME.search(k) and len(v) >= _MIN_SECRET
              and not v.startswith(("/", "~", "."))}
    return sorted(values, key=len, reverse=True)


def redact(text: str, extra: Iterable[str | None] = (),
           environ: Mapping[str, str] | None = None) -> str:
    """``text`` with every secret it can recognise replaced by ``[redacted]``.

    ``extra`` names further values to hide (the key in use, say)."""
    if not text:
        return text
    known = [s for s in extra if s and len(s) >= _MIN_SECRET]
    for secret in sorted(known, key=len, reverse=True) + secret_values(environ):
        text = text.replace(secret, MARK)
    for pattern, replacement in _rules():
        text = pattern.sub(replacement, text)
    return text


def redact_optional(text: str | None, environ: Mapping[str, str] | None = None) -> str | None:
    return None if text is None else redact(text, environ=environ)
