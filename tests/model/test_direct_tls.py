"""The direct path over HTTPS: the CA certificates a hook trusts come from SSL_CERT_FILE (or
SSL_CERT_DIR) as httpx reads them, and a process that keeps TLS contexts between calls (the
resident one builds them before it forks runs) reads a bundle again once it changes. An
untrusted certificate is said in one line and not retried; a fail-closed hook blocks on it."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from prompthooks.api import dispatch
from prompthooks.model import failures

from ..fake_model import FakeModel, serve_tls, verdict
from ..helpers import claude_bash, write_json

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl")


def _certificate(folder: Path, name: str) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (its own CA), and its key."""
    cert, key = folder / f"{name}.pem", folder / f"{name}.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", f"/CN={name}", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True, timeout=60)
    return cert, key


@pytest.fixture
def tls_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
              ) -> Iterator[tuple[FakeModel, Path, Path]]:
    """An HTTPS model with its own certificate, and a second certificate it does not use."""
    cert, key = _certificate(tmp_path, "server")
    other, _ = _certificate(tmp_path, "other")
    for state in serve_tls(str(cert), str(key)):
        monkeypatch.setenv("PROMPTHOOKS_API_BASE", state.url)
        monkeypatch.setenv("PROMPTHOOKS_MODEL", "test-model")
        monkeypatch.delenv("SSL_CERT_DIR", raising=False)
        state.script(verdict(False, "deletes the disk"))
        yield state, cert, other


def _judge(tmp_path: Path) -> tuple[str, tuple[str, ...]]:
    cfg = write_json(tmp_path / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [
        {"type": "prompt", "prompt": "Block deletions. $ARGUMENTS", "timeout": 20,
         "failClosed": True}]}]}})
    outcome = dispatch(claude_bash("rm -rf /"), config_paths=[str(cfg)], budget=30)
    return outcome.decision.permission or "", outcome.problems


def test_the_model_is_reached_over_https_with_the_ca_bundle_the_environment_names(
        tmp_path: Path, tls_model: tuple[FakeModel, Path, Path],
        monkeypatch: pytest.MonkeyPatch) -> None:
    model, cert, _ = tls_model
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    assert _judge(tmp_path) == ("deny", ())
    assert len(model.requests) == 1


def test_an_untrusted_certificate_is_said_in_one_line_not_retried_and_blocks(
        tmp_path: Path, tls_model: tuple[FakeModel, Path, Path],
        monkeypatch: pytest.MonkeyPatch) -> None:
    model, _, other = tls_model
    monkeypatch.setenv("SSL_CERT_FILE", str(other))
    start = time.monotonic()
    permission, problems = _judge(tmp_path)
    assert permission == "deny"  # the hook is fail-closed
    assert len(problems) == 1 and failures.UNTRUSTED in problems[0]
    assert "Traceback" not in problems[0]
    assert time.monotonic() - start < 15  # not retried into the hook's 20 s timeout
    assert model.requests == []


def test_a_kept_tls_context_follows_the_bundle_when_it_changes(
        tmp_path: Path, tls_model: tuple[FakeModel, Path, Path],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """One process, three events: the bundle file names the wrong CA, then (rewritten in
    place) the right one, then the variable names another file with the wrong CA."""
    model, cert, other = tls_model
    bundle = tmp_path / "bundle.pem"
    bundle.write_bytes(other.read_bytes())
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    assert _judge(tmp_path)[1] != ()
    bundle.write_bytes(cert.read_bytes() + b"\n")
    assert _judge(tmp_path) == ("deny", ())
    monkeypatch.setenv("SSL_CERT_FILE", str(other))
    assert _judge(tmp_path)[1] != ()
    assert len(model.requests) == 1
