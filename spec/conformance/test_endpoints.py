"""JWKS, discovery, health, unknown paths and wrong methods."""
from __future__ import annotations

import base64
import hashlib
import json

import pytest

from service import ISSUER
from helpers import assert_error, cache_directives, media_type

DISCOVERY = "/.well-known/openid-configuration"
CLAIMS_SUPPORTED = ["iss", "aud", "sub", "iat", "exp", "sid", "jti", "client_id", "name", "preferred_username",
                    "email", "at_hash"]
THUMBPRINT_MEMBERS = {"RSA": ("e", "kty", "n"), "EC": ("crv", "kty", "x", "y"), "OKP": ("crv", "kty", "x")}


@pytest.mark.signing
def test_jwks_serves_the_signing_key(http, service, signing_key):
    r = http.get(service.url("/.well-known/jwks.json"), timeout=10)
    assert r.status_code == 200
    assert media_type(r) == "application/json"
    assert cache_directives(r) == {"public", "max-age=300"}, r.headers.get("Cache-Control")
    assert r.json() == {"keys": [signing_key["jwk"]]}


@pytest.mark.signing
def test_jwks_kid_is_the_rfc7638_thumbprint(http, service):
    # Computed here from the served members, not read from the vectors: RFC 7638 §3 per key type.
    for key in http.get(service.url("/.well-known/jwks.json"), timeout=10).json()["keys"]:
        members = {m: key[m] for m in THUMBPRINT_MEMBERS[key["kty"]]}
        canonical = json.dumps(members, separators=(",", ":"), sort_keys=True).encode()
        assert key["kid"] == base64.urlsafe_b64encode(hashlib.sha256(canonical).digest()).rstrip(b"=").decode()
        for m in members:
            assert not set("=+/") & set(key[m]), f"{m} is base64url without padding"


@pytest.mark.signing
def test_discovery_document(http, service, signing_key):
    r = http.get(service.url(DISCOVERY), timeout=10)
    assert r.status_code == 200, r.text[:300]
    assert media_type(r) == "application/json"
    assert cache_directives(r) == {"public", "max-age=300"}, r.headers.get("Cache-Control")
    assert r.json() == {
        "issuer": ISSUER,
        "token_endpoint": ISSUER.rstrip("/") + "/token",
        "jwks_uri": ISSUER.rstrip("/") + "/.well-known/jwks.json",
        "grant_types_supported": ["password", "refresh_token"],
        "revocation_endpoint": ISSUER.rstrip("/") + "/revoke",
        "revocation_endpoint_auth_methods_supported": ["none"],
        "response_types_supported": [],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": [signing_key["alg"]],
        "token_endpoint_auth_methods_supported": ["none"],
        "claims_supported": CLAIMS_SUPPORTED,
    }


def test_discovery_head_has_the_get_headers_and_no_body(http, service):
    get = http.get(service.url(DISCOVERY), timeout=10)
    head = http.head(service.url(DISCOVERY), timeout=10)
    assert head.status_code == 200 and head.content == b""
    assert media_type(head) == "application/json"
    assert cache_directives(head) == cache_directives(get)


@pytest.mark.tls_core
def test_health_up(http, service):
    r = http.get(service.url("/health"), timeout=10)
    assert r.status_code == 200
    assert media_type(r) == "application/json"
    assert r.json() == {"status": "up"}


def test_liveness(http, service):
    r = http.get(service.url("/health/live"), timeout=10)
    assert r.status_code == 200
    assert media_type(r) == "application/json", r.headers.get("Content-Type")
    assert "no-store" in cache_directives(r), r.headers.get("Cache-Control")
    assert r.json() == {"status": "up"}


@pytest.mark.parametrize("path", ["/health", "/health/live", "/.well-known/jwks.json", DISCOVERY, "/metrics"])
@pytest.mark.parametrize("content_type", ["multipart/form-data", "text/plain", "application/json"])
def test_read_only_endpoints_ignore_a_request_content_type(http, service, path, content_type):
    # A GET carries no meaningful body; whatever Content-Type a client sends must not turn it into an error.
    url = service.metrics_url() if path == "/metrics" else service.url(path)
    r = http.get(url, headers={"Content-Type": content_type}, timeout=10)
    assert r.status_code == 200, r.text[:300]
    assert media_type(r) == ("text/plain" if path == "/metrics" else "application/json")


@pytest.mark.parametrize("path", ["/", "/nope", "/token/", "/tokens", "/.well-known/openid-configuration/x",
                                  "/.well-known/oauth-authorization-server", "/.well-known/openid-configuration.json",
                                  "/.well-known/jwks.json/x", "/health/x", "/TOKEN", "/health/live/x",
                                  "/health/liveness", "/metrics", "/metrics/", "/metrics/x", "/metric"])
def test_unknown_paths_are_404(http, service, path):
    r = http.get(service.url(path), timeout=10)
    assert r.status_code == 404, (path, r.status_code, r.text[:200])
    assert media_type(r) == "application/json"
    assert r.json() == {"error": "not_found"}


def test_unknown_path_with_post_is_404(http, service):
    r = http.post(service.url("/login"), json={"username": "john@example.com", "password": "TopSecret0!"}, timeout=10)
    assert r.status_code == 404
    assert r.json() == {"error": "not_found"}


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE", "PATCH"])
def test_token_wrong_method_is_405(http, service, method):
    r = http.request(method, service.url("/token"), timeout=10)
    assert_error(r, 405, "invalid_request")
    assert r.headers.get("Allow", "").replace(" ", "").upper() == "POST", r.headers.get("Allow")


@pytest.mark.parametrize("path", ["/health", "/health/live", "/.well-known/jwks.json", DISCOVERY])
@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE"])
def test_read_only_endpoints_wrong_method_is_405(http, service, path, method):
    r = http.request(method, service.url(path), timeout=10)
    assert_error(r, 405, "invalid_request")
    assert [m.strip() for m in r.headers.get("Allow", "").split(",")] == ["GET", "HEAD"], r.headers.get("Allow")


def test_query_string_on_token_is_ignored(http, service):
    r = http.post(service.url("/token?foo=bar"), json={"username": "john@example.com", "password": "TopSecret0!"},
                  timeout=10)
    assert r.status_code == 200
