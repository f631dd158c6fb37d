"""Runs last (file order): what the main service wrote while the suite ran."""
from __future__ import annotations

import re

import pytest


SECRETS = [
    ("a password", re.compile(r"TopSecret0|CorrectHorse9|legacy-pass-|argon-pass-")),
    ("a password hash", re.compile(r"\$argon2id\$|\$hmac-sha256\$|X864zD50ii23b75iB8UBUrbf0HTIHGRkHuR")),
    ("a token", re.compile(r"eyJ[A-Za-z0-9_-]{10,}\.eyJ")),
    ("private key material", re.compile(r"PRIVATE KEY|MII[A-Za-z0-9+/]{40}")),
]


# The log of the whole run: under --db-tls the drivers' TLS messages land in it too, and under --key-type
# the start-up line names another key.
pytestmark = [pytest.mark.tls_core, pytest.mark.signing]


def test_start_up_line_names_the_kid_and_alg(service, signing_key):
    if service.log_path is None:
        pytest.skip("the suite does not see this service's output")
    line = next((line for line in service.log_text().splitlines() if signing_key["kid"] in line), None)
    assert line is not None, "the start-up line names the kid"
    assert f"alg={signing_key['alg']}" in line, f"the start-up line names the algorithm: {line}"


def test_no_secrets_and_no_per_request_lines_in_the_log(service):
    if service.log_path is None:
        pytest.skip("the suite does not see this service's output")
    text = service.log_text()
    for what, pattern in SECRETS:
        m = pattern.search(text)
        assert m is None, f"the log contains {what}: ...{text[max(0, m.start() - 80):m.end() + 20]}..."
    # The suite made a few hundred requests; a log that grows with them logs per request.
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) < 60, f"{len(lines)} log lines: per-request logging? last: {lines[-5:]}"
