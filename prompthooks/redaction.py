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
# ...unless the name says the value is a location (SSH_KEY_PATH, TOKEN_FILE, GNUPG_HOME):
# the file is the secret, its path is not. Only the name decides: a secret may begin with "/".
LOCATION_NAME = re.compile(r"_(?:PATH|PATHS|FILE|FILES|DIR|DIRS|DIRECTORY|HOME|FOLDER)\Z",
                           re.IGNORECASE)
_MIN_SECRET = 6  # shorter values ("1", "true") would blank out ordinary text
# One call scans at most this much text; the rest is cut with a visible marker. Above the
# 256 KiB an audit row keeps of an event input; reasons and errors are far shorter.
MAX_CHARS = 256 * 1024
CUT = "...[prompthooks: cut; {} characters in all]"
_SEPARATORS = frozenset(" \t\r\n\"',;:=&|()[]{}<>")
_BACK_OFF = 1024  # how far the cut moves back to a separator, so no token is cut in two

# Every pattern below runs in time linear in the text, whatever the text: a quantified run
# either is bounded, or is possessive and may only start where a run of its characters
# starts (a lookbehind), so no two attempts scan the same run. Python's re backtracks, and
# "token.token.token..." once took 8 s for 2,000 characters.
# Compiled on first use: most runs store no text that needs the pass, and compiling every
# pattern costs more than the rest of an audit write.
_PEM = (r"-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----.*?"
        r"(?:-----END [A-Z ]{0,40}PRIVATE KEY-----|\Z)")
# A prefix whose token has no "_" in it may follow one ("mcp__x__ghp_..." names a tool): each
# attempt still ends at the next "_", so starting after any "_" stays linear.
_KEY_FORMATS = "|".join((
    r"\b(?:sk|pk|rk)-(?:ant-|proj-|live-|test-)?[A-Za-z0-9_\-]{12,}+",  # OpenAI, Anthropic...
    r"(?<![A-Za-z0-9])(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,}+",  # Stripe
    r"(?<![A-Za-z0-9])(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}+|\bgithub_pat_[A-Za-z0-9_]{20,}+",
    r"\bglpat-[A-Za-z0-9_\-]{16,}+",
    r"\bxox[abposr]-[A-Za-z0-9\-]{10,}+",
    r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
    r"\bAIza[0-9A-Za-z_\-]{16,}+",
    r"(?<![A-Za-z0-9])(?:gsk|xai|hf)_[A-Za-z0-9]{16,}+",
))
# A JWT: three base64url segments, the first starting "eyJ" after a word boundary. Its first
# segment may follow a "-" inside a longer run ("x-eyJ..."); the earliest such "eyJ" of the run
# is the only one worth trying (a later one ends at the same "."), so the atomic group commits
# to it: "eyJ-eyJ-eyJ-..." is one attempt, not one per "eyJ".
_JWT = (r"(?<![A-Za-z0-9_\-])((?>[A-Za-z0-9_\-]*?(?<![A-Za-z0-9_])(?=eyJ)))"
        r"eyJ[A-Za-z0-9_\-]{8,}+\.[A-Za-z0-9_\-]{8,}+\.[A-Za-z0-9_\-]{8,}+")
# "Bearer x", "Basic x" ("token: x" is an assignment, below; "the token x" is prose).
_BEARER = r"(?i)\b(bearer|basic)(\s++|\s*+[:=]\s*+)([A-Za-z0-9._~+/=\-]{8,}+)"
_AUTH_HEADER = (r"(?i)(\b(?:proxy-)?authorization\b[\"']?\s*+[:=]\s*+[\"']?)"
                r"(?!\[redacted\])[^\s\"',}\\]++(?:\s++[^\s\"',}\\]++)?")
# The scheme is taken from the start of its run ("x.https", "git+ssh") up to "://"; it needs a
# letter, and the atomic group commits to the first one.
_URL_CREDENTIALS = (r"(?i)((?<![a-z0-9+.\-])(?>[a-z0-9+.\-]*?[a-z])[a-z0-9+.\-]*+://)"
                    r"[^/\s:@]++:[^/\s@]++@")
# NAME=value, NAME: value, "name": "value" (also inside escaped JSON) where NAME says it is a
# secret; a quoted value is hidden up to its closing quote. A name is tried only where its run
# of name characters starts; the atomic group finds its first secret word and commits to it.
_ASSIGNMENT = (
    r"(?i)((?<![A-Z0-9_.\-])(?>[A-Z0-9_.\-]*?(?:api[_\-]?key|secret|token|passw(?:or)?d"
    r"|passwd|credential|private[_\-]?key|access[_\-]?key))[A-Z0-9_.\-]*+"
    r"\\*+[\"']?\s*+[:=]\s*+)"
    r"(?:(\\*[\"'])(?!\[redacted\])[^\"'\\\n]++"
    # Unquoted: not a number or a JSON literal ("max_tokens": 300 is no secret).
    r"|(?!\[redacted\]|[0-9.]++\b|(?:true|false|null|none)\b)[^\s\"'\\,;}&]{4,}+)")


@functools.cache
def _rules() -> tuple[tuple[re.Pattern[str], Any], ...]:
    """(pattern, replacement) in the order they run."""
    return (
        (re.compile(_PEM, re.DOTALL), MARK),
        (re.compile(_KEY_FORMATS), MARK),
        (re.compile(_JWT), rf"\1{MARK}"),
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
    values = {v for k, v in env.items() if SECRET_NAME.search(k) and len(v) >= _MIN_SECRET
              and not LOCATION_NAME.search(k)}
    return sorted(values, key=len, reverse=True)


def config_keys(variables: Iterable[str | None],
                environ: Mapping[str, str] | None = None) -> list[str]:
    """The keys held by the variables the configs' ``api_key_env`` name (``Hook.api_key_env``):
    hidden as secrets even when the variable's name does not say it holds one
    (``api_key_env: "MYLLM"``)."""
    env = os.environ if environ is None else environ
    return [env[name] for name in sorted({n for n in variables if n}) if env.get(name)]


def _cut_point(text: str, limit: int, secrets: list[str]) -> int:
    """Where to cut ``text`` to at most ``limit`` characters: back to a separator when one is
    near, and before any known secret the cut would split."""
    end = limit
    for i in range(limit, max(limit - _BACK_OFF, 0), -1):
        if text[i - 1] in _SEPARATORS:
            end = i
            break
    for secret in secrets:
        start = text.find(secret, max(end - len(secret) + 1, 0), end + len(secret) - 1)
        if 0 <= start < end:
            end = start
    return end


def redact(text: str, extra: Iterable[str | None] = (),
           environ: Mapping[str, str] | None = None, limit: int = MAX_CHARS) -> str:
    """``text`` with every secret it can recognise replaced by ``[redacted]``.

    ``extra`` names further values to hide (the key in use, say). At most ``limit``
    characters come back, plus the cut marker: text longer than that is cut first (never
    inside a known secret), so one call costs time linear in ``limit`` at most."""
    if not text:
        return text
    known = sorted({s for s in extra if s and len(s) >= _MIN_SECRET}, key=len, reverse=True)
    secrets = known + secret_values(environ)
    cut = ""
    if len(text) > limit:
        cut = CUT.format(len(text))
        text = text[:_cut_point(text, limit, secrets)]
    for secret in secrets:
        text = text.replace(secret, MARK)
    for pattern, replacement in _rules():
        text = pattern.sub(replacement, text)
    # A mark can be longer than what it hides: the result keeps to the limit all the same.
    return (text[:limit] + cut) if cut or len(text) > limit else text


def redact_optional(text: str | None, environ: Mapping[str, str] | None = None) -> str | None:
    return None if text is None else redact(text, environ=environ)
