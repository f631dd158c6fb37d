"""A flood of unknown-user logins from one client address (spec/README.md §8): every one of them would cost the
dummy argon2id check, so without limits a few hundred connections keep both cores busy and everyone else's
logins queue behind them. With the contract's default limits the flood is answered at once — 429 once its
address has failed LOGIN_IP_MAX_FAILURES times, 503 for argon2id checks beyond MAX_PASSWORD_CHECKS before
that — and another client's logins keep succeeding."""
from __future__ import annotations

import http.client
import json
import threading
import time
from urllib.parse import urlsplit

import pytest
import requests

from probe import JOHN, Wrk

FLOOD_CONNECTIONS = 256
FLOOD_SECONDS = 10
OTHER_ADDRESS = "127.0.0.2"  # all of 127.0.0.0/8 is loopback: another client address on this machine
OTHER_CLIENTS = 2
BOUND_S = 1.0  # the bound on the other client's p99, and on the flood's: answered, not queued
# The contract's defaults for the limits (the suites' own service runs with them out of the way).
DEFAULT_LIMITS = {"LOGIN_MAX_FAILURES": None, "LOGIN_IP_MAX_FAILURES": None, "MAX_PASSWORD_CHECKS": None,
                  "LOGIN_FAILURE_WINDOW_SECONDS": None}


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


# Long for now (make test-faults): actix passes it; the three JVM stacks do not yet — with the 96 MiB heap each
# argon2id check's 19 MiB is promoted and collected in full GCs, too few checks finish for the address to lock within
# the run, and the shed requests' database lookups queue the other client behind them. Issue #23 stays open until
# every stack passes it in CI.
@pytest.mark.long
def test_flood_from_one_address_leaves_other_clients_served(pg, launch, figure):
    svc = launch(pg, **DEFAULT_LIMITS)
    u = urlsplit(svc.base_url)
    halt = threading.Event()
    other: list[tuple[int, float]] = []

    def other_client():
        while not halt.is_set():
            conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10, source_address=(OTHER_ADDRESS, 0))
            t0 = time.monotonic()
            try:
                conn.request("POST", "/token", body=JOHN, headers={"Content-Type": "application/json"})
                r = conn.getresponse()
                r.read()
                other.append((r.status, time.monotonic() - t0))
            except (OSError, http.client.HTTPException):
                other.append((0, time.monotonic() - t0))
            finally:
                conn.close()

    flood = Wrk(svc.base_url, connections=FLOOD_CONNECTIONS, seconds=FLOOD_SECONDS, scenario="unknown")
    clients = [threading.Thread(target=other_client, daemon=True) for _ in range(OTHER_CLIENTS)]
    for t in clients:
        t.start()
    try:
        result = flood.result()
    finally:
        halt.set()
        for t in clients:
            t.join(timeout=15)
    statuses = {int(k): v for k, v in result["status"].items()}
    other_seconds = [s for _, s in other]
    figure("flood answers", json.dumps(statuses, sort_keys=True))
    figure("flood rps, p99 ms", f"{result['rps']:.0f}, {result['latency_ms']['p99']:.1f}")
    figure("other client logins, p99 ms", f"{len(other)}, {p99(other_seconds) * 1000:.1f}" if other else "none")
    assert svc.proc.poll() is None
    assert set(statuses) <= {400, 429, 503}, statuses
    assert statuses.get(429, 0) > statuses.get(400, 0), f"the address is locked, most of the flood is 429: {statuses}"
    assert sum(result["socket_errors"].values()) == 0, result["socket_errors"]
    assert result["latency_ms"]["p99"] < BOUND_S * 1000, f"the flood is answered at once, not queued: {result}"
    assert other, "the other client sent nothing"
    assert {s for s, _ in other} == {200}, sorted({s for s, _ in other})
    assert p99(other_seconds) < BOUND_S, f"the other client's p99 is {p99(other_seconds):.3f} s"
    # The flood's address is locked, so no argon2id check is left to it: the other client's argon2id user logs in,
    # while the flood's address is still refused.
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10, source_address=(OTHER_ADDRESS, 0))
    conn.request("POST", "/token", body=json.dumps({"username": "jane@example.com", "password": "CorrectHorse9!"}),
                 headers={"Content-Type": "application/json"})
    answer = conn.getresponse()
    assert answer.status == 200, answer.read()[:300]
    conn.close()
    assert requests.post(svc.url("/token"), data=JOHN, headers={"Content-Type": "application/json"},
                         timeout=10).status_code == 429
