"""The redaction pass runs in linear time whatever the text, and one call returns at most its
cap plus the cut marker. The adversarial inputs (one or more per rule) run in a separate
process: a backtracking pattern would keep it busy for hours, and the test then fails on its
timeout instead of hanging the suite."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prompthooks.redaction import CUT, MARK, MAX_CHARS, redact, secret_values

SIZE = 200_000
ADVERSARIAL = {
    "assignment": "token." * (SIZE // 6),
    "assignment-values": "token=" * (SIZE // 6),
    "assignment-names": "x-" * (SIZE // 2) + "password",
    "assignment-escaped": '\\"token\\": \\"' * (SIZE // 12),
    "assignment-backslashes": "token" + "\\" * SIZE,
    "bearer": "Bearer " * (SIZE // 7),
    "bearer-spaces": "Bearer" + " " * SIZE,
    "authorization": "authorization: " * (SIZE // 15),
    "authorization-spaces": "authorization=" + " " * SIZE,
    "url-credentials": "a://a:a@" * (SIZE // 8),
    "url-schemes": "a." * (SIZE // 2),
    "url-separators": "a://" * (SIZE // 4),
    "pem-unterminated": "-----BEGIN PRIVATE KEY-----" * (SIZE // 27),
    "pem-name": "-----BEGIN " + "A" * SIZE,
    "pem-ends": "-----BEGIN PRIVATE KEY-----" + "-----END A" * (SIZE // 10),
    "jwt-chain": "eyJ" * (SIZE // 3),
    "jwt-dashes": "eyJ-" * (SIZE // 4),
    "jwt-segments": "eyJaaaaaaaa.bbbbbbbbb.c" * (SIZE // 23),
    "key-prefixes": "sk-aaaa ghp_ xoxb- AIza glpat- " * (SIZE // 31),
    "key-prefixes-after-underscores": "x__ghp_sk_live_gsk_hf_" * (SIZE // 22),
    "mixed": "token.Bearer a://a:a@eyJ-sk-" * (SIZE // 28),
}

PROBE = """
import json, sys
from prompthooks.redaction import redact
for name, text in json.load(sys.stdin).items():
    out = redact(text, environ={})
    print(name, len(out), flush=True)
"""


@pytest.mark.slow
def test_adversarial_inputs_for_every_rule_finish() -> None:
    # Each takes well under a second here; the bound is for a loaded machine. Before the
    # rewrite, the first alone ran for hours.
    proc = subprocess.run([sys.executable, "-c", PROBE], input=json.dumps(ADVERSARIAL),
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr
    assert [line.split()[0] for line in proc.stdout.splitlines()] == list(ADVERSARIAL)


def test_secrets_are_still_found_in_adversarial_company() -> None:
    text = "token." * 100 + " api_key=hunter2hunter2 " + "a." * 100 + " x://u:pw@h"
    out = redact(text, environ={})
    assert "hunter2" not in out and "u:pw" not in out
    assert redact("x-eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
                  environ={}) == f"x-{MARK}"
    assert redact("foo=token=abcdefgh", environ={}) == f"foo=token={MARK}"
    assert redact("see -https://bob:pa55word@db/x", environ={}) == f"see -https://{MARK}@db/x"
    # A token glued after underscores, as in an MCP tool's name.
    gh = "ghp_" + "a1" * 18
    assert redact(f"mcp__x__{gh}", environ={}) == f"mcp__x__{MARK}"


def test_a_long_text_is_cut_with_a_visible_marker() -> None:
    text = "word " * (MAX_CHARS // 5 + 1000)
    out = redact(text, environ={})
    marker = CUT.format(len(text))
    assert out.endswith(marker) and len(out) <= MAX_CHARS + len(marker)
    assert out.startswith("word word")


def test_the_cut_never_splits_a_secret() -> None:
    secret = "S3cretValueThatIsLong"
    text = "x" * 95 + secret + " tail" * 10
    out = redact(text, environ={"MY_TOKEN": secret}, limit=100)
    assert secret[:5] not in out and out == "x" * 95 + CUT.format(len(text))
    key = "y" * 80 + " ghp_" + "a" * 36  # a key format: the cut backs off to the separator
    assert redact(key, environ={}, limit=100) == "y" * 80 + " " + CUT.format(len(key))


FRAGMENTS = st.sampled_from(["token", "=", ":", " ", '"', "\\", "Bearer ", "sk-", "eyJ", ".",
                             "-", "a", "abcdefgh", "://", "@", "/", "\n", "ghp_", "é", "\x1b",
                             "-----BEGIN PRIVATE KEY-----", "api_key", "s3cr3tvalue"])


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(parts=st.lists(FRAGMENTS, max_size=60), limit=st.integers(min_value=1, max_value=200))
def test_redact_never_returns_more_than_the_cap_plus_the_marker(parts: list[str],
                                                                limit: int) -> None:
    text = "".join(parts)
    out = redact(text, environ={"APP_TOKEN": "s3cr3tvalue"}, limit=limit)
    assert len(out) <= limit + len(CUT.format(len(text)))
    assert "s3cr3tvalue" not in out


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=400))
def test_redact_on_random_text_is_bounded_and_stable(text: str) -> None:
    out = redact(text, environ={}, limit=100)
    assert len(out) <= 100 + len(CUT.format(len(text)))
    if len(text) <= 100 and MARK not in out:
        assert out == text


def test_secret_named_values_are_hidden_whatever_they_start_with() -> None:
    env = {"GH_TOKEN": "/not-a-path-but-a-token", "DB_PASSWORD": "~tilde-secret",
           "API_KEY": ".dot-secret-1", "SSH_KEY_PATH": "/home/me/.ssh/id",
           "TOKEN_FILE": "/run/secrets/token", "GNUPG_KEY_HOME": "/home/me/.gnupg"}
    assert sorted(secret_values(env)) == sorted(
        ["/not-a-path-but-a-token", "~tilde-secret", ".dot-secret-1"])
    text = "a /not-a-path-but-a-token b ~tilde-secret c .dot-secret-1 d /home/me/.ssh/id"
    assert redact(text, environ=env) == f"a {MARK} b {MARK} c {MARK} d /home/me/.ssh/id"
