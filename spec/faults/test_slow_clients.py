"""Idle keep-alive connections and slowly-sent headers do not starve normal traffic."""
from __future__ import annotations

import socket
import threading
import time
from urllib.parse import urlsplit

import pytest

from probe import Wrk

IDLE = 300
SLOW = 30


@pytest.mark.long  # a latency ratio: meaningful on a quiet machine, noise on a busy CI box
def test_idle_and_slow_clients_do_not_starve_traffic(pg, launch, figure):
    svc = launch(pg)
    u = urlsplit(svc.base_url)
    Wrk(svc.base_url, connections=8, seconds=3).result()  # warm-up
    baseline = Wrk(svc.base_url, connections=8, seconds=6).result()

    idle = []
    for _ in range(IDLE):
        s = socket.create_connection((u.hostname, u.port), timeout=10)
        idle.append(s)
    halt = threading.Event()

    def slowloris():
        try:
            with socket.create_connection((u.hostname, u.port), timeout=30) as s:
                s.sendall(b"POST /token HTTP/1.1\r\nHost: x\r\n")
                i = 0
                while not halt.is_set():
                    s.sendall(b"X-Slow-%d: a\r\n" % i)
                    i += 1
                    halt.wait(0.5)
        except OSError:
            pass  # the server may close a slow client: that is allowed

    slow = [threading.Thread(target=slowloris, daemon=True) for _ in range(SLOW)]
    for t in slow:
        t.start()
    time.sleep(1)
    try:
        during = Wrk(svc.base_url, connections=8, seconds=6).result()
    finally:
        halt.set()
        for s in idle:
            s.close()
    ratio = during["latency_ms"]["p99"] / max(baseline["latency_ms"]["p99"], 0.001)
    figure("baseline p99 ms", baseline["latency_ms"]["p99"])
    figure("p99 ms with idle+slow clients", during["latency_ms"]["p99"])
    figure("p99 ratio", f"{ratio:.2f}")
    figure("rps baseline/during", f"{baseline['rps']:.0f}/{during['rps']:.0f}")
    assert svc.proc.poll() is None
    assert set(map(int, during["status"])) == {200}, during["status"]
    assert sum(during["socket_errors"].values()) == 0, during["socket_errors"]
    # The bound; 5 ms of absolute slack keeps a sub-millisecond baseline from making it noise.
    assert during["latency_ms"]["p99"] <= 2 * baseline["latency_ms"]["p99"] + 5, f"p99 ratio {ratio:.2f}"
