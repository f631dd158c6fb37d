"""The issuer's keys (spec/README.md §2, §3, §5 "Key rotation"): every accepted key type, the public-key bundle,
a SIGHUP rotation under load and a reload that fails, the refusals at start, the discovery document's base, and
a stock RFC 9068 validator that nobody here wrote accepting the access token.

The process tests start the stack on keys and files of their own; the validator tests use the suite's service
(and so its --key-type)."""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time

import pytest
import requests
from authlib.oauth2.rfc6750 import InvalidTokenError
from authlib.oauth2.rfc9068 import JWTBearerTokenValidator
from authlib.oauth2.rfc9068 import token_validator
from joserfc import jwt as joserfc_jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

import stackctl
from service import AUDIENCE, ISSUER, KEYS, ROOT, TTL, VECTORS, start_service
from helpers import DEFAULT_CLIENT_ID, JOHN, assert_token_pair, at_hash, jose_header, parse_prometheus, verify
from test_process import assert_refused, no_database, refusals_of

KEY_DIR = ROOT / "spec" / "keys"
RELOADS = "simpleauth_key_reloads_total"
# How long a SIGHUP may take to show in the JWKS (the reload is a file read and a key parse).
RELOAD_WITHIN = 10.0


# --------------------------------------------------------------------------- helpers

def login(base_url: str, **extra) -> dict:
    return assert_token_pair(requests.post(base_url + "/token", json={**JOHN, **extra}, timeout=10), TTL)


def get_json(base_url: str, path: str) -> dict:
    r = requests.get(base_url + path, timeout=10)
    assert r.status_code == 200, (path, r.status_code, r.text[:300])
    return r.json()


def reloads(svc) -> dict[str, float]:
    samples = parse_prometheus(svc.metrics())[1]
    return {dict(labels).get("result"): value for (name, labels), value in samples.items() if name == RELOADS}


def private_pem(key) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def public_pem(key) -> bytes:
    return key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def dev_public_pem(key_type: str) -> bytes:
    key = serialization.load_pem_private_key((ROOT / "spec" / KEYS[key_type]["file"]).read_bytes(), password=None)
    return public_pem(key)


def replace_file(path, data: bytes) -> None:
    """As an operator's tooling (or a secrets mount) does: write aside, then rename over."""
    tmp = path.with_name(path.name + ".new")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def wait_for_first_kid(base_url: str, kid: str) -> dict:
    deadline = time.monotonic() + RELOAD_WITHIN
    while True:
        jwks = get_json(base_url, "/.well-known/jwks.json")
        if jwks["keys"][0]["kid"] == kid:
            return jwks
        assert time.monotonic() < deadline, f"the JWKS still leads with {jwks['keys'][0]['kid']}, not {kid}"
        time.sleep(0.05)


def wait_for_reloads(svc, result: str, count: int) -> None:
    deadline = time.monotonic() + RELOAD_WITHIN
    while reloads(svc).get(result, 0) < count:
        assert time.monotonic() < deadline, f"{RELOADS}{{result={result!r}}} did not reach {count}: {reloads(svc)}"
        time.sleep(0.05)


def wait_for_start_up_line(svc) -> None:
    """The start-up line names the kid and the alg; a stack may write it a moment after it first answers (Spring
    logs it when the application is ready), and a test that counts the lines a reload writes starts after it."""
    deadline = time.monotonic() + RELOAD_WITHIN
    while not re.search(r"alg=(RS256|ES256|EdDSA)", svc.log_text()):
        assert time.monotonic() < deadline, f"no start-up line with alg=: {svc.log_text()[-1500:]}"
        time.sleep(0.05)


def log_lines_since(svc, offset: int) -> list[str]:
    return [line for line in svc.log_text()[offset:].splitlines() if line.strip()]


@pytest.fixture(scope="module")
def database(own_process, open_database):
    with open_database() as (url, pg):
        yield url, pg


@pytest.fixture
def started(own_process, database, workdir):
    """Starts the stack with extra environment; stops whatever it started."""
    running = []

    def start(name: str, key_type: str = stackctl.DEFAULT_KEY_TYPE, **env):
        url, pg = database
        svc = start_service(own_process, url, workdir / f"{name}.log", pg, key_type=key_type, **env)
        running.append(svc)
        wait_for_start_up_line(svc)
        return svc
    yield start
    for svc in running:
        stackctl.stop_process(svc.proc)


# --------------------------------------------------------------------------- every key type

@pytest.mark.parametrize("key_type", list(KEYS))
def test_each_key_type_signs_with_its_algorithm(started, key_type):
    key = KEYS[key_type]
    svc = started(f"key-{key_type}", key_type=key_type)
    jwks = get_json(svc.base_url, "/.well-known/jwks.json")
    assert jwks == {"keys": [key["jwk"]]}
    assert get_json(svc.base_url, "/.well-known/openid-configuration")["id_token_signing_alg_values_supported"] == [key["alg"]]
    body = login(svc.base_url)
    assert jose_header(body["access_token"]) == {"alg": key["alg"], "typ": "at+jwt", "kid": key["kid"]}
    assert jose_header(body["id_token"]) == {"alg": key["alg"], "typ": "JWT", "kid": key["kid"]}
    verify(body["access_token"], jwks, ISSUER, AUDIENCE)
    assert verify(body["id_token"], jwks, ISSUER, DEFAULT_CLIENT_ID)["at_hash"] == at_hash(body["access_token"], key["alg"])
    assert f"alg={key['alg']}" in svc.log_text() and key["kid"] in svc.log_text(), "the start-up line names kid and alg"
    assert reloads(svc) == {"success": 0, "failure": 0}


def test_bundle_default_client_id_and_an_issuer_with_a_path(started):
    """JWT_PUBLIC_KEYS_FILE is published after the signing key (the bundle repeats the signing key, published once);
    DEFAULT_CLIENT_ID is the access token's client_id; the discovery URLs join an issuer with a path and a
    trailing slash without doubling it, and `issuer` stays verbatim."""
    issuer = "https://login.example.test/tenant-1/"
    svc = started("bundle", JWT_PUBLIC_KEYS_FILE=str(ROOT / "spec" / VECTORS["public_key_bundle"]["file"]),
                  DEFAULT_CLIENT_ID="mobile-app", JWT_ISSUER=issuer)
    jwks = get_json(svc.base_url, "/.well-known/jwks.json")
    assert jwks == VECTORS["public_key_bundle"]["jwks"]
    discovery = get_json(svc.base_url, "/.well-known/openid-configuration")
    assert discovery["issuer"] == issuer
    assert discovery["token_endpoint"] == "https://login.example.test/tenant-1/token"
    assert discovery["jwks_uri"] == "https://login.example.test/tenant-1/.well-known/jwks.json"
    assert discovery["id_token_signing_alg_values_supported"] == ["RS256"]
    body = login(svc.base_url)
    assert verify(body["access_token"], jwks, issuer, AUDIENCE)["client_id"] == "mobile-app"
    assert verify(body["id_token"], jwks, issuer, "mobile-app")["aud"] == "mobile-app", "the ID token is for the client"
    body = login(svc.base_url, client_id="web")
    assert verify(body["access_token"], jwks, issuer, AUDIENCE)["client_id"] == "web"
    assert verify(body["id_token"], jwks, issuer, "web")["aud"] == "web"


def test_an_empty_default_client_id_counts_as_unset(started):
    svc = started("empty-client-id", DEFAULT_CLIENT_ID="")
    body = login(svc.base_url)
    assert verify(body["access_token"], get_json(svc.base_url, "/.well-known/jwks.json"), ISSUER,
                  AUDIENCE)["client_id"] == "public"


# --------------------------------------------------------------------------- rotation

def test_rotation_under_load_drops_no_request(started, workdir):
    """The documented procedure's switch, under wrk: the next key (here P-256, so the algorithm changes too) is
    already published; the signing key file is replaced, the old public key moves to the bundle, SIGHUP. No answer
    but 200, tokens from before and after both verify against the JWKS served after."""
    wrk = shutil.which("wrk")
    if wrk is None:
        pytest.skip("wrk is not installed (make deps)")
    old_key = (ROOT / "spec" / KEYS["rsa-2048"]["file"]).read_bytes()
    next_key = ec.generate_private_key(ec.SECP256R1())
    key_file, bundle = workdir / "rotating-key.pem", workdir / "rotating-bundle.pem"
    key_file.write_bytes(old_key)
    bundle.write_bytes(public_pem(next_key))
    svc = started("rotation", JWT_PRIVATE_KEY_FILE=str(key_file), JWT_PUBLIC_KEYS_FILE=str(bundle))
    before_jwks = get_json(svc.base_url, "/.well-known/jwks.json")
    old_kid = KEYS["rsa-2048"]["kid"]
    assert before_jwks["keys"][0]["kid"] == old_kid and len(before_jwks["keys"]) == 2
    next_kid = before_jwks["keys"][1]["kid"]
    assert before_jwks["keys"][1]["alg"] == "ES256"
    token_before = login(svc.base_url)

    # What is tested is that no request is dropped, not how fast the answers come: wrk's default 2 s timeout would
    # count a slow answer (a cold JVM on a busy machine) as a socket error, so it waits as long as the run lasts.
    load = subprocess.Popen([wrk, "-t2", "-c16", "-d8s", "--timeout", "30s",
                             "-s", str(ROOT / "wrk" / "post-token.lua"), svc.base_url + "/token"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        time.sleep(3)
        log_offset = len(svc.log_text())
        replace_file(bundle, dev_public_pem("rsa-2048"))
        replace_file(key_file, private_pem(next_key))
        svc.proc.send_signal(signal.SIGHUP)
        after_jwks = wait_for_first_kid(svc.base_url, next_kid)
        out, _ = load.communicate(timeout=30)
    finally:
        if load.poll() is None:
            load.kill()
    assert svc.proc.poll() is None, f"SIGHUP stopped the process: {svc.log_text()[-1500:]}"
    statuses = re.search(r"^Statuses: (.*)$", out, re.M)
    assert statuses, f"wrk printed no status counts:\n{out}"
    counts = dict(part.split(": ") for part in statuses.group(1).split(", ") if part)
    assert set(counts) == {"200"} and int(counts["200"]) > 0, f"answers other than 200 during the rotation:\n{out}"
    assert "Socket errors" not in out, f"connections failed during the rotation:\n{out}"
    assert "Non-2xx" not in out, out

    token_after = login(svc.base_url)
    assert jose_header(token_after["access_token"])["kid"] == next_kid
    assert jose_header(token_after["access_token"])["alg"] == "ES256"
    final_jwks = get_json(svc.base_url, "/.well-known/jwks.json")
    assert final_jwks == after_jwks
    assert [k["kid"] for k in final_jwks["keys"]] == [next_kid, old_kid]
    for body in (token_before, token_after):
        verify(body["access_token"], final_jwks, ISSUER, AUDIENCE)
        verify(body["id_token"], final_jwks, ISSUER, DEFAULT_CLIENT_ID)
    assert get_json(svc.base_url, "/.well-known/openid-configuration")["id_token_signing_alg_values_supported"] == ["ES256"]
    assert reloads(svc) == {"success": 1, "failure": 0}
    assert any(next_kid in line for line in log_lines_since(svc, log_offset)), "the reload's line names the new kid"


def test_a_reload_that_fails_keeps_the_keys_in_service(started, workdir):
    """A bad signing key, then a bad bundle: each SIGHUP keeps the old keys, logs one error line and counts a
    failure; the process serves on. Then good files: the swap happens."""
    key_file, bundle = workdir / "reload-key.pem", workdir / "reload-bundle.pem"
    key_file.write_bytes((ROOT / "spec" / KEYS["rsa-2048"]["file"]).read_bytes())
    bundle.write_bytes(b"")  # no block: nothing more published
    svc = started("reload-failure", JWT_PRIVATE_KEY_FILE=str(key_file), JWT_PUBLIC_KEYS_FILE=str(bundle))
    original = get_json(svc.base_url, "/.well-known/jwks.json")
    assert original == {"keys": [KEYS["rsa-2048"]["jwk"]]}

    bad_cases = [
        ("key", (KEY_DIR / "invalid" / "ec-p384-pkcs8.pem").read_bytes(), b""),
        ("key", b"-----BEGIN PRIVATE KEY-----\nnot base64 at all\n-----END PRIVATE KEY-----\n", b""),
        ("bundle", (ROOT / "spec" / KEYS["rsa-2048"]["file"]).read_bytes(),
         (KEY_DIR / "invalid" / "public-ec-p384.pem").read_bytes()),
    ]
    for n, (what, key_bytes, bundle_bytes) in enumerate(bad_cases, start=1):
        offset = len(svc.log_text())
        replace_file(key_file, key_bytes)
        replace_file(bundle, bundle_bytes)
        svc.proc.send_signal(signal.SIGHUP)
        wait_for_reloads(svc, "failure", n)
        assert svc.proc.poll() is None, f"a failed reload stopped the process: {svc.log_text()[-1500:]}"
        assert get_json(svc.base_url, "/.well-known/jwks.json") == original, f"bad {what}: the old keys left service"
        body = login(svc.base_url)
        assert jose_header(body["access_token"])["kid"] == KEYS["rsa-2048"]["kid"]
        time.sleep(0.3)  # a second line, if any, would be written by now
        lines = log_lines_since(svc, offset)
        assert len(lines) == 1, f"bad {what}: a failed reload logs one line, got {lines}"
        assert "PRIVATE KEY" not in lines[0] and "not base64" not in lines[0], "the log line never carries key bytes"
    assert reloads(svc) == {"success": 0, "failure": len(bad_cases)}

    # Good files again: an Ed25519 signing key with the old RSA key still published.
    fresh = ed25519.Ed25519PrivateKey.generate()
    replace_file(key_file, private_pem(fresh))
    replace_file(bundle, dev_public_pem("rsa-2048"))
    svc.proc.send_signal(signal.SIGHUP)
    wait_for_reloads(svc, "success", 1)
    jwks = get_json(svc.base_url, "/.well-known/jwks.json")
    assert [k["alg"] for k in jwks["keys"]] == ["EdDSA", "RS256"]
    body = login(svc.base_url)
    assert jose_header(body["id_token"])["alg"] == "EdDSA"
    assert verify(body["id_token"], jwks, ISSUER, DEFAULT_CLIENT_ID)["at_hash"] == at_hash(body["access_token"], "EdDSA")


def test_sighup_with_an_inline_key_reloads_the_bundle(started, workdir):
    """JWT_PRIVATE_KEY cannot change in a running process: SIGHUP keeps it and re-reads the bundle."""
    bundle = workdir / "inline-bundle.pem"
    bundle.write_bytes(b"")
    svc = started("inline-reload", JWT_PRIVATE_KEY_FILE=None, JWT_PUBLIC_KEYS_FILE=str(bundle),
                  JWT_PRIVATE_KEY=(ROOT / "spec" / KEYS["rsa-2048"]["file"]).read_text())
    replace_file(bundle, dev_public_pem("ed25519"))
    svc.proc.send_signal(signal.SIGHUP)
    wait_for_reloads(svc, "success", 1)
    jwks = get_json(svc.base_url, "/.well-known/jwks.json")
    assert jwks == {"keys": [KEYS["rsa-2048"]["jwk"], KEYS["ed25519"]["jwk"]]}


# --------------------------------------------------------------------------- refusals at start

BUNDLE_CASES = ["missing", "p-384", "private-key-block", "not-base64", "certificate"]
BAD_ISSUERS = ["not a url", "issuer.example.test", "ftp://issuer.example.test", "https://",
               "https://issuer.example.test/?tenant=1", "https://issuer.example.test/#x", "/relative/path"]
BAD_CLIENT_IDS = {"129-chars": "x" * 129, "tab": "tab\there", "non-ascii": "caf\u00e9"}


def unusable_bundle(workdir, case: str) -> str:
    path = workdir / f"bundle-{case}.pem"
    if case == "p-384":
        shutil.copy(KEY_DIR / "invalid" / "public-ec-p384.pem", path)
    elif case == "private-key-block":
        path.write_bytes(dev_public_pem("p-256") + (ROOT / "spec" / KEYS["ed25519"]["file"]).read_bytes())
    elif case == "not-base64":
        path.write_bytes(dev_public_pem("p-256") + b"-----BEGIN PUBLIC KEY-----\n!!!!\n-----END PUBLIC KEY-----\n")
    elif case == "certificate":
        path.write_bytes(b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
    return str(path)


def refusing(**env):
    return lambda stack, workdir: no_database(stack, **{k: v(workdir) if callable(v) else v for k, v in env.items()})


REFUSALS = {
    **{f"bundle-{c}": refusing(JWT_PUBLIC_KEYS_FILE=lambda wd, c=c: unusable_bundle(wd, c)) for c in BUNDLE_CASES},
    **{f"issuer-{i}": refusing(JWT_ISSUER=i) for i in BAD_ISSUERS},
    **{f"client-{k}": refusing(DEFAULT_CLIENT_ID=v) for k, v in BAD_CLIENT_IDS.items()},
}


@pytest.fixture(scope="module")
def refusal(own_process, workdir):
    return refusals_of(REFUSALS, own_process, workdir)


@pytest.mark.parametrize("case", BUNDLE_CASES)
def test_refuses_an_unusable_public_keys_file(refusal, case):
    assert_refused(refusal(f"bundle-{case}"), "JWT_PUBLIC_KEYS_FILE")


@pytest.mark.parametrize("issuer", BAD_ISSUERS)
def test_refuses_an_issuer_that_is_not_an_http_url(refusal, issuer):
    assert_refused(refusal(f"issuer-{issuer}"), "JWT_ISSUER")


@pytest.mark.parametrize("client_id", list(BAD_CLIENT_IDS))
def test_refuses_a_default_client_id_outside_its_rule(refusal, client_id):
    assert_refused(refusal(f"client-{client_id}"), "DEFAULT_CLIENT_ID")


# --------------------------------------------------------------------------- a stock RFC 9068 validator

class AcceptedAlgorithms:
    """Authlib's validator decodes with joserfc, which accepts only the algorithms it calls "recommended" unless
    told which: RS256 and ES256, not EdDSA (RFC 9864 prefers the fully specified "Ed25519" name, which OpenID
    Connect and this contract do not use yet). A resource server names the algorithms it accepts; this one names
    the contract's three. Everything else of the validator (typ, the claims RFC 9068 requires, iss, aud, the
    signature against the JWKS) is Authlib's own."""
    ALGORITHMS = ("RS256", "ES256", "EdDSA")

    @staticmethod
    def decode(value, key):
        return joserfc_jwt.decode(value, key, algorithms=AcceptedAlgorithms.ALGORITHMS)


@pytest.fixture
def stock_validator(monkeypatch):
    monkeypatch.setattr(token_validator, "jwt", AcceptedAlgorithms)
    return IssuerValidator


class IssuerValidator(JWTBearerTokenValidator):
    """Authlib's RFC 9068 validator, configured as a resource server would be: from the issuer's discovery
    document (here fetched from the service, whose JWT_ISSUER is not its own address)."""

    def __init__(self, base_url: str, issuer: str, audience: str):
        super().__init__(issuer=issuer, resource_server=audience)
        self.base_url = base_url

    def get_jwks(self):
        return get_json(self.base_url, "/.well-known/jwks.json")

    def check(self, token: str):
        claims = self.authenticate_token(token)
        self.validate_token(claims, scopes=None, request=None)
        return claims


@pytest.mark.tls_core
@pytest.mark.signing
def test_a_stock_rfc9068_validator_accepts_the_access_token(service, stock_validator):
    discovery = get_json(service.base_url, "/.well-known/openid-configuration")
    validator = stock_validator(service.base_url, discovery["issuer"], AUDIENCE)
    body = login(service.base_url, client_id="resource-test")
    claims = validator.check(body["access_token"])
    assert claims["client_id"] == "resource-test"
    assert claims.header["typ"] == "at+jwt"


@pytest.mark.tls_core
@pytest.mark.signing
def test_the_stock_validator_refuses_an_id_token_and_a_foreign_audience(service, stock_validator):
    # The same validator can fail: an ID token is no access token (typ JWT, no client_id), and another
    # resource server's audience is not this one.
    body = login(service.base_url)
    with pytest.raises(InvalidTokenError):
        stock_validator(service.base_url, ISSUER, AUDIENCE).check(body["id_token"])
    with pytest.raises(InvalidTokenError):
        stock_validator(service.base_url, ISSUER, "some-other-api").check(body["access_token"])
