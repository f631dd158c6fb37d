"""The conformance suite's reader of the Prometheus text format: what the stacks' libraries write is read,
anything malformed is an error (so a test on /metrics cannot pass on a page it did not understand)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "conformance"))
from helpers import parse_prometheus  # noqa: E402

# As Micrometer's Prometheus registry writes it (JVM stacks) ...
MICROMETER = """\
# HELP simpleauth_token_requests_total
# TYPE simpleauth_token_requests_total counter
simpleauth_token_requests_total{error="none",status="200"} 3.0
simpleauth_token_requests_total{error="invalid_grant",status="400"} 1.0
# HELP simpleauth_token_request_duration_seconds
# TYPE simpleauth_token_request_duration_seconds histogram
simpleauth_token_request_duration_seconds_bucket{le="0.001"} 0
simpleauth_token_request_duration_seconds_bucket{le="1.0"} 4
simpleauth_token_request_duration_seconds_bucket{le="+Inf"} 4
simpleauth_token_request_duration_seconds_count 4
simpleauth_token_request_duration_seconds_sum 0.0123
# TYPE jvm_info gauge
jvm_info{runtime="OpenJDK Runtime Environment",vendor="Eclipse Adoptium",version="25.0.3+9-LTS"} 1
"""
# ... and as the Rust prometheus crate does (escapes, exponent notation).
RUST = """\
# HELP simpleauth_password_checks_total Password verifications.
# TYPE simpleauth_password_checks_total counter
simpleauth_password_checks_total{result="match",scheme="hmac-sha256"} 2
simpleauth_password_checks_total{result="mismatch",scheme="dummy"} 1
# TYPE odd gauge
odd{path="a\\"b\\\\c\\nd"} 1e-05
odd{path="x"} NaN 1700000000000
"""


def test_reads_what_micrometer_writes():
    types, samples = parse_prometheus(MICROMETER)
    assert types["simpleauth_token_requests_total"] == "counter"
    assert types["simpleauth_token_request_duration_seconds"] == "histogram"
    assert samples[("simpleauth_token_requests_total", frozenset({("status", "200"), ("error", "none")}))] == 3
    assert samples[("simpleauth_token_request_duration_seconds_bucket", frozenset({("le", "+Inf")}))] == 4
    assert samples[("simpleauth_token_request_duration_seconds_count", frozenset())] == 4
    assert len(samples) == 8


def test_reads_what_the_rust_crate_writes():
    _, samples = parse_prometheus(RUST)
    assert samples[("simpleauth_password_checks_total", frozenset({("result", "mismatch"), ("scheme", "dummy")}))] == 1
    assert samples[("odd", frozenset({("path", 'a"b\\c\nd')}))] == 1e-05


@pytest.mark.parametrize("page", [
    "simpleauth_token_requests_total{status=\"200\" 1",
    "simpleauth_token_requests_total{status=200} 1",
    "simpleauth_token_requests_total 1 2 3",
    "simpleauth_token_requests_total one",
    "simpleauth token 1",
    "x{a=\"1\",a=\"2\"} 1",
    "x 1\nx 2",
    "# TYPE x counter\n# TYPE x gauge\nx 1",
    "# TYPE x countr\nx 1",
    "<html>not found</html>",
    '{"error":"not_found"}',
], ids=["unclosed-labels", "unquoted-value", "extra-fields", "not-a-number", "space-in-name", "label-twice",
        "series-twice", "type-twice", "unknown-type", "html", "json"])
def test_malformed_pages_are_errors(page):
    with pytest.raises(AssertionError):
        parse_prometheus(page)
