"""Sessions and limits (spec/README.md §7, §8): refresh tokens with rotation and reuse detection, POST /revoke,
the per-username lock in PostgreSQL, the per-address limit and its proxy headers, overload shedding.

Every test here runs processes of its own against a database of this module's (the limits need settings of
their own, and the rows are read and changed with SQL), so the module needs --stack."""
from __future__ import annotations

import base64
import hashlib
import http.client
import json
import re
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

import psycopg
import pytest
import requests
from argon2.low_level import Type, hash_secret

import stackctl
from helpers import (INVALID_GRANT_BODY, JANE, JOHN, assert_error, assert_token_pair, cache_directives, jose_header,
                     parse_prometheus, verify)
from service import AUDIENCE, ISSUER, TTL, VECTORS, start_service
from test_process import assert_refused, run_until_exit

REFRESH_INVALID = b'{"error":"invalid_grant","error_description":"invalid refresh token"}'
LOCKED = b'{"error":"temporarily_unavailable","error_description":"too many failed logins; try again later"}'
REFRESH_SHAPE = re.compile(r"[A-Za-z0-9_-]{43}")
REFRESH_TTL = int(stackctl.CONFORMANCE_ENV["REFRESH_TTL_SECONDS"])
REJECTIONS = "simpleauth_rejections_total"
PASSWORD_CHECKS = "simpleauth_password_checks_total"
REASONS = ("username_locked", "address_locked", "overload", "refresh_reuse")
# Another client on this machine: all of 127.0.0.0/8 is loopback on Linux, so a socket bound to 127.0.0.2 reaches
# the service on 127.0.0.1 with a peer address of its own.
OTHER_ADDRESS = "127.0.0.2"
FORM = {"Content-Type": "application/x-www-form-urlencoded"}


# --------------------------------------------------------------------------- fixtures

@pytest.fixture(scope="module")
def database(own_process, open_database):
    with open_database() as (url, pg):
        yield url, pg


@pytest.fixture(scope="module")
def sql(database):
    """Runs one statement on the module's database and returns its rows: as the owner in a throw-away cluster (the
    service's own role may not write users), else with DATABASE_URL."""
    url, pg = database
    conn = psycopg.connect(pg.url if pg is not None else url, autocommit=True)

    def run(query: str, *params) -> list[tuple]:
        with conn.cursor() as cur:
            cur.execute(query, params)
            return cur.fetchall() if cur.description else []
    yield run
    conn.close()


@pytest.fixture(scope="module")
def svc(own_process, database, workdir):
    """The stack with the suite's settings (limits out of the way), for the session tests."""
    url, pg = database
    s = start_service(own_process, url, workdir / "sessions.log", pg)
    yield s
    stackctl.stop_process(s.proc)


@pytest.fixture
def started(own_process, database, workdir):
    """Starts the stack with extra environment; stops whatever it started."""
    running = []

    def start(name: str, **env):
        url, pg = database
        s = start_service(own_process, url, workdir / f"{name}.log", pg, **env)
        running.append(s)
        return s
    yield start
    for s in running:
        stackctl.stop_process(s.proc)


@pytest.fixture
def new_user(sql):
    """A user of its own (its lock and sessions touch nobody else), with John's legacy hash or Jane's argon2id
    hash and so their password; returns (credentials, id)."""
    def make(like: dict = JOHN) -> tuple[dict, str]:
        email = f"s-{uuid.uuid4().hex[:16]}@example.com"
        rows = sql("INSERT INTO users (id, username, name, email, password_hash) "
                   "SELECT gen_random_uuid(), %s, 'Session Tester', %s, password_hash FROM users WHERE email = %s "
                   "RETURNING id", email.split("@")[0], email, like["username"])
        return {"username": email, "password": like["password"]}, str(rows[0][0])
    return make


# --------------------------------------------------------------------------- requests

def token(s, body: dict, form: bool = False, headers: dict | None = None) -> requests.Response:
    if form:
        return requests.post(s.url("/token"), data=body, headers={**FORM, **(headers or {})}, timeout=30)
    return requests.post(s.url("/token"), json=body, headers=headers, timeout=30)


def login(s, creds: dict = JOHN, **extra) -> dict:
    return assert_session(token(s, {**creds, **extra}))


def refresh(s, refresh_token: str, form: bool = False, **extra) -> requests.Response:
    return token(s, {"grant_type": "refresh_token", "refresh_token": refresh_token, **extra}, form)


def revoke(s, value: str, form: bool = True) -> requests.Response:
    if form:
        return requests.post(s.url("/revoke"), data={"token": value}, headers=FORM, timeout=30)
    return requests.post(s.url("/revoke"), json={"token": value}, timeout=30)


def post_from(address: str, s, body: dict, headers: dict | None = None) -> tuple[int, dict, bytes]:
    """POST /token (JSON) on a connection whose source address is `address`."""
    u = urlsplit(s.base_url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30, source_address=(address, 0))
    try:
        conn.request("POST", "/token", json.dumps(body), {"Content-Type": "application/json", **(headers or {})})
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()


def assert_session(r: requests.Response, ttl: int = TTL) -> dict:
    body = assert_token_pair(r, ttl)
    rt = body["refresh_token"]
    assert isinstance(rt, str) and REFRESH_SHAPE.fullmatch(rt), f"a refresh token is 43 base64url characters: {rt!r}"
    assert len(base64.urlsafe_b64decode(rt + "=")) == 32
    return body


def claims(s, body: dict) -> tuple[dict, dict]:
    jwks = requests.get(s.url("/.well-known/jwks.json"), timeout=10).json()
    return (verify(body["access_token"], jwks, ISSUER, AUDIENCE), verify(body["id_token"], jwks, ISSUER, AUDIENCE))


def digest(refresh_token: str) -> bytes:
    return hashlib.sha256(refresh_token.encode("ascii")).digest()


def rejections(s) -> dict[str, float]:
    text = requests.get(s.url("/metrics"), timeout=10).text
    samples = parse_prometheus(text)[1]
    return {dict(labels).get("reason"): v for (n, labels), v in samples.items() if n == REJECTIONS}


def password_checks(s) -> float:
    samples = parse_prometheus(requests.get(s.url("/metrics"), timeout=10).text)[1]
    return sum(v for (n, _), v in samples.items() if n == PASSWORD_CHECKS)


def assert_refresh_refused(r: requests.Response) -> None:
    assert_error(r, 400, "invalid_grant")
    assert r.content == REFRESH_INVALID, r.content


def assert_locked(status: int, headers: dict, payload: bytes, window: int) -> int:
    assert status == 429, (status, payload[:300])
    assert payload == LOCKED, payload
    assert headers.get("content-type", "").split(";")[0].strip().lower() == "application/json", headers
    assert "no-store" in headers.get("cache-control", "").lower(), headers
    retry = headers.get("retry-after", "")
    assert retry.isdigit() and 1 <= int(retry) <= window, f"Retry-After is the window's remaining seconds: {retry!r}"
    return int(retry)


def answer(r: requests.Response) -> tuple[int, dict, bytes]:
    return r.status_code, {k.lower(): v for k, v in r.headers.items()}, r.content


# --------------------------------------------------------------------------- refresh tokens (§7)

def test_password_grant_starts_a_session(svc, sql, new_user):
    creds, uid = new_user()
    body = login(svc, creds)
    access, id_token = claims(svc, body)
    assert access["sid"] == id_token["sid"]
    rows = sql("SELECT family_id, user_id, client_id, extract(epoch FROM expires_at - issued_at)::integer, "
               "used_at, revoked_at FROM refresh_tokens WHERE token_hash = %s", digest(body["refresh_token"]))
    assert len(rows) == 1, "the refresh token's SHA-256 is stored (and only it: the column is 32 bytes)"
    family, user, client, lifetime, used, revoked = rows[0]
    assert str(family) == access["sid"], "the session (sid) is the refresh token's family"
    assert (str(user), client, used, revoked) == (uid, "public", None, None)
    assert lifetime == REFRESH_TTL, f"REFRESH_TTL_SECONDS={REFRESH_TTL}, stored lifetime {lifetime}"
    assert login(svc, creds)["refresh_token"] != body["refresh_token"]


@pytest.mark.parametrize("form", [False, True], ids=["json", "form"])
def test_refresh_rotates_within_the_session(svc, sql, new_user, form):
    creds, uid = new_user()
    first = login(svc, creds, client_id="app-1")
    access0, _ = claims(svc, first)
    current, seen = first, {first["refresh_token"]}
    for _ in range(3):
        nxt = assert_session(refresh(svc, current["refresh_token"], form))
        assert nxt["refresh_token"] not in seen, "every answer carries a new refresh token"
        seen.add(nxt["refresh_token"])
        access, id_token = claims(svc, nxt)
        assert jose_header(nxt["access_token"])["typ"] == "at+jwt"
        assert access["sid"] == id_token["sid"] == access0["sid"], "a refresh keeps the session"
        assert access["sub"] == id_token["sub"] == uid
        assert access["client_id"] == "app-1", "the family's client_id, without the request naming it"
        assert access["jti"] != access0["jti"]
        assert id_token["email"] == creds["username"]
        old = sql("SELECT used_at IS NOT NULL, revoked_at IS NULL FROM refresh_tokens WHERE token_hash = %s",
                  digest(current["refresh_token"]))
        assert old == [(True, True)], "the presented token is marked used"
        current = nxt
    rows = sql("SELECT count(*), count(DISTINCT family_id), count(*) FILTER (WHERE used_at IS NULL) "
               "FROM refresh_tokens WHERE user_id = %s", uuid.UUID(uid))
    assert rows == [(4, 1, 1)], "one family: three used tokens and the newest"


def test_refresh_answers_with_the_user_as_stored_now(svc, sql, new_user):
    creds, uid = new_user()
    body = login(svc, creds)
    sql("UPDATE users SET name = 'Renamed Tester', username = %s WHERE id = %s", "renamed-" + uid[:8], uuid.UUID(uid))
    _, id_token = claims(svc, assert_session(refresh(svc, body["refresh_token"])))
    assert (id_token["name"], id_token["preferred_username"]) == ("Renamed Tester", "renamed-" + uid[:8])


def test_refresh_with_the_same_client_id_and_without(svc, new_user):
    creds, _ = new_user()
    body = login(svc, creds, client_id="app-2")
    body = assert_session(refresh(svc, body["refresh_token"], client_id="app-2"))
    assert claims(svc, body)[0]["client_id"] == "app-2"
    assert_refresh_refused(refresh(svc, body["refresh_token"], client_id="app-3"))
    # Another client's refusal changes nothing: the token still works for its own client.
    assert_session(refresh(svc, body["refresh_token"]))


def test_reuse_revokes_the_whole_family(svc, sql, new_user):
    creds, _ = new_user()
    first = login(svc, creds)
    second = assert_session(refresh(svc, first["refresh_token"]))
    before = rejections(svc)["refresh_reuse"]
    assert_refresh_refused(refresh(svc, first["refresh_token"]))
    assert rejections(svc)["refresh_reuse"] == before + 1
    assert_refresh_refused(refresh(svc, second["refresh_token"]))
    sid = claims(svc, first)[0]["sid"]
    assert sql("SELECT count(*) FILTER (WHERE revoked_at IS NULL) FROM refresh_tokens WHERE family_id = %s",
               uuid.UUID(sid)) == [(0,)], "every token of the family is revoked"
    # Another session of the same user is not touched.
    assert_session(refresh(svc, login(svc, creds)["refresh_token"]))


def test_concurrent_refreshes_with_one_token_one_wins(svc, new_user):
    creds, _ = new_user()
    rt = login(svc, creds)["refresh_token"]
    gate = threading.Barrier(8)

    def go(_):
        gate.wait()
        return refresh(svc, rt)
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(go, range(8)))
    won = [r for r in answers if r.status_code == 200]
    assert len(won) == 1, [r.status_code for r in answers]
    for r in answers:
        if r.status_code != 200:
            assert_refresh_refused(r)
    # The losers presented a used token: reuse, so the winner's successor is revoked too.
    assert_refresh_refused(refresh(svc, won[0].json()["refresh_token"]))


MALFORMED = [m["token"] for m in VECTORS["refresh_tokens"]["malformed"]]


@pytest.mark.parametrize("case", ["unknown", "expired", "revoked", "used", "other-client", "disabled-user",
                                  *[f"malformed-{m['name']}" for m in VECTORS["refresh_tokens"]["malformed"]]])
def test_every_refused_refresh_token_is_the_same_bytes(svc, sql, new_user, case):
    creds, uid = new_user()
    body = login(svc, creds, client_id="app-4")
    rt, extra = body["refresh_token"], {}
    if case == "unknown":
        rt = base64.urlsafe_b64encode(uuid.uuid4().bytes * 2).rstrip(b"=").decode()
    elif case == "expired":
        sql("UPDATE refresh_tokens SET expires_at = now() - interval '1 second' WHERE token_hash = %s", digest(rt))
    elif case == "revoked":
        assert revoke(svc, rt).status_code == 200
    elif case == "used":
        assert_session(refresh(svc, rt))
    elif case == "other-client":
        extra = {"client_id": "app-5"}
    elif case == "disabled-user":
        stored = sql("SELECT password_hash FROM users WHERE id = %s", uuid.UUID(uid))[0][0]
        sql("UPDATE users SET password_hash = '$disabled$' || password_hash WHERE id = %s", uuid.UUID(uid))
    else:
        rt = next(m["token"] for m in VECTORS["refresh_tokens"]["malformed"] if f"malformed-{m['name']}" == case)
    for form in (False, True):
        if case == "used" and form:
            break  # the second presentation is the reuse test's
        assert_refresh_refused(refresh(svc, rt, form, **extra))
    if case == "disabled-user":
        # A disabled user's session is over: enabling the user again does not bring it back.
        sql("UPDATE users SET password_hash = %s WHERE id = %s", stored, uuid.UUID(uid))
        assert_refresh_refused(refresh(svc, rt))
        assert_session(token(svc, creds))


@pytest.mark.parametrize("form", [False, True], ids=["json", "form"])
def test_refresh_grant_request_errors(svc, form):
    cases = [{"grant_type": "refresh_token"}, {"grant_type": "refresh_token", "refresh_token": ""},
             {"grant_type": "refresh_token", "refresh_token": "x", "client_id": ""}]
    if not form:
        cases += [{"grant_type": "refresh_token", "refresh_token": v} for v in (None, 7, {"a": 1}, ["x"])]
    for body in cases:
        assert_error(token(svc, body, form), 400, "invalid_request")
    assert_error(token(svc, {"grant_type": "client_credentials", "refresh_token": "x"}, form), 400,
                 "unsupported_grant_type")
    if form:
        rt = login(svc)["refresh_token"]
        twice = f"grant_type=refresh_token&refresh_token={rt}&refresh_token={rt}"
        assert_error(requests.post(svc.url("/token"), data=twice, headers=FORM, timeout=10), 400, "invalid_request")


def test_refresh_grant_ignores_username_and_password(svc):
    body = login(svc)
    r = token(svc, {"grant_type": "refresh_token", "refresh_token": body["refresh_token"],
                    "username": "jane@example.com", "password": "wrong"})
    assert claims(svc, assert_session(r))[1]["email"] == "john@example.com"


# --------------------------------------------------------------------------- revocation (RFC 7009)

def assert_revoked_answer(r: requests.Response) -> None:
    assert r.status_code == 200, (r.status_code, r.text[:300])
    assert r.content == b"", r.content[:200]
    assert "no-store" in cache_directives(r), r.headers.get("Cache-Control")


@pytest.mark.parametrize("form", [False, True], ids=["json", "form"])
def test_revoke_ends_the_session(svc, new_user, form):
    creds, _ = new_user()
    first = login(svc, creds)
    second = assert_session(refresh(svc, first["refresh_token"]))
    third = assert_session(refresh(svc, second["refresh_token"]))
    assert_revoked_answer(revoke(svc, first["refresh_token"], form))  # any token of the family ends it
    assert_refresh_refused(refresh(svc, third["refresh_token"]))
    other = login(svc, creds)
    assert_revoked_answer(revoke(svc, other["refresh_token"], form))
    assert_refresh_refused(refresh(svc, other["refresh_token"]))


def test_revoke_answers_200_whatever_the_token(svc):
    body = login(svc)
    for value in ["A" * 43, "not-a-token", body["access_token"], body["id_token"], *MALFORMED]:
        assert_revoked_answer(revoke(svc, value))
    assert_revoked_answer(revoke(svc, body["refresh_token"]))
    assert_revoked_answer(revoke(svc, body["refresh_token"]))  # again: still 200
    r = requests.post(svc.url("/revoke"), data={"token": body["access_token"], "token_type_hint": "access_token",
                                                 "client_id": "whoever"}, headers=FORM, timeout=10)
    assert_revoked_answer(r)


def test_revoke_request_errors(svc):
    url = svc.url("/revoke")
    for data in ["", "token=", "token_type_hint=refresh_token", "token=a&token=b"]:
        assert_error(requests.post(url, data=data, headers=FORM, timeout=10), 400, "invalid_request")
    for doc in [{}, {"token": ""}, {"token": None}, {"token": 5}, {"token": ["x"]}, [], "token"]:
        assert_error(requests.post(url, json=doc, timeout=10), 400, "invalid_request")
    assert_error(requests.post(url, data="token=x", headers={"Content-Type": "text/plain"}, timeout=10), 415,
                 "invalid_request")
    assert_error(requests.post(url, data="token=" + "a" * 9000, headers=FORM, timeout=10), 413, "invalid_request")
    r = requests.get(url, timeout=10)
    assert_error(r, 405, "invalid_request")
    assert r.headers.get("Allow") == "POST"


# --------------------------------------------------------------------------- the per-username lock (§8)

def test_username_lock_is_the_same_for_known_and_unknown_usernames(started, new_user, sql):
    s = started("lock", LOGIN_MAX_FAILURES="3", LOGIN_FAILURE_WINDOW_SECONDS="120")
    known, _ = new_user(JANE)  # argon2id: a computed hash would show in the checks counter and in the time
    unknown = {"username": f"nobody-{uuid.uuid4().hex[:12]}@example.com", "password": "whatever"}
    assert rejections(s) == {r: 0 for r in REASONS}, "all four series from the start, at 0"
    locked = {}
    for who in (known, unknown):
        for _ in range(3):
            r = token(s, {**who, "password": "wrong-password"})
            assert_error(r, 400, "invalid_grant")
            assert r.content == INVALID_GRANT_BODY
        assert sql("SELECT failures FROM login_failures WHERE username = %s", who["username"]) == [(3,)]
        checks = password_checks(s)
        answers = [answer(token(s, who)),  # the right password, for the known user
                   answer(token(s, {**who, "username": who["username"].upper()})),
                   answer(token(s, {**who, "grant_type": "password"}, form=True))]
        for a in answers:
            assert_locked(*a, window=120)
        assert password_checks(s) == checks, "no password hash is computed while the username is locked"
        locked[who is known] = (answers[0][2], sorted(k for k in answers[0][1] if k not in ("date", "retry-after")))
    assert locked[True] == locked[False], "a locked known username and an unknown one answer alike"
    assert rejections(s)["username_locked"] == 6
    # The lock is per username: others log in as before.
    assert_session(token(s, JOHN))


def test_success_clears_the_username_count(started, new_user):
    s = started("clear", LOGIN_MAX_FAILURES="3", LOGIN_FAILURE_WINDOW_SECONDS="120")
    creds, _ = new_user()
    wrong = {**creds, "password": "nope"}
    for _ in range(2):
        assert_error(token(s, wrong), 400, "invalid_grant")
    assert_session(token(s, creds))
    for _ in range(2):
        assert_error(token(s, wrong), 400, "invalid_grant")
    assert_session(token(s, creds))


def test_username_lock_ends_with_its_window(started, new_user):
    s = started("window", LOGIN_MAX_FAILURES="2", LOGIN_FAILURE_WINDOW_SECONDS="2")
    creds, _ = new_user()
    for _ in range(2):
        assert_error(token(s, {**creds, "password": "nope"}), 400, "invalid_grant")
    retry = assert_locked(*answer(token(s, creds)), window=2)
    time.sleep(retry + 0.2)
    deadline = time.monotonic() + 3
    while (r := token(s, creds)).status_code == 429 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert_session(r)


def test_username_lock_is_shared_by_every_instance(started, new_user):
    a = started("instance-a", LOGIN_MAX_FAILURES="3", LOGIN_FAILURE_WINDOW_SECONDS="120")
    b = started("instance-b", LOGIN_MAX_FAILURES="3", LOGIN_FAILURE_WINDOW_SECONDS="120")
    creds, _ = new_user()
    for s in (a, b, a):
        assert_error(token(s, {**creds, "password": "nope"}), 400, "invalid_grant")
    assert_locked(*answer(token(b, creds)), window=120)


# --------------------------------------------------------------------------- the per-address limit (§8)

def test_address_limit_locks_one_address_only(started, new_user):
    s = started("address", LOGIN_IP_MAX_FAILURES="3", LOGIN_FAILURE_WINDOW_SECONDS="120")
    session = login(s)  # before the address is locked
    for i in range(2):
        assert_error(token(s, {"username": f"nobody{i}-{uuid.uuid4().hex[:8]}@example.com", "password": "x"}), 400,
                     "invalid_grant")
    assert_session(token(s, JOHN))  # a success does not clear the address's count
    assert_error(token(s, {**JOHN, "password": "wrong"}), 400, "invalid_grant")
    checks = password_checks(s)
    assert_locked(*answer(token(s, JOHN)), window=120)
    assert_locked(*answer(token(s, JANE)), window=120)
    assert password_checks(s) == checks, "no hash is computed for a locked address"
    assert rejections(s)["address_locked"] == 2
    status, _, payload = post_from(OTHER_ADDRESS, s, JOHN)
    assert status == 200, (status, payload[:300])
    # The limit is on logins: a session goes on from the locked address.
    assert_session(refresh(s, session["refresh_token"]))


def test_proxy_headers_are_ignored_unless_trusted(started):
    s = started("untrusted", LOGIN_IP_MAX_FAILURES="2", LOGIN_FAILURE_WINDOW_SECONDS="120")
    for i in range(2):
        r = token(s, {"username": f"x{i}@example.com", "password": "x"},
                  headers={"Fly-Client-IP": f"203.0.113.{i + 1}", "X-Forwarded-For": f"198.51.100.{i + 1}"})
        assert_error(r, 400, "invalid_grant")
    assert_locked(*answer(token(s, JOHN, headers={"Fly-Client-IP": "203.0.113.9"})), window=120)


def test_trusted_proxy_headers_name_the_client(started):
    s = started("trusted", LOGIN_IP_MAX_FAILURES="2", LOGIN_FAILURE_WINDOW_SECONDS="120", TRUST_PROXY_HEADERS="true")

    def fail(headers):
        r = token(s, {"username": f"nobody-{uuid.uuid4().hex[:8]}@example.com", "password": "x"}, headers=headers)
        assert_error(r, 400, "invalid_grant")

    def status(headers) -> int:
        return token(s, JOHN, headers=headers).status_code

    for _ in range(2):
        fail({"Fly-Client-IP": "203.0.113.7", "X-Forwarded-For": "198.51.100.50"})
    assert status({"Fly-Client-IP": "203.0.113.7"}) == 429
    assert status({"Fly-Client-IP": "203.0.113.8"}) == 200
    assert status({"X-Forwarded-For": "198.51.100.50"}) == 200, "Fly-Client-IP came first: the XFF address is clean"
    assert status({}) == 200, "the socket's address is another client"
    # X-Forwarded-For: the last entry, the one the proxy added; earlier ones are the client's to write.
    for _ in range(2):
        fail({"X-Forwarded-For": "192.0.2.1, 198.51.100.9"})
    assert status({"X-Forwarded-For": "10.9.9.9, 198.51.100.9"}) == 429
    assert status({"X-Forwarded-For": "198.51.100.9, 10.9.9.9"}) == 200
    # A value that is not an address is skipped: the next source names the client.
    assert status({"Fly-Client-IP": "not-an-address", "X-Forwarded-For": "10.0.0.1, 198.51.100.9"}) == 429
    for _ in range(2):
        fail({"Fly-Client-IP": "2001:db8::17"})
    assert status({"Fly-Client-IP": "2001:db8::17"}) == 429
    assert status({"Fly-Client-IP": "2001:db8::18"}) == 200


# --------------------------------------------------------------------------- overload (§8)

def test_overload_sheds_argon2id_checks_at_once(started):
    s = started("overload", MAX_PASSWORD_CHECKS="2")
    stop = threading.Event()
    others: list[int] = []

    def other_client():
        while not stop.is_set():
            others.append(post_from(OTHER_ADDRESS, s, JOHN)[0])

    def flood(i):
        return answer(token(s, {"username": f"flood{i}-{uuid.uuid4().hex[:8]}@example.com", "password": "x"}))
    watcher = threading.Thread(target=other_client)
    watcher.start()
    try:
        with ThreadPoolExecutor(48) as pool:
            answers = list(pool.map(flood, range(192)))
    finally:
        stop.set()
        watcher.join()
    statuses = [a[0] for a in answers]
    assert set(statuses) <= {400, 503}, sorted(set(statuses))
    shed = [a for a in answers if a[0] == 503]
    assert shed, "48 concurrent argon2id checks against MAX_PASSWORD_CHECKS=2 shed some"
    for status, headers, payload in shed:
        assert headers.get("retry-after") == "1", headers
        assert json.loads(payload)["error"] == "temporarily_unavailable"
        assert "no-store" in headers.get("cache-control", "").lower()
    assert rejections(s)["overload"] == len(shed)
    assert others and set(others) == {200}, f"legacy-hash logins are not bounded: {sorted(set(others))}"
    assert_session(token(s, JANE))  # every permit was given back


def test_shed_grants_count_toward_the_address_limit(started, sql):
    """A password grant shed by the overload limit counts one failure for its address (spec/README.md §8): an address
    that keeps sending logins the service cannot afford to check is locked, though no check of its own finished."""
    s = started("shed", MAX_PASSWORD_CHECKS="1", LOGIN_IP_MAX_FAILURES="3", LOGIN_FAILURE_WINDOW_SECONDS="120")
    # A user whose check holds the only permit for a while: argon2id with 64 passes (the stacks' bound on t), 32 times
    # the default's time, from another address so that its request counts nothing against the probes' one.
    email = f"slow-{uuid.uuid4().hex[:12]}@example.com"
    slow_hash = hash_secret(b"slow-pass", uuid.uuid4().bytes, time_cost=64, memory_cost=19456, parallelism=1,
                            hash_len=32, type=Type.ID).decode()
    sql("INSERT INTO users (id, username, name, email, password_hash) VALUES (gen_random_uuid(), %s, 'Slow', %s, %s)",
        email.split("@")[0], email, slow_hash)
    held: list[int] = []
    holder = threading.Thread(target=lambda: held.append(post_from(OTHER_ADDRESS, s, {"username": email,
                                                                                       "password": "slow-pass"})[0]))
    holder.start()
    time.sleep(0.3)  # its lookup done, its check running: every argon2id check from here on is shed
    try:
        answers = []
        for i in range(6):
            a = answer(token(s, {"username": f"shed{i}-{uuid.uuid4().hex[:8]}@example.com", "password": "x"}))
            answers.append(a)
            if a[0] == 429:
                break
    finally:
        holder.join(timeout=60)
    statuses = [a[0] for a in answers]
    assert set(statuses[:3]) <= {400, 503} and 503 in statuses[:3], \
        f"the slow check held the only permit, so the probes were shed: {statuses}"
    assert len(statuses) == 4, f"three counted answers (400s and shed 503s) lock the address, the fourth is 429: " \
                               f"{statuses}"
    assert_locked(*answers[3], window=120)
    assert_locked(*answer(token(s, JOHN)), window=120)
    status, _, payload = post_from(OTHER_ADDRESS, s, JOHN)
    assert status == 200, ("the other address has no failures", status, payload[:300])
    assert held == [200], f"the slow user's own login succeeded: {held}"
    assert rejections(s)["overload"] == statuses.count(503)


# --------------------------------------------------------------------------- settings (§5)

@pytest.mark.parametrize("name,value", [(n, v) for n in ("REFRESH_TTL_SECONDS", "LOGIN_MAX_FAILURES",
                                                          "LOGIN_FAILURE_WINDOW_SECONDS", "LOGIN_IP_MAX_FAILURES",
                                                          "MAX_PASSWORD_CHECKS") for v in ("0", "-3", "ten")]
                         + [("TRUST_PROXY_HEADERS", "yes"), ("TRUST_PROXY_HEADERS", "1")])
def test_refuses_bad_limit_settings(own_process, name, value):
    env = own_process.contract_env("postgres://auth:auth@127.0.0.1:1/auth", stackctl.free_port(), **{name: value})
    assert_refused(run_until_exit(own_process, env), name)


def test_empty_limit_settings_mean_the_defaults(started):
    """Set but empty counts as unset (spec/README.md §5): docker compose passes `MAX_PASSWORD_CHECKS: ${...:-}`."""
    s = started("empty", **{n: "" for n in ("REFRESH_TTL_SECONDS", "LOGIN_MAX_FAILURES",
                                            "LOGIN_FAILURE_WINDOW_SECONDS", "LOGIN_IP_MAX_FAILURES",
                                            "TRUST_PROXY_HEADERS", "MAX_PASSWORD_CHECKS")})
    assert_session(token(s, JOHN))
