"""Sessions and limits (spec/README.md §7, §8): refresh tokens with rotation and reuse detection, POST /revoke,
the per-username lock in PostgreSQL, the per-address limit and its proxy headers, overload shedding.

Every test here runs processes of its own against a database of this module's (the limits need settings of
their own, and the rows are read and changed with SQL), so the module needs --stack."""
from __future__ import annotations

import base64
import hashlib
import http.client
import importlib.util
import json
import re
import socket
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
from service import AUDIENCE, ISSUER, ROOT, TTL, VECTORS, start_service
from test_process import REFUSAL_LIMIT, assert_refused_in_one_line, refusals_of

REFRESH_INVALID = b'{"error":"invalid_grant","error_description":"invalid refresh token"}'
LOCKED = b'{"error":"temporarily_unavailable","error_description":"too many failed logins; try again later"}'
REFRESH_SHAPE = re.compile(r"[A-Za-z0-9_-]{43}")
REFRESH_TTL = int(stackctl.CONFORMANCE_ENV["REFRESH_TTL_SECONDS"])
MAX_LIFETIME = int(stackctl.CONFORMANCE_ENV["REFRESH_MAX_LIFETIME_SECONDS"])
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


def users_py():
    """sql/users.py as a module: its store_hash is what `reset` and `disable` run (spec/README.md §6)."""
    spec = importlib.util.spec_from_file_location("simple_auth_users", ROOT / "sql" / "users.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def set_hash(database):
    """Stores a user's password_hash as `users.py reset`/`disable` do (the hash and the end of the user's sessions, in
    one transaction), as the owner; returns the number of sessions it ended."""
    url, pg = database
    store_hash = users_py().store_hash
    conn = psycopg.connect(pg.url if pg is not None else url)

    def run(email: str, stored: str) -> int:
        return store_hash(conn, email, stored)
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
    """The access token (aud: JWT_AUDIENCE) and the ID token, whose aud is the client the access token names
    (spec/README.md §2: the request's client_id, on refresh the family's)."""
    jwks = requests.get(s.url("/.well-known/jwks.json"), timeout=10).json()
    access = verify(body["access_token"], jwks, ISSUER, AUDIENCE)
    return access, verify(body["id_token"], jwks, ISSUER, access["client_id"])


def digest(refresh_token: str) -> bytes:
    return hashlib.sha256(refresh_token.encode("ascii")).digest()


def rejections(s) -> dict[str, float]:
    text = s.metrics()
    samples = parse_prometheus(text)[1]
    return {dict(labels).get("reason"): v for (n, labels), v in samples.items() if n == REJECTIONS}


def password_checks(s) -> float:
    samples = parse_prometheus(s.metrics())[1]
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
    rows = sql("SELECT t.family_id, s.user_id, s.client_id, extract(epoch FROM t.expires_at - t.issued_at)::integer, "
               "t.used_at, s.revoked_at, extract(epoch FROM s.expires_at - s.created_at)::integer, "
               "s.credential = sha256(convert_to(u.password_hash, 'UTF8')) "
               "FROM refresh_tokens t JOIN sessions s USING (family_id) JOIN users u ON u.id = s.user_id "
               "WHERE t.token_hash = %s", digest(body["refresh_token"]))
    assert len(rows) == 1, "the refresh token's SHA-256 is stored (and only it: the column is 32 bytes)"
    family, user, client, lifetime, used, revoked, session_lifetime, bound = rows[0]
    assert str(family) == access["sid"], "the session (sid) is the refresh token's family"
    assert (str(user), client, used, revoked) == (uid, "public", None, None)
    assert lifetime == REFRESH_TTL, f"REFRESH_TTL_SECONDS={REFRESH_TTL}, stored lifetime {lifetime}"
    assert session_lifetime == MAX_LIFETIME, f"REFRESH_MAX_LIFETIME_SECONDS' default, stored {session_lifetime}"
    assert bound, "the session's credential is the SHA-256 of the hash the login verified"
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
        old = sql("SELECT t.used_at IS NOT NULL, s.revoked_at IS NULL FROM refresh_tokens t JOIN sessions s "
                  "USING (family_id) WHERE t.token_hash = %s", digest(current["refresh_token"]))
        assert old == [(True, True)], "the presented token is marked used"
        current = nxt
    rows = sql("SELECT count(*), count(DISTINCT family_id), count(*) FILTER (WHERE used_at IS NULL) "
               "FROM refresh_tokens JOIN sessions USING (family_id) WHERE user_id = %s", uuid.UUID(uid))
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
    assert sql("SELECT revoked_at IS NOT NULL FROM sessions WHERE family_id = %s",
               uuid.UUID(sid)) == [(True,)], "the whole family (the session) is revoked"
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
                                  "session-ended", "password-changed-elsewhere",
                                  *[f"malformed-{m['name']}" for m in VECTORS["refresh_tokens"]["malformed"]]])
def test_every_refused_refresh_token_is_the_same_bytes(svc, sql, set_hash, new_user, case):
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
        set_hash(creds["username"], "$disabled$" + stored)  # what `users.py disable` runs
    elif case == "session-ended":  # REFRESH_MAX_LIFETIME_SECONDS after the login, whatever the token's own expiry
        sql("UPDATE sessions SET expires_at = now() - interval '1 second' WHERE family_id = "
            "(SELECT family_id FROM refresh_tokens WHERE token_hash = %s)", digest(rt))
    elif case == "password-changed-elsewhere":  # the channel API's own password change: the hash only (§6)
        sql("UPDATE users SET password_hash = (SELECT password_hash FROM users WHERE email = %s) WHERE id = %s",
            JANE["username"], uuid.UUID(uid))
    else:
        rt = next(m["token"] for m in VECTORS["refresh_tokens"]["malformed"] if f"malformed-{m['name']}" == case)
    for form in (False, True):
        if case == "used" and form:
            break  # the second presentation is the reuse test's
        assert_refresh_refused(refresh(svc, rt, form, **extra))
    if case == "disabled-user":
        # A disabled user's session is over: enabling the user again does not bring it back.
        set_hash(creds["username"], stored)
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
        assert sql("SELECT failures FROM login_failures WHERE username = %s", who["username"]) == [(4,)], \
            "a locked attempt still reserves one, up to LOGIN_MAX_FAILURES + 1"
        locked[who is known] = (answers[0][2], sorted(k for k in answers[0][1] if k not in ("date", "retry-after")))
    assert locked[True] == locked[False], "a locked known username and an unknown one answer alike"
    assert rejections(s)["username_locked"] == 6
    # The lock is per username: others log in as before.
    assert_session(token(s, JOHN))


def test_success_clears_the_username_count(started, new_user, sql):
    s = started("clear", LOGIN_MAX_FAILURES="3", LOGIN_FAILURE_WINDOW_SECONDS="120")
    creds, _ = new_user()
    wrong = {**creds, "password": "nope"}
    for _ in range(2):
        assert_error(token(s, wrong), 400, "invalid_grant")
    assert sql("SELECT failures FROM login_failures WHERE username = %s", creds["username"]) == [(2,)]
    assert_session(token(s, creds))  # the third attempt reserved, within the limit of 3
    assert sql("SELECT failures FROM login_failures WHERE username = %s", creds["username"]) == [], \
        "a success deletes the username's count"
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


def test_a_locked_username_gives_the_address_reservation_back(started, new_user):
    """An attempt refused for its username (429) reserved one for its address first and gives it back (§8 step 2):
    however often a locked username is tried, the address's count does not move."""
    s = started("lock-address", LOGIN_MAX_FAILURES="2", LOGIN_IP_MAX_FAILURES="4", LOGIN_FAILURE_WINDOW_SECONDS="120")
    creds, _ = new_user()
    for _ in range(2):
        assert_error(token(s, {**creds, "password": "nope"}), 400, "invalid_grant")  # the address: 2
    for _ in range(5):
        assert_locked(*answer(token(s, creds)), window=120)  # the username's lock, not the address's
    assert rejections(s)["address_locked"] == 0
    for _ in range(2):
        assert_error(token(s, {"username": f"nobody-{uuid.uuid4().hex[:8]}@example.com", "password": "x"}), 400,
                     "invalid_grant")  # the address: 4
    assert_locked(*answer(token(s, JOHN)), window=120)
    assert rejections(s) == {"username_locked": 5, "address_locked": 1, "overload": 0, "refresh_reuse": 0}


def post_raw(s, body: dict, fields: list[tuple[str, str]]) -> tuple[int, dict, bytes]:
    """POST /token (JSON) with header fields as given, in order: a name may repeat (two X-Forwarded-For fields)."""
    u = urlsplit(s.base_url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    try:
        payload = json.dumps(body).encode()
        conn.putrequest("POST", "/token")
        for name, value in [("Content-Type", "application/json"), ("Content-Length", str(len(payload))), *fields]:
            conn.putheader(name, value)
        conn.endheaders(payload)
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()


def xff(*values: str) -> list[tuple[str, str]]:
    return [("X-Forwarded-For", v) for v in values]


def fail_from(s, fields: list[tuple[str, str]]) -> None:
    """One failed login (an unknown username of its own, so no username lock interferes) with these header fields."""
    status, _, payload = post_raw(s, {"username": f"nobody-{uuid.uuid4().hex[:8]}@example.com", "password": "x"},
                                  fields)
    assert status == 400, (fields, status, payload[:300])


def status_from(s, fields: list[tuple[str, str]]) -> int:
    """The status of John's right password with these header fields: 200, or 429 when its client address is locked."""
    return post_raw(s, JOHN, fields)[0]


@pytest.mark.parametrize("trusted", [None, "10.0.0.0/8, 192.0.2.0/24"], ids=["unset", "loopback-not-listed"])
def test_proxy_headers_are_ignored_unless_the_peer_is_trusted(started, trusted):
    """A peer not in TRUSTED_PROXIES is the client: no header is read, whatever it says (spec/README.md §8)."""
    env = {"TRUSTED_PROXIES": trusted} if trusted else {}
    s = started("untrusted", LOGIN_IP_MAX_FAILURES="2", LOGIN_FAILURE_WINDOW_SECONDS="120", **env)
    for i in range(2):
        fail_from(s, [("Fly-Client-IP", f"203.0.113.{i + 1}"), ("X-Forwarded-For", f"198.51.100.{i + 1}")])
    assert_locked(*post_raw(s, JOHN, [("Fly-Client-IP", "203.0.113.9"), ("X-Forwarded-For", "198.51.100.9")]),
                  window=120)
    status, _, payload = post_from(OTHER_ADDRESS, s, JOHN)
    assert status == 200, ("another peer is another client", status, payload[:300])


# The loopback peer (the suite) is a trusted proxy, and so is 10.0.0.0/8; entries with whitespace around them.
TRUSTED = " 127.0.0.1/32 ,::1/128, 10.0.0.0/8 "


@pytest.fixture(scope="module")
def proxied(own_process, database, workdir):
    """The stack behind a trusted loopback proxy, failure limit per address 3 (spec/README.md §8)."""
    url, pg = database
    s = start_service(own_process, url, workdir / "proxied.log", pg, TRUSTED_PROXIES=TRUSTED,
                      LOGIN_IP_MAX_FAILURES="3", LOGIN_FAILURE_WINDOW_SECONDS="120")
    yield s
    stackctl.stop_process(s.proc)


def test_trusted_proxy_the_nearest_untrusted_hop_is_the_client(proxied):
    s = proxied
    for _ in range(3):
        fail_from(s, xff("203.0.113.5, 198.51.100.9"))  # 203.0.113.5 is the client's to write; 198.51.100.9 is it
    assert status_from(s, xff("198.51.100.9")) == 429
    assert status_from(s, xff("192.0.2.77, 198.51.100.9, 10.1.2.3")) == 429, "trusted hops are walked past"
    assert status_from(s, xff("198.51.100.9, 192.0.2.77")) == 200, "the nearest untrusted hop, not the first entry"
    assert status_from(s, xff("203.0.113.5")) == 200
    assert status_from(s, [("Fly-Client-IP", "198.51.100.9")]) == 200, "Fly-Client-IP is not read: the peer is"
    assert status_from(s, []) == 200, "no X-Forwarded-For: the peer is the client"
    # Every X-Forwarded-For field of the request, in order, is one list (RFC 9110 §5.3); empty entries skipped.
    assert status_from(s, xff("192.0.2.78", "198.51.100.9", "10.1.2.3")) == 429
    assert status_from(s, xff("198.51.100.9, , 10.1.2.3", "")) == 429
    assert status_from(s, xff("198.51.100.9, 10.1.2.3", "192.0.2.79")) == 200, "the last field holds the nearest hop"
    # An IPv4-mapped IPv6 address is the IPv4 address, whether the client or a trusted hop.
    assert status_from(s, xff("::ffff:198.51.100.9")) == 429
    assert status_from(s, xff("198.51.100.9, ::ffff:10.1.2.3")) == 429
    assert status_from(s, xff("192.0.2.80, ::ffff:198.51.100.9")) == 429


def test_trusted_proxy_a_garbage_entry_stops_the_walk(proxied):
    s = proxied
    # From the nearest: 10.7.7.7 is trusted, "garbage" is no address: the client is 10.7.7.7, the last one reached.
    for _ in range(3):
        fail_from(s, xff("192.0.2.200, garbage, 10.7.7.7"))
    assert status_from(s, xff("10.7.7.7")) == 429, "all hops trusted: the farthest one, here the only one"
    assert status_from(s, xff("192.0.2.200")) == 200, "the entry before the garbage was never reached"
    for bad in ("192.0.2.201:4711", "[2001:db8::1]", "fe80::1%eth0", "2001:db8::zz", "300.1.1.1"):
        assert status_from(s, xff(f"192.0.2.202, {bad}, 10.7.7.7")) == 429, f"{bad!r} is no address literal"
    # Every entry trusted: the farthest is the client.
    for _ in range(3):
        fail_from(s, xff("10.3.3.3, 10.4.4.4"))
    assert status_from(s, xff("10.3.3.3")) == 429
    assert status_from(s, xff("10.4.4.4")) == 200
    # Garbage as the nearest entry: the walk stops at once, the client is the peer (trusted, reached last).
    assert status_from(s, xff("198.51.100.30, not-an-ip")) == 200


def test_an_ipv6_client_is_limited_by_its_64(proxied):
    """Failures from many addresses of one /64 lock the whole /64 (a host picks addresses in its /64 at will);
    another /64 is another client."""
    s = proxied
    for addr in ("2001:db8:64:1::1", "2001:DB8:64:1:ffff:ffff:ffff:fffe", "2001:db8:64:1:1234:5678:9abc:def0"):
        fail_from(s, xff(addr))
    assert status_from(s, xff("2001:db8:64:1::77")) == 429
    assert status_from(s, xff("2001:0db8:0064:0001:0000:0000:0000:0078")) == 429
    assert status_from(s, xff("2001:db8:64:2::1")) == 200, "the next /64 is not locked"
    assert status_from(s, xff("2001:db8:64:1::77, 10.1.1.1")) == 429


# --------------------------------------------------------------------------- overload (§8)

def test_overload_sheds_argon2id_checks_at_once(started):
    # Each flood grant runs statement L and, shed, statement G on a pool of DB_POOL_SIZE: a generous acquire timeout
    # keeps the database's own 503 (the same bytes) out of the count, so every 503 here is a shed check.
    s = started("overload", MAX_PASSWORD_CHECKS="2", DB_ACQUIRE_TIMEOUT_MS="15000")
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
        answers, probes = [], []
        for i in range(6):
            probes.append(f"shed{i}-{uuid.uuid4().hex[:8]}@example.com")
            a = answer(token(s, {"username": probes[-1], "password": "x"}))
            answers.append(a)
            if a[0] == 429:
                break
    finally:
        holder.join(timeout=60)
    statuses = [a[0] for a in answers]
    assert set(statuses[:3]) <= {400, 503} and 503 in statuses[:3], \
        f"the slow check held the only permit, so the probes were shed: {statuses}"
    counts = [sql("SELECT failures FROM login_failures WHERE username = %s", u) for u in probes]
    assert counts[:3] == [[(0,)] if st == 503 else [(1,)] for st in statuses[:3]], \
        f"a shed grant gives its username's reservation back (statement G), a checked one keeps it: {counts}"
    assert len(statuses) == 4, f"three counted answers (400s and shed 503s) lock the address, the fourth is 429: " \
                               f"{statuses}"
    assert_locked(*answers[3], window=120)
    assert_locked(*answer(token(s, JOHN)), window=120)
    status, _, payload = post_from(OTHER_ADDRESS, s, JOHN)
    assert status == 200, ("the other address has no failures", status, payload[:300])
    assert held == [200], f"the slow user's own login succeeded: {held}"
    assert rejections(s)["overload"] == statuses.count(503)


# --------------------------------------------------------------------------- settings (§5)

LIMITS = ("REFRESH_TTL_SECONDS", "LOGIN_MAX_FAILURES", "LOGIN_FAILURE_WINDOW_SECONDS", "LOGIN_IP_MAX_FAILURES",
          "MAX_PASSWORD_CHECKS")
SAME_AS_PORT = "same-as-PORT"
# (variable, value, words of which the refusal's line names one). METRICS_PORT's SAME_AS_PORT is the process's PORT;
# REFRESH_TTL_SECONDS is 86400 beside every REFRESH_MAX_LIFETIME_SECONDS, so 86399 is below it.
BAD_SETTINGS = [(n, v, (n,)) for n in LIMITS for v in ("0", "-3", "ten")] + [
    *[("METRICS_PORT", v, ("METRICS_PORT",)) for v in ("0", "65536", "ninety", "9091.0", "-1", SAME_AS_PORT)],
    *[("TRUSTED_PROXIES", v, ("TRUSTED_PROXIES",))
      for v in ("a,,b", "10.0.0.0/8,,127.0.0.1", "10.0.0.1/8", "300.1.1.1", "::1/129", "x", "10.0.0.0/33",
                "2001:db8::1/64", "127.0.0.1,")],
    # The old setting is refused, whatever its value, so that a config that has it does not silently change meaning.
    *[("TRUST_PROXY_HEADERS", v, ("TRUSTED_PROXIES",)) for v in ("true", "false", "1")],
    *[("REFRESH_MAX_LIFETIME_SECONDS", v, ("REFRESH_MAX_LIFETIME_SECONDS",)) for v in ("0", "-5", "ten", "86399")],
]
BAD_SETTING_IDS = [f"{n}={v}" for n, v, _ in BAD_SETTINGS]


def bad_setting_env(name: str, value: str):
    def make(stack):
        port = stackctl.free_port()
        extra = {"REFRESH_TTL_SECONDS": "86400"} if name == "REFRESH_MAX_LIFETIME_SECONDS" else {}
        return stack.contract_env("postgres://auth:auth@127.0.0.1:1/auth", port,
                                  **{**extra, name: str(port) if value == SAME_AS_PORT else value}), REFUSAL_LIMIT
    return make


@pytest.fixture(scope="module")
def settings_refusal(own_process):
    return refusals_of({i: bad_setting_env(n, v) for i, (n, v, _) in zip(BAD_SETTING_IDS, BAD_SETTINGS)}, own_process)


@pytest.mark.parametrize("name,value,words", BAD_SETTINGS, ids=BAD_SETTING_IDS)
def test_refuses_bad_limit_settings(settings_refusal, name, value, words):
    """Exit 2 at start, one line on stderr naming the variable (TRUST_PROXY_HEADERS': what replaced it)."""
    assert_refused_in_one_line(settings_refusal(f"{name}={value}"), *words, any_of=True)


def test_empty_limit_settings_mean_the_defaults(started):
    """Set but empty counts as unset (spec/README.md §5): docker compose passes `MAX_PASSWORD_CHECKS: ${...:-}`.
    METRICS_PORT too when the default 9091 is free on this machine."""
    empty = ("REFRESH_TTL_SECONDS", "LOGIN_MAX_FAILURES", "LOGIN_FAILURE_WINDOW_SECONDS", "LOGIN_IP_MAX_FAILURES",
             "TRUSTED_PROXIES", "TRUST_PROXY_HEADERS", "MAX_PASSWORD_CHECKS", "REFRESH_MAX_LIFETIME_SECONDS")
    env = {n: "" for n in empty}
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", 9091))
            env["METRICS_PORT"] = ""
        except OSError:
            pass
    s = started("empty", **env)
    assert_session(token(s, JOHN))
    assert "simpleauth_token_requests_total" in s.metrics(), s.metrics_url()


# --------------------------------------------------------------------------- races (§6, §7)

def login_loop(s, creds: dict, stop: threading.Event, got: list[str]) -> None:
    """Logs in with creds until stopped, keeping every refresh token obtained."""
    while not stop.is_set():
        r = token(s, creds)
        if r.status_code == 200:
            got.append(r.json()["refresh_token"])


RESET_TRIALS = 4


@pytest.mark.parametrize("how", ["users-py", "hash-only"])
def test_a_password_reset_racing_logins_leaves_no_session(svc, sql, set_hash, new_user, how):
    """Logins with the right password in a loop (argon2id: the check takes long enough for a reset to land between
    a login's lookup and its session) while the password is reset: afterwards no refresh token any of them got
    refreshes. `users-py` is sql/users.py's reset (the hash, and the user's sessions revoked, in one transaction),
    `hash-only` the channel API's own password change (the hash alone): the session's credential binds it (§6)."""
    other_hash = sql("SELECT password_hash FROM users WHERE email = %s", JOHN["username"])[0][0]
    survivors, seen = [], 0
    for _ in range(RESET_TRIALS):
        creds, uid = new_user(JANE)
        stop, got = threading.Event(), [[] for _ in range(4)]
        threads = [threading.Thread(target=login_loop, args=(svc, creds, stop, got[i])) for i in range(4)]
        for t in threads:
            t.start()
        try:
            deadline = time.monotonic() + 10
            while sum(map(len, got)) < 4 and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(0.05)  # logins in flight: lookups done, checks running
            if how == "users-py":
                set_hash(creds["username"], other_hash)
            else:
                sql("UPDATE users SET password_hash = %s WHERE id = %s", other_hash, uuid.UUID(uid))
            time.sleep(0.3)
        finally:
            stop.set()
            for t in threads:
                t.join(30)
        tokens = [rt for per_thread in got for rt in per_thread]
        assert tokens, "the logins before the reset succeeded"
        seen += len(tokens)
        # The latest tokens first: the ones whose logins raced the reset.
        for rt in reversed(tokens):
            r = refresh(svc, rt)
            if r.status_code == 200:
                survivors.append(rt)
            else:
                assert_refresh_refused(r)
    assert not survivors, f"{len(survivors)} of {seen} sessions outlived the password change"


REUSE_TRIALS = 40


def test_reuse_racing_a_rotating_thief_ends_the_thiefs_session(svc, new_user):
    """A thief rotates a stolen family in a loop; the victim presents its old (used) token: reuse. Whatever rotation
    raced the revocation, the thief's latest token no longer refreshes (the family row serialises them, §7)."""
    creds, _ = new_user()
    for trial in range(REUSE_TRIALS):
        victim = login(svc, creds)["refresh_token"]
        latest = [assert_session(refresh(svc, victim))["refresh_token"]]  # the thief's; the victim's is now used
        stop = threading.Event()

        def thief():
            while not stop.is_set():
                r = refresh(svc, latest[-1])
                if r.status_code != 200:
                    return
                latest.append(r.json()["refresh_token"])
        t = threading.Thread(target=thief)
        t.start()
        try:
            while len(latest) < 2 + trial % 3 and t.is_alive():
                time.sleep(0.001)
            assert_refresh_refused(refresh(svc, victim))
            time.sleep(0.05)
        finally:
            stop.set()
            t.join(30)
        assert_refresh_refused(refresh(svc, latest[-1]))


REVOKE_TRIALS = 10


def test_revoke_racing_a_refresh_leaves_nothing_that_refreshes(svc, new_user):
    creds, _ = new_user()
    for _ in range(REVOKE_TRIALS):
        rt = login(svc, creds)["refresh_token"]
        gate = threading.Barrier(2)

        def go(which):
            gate.wait()
            return refresh(svc, rt) if which == "refresh" else revoke(svc, rt)
        with ThreadPoolExecutor(2) as pool:
            refreshed, revoked = pool.map(go, ["refresh", "revoke"])
        assert_revoked_answer(revoked)
        if refreshed.status_code == 200:
            assert_refresh_refused(refresh(svc, refreshed.json()["refresh_token"]))
        else:
            assert_refresh_refused(refreshed)
        assert_refresh_refused(refresh(svc, rt))


# --------------------------------------------------------------------------- a burst against the lock (§8)

@pytest.fixture(scope="module")
def short(own_process, database, workdir):
    """LOGIN_MAX_FAILURES=10 (the address limit out of the way: the suite is one address), and short sessions:
    REFRESH_TTL_SECONDS=2, REFRESH_MAX_LIFETIME_SECONDS=4."""
    url, pg = database
    s = start_service(own_process, url, workdir / "short.log", pg, LOGIN_MAX_FAILURES="10",
                      LOGIN_FAILURE_WINDOW_SECONDS="120", REFRESH_TTL_SECONDS="2", REFRESH_MAX_LIFETIME_SECONDS="4")
    yield s
    stackctl.stop_process(s.proc)


BURST = 80


@pytest.mark.parametrize("like", [JOHN, JANE], ids=["legacy-hmac", "argon2id"])
def test_a_burst_of_wrong_passwords_gets_at_most_the_limit_checked(short, sql, new_user, like):
    """80 wrong passwords at once for one user: each reserves its attempt before the check (§8), so at most
    LOGIN_MAX_FAILURES (10) are checked and answered invalid_grant, the rest 429, however many arrive together."""
    creds, _ = new_user(like)
    wrong = {**creds, "password": "not-the-password"}
    before = rejections(short)["username_locked"]
    gate = threading.Barrier(BURST)

    def go(_):
        gate.wait()
        return answer(token(short, wrong))
    with ThreadPoolExecutor(BURST) as pool:
        answers = list(pool.map(go, range(BURST)))
    statuses = [a[0] for a in answers]
    assert set(statuses) <= {400, 429, 503}, sorted(set(statuses))
    checked = statuses.count(400)
    assert 1 <= checked <= 10, f"{checked} wrong passwords checked in one burst, LOGIN_MAX_FAILURES=10"
    assert checked + statuses.count(429) > 10, f"the burst reached the limit: {sorted(statuses)}"
    for a in answers:
        if a[0] == 400:
            assert a[2] == INVALID_GRANT_BODY, a[2]
        elif a[0] == 503:
            # 80 statements L on one username's row, DB_POOL_SIZE=10: a request may wait out the acquire timeout
            # (the database's 503). No check is shed here (MAX_PASSWORD_CHECKS=1000): the overload count stays 0.
            assert json.loads(a[2])["error"] == "temporarily_unavailable" and a[1].get("retry-after") == "1", a
        else:
            assert_locked(*a, window=120)
    moved = rejections(short)
    assert moved["username_locked"] - before == statuses.count(429)
    assert moved["overload"] == 0
    assert sql("SELECT failures FROM login_failures WHERE username = %s", creds["username"]) == [(11,)], \
        "the count of reserved attempts stops at LOGIN_MAX_FAILURES + 1"
    assert_locked(*answer(token(short, creds)), window=120)  # the right password too


# --------------------------------------------------------------------------- the maximum lifetime (§7)

def test_a_session_ends_at_its_maximum_lifetime(short, sql, new_user):
    """REFRESH_TTL_SECONDS=2, REFRESH_MAX_LIFETIME_SECONDS=4: a family rotated every second stops refreshing once
    its session ends; no refresh token's expiry passes its session's end; rotation never extends the session."""
    creds, _ = new_user()
    first = login(short, creds)
    current, answers, issued = first["refresh_token"], [], [first["refresh_token"]]
    deadline = time.monotonic() + 12
    while time.monotonic() < deadline:
        time.sleep(1)
        r = refresh(short, current)
        answers.append(r.status_code)
        if r.status_code != 200:
            assert_refresh_refused(r)
            break
        current = assert_session(r)["refresh_token"]
        issued.append(current)
    assert answers and answers[0] == 200, f"refreshed within the session: {answers}"
    assert answers[-1] == 400, f"still refreshing 12 s into a 4 s session: {answers}"
    sid = claims(short, first)[0]["sid"]
    rows = sql("SELECT extract(epoch FROM s.expires_at - s.created_at), s.revoked_at, now() >= s.expires_at, "
               "count(t.*), count(t.*) FILTER (WHERE t.expires_at > s.expires_at), "
               "count(t.*) FILTER (WHERE t.expires_at = s.expires_at) "
               "FROM sessions s JOIN refresh_tokens t USING (family_id) WHERE s.family_id = %s "
               "GROUP BY s.family_id", uuid.UUID(sid))
    assert len(rows) == 1, rows
    lifetime, revoked, ended, tokens, beyond, at_end = rows[0]
    assert float(lifetime) == 4, f"the session ends REFRESH_MAX_LIFETIME_SECONDS after the login: {lifetime}"
    assert (revoked, ended) == (None, True), "refused because the session had ended, not revoked"
    assert tokens == len(issued), (tokens, len(issued))
    assert beyond == 0, "no refresh token expires after its session"
    assert at_end >= 1, "a token issued less than REFRESH_TTL_SECONDS before the end expires with the session"
    assert_session(token(short, creds))  # a new login, a new session


# --------------------------------------------------------------------------- no oracle (§8)

PUBLIC_GETS = ["/", "/health", "/health/live", "/.well-known/jwks.json", "/.well-known/openid-configuration",
               "/metrics", "/token", "/revoke", "/nope"]


def public_view(s) -> dict:
    """Everything the public port serves to a GET, minus Date."""
    view = {}
    for path in PUBLIC_GETS:
        r = requests.get(s.url(path), timeout=10)
        view[path] = (r.status_code, sorted((k.lower(), v) for k, v in r.headers.items() if k.lower() != "date"),
                      r.content)
    return view


def test_the_four_wrong_logins_are_alike_on_the_public_port(svc, set_hash, new_user):
    """A wrong password for an argon2id user and for a legacy user, a disabled user, an unknown user: the same
    status, headers (but Date) and bytes, and nothing the public port serves differs after any of them."""
    argon, _ = new_user(JANE)
    legacy, _ = new_user(JOHN)
    disabled, _ = new_user(JOHN)
    set_hash(disabled["username"], "$disabled$2026-11-28T00:00:00Z")  # what `users.py disable` stores
    kinds = {"argon2id": {**argon, "password": "wrong-1"}, "legacy": {**legacy, "password": "wrong-1"},
             "disabled": disabled, "unknown": {"username": f"nobody-{uuid.uuid4().hex[:10]}@example.com",
                                               "password": "wrong-1"}}
    answers, views = {}, {}
    view = public_view(svc)
    for kind, body in kinds.items():
        r = token(svc, body)
        answers[kind] = (r.status_code, sorted((k.lower(), v) for k, v in r.headers.items() if k.lower() != "date"),
                         r.content)
        after = public_view(svc)
        views[kind] = [p for p in PUBLIC_GETS if after[p] != view[p]]
        view = after
    assert answers["argon2id"][0] == 400 and answers["argon2id"][2] == INVALID_GRANT_BODY, answers["argon2id"]
    for kind, a in answers.items():
        assert a == answers["argon2id"], f"{kind} answers otherwise than a wrong argon2id password: {a}"
    assert views == {k: [] for k in kinds}, f"the public port changed after a wrong login: {views}"
