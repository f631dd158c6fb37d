"""Database outage under load, and pool exhaustion."""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import pytest
import requests

import stackctl
from probe import Probe, Wrk
from service import start_service

POOL = 10


def server_connections(pg, pool: int, settle: float = 5.0) -> int:
    """Client connections of the service; connections being closed get `settle` seconds to go."""
    deadline = time.monotonic() + settle
    while True:
        n = pg.client_connections()
        if n <= pool or time.monotonic() > deadline:
            return n
        time.sleep(0.2)
# The contract's bound for an answer while the database is away: the acquire
# timeout (1 s) plus 1 s. Not a performance figure: past it, a request hangs.
ANSWER_BOUND = 2.0
SLACK = 0.5  # the probe's own scheduling on a loaded 2-core machine


def test_outage_under_load(pg, launch, figure):
    svc = launch(pg)
    load = Wrk(svc.base_url, connections=32, seconds=16)
    probe = Probe(svc.base_url).start()
    time.sleep(4)
    pg.pg_stop("fast")
    t_down = probe.now()
    time.sleep(5)
    t_starting = probe.now()
    pg.pg_start()
    t_up = probe.now()  # pg_ctl -w returns once the server accepts connections
    result = load.result()
    time.sleep(1)
    samples = probe.stop()

    assert svc.proc.poll() is None, "the process must survive the outage"
    failures = [s for s in samples if s.status == 0]
    assert not failures, f"connection-level failures: {failures[:3]}"
    five = [s for s in samples if s.status >= 500 and s.status != 503]
    assert not five, f"5xx other than 503: {[(s.status, s.body[:100]) for s in five[:3]]}"
    assert set(map(int, result["status"])) <= {200, 503}, result["status"]
    assert result["socket_errors"]["timeout"] == 0, result["socket_errors"]

    down = [s for s in samples if t_down + 0.5 <= s.t and s.t + s.seconds <= t_starting]
    assert down and all(s.status == 503 for s in down), [(round(s.t - t_down, 2), s.status) for s in down if s.status != 503]
    assert all(s.retry_after == "1" for s in down)
    slowest = max(s.seconds for s in down)
    assert slowest <= ANSWER_BOUND + SLACK, f"a 503 took {slowest:.2f}s"

    after = [s for s in samples if s.t >= t_up]
    last_bad = max((s.t for s in after if s.status != 200), default=t_up)
    recovery = last_bad - t_up
    assert after[-1].status == 200
    assert recovery <= 2.0 + SLACK, f"success was back to 100 % only {recovery:.2f}s after the database"

    connections = server_connections(pg, POOL)
    assert connections <= POOL, f"{connections} server connections for a pool of {POOL}"
    figure("probe 503s while down", len(down))
    figure("5xx other than 503", len(five))
    figure("slowest 503 s", f"{slowest:.2f}")
    figure("recovery s", f"{recovery:.2f}")
    figure("wrk statuses", result["status"])
    figure("server connections after", connections)


def test_pool_exhaustion_answers_or_sheds(pg, launch, figure):
    svc = launch(pg, DB_POOL_SIZE="1")
    result = Wrk(svc.base_url, connections=64, seconds=8, timeout_s=5).result()
    assert result["requests"] > 0
    assert set(map(int, result["status"])) <= {200, 503}, result["status"]
    assert result["socket_errors"]["timeout"] == 0, "a request hung past wrk's 5 s timeout"
    assert result["status"].get("200", 0) > 0
    connections = server_connections(pg, 1)
    assert connections <= 1, f"{connections} server connections for a pool of 1"
    figure("statuses (pool of 1, c=64)", result["status"])
    figure("max latency ms", result["latency_ms"]["max"])
    assert requests.get(svc.base_url + "/health", timeout=5).status_code == 200
    # The database was up throughout: a shed request is overload, and the log says so, not that the database is gone.
    log = svc.log_text().lower()
    assert "database unavailable" not in log, "a busy pool logged as a database outage"
    if result["status"].get("503"):
        assert "all busy" in log, "503s for a busy pool without the log line that says so"


# Connection lifetime (spec/README.md §5, issue 41): the contract's smallest values, so the test fits in a minute.
LIFETIME_S = 30
IDLE_TIMEOUT_S = 10
# Every backend open when the trickle starts must have ended this long after: the lifetime (counted from before the
# trickle started) plus room for a loaded machine. Not a performance figure: a pool without a lifetime never ends the
# connection the trickle keeps busy.
RENEWED_WITHIN_S = 50


@dataclass
class Renewal:
    svc: object = None
    pg: stackctl.ThrowawayPostgres | None = None
    probe: Probe | None = None
    first: set[int] = field(default_factory=set)
    first_login: int = 0
    failed: str = ""   # why it did not start: the test reports it (the module's other tests do not need it)


@pytest.fixture(scope="module", autouse=True)
def renewal(stack, workdir):
    """The lifetime test's service and its trickle, started with the module: the lifetime runs out while the
    module's other tests run, each on a cluster of its own, and the test at the end waits only for what is left of
    it. The trickle (2 logins/s) is light beside their load."""
    with stackctl.ThrowawayPostgres() as pg:
        run = Renewal(pg=pg)
        try:
            run.svc = start_service(stack, pg.service_url, workdir / "renewal.log", pg,
                                    DB_MAX_LIFETIME_SECONDS=str(LIFETIME_S), DB_IDLE_TIMEOUT_SECONDS=str(IDLE_TIMEOUT_S))
            run.first_login = requests.post(run.svc.base_url + "/token", timeout=10,
                                            json={"username": "john@example.com", "password": "TopSecret0!"}).status_code
            run.probe = Probe(run.svc.base_url, interval=0.5).start()
            run.first = set(pg.service_backends())
        except (Exception, pytest.fail.Exception) as e:
            run.failed = f"{type(e).__name__}: {e}"
        try:
            yield run
        finally:
            if run.probe:
                run.probe.stop()
            if run.svc:
                stackctl.stop_process(run.svc.proc)


def test_connections_are_renewed_after_their_lifetime(renewal, figure):
    """With DB_MAX_LIFETIME_SECONDS=30 and DB_IDLE_TIMEOUT_SECONDS=10 and a trickle of logins (2/s, one at a time, so
    at least one connection is never idle and only its lifetime can end it), every backend the service had open when
    the trickle started ends, and every login meanwhile succeeds: a connection is closed when returned or found idle,
    never in the middle of a query. The service's backends are those of its role in the throw-away cluster
    (sql/grants.sql's simple_auth: nothing else logs in as it). The trickle started with the module (the fixture)."""
    assert not renewal.failed, f"the service did not start: {renewal.failed}"
    assert renewal.first_login == 200, f"first login: {renewal.first_login}"
    svc, pg, probe, first = renewal.svc, renewal.pg, renewal.probe, renewal.first
    assert first, "the service holds no connection after a login"
    remaining = first & set(pg.service_backends())
    while remaining and probe.now() < RENEWED_WITHIN_S:
        time.sleep(1)
        remaining &= set(pg.service_backends())
    renewed_by = probe.now()
    time.sleep(1.5)  # a few logins on the renewed connections
    samples = probe.stop()

    assert svc.proc.poll() is None, "the process must keep running"
    assert not remaining, (f"backends {sorted(remaining)} of the {len(first)} open at the start were still open "
                           f"{RENEWED_WITHIN_S} s later (DB_MAX_LIFETIME_SECONDS={LIFETIME_S})")
    bad = [(round(s.t, 1), s.status, s.body[:120] or s.error) for s in samples if s.status != 200]
    assert not bad, f"logins that failed while connections were renewed: {bad[:5]}"
    assert samples and samples[-1].t > renewed_by, "logins went on after the renewal"
    assert requests.get(svc.base_url + "/health", timeout=5).status_code == 200
    figure("backends at start / now", f"{len(first)} / {len(pg.service_backends())}")
    figure("all renewed when seen at s", f"{renewed_by:.1f}")
    figure("logins (all 200)", len(samples))
