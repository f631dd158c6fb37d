"""A flood of unknown-user logins from one client address (spec/README.md §8): every one of them would cost the
dummy argon2id check, so without limits a few hundred connections keep both cores busy and everyone else's
logins queue behind them. With the contract's default limits the flood is answered at once — 503 for argon2id checks
beyond MAX_PASSWORD_CHECKS, each shed grant a failure of its address, then 429 once the address has failed
LOGIN_IP_MAX_FAILURES times — and another client's logins keep succeeding.

The service meets two floods. The first arrives right after it started: a JVM stack then compiles its rejection
paths under the flood, and its other clients wait for that (its figures are reported, not held to the bound; start-up
is the benchmark's measure). The window then passes, the address is unlocked, and the second flood meets a service in
operation: that one is held to the issue's bounds."""
from __future__ import annotations

import http.client
import json
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

import pytest
import requests

from probe import JOHN, Wrk

JANE = json.dumps({"username": "jane@example.com", "password": "CorrectHorse9!"})
FLOOD_CONNECTIONS = 256
FIRST_FLOOD_SECONDS = 15
FLOOD_SECONDS = 10
OTHER_ADDRESS = "127.0.0.2"  # all of 127.0.0.0/8 is loopback: another client address on this machine
OTHER_CLIENTS = 2
BOUND_S = 1.0  # the bound on the other client's p99
# The flood answered at once, not queued behind password checks: its median answer. 256 connections that send again
# as soon as they are answered put the median near 256 ÷ the 429 rate (about 0.1 s at 2,500/s, a figure of the
# machine), while a flood queued behind checks (tens per second on two cores) waits seconds per answer; the bound
# lies between the two, an order of magnitude from each. Its tail is the server saturated by those connections; the
# JVM stacks answer a few of them late (up to seconds), which says how fairly they serve connections under overload,
# not whether anything waited for a check. It is reported (figure) and bounded by wrk's 5 s timeout (socket errors).
FLOOD_P50_MS = 1000
# Answers past wrk's 5 s timeout: a flood queued behind checks times out by the thousand; a saturated JVM stack
# answers a few of its 256 connections that late on a slow machine (akka: 27 of about 40,000 in one CI run here).
FLOOD_TIMEOUT_SHARE = 0.005
# The contract's defaults for the limits (the suites' own service runs with them out of the way), but for a window
# short enough that the first flood's lock has passed when the second begins.
WINDOW_S = 20
LIMITS = {"LOGIN_MAX_FAILURES": None, "LOGIN_IP_MAX_FAILURES": None, "MAX_PASSWORD_CHECKS": None,
          "LOGIN_FAILURE_WINDOW_SECONDS": str(WINDOW_S)}


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


@dataclass
class Flood:
    result: dict                       # wrk's WRK_JSON line
    other: list[tuple[int, float]]     # the other client's logins: (status, seconds)

    @property
    def statuses(self) -> dict[int, int]:
        return {int(k): v for k, v in self.result["status"].items()}

    @property
    def other_p99(self) -> float:
        return p99([s for _, s in self.other])

    def report(self, figure, label: str) -> None:
        lat = self.result["latency_ms"]
        figure(f"{label}: flood answers", json.dumps(self.statuses, sort_keys=True))
        figure(f"{label}: flood rps, p50 / p99 ms", f"{self.result['rps']:.0f}, {lat['p50']:.1f} / {lat['p99']:.1f}")
        figure(f"{label}: other client logins, p99 ms",
               f"{len(self.other)}, {self.other_p99 * 1000:.1f}" if self.other else "none")


def login_from(svc, address: str, body: str) -> int:
    """POST /token on a new connection whose source address is `address`; the status, 0 if nothing answered."""
    u = urlsplit(svc.base_url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10, source_address=(address, 0))
    try:
        conn.request("POST", "/token", body=body, headers={"Content-Type": "application/json"})
        r = conn.getresponse()
        r.read()
        return r.status
    except (OSError, http.client.HTTPException):
        return 0
    finally:
        conn.close()


def flood(svc, seconds: int) -> Flood:
    """wrk's 256 connections of unknown-user logins from 127.0.0.1 while two clients at another address log in (a
    new connection each, as a browser's or an app's first request would). wrk runs one thread: on these two cores a
    second one takes the server's CPU, which a remote attacker's would not, and one alone still keeps every stack
    saturated (the flood's rate barely changed, the JVM stacks' other client waited 1-2x longer with two)."""
    halt = threading.Event()
    other: list[tuple[int, float]] = []

    def other_client():
        while not halt.is_set():
            t0 = time.monotonic()
            status = login_from(svc, OTHER_ADDRESS, JOHN)
            other.append((status, time.monotonic() - t0))

    wrk = Wrk(svc.base_url, connections=FLOOD_CONNECTIONS, seconds=seconds, scenario="unknown", threads=1)
    clients = [threading.Thread(target=other_client, daemon=True) for _ in range(OTHER_CLIENTS)]
    for t in clients:
        t.start()
    try:
        result = wrk.result()
    finally:
        halt.set()
        for t in clients:
            t.join(timeout=15)
    return Flood(result, other)


def flood_in_operation(pg, launch, figure) -> tuple[object, Flood]:
    """Starts the service, floods it once just started (reported, not asserted), waits for the window to pass, and
    floods it again: the second flood, met in operation, is the one the tests hold to their bounds."""
    svc = launch(pg, **LIMITS)
    first = flood(svc, FIRST_FLOOD_SECONDS)
    first.report(figure, "just started")
    assert svc.proc.poll() is None
    assert first.statuses.get(429, 0) > first.statuses.get(400, 0), first.statuses
    # The window passes: the flood's address logs in again (John's legacy hash, no argon2id check).
    deadline = time.monotonic() + WINDOW_S + 10
    while login_from(svc, "127.0.0.1", JOHN) == 429:
        assert time.monotonic() < deadline, "the address is still locked after its window"
        time.sleep(0.5)
    second = flood(svc, FLOOD_SECONDS)
    second.report(figure, "in operation")
    assert svc.proc.poll() is None
    return svc, second


def test_flood_from_one_address_is_locked_and_answered_at_once(pg, launch, figure):
    """The limits under a flood: the address is locked within the flood's first requests (its sheds count), every
    answer is 429 or a shed check's 503 but for the few checks admitted before, none waits (median, wrk's timeout),
    another client's logins all succeed, and when the flood is over its address is still refused while the other
    client's argon2id user logs in (no check is left to the flood)."""
    svc, second = flood_in_operation(pg, launch, figure)
    result, statuses = second.result, second.statuses
    assert set(statuses) <= {400, 429, 503}, statuses
    assert statuses.get(429, 0) > statuses.get(400, 0), f"the address is locked, most of the flood is 429: {statuses}"
    errors = result["socket_errors"]
    assert errors["connect"] + errors["read"] + errors["write"] == 0, errors
    assert errors["timeout"] <= FLOOD_TIMEOUT_SHARE * result["requests"], f"answers past wrk's 5 s timeout: {result}"
    assert result["latency_ms"]["p50"] < FLOOD_P50_MS, f"the flood is answered at once, not queued: {result}"
    assert second.other, "the other client sent nothing"
    assert {s for s, _ in second.other} == {200}, sorted({s for s, _ in second.other})
    assert login_from(svc, OTHER_ADDRESS, JANE) == 200
    assert requests.post(svc.url("/token"), data=JOHN, headers={"Content-Type": "application/json"},
                         timeout=10).status_code == 429


# Long (make test-faults): the latency bound, which is the stack's own behaviour on two cores saturated by the
# flood's 429s — a timing, so not in CI. Every stack meets it; Spring did not while it ran on virtual threads (its
# other client's p99 0.4-3.8 s, run to run: JDK 25's scheduler resumed its virtual threads late under the flood), and
# does on a sized pool of platform threads with bodies read without one (docs/reliability.md).
@pytest.mark.long
def test_flood_from_one_address_leaves_other_clients_logins_under_a_second(pg, launch, figure):
    _, second = flood_in_operation(pg, launch, figure)
    assert {s for s, _ in second.other} == {200}, sorted({s for s, _ in second.other})
    assert second.other_p99 < BOUND_S, f"the other client's p99 is {second.other_p99:.3f} s"
