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
from dataclasses import dataclass

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
    """Two bursts of 32 logins at a time, three times the pool, while the server's connections are counted: a lazily
    growing pool must grow (more than one connection seen) and never past DB_POOL_SIZE (10).

    The first burst meets a pool that is still opening its connections, which HikariCP does one at a time: a borrow
    that waits DB_ACQUIRE_TIMEOUT_MS for one of them is answered the contract's 503, so there a 503 is allowed
    (nothing else). The second burst meets a grown pool and must be answered in full: 32 logins wait their turn for
    10 connections, none is refused."""
    peak, stop = 0, threading.Event()

    def count():
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, outage.pg.client_connections())
            time.sleep(0.02)

    def burst() -> list[requests.Response]:
        with concurrent.futures.ThreadPoolExecutor(32) as pool:
            return list(pool.map(lambda _: token(outage.base_url), range(320)))

    counter = threading.Thread(target=count, daemon=True)
    counter.start()
    try:
        growing = burst()
        grown = burst()
    finally:
        stop.set()
        counter.join(5)
    peak = max(peak, outage.pg.client_connections())
    for r in growing:
        if r.status_code != 200:
            assert_error(r, 503, "temporarily_unavailable")
            assert r.headers.get("Retry-After") == "1"
    statuses = [r.status_code for r in grown]
    assert set(statuses) == {200}, {s: statuses.count(s) for s in set(statuses)}
    assert peak > 1, "32 concurrent logins never used a second connection: the test did not load the pool"
    assert peak <= 10, f"{peak} server connections for a pool of 10"


# --------------------------------------------------------------------------- start-up refusal
# Each refusal is one process start that must end in exit 2 at once. A module's refusals start together, a few at a
# time in a thread pool, when its first refusal test asks (refusals_of); each test then checks its own outcome.

def run_until_exit(stack, env, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(stack.command("run"), cwd=stack.dir, env=env, capture_output=True, text=True,
                          timeout=timeout)


# Processes started at once: a process start is mostly one core's work, and the machine has at least two.
REFUSAL_WORKERS = 3


@dataclass
class Outcome:
    result: subprocess.CompletedProcess | None  # None: still running at the timeout (killed)
    env: dict
    timeout: float


def run_refusals(stack, envs: dict[str, tuple[dict, float]]) -> dict[str, Outcome]:
    """Runs every (env, timeout) until it exits, REFUSAL_WORKERS at a time; returns each one's Outcome by id."""
    def one(item):
        env, timeout = item
        try:
            return Outcome(run_until_exit(stack, env, timeout=timeout), env, timeout)
        except subprocess.TimeoutExpired:
            return Outcome(None, env, timeout)
    with concurrent.futures.ThreadPoolExecutor(REFUSAL_WORKERS) as pool:
        outcomes = dict(zip(envs, pool.map(one, envs.values())))
    # One still running at its timeout may have waited for a core behind the others (a loaded machine): it gets one
    # more start alone, and a stack that accepted the settings runs past the timeout again.
    for case_id, outcome in outcomes.items():
        if outcome.result is None:
            outcomes[case_id] = one(envs[case_id])
    return outcomes


def refusals_of(cases: dict, *args) -> "callable":
    """A module's refusals, started together on first use: cases maps an id to a function of *args giving
    (env, timeout). Returns a function of the id giving its Outcome."""
    done: dict[str, Outcome] = {}

    def outcome(case_id: str) -> Outcome:
        if not done:
            done.update(run_refusals(args[0], {k: make(*args) for k, make in cases.items()}))
        return done[case_id]
    return outcome


STACK_TRACE = ("\tat ", "Exception in thread", "Caused by:", "panicked at", "stack backtrace", "Traceback")


def assert_refused(res: subprocess.CompletedProcess | Outcome, *words: str) -> None:
    if isinstance(res, Outcome):
        assert res.result is not None, f"still running after {res.timeout:.0f}s: the settings were accepted"
        res = res.result
    assert res.returncode == 2, (f"a refused start exits 2 (spec/README.md), got {res.returncode}; "
                                 f"stdout={res.stdout[-500:]!r} stderr={res.stderr[-500:]!r}")
    err = res.stderr.strip()
    assert err, "a refused start says why on stderr"
    out = res.stdout + res.stderr
    for marker in STACK_TRACE:
        assert marker not in out, f"stack trace in the output: {out[-1500:]}"
    assert any(w.lower() in err.lower() for w in words), f"stderr does not name the problem ({words}): {err[-500:]}"


def assert_refused_in_one_line(outcome: Outcome, *words: str, any_of: bool = False) -> None:
    """Refused (exit 2, within the outcome's timeout) with one line on stderr naming every word (any_of: one of
    them)."""
    assert outcome.result is not None, \
        f"still running after {outcome.timeout:.0f}s: DATABASE_URL={outcome.env.get('DATABASE_URL')!r} was accepted"
    assert_refused(outcome.result, *words) if any_of else assert_refused(outcome.result, words[0])
    lines = [line for line in outcome.result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, f"a refusal is one line on stderr, got {len(lines)}: {outcome.result.stderr[-1500:]}"
    if any_of:
        assert any(w.lower() in lines[0].lower() for w in words), f"the refusal does not name {words}: {lines[0]}"
    else:
        for w in words:
            assert w.lower() in lines[0].lower(), f"the refusal does not name {w!r}: {lines[0]}"


NO_DATABASE = "postgres://auth:auth@127.0.0.1:1/auth"
SSLMODES = ("disable", "prefer", "require", "verify-ca", "verify-full")
# "Within a few seconds": a JVM's start on a loaded CI machine fits; a stack that accepted the settings keeps
# running (its database is unreachable, which is no reason to exit) and is caught here.
REFUSAL_LIMIT = 20.0

UNUSABLE_KEYS = ["rsa-2048-pkcs1.pem", "rsa-1024-pkcs8.pem", "ec-p256-sec1.pem", "ec-p384-pkcs8.pem",
                 "ec-secp256k1-pkcs8.pem", "ed448-pkcs8.pem"]
MALFORMED_URLS = ["not a url", "mysql://auth:auth@127.0.0.1:3306/auth", "postgres://auth:auth@127.0.0.1:notaport/auth"]
BAD_SSLMODES = {
    "bogus": ("sslmode=bogus", ("sslmode", "bogus", *SSLMODES)),
    "allow": ("sslmode=allow", ("sslmode", "allow", *SSLMODES)),
    "upper-case": ("sslmode=VERIFY-FULL", ("sslmode", *SSLMODES)),
    "verify-full-without-root": ("sslmode=verify-full", ("sslrootcert",)),
    "verify-ca-without-root": ("sslmode=verify-ca", ("sslrootcert",)),
}
LIFETIME, IDLE = "DB_MAX_LIFETIME_SECONDS", "DB_IDLE_TIMEOUT_SECONDS"
BAD_POOL_SETTINGS = {
    "lifetime-29": ({LIFETIME: "29"}, (LIFETIME,)),
    "lifetime-0": ({LIFETIME: "0"}, (LIFETIME,)),
    "lifetime-negative": ({LIFETIME: "-600"}, (LIFETIME,)),
    "lifetime-word": ({LIFETIME: "ten"}, (LIFETIME,)),
    "lifetime-fraction": ({LIFETIME: "600.5"}, (LIFETIME,)),
    "lifetime-unit": ({LIFETIME: "600s"}, (LIFETIME,)),
    "idle-9": ({IDLE: "9"}, (IDLE,)),
    "idle-0": ({IDLE: "0"}, (IDLE,)),
    "idle-negative": ({IDLE: "-300"}, (IDLE,)),
    "idle-word": ({IDLE: "five"}, (IDLE,)),
    "idle-exponent": ({IDLE: "1e2"}, (IDLE,)),
    "idle-equal": ({LIFETIME: "60", IDLE: "60"}, (LIFETIME, IDLE)),
    "idle-longer": ({LIFETIME: "60", IDLE: "120"}, (LIFETIME, IDLE)),
    "idle-equal-default-lifetime": ({IDLE: "600"}, (LIFETIME, IDLE)),      # not shorter than the default lifetime (600)
    "lifetime-below-default-idle": ({LIFETIME: "200"}, (LIFETIME, IDLE)),  # shorter than the default idle timeout (300)
}


def no_database(stack, url: str = NO_DATABASE, timeout: float = 60, **env) -> tuple[dict, float]:
    return stack.contract_env(url, stackctl.free_port(), **env), timeout


REFUSALS = {
    **{f"key-{f}": lambda st, wd, f=f: no_database(st, JWT_PRIVATE_KEY_FILE=str(INVALID_KEYS / f))
       for f in UNUSABLE_KEYS},
    "key-missing": lambda st, wd: no_database(st, JWT_PRIVATE_KEY_FILE=None),
    "key-unreadable": lambda st, wd: no_database(st, JWT_PRIVATE_KEY_FILE=str(wd / "does-not-exist.pem")),
    "key-garbage-inline": lambda st, wd: no_database(
        st, JWT_PRIVATE_KEY_FILE=None, JWT_PRIVATE_KEY="-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----\n"),
    **{f"url-{u}": lambda st, wd, u=u: no_database(st, u) for u in MALFORMED_URLS},
    **{f"sslmode-{k}": lambda st, wd, q=q: no_database(st, f"{NO_DATABASE}?{q}", REFUSAL_LIMIT)
       for k, (q, _) in BAD_SSLMODES.items()},
    **{f"rootcert-{what}-{mode}": lambda st, wd, what=what, mode=mode: no_database(
        st, f"{NO_DATABASE}?sslmode={mode}&sslrootcert={wd / 'no-such-ca.pem' if what == 'missing' else wd}",
        REFUSAL_LIMIT)
       for what in ("missing", "directory") for mode in ("require", "verify-full")},
    **{f"pool-{k}": lambda st, wd, env=env: no_database(st, NO_DATABASE, REFUSAL_LIMIT, **env)
       for k, (env, _) in BAD_POOL_SETTINGS.items()},
}


@pytest.fixture(scope="module")
def refusal(own_process, workdir):
    return refusals_of(REFUSALS, own_process, workdir)


@pytest.mark.parametrize("key_file", UNUSABLE_KEYS)
def test_refuses_an_unusable_key(refusal, key_file):
    assert_refused(refusal(f"key-{key_file}"), "key")


def test_refuses_a_missing_key(refusal):
    assert_refused(refusal("key-missing"), "JWT_PRIVATE_KEY")


def test_refuses_an_unreadable_key_file(refusal):
    assert_refused(refusal("key-unreadable"), "key")


def test_refuses_a_garbage_inline_key(refusal):
    assert_refused(refusal("key-garbage-inline"), "key")


@pytest.mark.parametrize("url", MALFORMED_URLS)
def test_refuses_a_malformed_database_url(refusal, url):
    assert_refused(refusal(f"url-{url}"), "DATABASE_URL")


# --------------------------------------------------------------------------- TLS to PostgreSQL

@pytest.mark.parametrize("case", list(BAD_SSLMODES))
def test_refuses_bad_sslmode(refusal, case):
    assert_refused_in_one_line(refusal(f"sslmode-{case}"), *BAD_SSLMODES[case][1])


@pytest.mark.parametrize("what", ["missing", "directory"])
def test_refuses_an_unreadable_sslrootcert(refusal, what):
    for mode in ("require", "verify-full"):
        assert_refused_in_one_line(refusal(f"rootcert-{what}-{mode}"), "sslrootcert")


@pytest.fixture(scope="module")
def tls_only_cluster(own_process):
    """A TLS-only cluster whatever --db-tls says: what a stack does with the wrong settings against it."""
    with stackctl.ThrowawayPostgres(tls=True) as pg:
        yield pg


TLS_CASES = ["disable", "verify-full-other-ca", "verify-full-localhost", "require", "prefer", "no-sslmode"]


def start_together(starts: dict) -> dict:
    """Runs the service starts (id -> a function returning a started Service) REFUSAL_WORKERS at a time; a start that
    failed gives its exception (pytest.fail's included) in place of the Service."""
    def one(start):
        try:
            return start()
        except BaseException as e:  # noqa: BLE001 - pytest.fail raises an OutcomeException, reported by the test
            return e
    with concurrent.futures.ThreadPoolExecutor(REFUSAL_WORKERS) as pool:
        return dict(zip(starts, pool.map(one, starts.values())))


def started_or_fail(svc):
    if isinstance(svc, BaseException):
        pytest.fail(f"did not start: {svc}")
    return svc


@pytest.fixture(scope="module")
def tls_services(own_process, tls_only_cluster, workdir):
    """The services of test_against_a_tls_only_database, one per case, started together."""
    pg = tls_only_cluster
    url = {
        "disable": pg.url_for("disable", service=True),
        "verify-full-other-ca": pg.url_for("verify-full", rootcert=stackctl.make_ca(workdir / "other-ca", "other CA"),
                                           service=True),
        "verify-full-localhost": pg.url_for("verify-full", host="localhost", service=True),
        "require": pg.url_for("require", service=True),
        "prefer": pg.url_for("prefer", service=True),
        "no-sslmode": pg.service_plain_url,
    }
    services = start_together({
        case: lambda case=case: start_service(own_process, url[case], workdir / f"tls-{case}.log", pg,
                                              wait_for=200 if can_log_in(case) else 503)
        for case in TLS_CASES})
    yield services
    for svc in services.values():
        if not isinstance(svc, BaseException):
            stackctl.stop_process(svc.proc)


def can_log_in(case: str) -> bool:
    return case not in ("disable", "verify-full-other-ca")


@pytest.mark.parametrize("case", TLS_CASES)
def test_against_a_tls_only_database(tls_services, case):
    """Plain TCP and an untrusted server certificate cannot log in (the service runs, /health says down, /token
    answers 503); verification by host name (DNS SAN), encryption without verification and libpq's default
    (prefer: TLS when the server offers it) can. Runs whatever --db-tls says, on a cluster of its own."""
    svc = started_or_fail(tls_services[case])
    try:
        if can_log_in(case):
            assert_token_pair(token(svc.base_url), TTL)
        else:
            assert_unavailable(svc)
            assert svc.proc.poll() is None, "a database it cannot log in to is an outage, not a reason to exit"
    finally:
        stackctl.stop_process(svc.proc)


# --------------------------------------------------------------------------- pool settings (§5)

@pytest.mark.parametrize("case", list(BAD_POOL_SETTINGS))
def test_refuses_bad_pool_settings(refusal, case):
    """One line on stderr naming the variable (for a pair that breaks idle < lifetime, either of them), exit 2."""
    assert_refused_in_one_line(refusal(f"pool-{case}"), *BAD_POOL_SETTINGS[case][1], any_of=True)


def test_pool_settings_at_their_minimums_or_empty_are_accepted(own_process, workdir, open_database):
    """30 and 10 are the smallest values (HikariCP's own minimums); set but empty counts as unset."""
    settings = ({LIFETIME: "30", IDLE: "10"}, {LIFETIME: "", IDLE: ""}, {LIFETIME: "31", IDLE: "30"})
    with open_database() as (url, pg):
        services = start_together({
            i: lambda i=i, env=env: start_service(own_process, url, workdir / f"pool-settings-{i}.log", pg, **env)
            for i, env in enumerate(settings)})
        try:
            for svc in services.values():
                assert_token_pair(token(started_or_fail(svc).base_url), TTL)
        finally:
            for svc in services.values():
                if not isinstance(svc, BaseException):
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
