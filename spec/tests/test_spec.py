"""Self-checks of spec/: the vectors are right and the OpenAPI document covers the contract."""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
from pathlib import Path

import pytest
import yaml
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

SPEC = Path(__file__).resolve().parents[1]
VECTORS = json.loads((SPEC / "vectors.json").read_text())
OPENAPI = yaml.safe_load((SPEC / "openapi.yaml").read_text())


def legacy_ok(password: str, stored: str) -> bool:
    parts = stored.split("$")
    if len(parts) != 4 or parts[0] != "" or parts[1] != "hmac-sha256":
        return False
    try:
        salt = base64.b64decode(parts[2], validate=True)
        expected = base64.b64decode(parts[3], validate=True)
    except ValueError:
        return False
    return hmac.compare_digest(hmac.new(salt, password.encode(), hashlib.sha256).digest(), expected)


def argon_ok(password: str, stored: str) -> bool:
    if not stored.startswith("$argon2id$v=19$"):
        return False
    try:
        return PasswordHasher().verify(stored, password)
    except (VerifyMismatchError, VerificationError, InvalidHashError, ValueError):
        return False


@pytest.mark.parametrize("v", VECTORS["passwords"], ids=lambda v: v["name"])
def test_password_vector_is_what_it_claims(v):
    verify = legacy_ok if v["hash"].startswith("$hmac-sha256$") else argon_ok
    assert verify(v["password"], v["hash"]) is v["valid"]


def test_john_is_the_contract_vector():
    john = next(v for v in VECTORS["passwords"] if v["name"] == "legacy-john")
    assert john["hash"] == "$hmac-sha256$qmyRlRwXH83LqAUz/V5AUA==$X864zD50ii23b75iB8UBUrbf0HTIHGRkHuR+ioTD9WE="


def test_vectors_cover_both_schemes_and_malformed_cases():
    names = [v["name"] for v in VECTORS["passwords"]]
    assert any(n.startswith("legacy") for n in names) and any(n.startswith("argon2id") for n in names)
    assert sum(1 for v in VECTORS["passwords"] if v.get("malformed")) >= 8
    assert any(not v["valid"] and not v.get("malformed") for v in VECTORS["passwords"])


def b64u(b: bytes) -> str:
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


@pytest.mark.parametrize("key", VECTORS["keys"], ids=lambda k: k["type"])
def test_key_vector_matches_the_pem(key):
    # Written out per key type here, apart from gen_vectors.py, so that a slip in either shows.
    pem = serialization.load_pem_private_key((SPEC / key["file"]).read_bytes(), password=None)
    assert (SPEC / key["file"]).read_text().startswith("-----BEGIN PRIVATE KEY-----")  # PKCS#8
    jwk = key["jwk"]
    if key["type"].startswith("rsa-"):
        assert isinstance(pem, rsa.RSAPrivateKey) and pem.key_size == key["bits"] == int(key["type"][4:])
        nums = pem.public_key().public_numbers()
        assert jwk["n"] == b64u(nums.n.to_bytes((nums.n.bit_length() + 7) // 8, "big")) and jwk["e"] == "AQAB"
        canonical, alg = '{"e":"AQAB","kty":"RSA","n":"%s"}' % jwk["n"], "RS256"
    elif key["type"] == "p-256":
        assert isinstance(pem, ec.EllipticCurvePrivateKey) and pem.curve.name == "secp256r1"
        nums = pem.public_key().public_numbers()
        assert (jwk["x"], jwk["y"]) == (b64u(nums.x.to_bytes(32, "big")), b64u(nums.y.to_bytes(32, "big")))
        canonical, alg = '{"crv":"P-256","kty":"EC","x":"%s","y":"%s"}' % (jwk["x"], jwk["y"]), "ES256"
    else:
        assert key["type"] == "ed25519" and isinstance(pem, ed25519.Ed25519PrivateKey)
        raw = pem.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        assert jwk["x"] == b64u(raw) and jwk["crv"] == "Ed25519"
        canonical, alg = '{"crv":"Ed25519","kty":"OKP","x":"%s"}' % jwk["x"], "EdDSA"
    assert key["alg"] == jwk["alg"] == alg and jwk["use"] == "sig"
    assert key["thumbprint_input"] == canonical
    assert key["kid"] == jwk["kid"] == b64u(hashlib.sha256(canonical.encode()).digest())


def test_every_key_type_has_a_vector():
    assert [k["type"] for k in VECTORS["keys"]] == ["rsa-2048", "rsa-4096", "p-256", "ed25519"]


def test_public_key_bundle_vector():
    bundle = VECTORS["public_key_bundle"]
    text = (SPEC / bundle["file"]).read_text()
    assert text.count("-----BEGIN PUBLIC KEY-----") == 4 and "PRIVATE" not in text
    by_type = {k["type"]: k for k in VECTORS["keys"]}
    assert bundle["kids"] == [by_type[t]["kid"] for t in ("rsa-2048", "rsa-4096", "p-256", "ed25519")]
    # The signing key (rsa-2048) first; the bundle repeats it and it is published once.
    assert bundle["jwks"]["keys"] == [by_type[t]["jwk"] for t in ("rsa-2048", "rsa-4096", "p-256", "ed25519")]


@pytest.mark.parametrize("pair", VECTORS["at_hash"], ids=lambda p: f'{p["alg"]}-{p["access_token"][:12] or "empty"}')
def test_at_hash_vector(pair):
    if pair["alg"] == "EdDSA":
        digest = hashlib.sha512(pair["access_token"].encode("ascii")).digest()[:32]
    else:
        assert pair["alg"] in ("RS256", "ES256")
        digest = hashlib.sha256(pair["access_token"].encode("ascii")).digest()[:16]
    assert pair["at_hash"] == b64u(digest)


def test_openapi_is_3_1_and_has_every_endpoint():
    assert OPENAPI["openapi"].startswith("3.1")
    # /metrics is served on METRICS_PORT only (spec/README.md §3); on the public port it is an unknown path.
    assert set(OPENAPI["paths"]) == {"/token", "/revoke", "/.well-known/jwks.json", "/.well-known/openid-configuration", "/health",
                                     "/health/live"}


def test_openapi_wrong_methods_name_the_allowed_ones():
    responses = OPENAPI["components"]["responses"]
    assert responses["MethodNotAllowedPost"]["headers"]["Allow"]["schema"]["const"] == "POST"
    pattern = re.compile(responses["MethodNotAllowedGet"]["headers"]["Allow"]["schema"]["pattern"])
    assert pattern.match("GET, HEAD") and not pattern.match("GET") and not pattern.match("GET, HEAD, POST")
    for path in ("/health", "/health/live", "/.well-known/jwks.json", "/.well-known/openid-configuration"):
        assert set(OPENAPI["paths"][path]) == {"get", "post"}, path
        assert OPENAPI["paths"][path]["post"]["responses"]["405"]["$ref"].endswith("/MethodNotAllowedGet")


def test_openapi_says_where_the_metrics_are():
    description = OPENAPI["info"]["description"]
    assert "METRICS_PORT" in description and "text/plain; version=0.0.4" in description


def test_spec_needs_nothing_outside_the_project():
    # The design once lived in a folder beside the repository; a user who clones the project has none.
    for f in [*SPEC.rglob("*.md"), *SPEC.rglob("*.yaml"), *SPEC.rglob("*.py")]:
        if f.resolve() == Path(__file__).resolve():
            continue
        assert "shared/contract" not in f.read_text(), f"{f.relative_to(SPEC)} points outside the project"


def test_openapi_token_lists_every_status_of_the_contract():
    assert set(OPENAPI["paths"]["/token"]["post"]["responses"]) == {"200", "400", "405", "413", "415", "429", "500",
                                                                     "503"}
    assert set(OPENAPI["paths"]["/revoke"]["post"]["responses"]) == {"200", "400", "405", "413", "415", "500", "503"}


def test_openapi_error_codes_are_rfc6749():
    codes = set(OPENAPI["components"]["schemas"]["Error"]["properties"]["error"]["enum"])
    assert codes == {"invalid_request", "invalid_grant", "unsupported_grant_type", "temporarily_unavailable",
                     "server_error"}


def test_openapi_refs_resolve():
    text = (SPEC / "openapi.yaml").read_text()
    for ref in set(re.findall(r'\$ref: "#/([^"]+)"', text)):
        node = OPENAPI
        for part in ref.split("/"):
            assert part in node, f"dangling $ref #/{ref}"
            node = node[part]


def test_seed_uses_the_vectors():
    seed = (SPEC.parent / "sql" / "seed.sql").read_text()
    jane = next(v for v in VECTORS["passwords"] if v["name"] == "argon2id-owasp-floor")
    assert jane["hash"] in seed
    population = re.findall(r"'argon\d+@example\.com', '\$argon2id\$v=19\$m=19456,t=2,p=1\$", seed)
    assert len(population) == 100
