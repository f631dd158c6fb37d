"""POST /token, the success rows: shape, headers, claims, signature, encodings."""
from __future__ import annotations

import time

import pytest

from service import AUDIENCE, DEV_KEY, ISSUER, TTL
from helpers import (ACCESS_CLAIMS, ID_CLAIMS, JANE, JOHN, assert_token_pair, assert_uuid, at_hash, jose_header,
                     verify)


# Every test here needs the database through the service (the subset CI also runs under --db-tls).
pytestmark = pytest.mark.tls_core


def post_json(http, service, body, **kw):
    return http.post(service.url("/token"), json=body, timeout=10, **kw)


def post_form(http, service, fields, **kw):
    return http.post(service.url("/token"), data=fields, timeout=10, **kw)


def test_json_login_returns_a_token_pair(http, service):
    assert_token_pair(post_json(http, service, JOHN), TTL)


def test_form_login_returns_a_token_pair(http, service):
    r = post_form(http, service, {"grant_type": "password", **JOHN})
    assert r.request.headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert_token_pair(r, TTL)


def test_tokens_are_rs256_with_the_thumbprint_kid(http, service):
    body = assert_token_pair(post_json(http, service, JOHN), TTL)
    for token in (body["access_token"], body["id_token"]):
        assert jose_header(token) == {"alg": "RS256", "typ": "JWT", "kid": DEV_KEY["kid"]}


def test_claims_of_both_tokens(http, service, jwks, user_row):
    before = int(time.time())
    body = assert_token_pair(post_json(http, service, JOHN), TTL)
    after = int(time.time())
    access = verify(body["access_token"], jwks, ISSUER, AUDIENCE)
    ident = verify(body["id_token"], jwks, ISSUER, AUDIENCE)

    assert set(access) == ACCESS_CLAIMS, sorted(access)
    assert set(ident) == ID_CLAIMS, sorted(ident)
    for claims in (access, ident):
        assert claims["iss"] == ISSUER
        assert claims["aud"] == AUDIENCE  # a string, not a list
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
    assert ident["at_hash"] == at_hash(body["access_token"])
    row = user_row("john@example.com")
    if row is not None:
        assert access["sub"] == row["id"]


def test_sid_and_jti_are_fresh_on_every_call(http, service, jwks):
    seen_sid, seen_jti = set(), set()
    for _ in range(3):
        body = assert_token_pair(post_json(http, service, JOHN), TTL)
        access = verify(body["access_token"], jwks, ISSUER, AUDIENCE)
        ident = verify(body["id_token"], jwks, ISSUER, AUDIENCE)
        assert access["sid"] not in seen_sid
        seen_sid.add(access["sid"])
        for jti in (access["jti"], ident["jti"]):
            assert jti not in seen_jti
            seen_jti.add(jti)


@pytest.mark.parametrize("username", ["JOHN@EXAMPLE.COM", "John@Example.com", "john@EXAMPLE.com"])
def test_username_is_matched_case_insensitively(http, service, jwks, username):
    body = assert_token_pair(post_json(http, service, {"username": username, "password": JOHN["password"]}), TTL)
    assert verify(body["id_token"], jwks, ISSUER, AUDIENCE)["email"] == "john@example.com"


@pytest.mark.parametrize("credentials", [
    JANE,
    {"username": "argon7@example.com", "password": "argon-pass-7"},
    {"username": "argon100@example.com", "password": "argon-pass-100"},
], ids=["jane", "argon7", "argon100"])
def test_argon2id_users_log_in(http, service, jwks, credentials):
    body = assert_token_pair(post_json(http, service, credentials), TTL)
    assert verify(body["id_token"], jwks, ISSUER, AUDIENCE)["email"] == credentials["username"]


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
    r = post_form(http, service, {"grant_type": "password", **JOHN, "scope": "openid profile", "client_id": "web"})
    assert_token_pair(r, TTL)


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
