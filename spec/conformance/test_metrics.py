"""GET /metrics on METRICS_PORT: the Prometheus text format, the required families with their exact names, labels and
buckets, and that a request moves exactly the series it should (spec/README.md, "Metrics"); the public port does not
serve it, and the metrics port serves nothing else (§3)."""
from __future__ import annotations

import json

import pytest

from helpers import JANE, JOHN, parse_prometheus

TOKEN_REQUESTS = "simpleauth_token_requests_total"
PASSWORD_CHECKS = "simpleauth_password_checks_total"
REQUEST_DURATION = "simpleauth_token_request_duration_seconds"
SIGNING_DURATION = "simpleauth_token_signing_duration_seconds"
HISTOGRAMS = {
    REQUEST_DURATION: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, float("inf")],
    SIGNING_DURATION: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, float("inf")],
}
POOL_SIZE = 10  # DB_POOL_SIZE of the service the suite starts (stackctl.Stack.contract_env)


def scrape(http, service) -> dict:
    r = http.get(service.metrics_url(), timeout=10)
    assert r.status_code == 200, r.text[:300]
    return parse_prometheus(r.text)[1]


def series(samples: dict, name: str) -> dict[frozenset, float]:
    return {labels: value for (n, labels), value in samples.items() if n == name}


def labelled(**labels: str) -> frozenset:
    return frozenset(labels.items())


def show(labels: frozenset) -> str:
    return "{" + ",".join(f'{k}="{v}"' for k, v in sorted(labels)) + "}"


def test_metrics_is_prometheus_text(http, service):
    r = http.get(service.metrics_url(), timeout=10)
    assert r.status_code == 200
    media, *params = [p.strip().lower() for p in r.headers.get("Content-Type", "").split(";")]
    assert media == "text/plain" and set(params) == {"version=0.0.4", "charset=utf-8"}, r.headers.get("Content-Type")
    types, samples = parse_prometheus(r.text)
    assert samples


def test_required_families_names_labels_and_types(http, service):
    r = http.get(service.metrics_url(), timeout=10)
    types, samples = parse_prometheus(r.text)

    def type_of(family: str, sample_name: str) -> str | None:
        return types.get(sample_name) or types.get(family)

    for name, label_names in ((TOKEN_REQUESTS, {"status", "error"}), (PASSWORD_CHECKS, {"scheme", "result"})):
        assert type_of(name.removesuffix("_total"), name) == "counter", (name, types.get(name))
        for labels in series(samples, name):
            assert {k for k, _ in labels} == label_names, (name, dict(labels))
    for name in (REQUEST_DURATION, SIGNING_DURATION):
        assert types.get(name) == "histogram", (name, types.get(name))
    for name in ("simpleauth_db_pool_connections", "simpleauth_db_pool_pending", "simpleauth_db_pool_max"):
        assert types.get(name) == "gauge", (name, types.get(name))
    assert set(series(samples, "simpleauth_db_pool_connections")) == {labelled(state="active"), labelled(state="idle")}
    assert set(series(samples, "simpleauth_db_pool_pending")) == {frozenset()}
    assert set(series(samples, "simpleauth_db_pool_max")) == {frozenset()}
    assert type_of("simpleauth_key_reloads", "simpleauth_key_reloads_total") == "counter"
    # Both series from the start, and the suite's service is never sent SIGHUP.
    assert series(samples, "simpleauth_key_reloads_total") == {labelled(result="success"): 0, labelled(result="failure"): 0}
    assert type_of("simpleauth_rejections", "simpleauth_rejections_total") == "counter"
    # The suite's service runs with the limits out of the way (stackctl.CONFORMANCE_ENV), and its sessions are
    # never reused: all four series, at 0 (test_sessions.py sees them move in processes of its own).
    assert series(samples, "simpleauth_rejections_total") == {
        labelled(reason=r): 0 for r in ("username_locked", "address_locked", "overload", "refresh_reuse")}


@pytest.mark.parametrize("name", list(HISTOGRAMS))
def test_histogram_buckets(http, service, name):
    http.post(service.url("/token"), json=JOHN, timeout=10)  # at least one observation in each
    samples = scrape(http, service)
    buckets = series(samples, name + "_bucket")
    assert all({k for k, _ in labels} == {"le"} for labels in buckets), [dict(b) for b in buckets]
    bounds = sorted(float(dict(labels)["le"]) for labels in buckets)
    assert bounds == HISTOGRAMS[name], f"{name} buckets {bounds}"
    counts = [buckets[labels] for labels in sorted(buckets, key=lambda b: float(dict(b)["le"]))]
    assert counts == sorted(counts), f"{name}: buckets are cumulative"
    assert set(series(samples, name + "_count")) == {frozenset()} == set(series(samples, name + "_sum"))
    count = samples[(name + "_count", frozenset())]
    assert counts[-1] == count >= 1, f"{name}: +Inf bucket {counts[-1]}, count {count}"
    assert samples[(name + "_sum", frozenset())] > 0


@pytest.mark.tls_core
def test_pool_gauges(http, service):
    http.post(service.url("/token"), json=JOHN, timeout=10)
    samples = scrape(http, service)
    active = samples[("simpleauth_db_pool_connections", labelled(state="active"))]
    idle = samples[("simpleauth_db_pool_connections", labelled(state="idle"))]
    pending = samples[("simpleauth_db_pool_pending", frozenset())]
    size = samples[("simpleauth_db_pool_max", frozenset())]
    for v in (active, idle, pending, size):
        assert v == int(v) and v >= 0, (active, idle, pending, size)
    if service.proc is not None:
        assert size == POOL_SIZE
    assert 1 <= active + idle <= size, "after a login the pool holds a connection, no more than its maximum"


JSON = "application/json"
# (id, content type, body, {series that move: by how much}, token pairs signed)
CASES = [
    ("john-200", JSON, JOHN,
     {(TOKEN_REQUESTS, labelled(status="200", error="none")): 1,
      (PASSWORD_CHECKS, labelled(scheme="hmac-sha256", result="match")): 1}, 1),
    ("john-wrong-password", JSON, {**JOHN, "password": "wrong"},
     {(TOKEN_REQUESTS, labelled(status="400", error="invalid_grant")): 1,
      (PASSWORD_CHECKS, labelled(scheme="hmac-sha256", result="mismatch")): 1}, 0),
    ("jane-200", JSON, JANE,
     {(TOKEN_REQUESTS, labelled(status="200", error="none")): 1,
      (PASSWORD_CHECKS, labelled(scheme="argon2id", result="match")): 1}, 1),
    ("unknown-user", JSON, {"username": "ghost@example.com", "password": "x"},
     {(TOKEN_REQUESTS, labelled(status="400", error="invalid_grant")): 1,
      (PASSWORD_CHECKS, labelled(scheme="dummy", result="mismatch")): 1}, 0),
    ("bad-json", JSON, b"{",
     {(TOKEN_REQUESTS, labelled(status="400", error="invalid_request")): 1}, 0),
    ("grant-type", JSON, {**JOHN, "grant_type": "client_credentials"},
     {(TOKEN_REQUESTS, labelled(status="400", error="unsupported_grant_type")): 1}, 0),
    ("415", "text/plain", b"x",
     {(TOKEN_REQUESTS, labelled(status="415", error="invalid_request")): 1}, 0),
    ("413", JSON, {**JOHN, "padding": "x" * 9000},
     {(TOKEN_REQUESTS, labelled(status="413", error="invalid_request")): 1}, 0),
]


@pytest.mark.tls_core
@pytest.mark.parametrize("content_type,body,moves,signed", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_token_request_moves_exactly_its_series(http, service, content_type, body, moves, signed):
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    before = scrape(http, service)
    r = http.post(service.url("/token"), data=data, headers={"Content-Type": content_type}, timeout=10)
    after = scrape(http, service)
    status = next(dict(labels)["status"] for name, labels in moves if name == TOKEN_REQUESTS)
    assert str(r.status_code) == status, r.text[:200]
    for name in (TOKEN_REQUESTS, PASSWORD_CHECKS):
        moved = {show(labels): after.get((name, labels), 0) - before.get((name, labels), 0)
                 for labels in set(series(before, name)) | set(series(after, name))}
        moved = {labels: delta for labels, delta in moved.items() if delta}
        expected = {show(labels): delta for (n, labels), delta in moves.items() if n == name}
        assert moved == expected, f"{name} moved {moved}, expected {expected}"
    grew = lambda name: after[(name + "_count", frozenset())] - before.get((name + "_count", frozenset()), 0)
    assert grew(REQUEST_DURATION) == 1, "every POST /token handled is one observation"
    assert grew(SIGNING_DURATION) == signed, "one observation per token pair signed"


def test_unusable_stored_hash_is_counted_as_unusable(http, service):
    before = scrape(http, service)
    r = http.post(service.url("/token"), json={"username": "broken@example.com", "password": "x"}, timeout=10)
    assert r.status_code == 400
    after = scrape(http, service)
    moved = {dict(labels)["result"]: after[(PASSWORD_CHECKS, labels)] - before.get((PASSWORD_CHECKS, labels), 0)
             for (n, labels) in after if n == PASSWORD_CHECKS}
    assert {k: v for k, v in moved.items() if v} == {"unusable": 1}, moved


# --------------------------------------------------------------------------- where /metrics is served (§3)

@pytest.mark.parametrize("method", ["GET", "HEAD", "POST", "OPTIONS"])
def test_the_public_port_does_not_serve_metrics(http, service, method):
    """The counters are no oracle for a public client: on the public port /metrics is an unknown path, 404 for every
    method (not 405, which would say the path exists)."""
    r = http.request(method, service.url("/metrics"), timeout=10)
    assert r.status_code == 404, (method, r.status_code, r.text[:200])
    if method != "HEAD":
        assert r.json() == {"error": "not_found"}
    assert "simpleauth_" not in r.text


@pytest.mark.parametrize("path", ["/", "/token", "/health", "/health/live", "/.well-known/jwks.json",
                                  "/.well-known/openid-configuration", "/metrics/x", "/metricsx", "/nope"])
def test_the_metrics_port_serves_only_metrics(http, service, path):
    r = http.get(service.metrics_url(path), timeout=10)
    assert r.status_code == 404, (path, r.status_code, r.text[:200])
    assert r.json() == {"error": "not_found"}
    r = http.post(service.metrics_url("/token"), json=JOHN, timeout=10)
    assert r.status_code == 404 and "access_token" not in r.text, (r.status_code, r.text[:200])


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "OPTIONS"])
def test_the_metrics_port_answers_only_get_on_metrics(http, service, method):
    r = http.request(method, service.metrics_url(), timeout=10)
    assert r.status_code == 404, (method, r.status_code, r.text[:200])
    assert r.json() == {"error": "not_found"}
