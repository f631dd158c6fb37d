"""Tests that start their own processes: database outage and recovery,
start-up refusal for bad configuration, the inline key, graceful shutdown.

Each starts the stack on its own port; the database tests also on their own
throw-away PostgreSQL, which they stop and start.
"""
from __future__ import annotations

import concurrent.futures
import subprocess
import threading
import time

import pytest
import requests

import stackctl
from service import AUDIENCE, DEV_KEY, ISSUER, ROOT, TTL, start_service
from helpers import JOHN, assert_error, assert_token_pair, verify

INVALID_KEYS = ROOT / "spec" / "keys" / "invalid"
# The contract's bound for a 503 while the database is away: the acquire timeout (1 s) plus 1 s.
HANG_LIMIT = 2.0
# How soon after PostgreSQL stops the service must be answering 503s (its pooled connections found dead).
OUTAGE_SEEN_WITHIN = 5.0


def token(base_url: str, timeout: float = 10) -> requests.Response:
    return requests.post(base_url + "/token", json=JOHN, timeout=timeout)


@pytest.fixture(scope="module")
def outage(own_process, workdir, new_cluster):
    """A stack started while its database is down."""
    pg = new_cluster().start()
    pg.pg_stop()
    try:
        svc = start_service(own_process, pg.service_url, workdir / "outage.log", pg, wait_for=503)
        yield svc
        stackctl.stop_process(svc.proc)
    finally:
        pg.destroy()


def wait_for_status(url_call, status: int, within: float) -> float:
    t0 = time.monotonic()
    last = None
    while time.monotonic() - t0 < within:
        try:
            last = url_call()
            if last.status_code == status:
                return time.monotonic() - t0
        except requests.RequestException as e:
            last = e
        time.sleep(0.1)
    pytest.fail(f"no {status} within {within}s; last answer: {getattr(last, 'status_code', last)} "
                f"{getattr(last, 'text', '')[:200]}")


def assert_unavailable(svc) -> None:
    t0 = time.monotonic()
    r = token(svc.base_url)
    elapsed = time.monotonic() - t0
    assert_error(r, 503, "temporarily_unavailable")
    assert r.headers.get("Retry-After") == "1"
    assert elapsed < HANG_LIMIT, f"503 took {elapsed:.1f}s"
    t0 = time.monotonic()
    h = requests.get(svc.base_url + "/health", timeout=10)
    elapsed = time.monotonic() - t0
    assert h.status_code == 503 and h.json() == {"status": "down"}
    assert elapsed < HANG_LIMIT, f"/health took {elapsed:.1f}s"


@pytest.mark.tls_core
def test_starts_with_the_database_down_and_answers_503(outage):
    assert outage.proc.poll() is None
    assert_unavailable(outage)


# The contract's bound for /health/live while the database is away; a liveness that waited for the
# database would take the acquire timeout (1 s).
LIVENESS_LIMIT = 0.1


@pytest.mark.tls_core
def test_liveness_while_the_database_is_down(outage):
    with requests.Session() as s:
        s.get(outage.base_url + "/health/live", timeout=10)  # a connection, and the path's first-time costs
        times = []
        for _ in range(5):
            t0 = time.monotonic()
            r = s.get(outage.base_url + "/health/live", timeout=10)
            times.append(time.monotonic() - t0)
            assert r.status_code == 200 and r.json() == {"status": "up"}, (r.status_code, r.text[:200])
    assert_error(token(outage.base_url), 503, "temporarily_unavailable")
    times.sort()
    # The median against the contract's 100 ms, the slowest against the acquire timeout: a loaded CI machine
    # may delay one request, a liveness that asks the database delays every one.
    assert times[2] <= LIVENESS_LIMIT, f"/health/live took {times} s while the database is down"
    assert times[-1] < 1.0, f"/health/live took {times} s while the database is down"


@pytest.mark.tls_core
def test_recovers_when_the_database_comes_up(outage):
    outage.pg.pg_start()
    wait_for_status(lambda: token(outage.base_url), 200, within=15)
    assert requests.get(outage.base_url + "/health", timeout=10).json() == {"status": "up"}


@pytest.mark.tls_core
def test_database_stopped_while_running_then_back(outage):
    assert_token_pair(token(outage.base_url), TTL)
    outage.pg.pg_stop()
    try:
        wait_for_status(lambda: token(outage.base_url), 503, within=OUTAGE_SEEN_WITHIN)
        assert_unavailable(outage)
        assert outage.proc.poll() is None, "the process must survive a database outage"
    finally:
        outage.pg.pg_start()
    wait_for_status(lambda: token(outage.base_url), 200, within=15)
    assert requests.get(outage.base_url + "/health", timeout=10).json() == {"status": "up"}


@pytest.mark.tls_core
def test_pool_never_exceeds_its_size(outage):
    """32 logins at a time, three times the pool, while the server's connections are counted: a lazily growing
    pool must grow (more than one connection seen) and never past DB_POOL_SIZE (10)."""
    peak, stop = 0, threading.Event()

    def count():
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, outage.pg.client_connections())
            time.sleep(0.02)
    counter = threading.Thread(target=count, daemon=True)
    counter.start()
    try:
        with concurrent.futures.ThreadPoolExecutor(32) as pool:
            statuses = list(pool.map(lambda _: token(outage.base_url).status_code, range(320)))
    finally:
        stop.set()
        counter.join(5)
    peak = max(peak, outage.pg.client_connections())
    assert set(statuses) == {200}, {s: statuses.count(s) for s in set(statuses)}
    assert peak > 1, "32 concurrent logins never used a second connection: the test did not load the pool"
    assert peak <= 10, f"{peak} server connections for a pool of 10"


# --------------------------------------------------------------------------- start-up refusal

def run_until_exit(stack, env, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(stack.command("run"), cwd=stack.dir, env=env, capture_output=True, text=True,
                          timeout=timeout)


STACK_TRACE = ("\tat ", "Exception in thread", "Caused by:", "panicked at", "stack backtrace", "Traceback")


def assert_refused(res: subprocess.CompletedProcess, *words: str) -> None:
    assert res.returncode == 2, (f"a refused start exits 2 (spec/README.md), got {res.returncode}; "
                                 f"stdout={res.stdout[-500:]!r} stderr={res.stderr[-500:]!r}")
    err = res.stderr.strip()
    assert err, "a refused start says why on stderr"
    out = res.stdout + res.stderr
    for marker in STACK_TRACE:
        assert marker not in out, f"stack trace in the output: {out[-1500:]}"
    assert any(w.lower() in err.lower() for w in words), f"stderr does not name the problem ({words}): {err[-500:]}"


@pytest.mark.parametrize("key_file", ["rsa-2048-pkcs1.pem", "rsa-1024-pkcs8.pem", "ec-p256-sec1.pem", "ec-p384-pkcs8.pem",
                                      "ec-secp256k1-pkcs8.pem", "ed448-pkcs8.pem"])
def test_refuses_an_unusable_key(own_process, key_file):
    env = own_process.contract_env("postgres://auth:auth@127.0.0.1:1/auth", stackctl.free_port(),
                                   JWT_PRIVATE_KEY_FILE=str(INVALID_KEYS / key_file))
    assert_refused(run_until_exit(own_process, env), "key")


def test_refuses_a_missing_key(own_process):
    env = own_process.contract_env("postgres://auth:auth@127.0.0.1:1/auth", stackctl.free_port(),
                                   JWT_PRIVATE_KEY_FILE=None)
    assert_refused(run_until_exit(own_process, env), "JWT_PRIVATE_KEY")


def test_refuses_an_unreadable_key_file(own_process, workdir):
    env = own_process.contract_env("postgres://auth:auth@127.0.0.1:1/auth", stackctl.free_port(),
                                   JWT_PRIVATE_KEY_FILE=str(workdir / "does-not-exist.pem"))
    assert_refused(run_until_exit(own_process, env), "key")


def test_refuses_a_garbage_inline_key(own_process):
    env = own_process.contract_env("postgres://auth:auth@127.0.0.1:1/auth", stackctl.free_port(),
                                   JWT_PRIVATE_KEY_FILE=None, JWT_PRIVATE_KEY="-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----\n")
    assert_refused(run_until_exit(own_process, env), "key")


@pytest.mark.parametrize("url", ["not a url", "mysql://auth:auth@127.0.0.1:3306/auth", "postgres://auth:auth@127.0.0.1:notaport/auth"])
def test_refuses_a_malformed_database_url(own_process, url):
    env = own_process.contract_env(url, stackctl.free_port())
    assert_refused(run_until_exit(own_process, env), "DATABASE_URL")


# --------------------------------------------------------------------------- TLS to PostgreSQL

NO_DATABASE = "postgres://auth:auth@127.0.0.1:1/auth"
SSLMODES = ("disable", "prefer", "require", "verify-ca", "verify-full")
# "Within a few seconds": a JVM's start on a loaded CI machine fits; a stack that accepted the settings keeps
# running (its database is unreachable, which is no reason to exit) and is caught here.
REFUSAL_LIMIT = 20.0


def assert_refused_in_one_line(stack, env, *words: str) -> None:
    t0 = time.monotonic()
    try:
        res = run_until_exit(stack, env, timeout=REFUSAL_LIMIT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"still running after {REFUSAL_LIMIT:.0f}s: DATABASE_URL={env['DATABASE_URL']!r} was accepted")
    elapsed = time.monotonic() - t0
    assert_refused(res, words[0])
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, f"a refusal is one line on stderr, got {len(lines)}: {res.stderr[-1500:]}"
    for w in words:
        assert w.lower() in lines[0].lower(), f"the refusal does not name {w!r}: {lines[0]}"
    assert elapsed < REFUSAL_LIMIT


@pytest.mark.parametrize("query,words", [
    ("sslmode=bogus", ("sslmode", "bogus", *SSLMODES)),
    ("sslmode=allow", ("sslmode", "allow", *SSLMODES)),
    ("sslmode=VERIFY-FULL", ("sslmode", *SSLMODES)),
    ("sslmode=verify-full", ("sslrootcert",)),
    ("sslmode=verify-ca", ("sslrootcert",)),
], ids=["bogus", "allow", "upper-case", "verify-full-without-root", "verify-ca-without-root"])
def test_refuses_bad_sslmode(own_process, query, words):
    env = own_process.contract_env(f"{NO_DATABASE}?{query}", stackctl.free_port())
    assert_refused_in_one_line(own_process, env, *words)


@pytest.mark.parametrize("what", ["missing", "directory"])
def test_refuses_an_unreadable_sslrootcert(own_process, workdir, what):
    root = workdir / "no-such-ca.pem" if what == "missing" else workdir
    for mode in ("require", "verify-full"):
        env = own_process.contract_env(f"{NO_DATABASE}?sslmode={mode}&sslrootcert={root}", stackctl.free_port())
        assert_refused_in_one_line(own_process, env, "sslrootcert")


@pytest.fixture(scope="module")
def tls_only_cluster(own_process):
    """A TLS-only cluster whatever --db-tls says: what a stack does with the wrong settings against it."""
    with stackctl.ThrowawayPostgres(tls=True) as pg:
        yield pg


@pytest.mark.parametrize("case", ["disable", "verify-full-other-ca", "verify-full-localhost", "require", "prefer",
                                  "no-sslmode"])
def test_against_a_tls_only_database(own_process, tls_only_cluster, workdir, case):
    """Plain TCP and an untrusted server certificate cannot log in (the service runs, /health says down, /token
    answers 503); verification by host name (DNS SAN), encryption without verification and libpq's default
    (prefer: TLS when the server offers it) can. Runs whatever --db-tls says, on a cluster of its own."""
    pg = tls_only_cluster
    url = {
        "disable": pg.url_for("disable", service=True),
        "verify-full-other-ca": pg.url_for("verify-full", rootcert=stackctl.make_ca(workdir / "other-ca", "other CA"),
                                           service=True),
        "verify-full-localhost": pg.url_for("verify-full", host="localhost", service=True),
        "require": pg.url_for("require", service=True),
        "prefer": pg.url_for("prefer", service=True),
        "no-sslmode": pg.service_plain_url,
    }[case]
    can_log_in = case not in ("disable", "verify-full-other-ca")
    svc = start_service(own_process, url, workdir / f"tls-{case}.log", pg, wait_for=200 if can_log_in else 503)
    try:
        if can_log_in:
            assert_token_pair(token(svc.base_url), TTL)
        else:
            assert_unavailable(svc)
            assert svc.proc.poll() is None, "a database it cannot log in to is an outage, not a reason to exit"
    finally:
        stackctl.stop_process(svc.proc)


# --------------------------------------------------------------------------- pool settings (§5)

LIFETIME, IDLE = "DB_MAX_LIFETIME_SECONDS", "DB_IDLE_TIMEOUT_SECONDS"


@pytest.mark.parametrize("env,named", [
    ({LIFETIME: "29"}, (LIFETIME,)),
    ({LIFETIME: "0"}, (LIFETIME,)),
    ({LIFETIME: "-600"}, (LIFETIME,)),
    ({LIFETIME: "ten"}, (LIFETIME,)),
    ({LIFETIME: "600.5"}, (LIFETIME,)),
    ({LIFETIME: "600s"}, (LIFETIME,)),
    ({IDLE: "9"}, (IDLE,)),
    ({IDLE: "0"}, (IDLE,)),
    ({IDLE: "-300"}, (IDLE,)),
    ({IDLE: "five"}, (IDLE,)),
    ({IDLE: "1e2"}, (IDLE,)),
    ({LIFETIME: "60", IDLE: "60"}, (LIFETIME, IDLE)),
    ({LIFETIME: "60", IDLE: "120"}, (LIFETIME, IDLE)),
    ({IDLE: "600"}, (LIFETIME, IDLE)),        # not shorter than the default lifetime (600)
    ({LIFETIME: "200"}, (LIFETIME, IDLE)),    # shorter than the default idle timeout (300)
], ids=["lifetime-29", "lifetime-0", "lifetime-negative", "lifetime-word", "lifetime-fraction", "lifetime-unit",
        "idle-9", "idle-0", "idle-negative", "idle-word", "idle-exponent", "idle-equal", "idle-longer",
        "idle-equal-default-lifetime", "lifetime-below-default-idle"])
def test_refuses_bad_pool_settings(own_process, env, named):
    """One line on stderr naming the variable (for a pair that breaks idle < lifetime, either of them), exit 2."""
    t0 = time.monotonic()
    try:
        res = run_until_exit(own_process, own_process.contract_env(NO_DATABASE, stackctl.free_port(), **env),
                             timeout=REFUSAL_LIMIT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"still running after {REFUSAL_LIMIT:.0f}s: {env} was accepted")
    assert_refused(res, *named)
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, f"a refusal is one line on stderr, got {len(lines)}: {res.stderr[-1500:]}"
    assert any(n.lower() in lines[0].lower() for n in named), f"the refusal does not name {named}: {lines[0]}"
    assert time.monotonic() - t0 < REFUSAL_LIMIT


def test_pool_settings_at_their_minimums_or_empty_are_accepted(own_process, workdir, open_database):
    """30 and 10 are the smallest values (HikariCP's own minimums); set but empty counts as unset."""
    with open_database() as (url, pg):
        for i, env in enumerate(({LIFETIME: "30", IDLE: "10"}, {LIFETIME: "", IDLE: ""}, {LIFETIME: "31", IDLE: "30"})):
            svc = start_service(own_process, url, workdir / f"pool-settings-{i}.log", pg, **env)
            try:
                assert_token_pair(token(svc.base_url), TTL)
            finally:
                stackctl.stop_process(svc.proc)


# --------------------------------------------------------------------------- inline key, shutdown

@pytest.mark.tls_core
def test_inline_key_works_and_sigterm_exits_zero(own_process, workdir, open_database):
    with open_database() as (url, pg):
        svc = start_service(own_process, url, workdir / "inline.log", pg, JWT_PRIVATE_KEY_FILE=None,
                            JWT_PRIVATE_KEY=(ROOT / "spec" / "keys" / "dev-rsa-2048.pem").read_text())
        try:
            jwks = requests.get(svc.base_url + "/.well-known/jwks.json", timeout=10).json()
            assert jwks == {"keys": [DEV_KEY["jwk"]]}
            body = assert_token_pair(token(svc.base_url), TTL)
            verify(body["access_token"], jwks, ISSUER, AUDIENCE)
        finally:
            t0 = time.monotonic()
            code = stackctl.stop_process(svc.proc, timeout=12)
            elapsed = time.monotonic() - t0
        assert code == 0, f"exit code {code} on SIGTERM; log: {svc.log_text()[-1500:]}"
        assert elapsed < 12
        assert DEV_KEY["kid"] in svc.log_text(), "the start-up line names the kid"
        assert "alg=RS256" in svc.log_text(), "the start-up line names the algorithm"
