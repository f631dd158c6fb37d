"""Assertions shared by the conformance tests: the contract's shapes, once."""
from __future__ import annotations

import base64
import hashlib
import json
import re
import uuid

import jwt
import requests

JOHN = {"username": "john@example.com", "password": "TopSecret0!"}
JANE = {"username": "jane@example.com", "password": "CorrectHorse9!"}
SUCCESS_MEMBERS = {"access_token", "id_token", "token_type", "expires_in", "refresh_token"}
INVALID_GRANT_BODY = b'{"error":"invalid_grant","error_description":"invalid username or password"}'
ERROR_CODES = {"invalid_request", "invalid_grant", "unsupported_grant_type", "temporarily_unavailable", "server_error"}
COMMON_CLAIMS = {"iss", "aud", "sub", "iat", "exp", "sid", "jti"}
ACCESS_CLAIMS = COMMON_CLAIMS | {"client_id"}
ID_CLAIMS = COMMON_CLAIMS | {"name", "preferred_username", "email", "at_hash"}
DEFAULT_CLIENT_ID = "public"  # the contract's default; the suite's services keep it
# The digest at_hash uses per JWS algorithm (spec/README.md §2).
AT_HASH_DIGEST = {"RS256": "sha256", "ES256": "sha256", "EdDSA": "sha512"}
LEAK_MARKERS = re.compile(r"(Exception|Traceback|\bat [\w.$]+\(|panicked|SELECT |stack backtrace|\.java:\d+|\.scala:\d+|\.rs:\d+)")


def media_type(r: requests.Response) -> str:
    return r.headers.get("Content-Type", "").split(";")[0].strip().lower()


def cache_directives(r: requests.Response) -> set[str]:
    return {d.strip().lower() for d in r.headers.get("Cache-Control", "").split(",") if d.strip()}


def assert_error(r: requests.Response, status: int, code: str) -> dict:
    """An RFC 6749 §5.2 error of the contract: status, headers and body shape."""
    assert r.status_code == status, f"expected {status} {code}, got {r.status_code}: {r.text[:300]!r}"
    assert media_type(r) == "application/json", r.headers.get("Content-Type")
    assert "no-store" in cache_directives(r), r.headers.get("Cache-Control")
    body = r.json()
    assert isinstance(body, dict), body
    assert body.get("error") == code, body
    assert set(body) <= {"error", "error_description"}, body
    if "error_description" in body:
        assert isinstance(body["error_description"], str)
    assert not LEAK_MARKERS.search(r.text), f"error body leaks internals: {r.text[:300]!r}"
    return body


def b64url_decode(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def jose_header(token: str) -> dict:
    return json.loads(b64url_decode(token.split(".")[0]))


def at_hash(access_token: str, alg: str = "RS256") -> str:
    """OIDC Core §3.1.3.6: the left half of the algorithm's hash of the access token, base64url."""
    digest = hashlib.new(AT_HASH_DIGEST[alg], access_token.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest[:len(digest) // 2]).rstrip(b"=").decode()


def verify(token: str, jwks: dict, issuer: str, audience: str) -> dict:
    """Verifies a token's signature against the served JWKS (the key its kid names, with the algorithm that
    key's JWK states, which must also be the header's) and returns its claims."""
    header = jose_header(token)
    keys = {k["kid"]: k for k in jwks["keys"]}
    assert header.get("kid") in keys, f"kid {header.get('kid')} not in JWKS"
    jwk = keys[header["kid"]]
    assert header.get("alg") == jwk["alg"], f"header alg {header.get('alg')} but the JWK says {jwk['alg']}"
    public_key = jwt.PyJWK(jwk).key
    return jwt.decode(token, public_key, algorithms=[jwk["alg"]], audience=audience, issuer=issuer,
                      options={"require": ["iss", "aud", "sub", "iat", "exp"]}, leeway=5)


def assert_uuid(value) -> None:
    assert isinstance(value, str), value
    assert str(uuid.UUID(value)) == value.lower(), value


def assert_token_pair(r: requests.Response, ttl: int) -> dict:
    """A 200 of POST /token: headers and the exact body shape. Returns the body."""
    assert r.status_code == 200, f"expected 200, got {r.status_code}: {r.text[:300]!r}"
    assert media_type(r) == "application/json", r.headers.get("Content-Type")
    assert "no-store" in cache_directives(r), r.headers.get("Cache-Control")
    assert r.headers.get("Pragma", "").lower() == "no-cache"
    body = r.json()
    assert set(body) == SUCCESS_MEMBERS, body
    assert body["token_type"] == "Bearer"
    assert body["expires_in"] == ttl and isinstance(body["expires_in"], int)
    return body


def assert_sent_with_its_length(r: requests.Response) -> None:
    """A small JSON answer goes out with its Content-Length, not chunked, on every stack: the benchmark then compares
    the same bytes on the wire (a chunked answer costs a server one more write, and its client one more chunk)."""
    assert "Transfer-Encoding" not in r.headers, dict(r.headers)
    assert r.headers.get("Content-Length") == str(len(r.content)), dict(r.headers)


# --------------------------------------------------------------------------- Prometheus text format 0.0.4

_METRIC_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
_SAMPLE = re.compile(rf"^({_METRIC_NAME})(?:\{{(.*)\}})?\s+(\S+)(?:\s+(-?\d+))?$")
_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(?:,|$)')
_UNESCAPE = {"\\\\": "\\", '\\"': '"', "\\n": "\n"}


def _labels(text: str, line: str) -> frozenset:
    labels, pos = {}, 0
    while pos < len(text.rstrip()):
        m = _LABEL.match(text, pos)
        assert m, f"malformed labels in metrics line: {line!r}"
        name, value = m.group(1), re.sub(r'\\[\\"n]', lambda e: _UNESCAPE[e.group(0)], m.group(2))
        assert name not in labels, f"label {name} twice: {line!r}"
        labels[name] = value
        pos = m.end()
    return frozenset(labels.items())


def parse_prometheus(text: str) -> tuple[dict[str, str], dict[tuple[str, frozenset], float]]:
    """A strict reader of the text exposition format 0.0.4: returns ({family: type}, {(name, labels): value}).
    Every line must be a comment, blank, or a well-formed sample; a series may appear once."""
    types: dict[str, str] = {}
    samples: dict[tuple[str, frozenset], float] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        if line.startswith("#"):
            parts = line.split(None, 3)
            if len(parts) >= 4 and parts[1] == "TYPE":
                assert re.fullmatch(_METRIC_NAME, parts[2]), line
                assert parts[3] in {"counter", "gauge", "histogram", "summary", "untyped"}, line
                assert parts[2] not in types, f"TYPE of {parts[2]} twice"
                types[parts[2]] = parts[3]
            continue
        m = _SAMPLE.match(line)
        assert m, f"malformed metrics line: {line!r}"
        name, labels = m.group(1), _labels(m.group(2) or "", line)
        try:
            value = float(m.group(3))  # also +Inf, -Inf, NaN
        except ValueError:
            raise AssertionError(f"not a number in metrics line: {line!r}") from None
        assert (name, labels) not in samples, f"series twice: {line!r}"
        samples[(name, labels)] = value
    return types, samples
