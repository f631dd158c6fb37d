"""POST /token, the success rows: shape, headers, claims, signature, encodings."""
from __future__ import annotations

import time

import pytest

from service import AUDIENCE, ISSUER, TTL
from helpers import (ACCESS_CLAIMS, DEFAULT_CLIENT_ID, ID_CLAIMS, JANE, JOHN, assert_error, assert_sent_with_its_length,
                     assert_token_pair, assert_uuid, at_hash, b64url_decode, jose_header, verify)


# Every test here needs the database through the service (the subset CI also runs under --db-tls), and signs
# with the run's key (the subset CI also runs per --key-type).
pytestmark = [pytest.mark.tls_core, pytest.mark.signing]


def post_json(http, service, body, **kw):
    return http.post(service.url("/token"), json=body, timeout=10, **kw)


def post_form(http, service, fields, **kw):
    return http.post(service.url("/token"), data=fields, timeout=10, **kw)


def test_json_login_returns_a_token_pair(http, service):
    r = post_json(http, service, JOHN)
    assert_token_pair(r, TTL)
    assert_sent_with_its_length(r)


def test_form_login_returns_a_token_pair(http, service):
    r = post_form(http, service, {"grant_type": "password", **JOHN})
    assert r.request.headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert_token_pair(r, TTL)


def test_headers_name_the_keys_algorithm_and_thumbprint(http, service, signing_key):
    # The key decides the algorithm (RS256, ES256, EdDSA); the access token is an RFC 9068 at+jwt.
    body = assert_token_pair(post_json(http, service, JOHN), TTL)
    assert jose_header(body["access_token"]) == {"alg": signing_key["alg"], "typ": "at+jwt", "kid": signing_key["kid"]}
    assert jose_header(body["id_token"]) == {"alg": signing_key["alg"], "typ": "JWT", "kid": signing_key["kid"]}


def test_es256_signature_is_the_jose_form(http, service, signing_key):
    # RFC 7518 §3.4: R and S, 32 bytes each, concatenated; a DER-encoded ECDSA signature is refused by verifiers.
    if signing_key["alg"] != "ES256":
        pytest.skip("ES256 only")
    body = assert_token_pair(post_json(http, service, JOHN), TTL)
    for token in (body["access_token"], body["id_token"]):
        assert len(b64url_decode(token.split(".")[2])) == 64


def test_claims_of_both_tokens(http, service, jwks, user_row, signing_key):
    before = int(time.time())
    body = assert_token_pair(post_json(http, service, JOHN), TTL)
    after = int(time.time())
    access = verify(body["access_token"], jwks, ISSUER, AUDIENCE)
    ident = verify(body["id_token"], jwks, ISSUER, DEFAULT_CLIENT_ID)

    assert set(access) == ACCESS_CLAIMS, sorted(access)
    assert set(ident) == ID_CLAIMS, sorted(ident)
    # Each a string, not a list: the access token is for the resource (JWT_AUDIENCE), the ID token for the client.
    assert access["aud"] == AUDIENCE
    assert ident["aud"] == DEFAULT_CLIENT_ID
    for claims in (access, ident):
        assert claims["iss"] == ISSUER
        assert isinstance(claims["iat"], int) and isinstance(claims["exp"], int)
        assert before - 2 <= claims["iat"] <= after + 2
        assert claims["exp"] == claims["iat"] + TTL
        assert_uuid(claims["sub"])
        assert_uuid(claims["sid"])
        assert_uuid(claims["jti"])
    assert access["sub"] == ident["sub"]
    assert access["sid"] == ident["sid"], "sid must be the same in both tokens"
    assert access["jti"] != ident["jti"], "each token has its own jti"
    assert (access["iat"], access["exp"]) == (ident["iat"], ident["exp"])
    assert ident["email"] == "john@example.com"
    assert ident["name"] == "John Doe"
    assert ident["preferred_username"] == "johndoe"
    assert ident["at_hash"] == at_hash(body["access_token"], signing_key["alg"])
    assert access["client_id"] == DEFAULT_CLIENT_ID
    row = user_row("john@example.com")
    if row is not None:
        assert access["sub"] == row["id"]


def test_sid_and_jti_are_fresh_on_every_call(http, service, jwks):
    seen_sid, seen_jti = set(), set()
    for _ in range(3):
        body = assert_token_pair(post_json(http, service, JOHN), TTL)
        access = verify(body["access_token"], jwks, ISSUER, AUDIENCE)
        ident = verify(body["id_token"], jwks, ISSUER, DEFAULT_CLIENT_ID)
        assert access["sid"] not in seen_sid
        seen_sid.add(access["sid"])
        for jti in (access["jti"], ident["jti"]):
            assert jti not in seen_jti
            seen_jti.add(jti)


@pytest.mark.parametrize("username", ["JOHN@EXAMPLE.COM", "John@Example.com", "john@EXAMPLE.com"])
def test_username_is_matched_case_insensitively(http, service, jwks, username):
    body = assert_token_pair(post_json(http, service, {"username": username, "password": JOHN["password"]}), TTL)
    assert verify(body["id_token"], jwks, ISSUER, DEFAULT_CLIENT_ID)["email"] == "john@example.com"


@pytest.mark.parametrize("credentials", [
    JANE,
    {"username": "argon7@example.com", "password": "argon-pass-7"},
    {"username": "argon100@example.com", "password": "argon-pass-100"},
], ids=["jane", "argon7", "argon100"])
def test_argon2id_users_log_in(http, service, jwks, credentials):
    body = assert_token_pair(post_json(http, service, credentials), TTL)
    assert verify(body["id_token"], jwks, ISSUER, DEFAULT_CLIENT_ID)["email"] == credentials["username"]


@pytest.mark.parametrize("n", [1, 4242, 10000])
def test_legacy_population_logs_in(http, service, n):
    assert_token_pair(post_json(http, service, {"username": f"legacy{n}@example.com", "password": f"legacy-pass-{n}"}), TTL)


@pytest.mark.parametrize("content_type", [
    "application/json; charset=utf-8",
    "application/json;charset=UTF-8",
    "Application/JSON",
])
def test_json_media_type_parameters_and_case(http, service, content_type):
    r = http.post(service.url("/token"), data=b'{"username":"john@example.com","password":"TopSecret0!"}',
                  headers={"Content-Type": content_type}, timeout=10)
    assert_token_pair(r, TTL)


def test_form_with_charset_parameter(http, service):
    r = http.post(service.url("/token"), data="grant_type=password&username=john%40example.com&password=TopSecret0%21",
                  headers={"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"}, timeout=10)
    assert_token_pair(r, TTL)


def test_json_grant_type_password_and_unknown_members(http, service):
    r = post_json(http, service, {**JOHN, "grant_type": "password", "scope": "openid", "extra": {"nested": [1, 2]}})
    assert_token_pair(r, TTL)


def test_form_extra_parameters_are_ignored(http, service):
    r = post_form(http, service, {"grant_type": "password", **JOHN, "scope": "openid profile", "state": "x"})
    assert_token_pair(r, TTL)


@pytest.mark.parametrize("client_id", ["web", "a", "x" * 128, "my app/1.0 (ios); ~!@#$%^&*()_+{}|:\"<>?`-=[]\\;',."],
                         ids=["word", "one-char", "128-chars", "all-printable-punctuation"])
def test_client_id_is_the_access_tokens_claim(http, service, jwks, client_id):
    for r in (post_json(http, service, {**JOHN, "client_id": client_id}),
              post_form(http, service, {"grant_type": "password", **JOHN, "client_id": client_id})):
        body = assert_token_pair(r, TTL)
        access = verify(body["access_token"], jwks, ISSUER, AUDIENCE)
        assert (access["client_id"], access["aud"]) == (client_id, AUDIENCE)
        ident = verify(body["id_token"], jwks, ISSUER, client_id)
        assert ident["aud"] == client_id, "the ID token's audience is the client (OIDC Core §2)"
        assert "client_id" not in ident


def test_without_client_id_the_default_is_used(http, service, jwks):
    for r in (post_json(http, service, JOHN), post_form(http, service, {"grant_type": "password", **JOHN})):
        body = assert_token_pair(r, TTL)
        assert verify(body["access_token"], jwks, ISSUER, AUDIENCE)["client_id"] == DEFAULT_CLIENT_ID
        assert verify(body["id_token"], jwks, ISSUER, DEFAULT_CLIENT_ID)["aud"] == DEFAULT_CLIENT_ID


@pytest.mark.parametrize("client_id", ["", "x" * 129, "tab\there", "new\nline", "caf\u00e9", "\u0000", "del\u007f"],
                         ids=["empty", "129-chars", "tab", "newline", "non-ascii", "nul", "del"])
def test_client_id_outside_its_rule_is_invalid_request(http, service, client_id):
    assert_error(post_json(http, service, {**JOHN, "client_id": client_id}), 400, "invalid_request")
    assert_error(post_form(http, service, {"grant_type": "password", **JOHN, "client_id": client_id}), 400,
                 "invalid_request")


@pytest.mark.parametrize("value", [None, 7, True, ["web"], {"id": "web"}], ids=["null", "number", "bool", "array", "object"])
def test_json_client_id_of_another_type_is_invalid_request(http, service, value):
    assert_error(post_json(http, service, {**JOHN, "client_id": value}), 400, "invalid_request")


def test_form_client_id_twice_is_invalid_request(http, service):
    r = http.post(service.url("/token"), data="grant_type=password&username=john%40example.com&password=TopSecret0%21"
                  "&client_id=web&client_id=web", headers={"Content-Type": "application/x-www-form-urlencoded"},
                  timeout=10)
    assert_error(r, 400, "invalid_request")


def test_form_plus_and_percent_decoding(http, service):
    # '+' is a space in form encoding; the password has none, so '%21' must decode to '!'.
    r = http.post(service.url("/token"), data="grant_type=password&username=john%40example.com&password=TopSecret0%21",
                  headers={"Content-Type": "application/x-www-form-urlencoded"}, timeout=10)
    assert_token_pair(r, TTL)


def test_body_of_exactly_8192_bytes_is_accepted(http, service):
    core = b'{"username":"john@example.com","password":"TopSecret0!"'
    body = core + b" " * (8192 - len(core) - 1) + b"}"
    assert len(body) == 8192
    r = http.post(service.url("/token"), data=body, headers={"Content-Type": "application/json"}, timeout=10)
    assert_token_pair(r, TTL)


def test_chunked_request_body_is_accepted(http, service):
    def chunks():
        yield b'{"username":"john@example.com",'
        yield b'"password":"TopSecret0!"}'
    r = http.post(service.url("/token"), data=chunks(), headers={"Content-Type": "application/json"}, timeout=10)
    assert r.request.headers.get("Transfer-Encoding") == "chunked"
    assert_token_pair(r, TTL)


def test_unicode_json_escapes_decode(http, service):
    # "TopSecret0\u0021" is "TopSecret0!" written with a JSON escape.
    r = http.post(service.url("/token"), data=b'{"username":"john@example.com","password":"TopSecret0\\u0021"}',
                  headers={"Content-Type": "application/json"}, timeout=10)
    assert_token_pair(r, TTL)
