"""Graceful shutdown under load: in-flight requests complete, exit 0 within 10 s."""
from __future__ import annotations

import http.client
import json
import os
import signal
import threading
import time
from urllib.parse import urlsplit

from probe import Wrk

IN_FLIGHT = 6


def unread_bytes(server_port: int, client_ports: set[int]) -> dict[int, int]:
    """Per connection, the bytes of ours that the server has not read yet: what our socket has sent but the
    server's kernel not acknowledged (tx_queue), plus what the server's socket holds unread (rx_queue).

    The service runs on this machine, so both ends are in /proc/net/tcp{,6}. A connection whose server end is
    not listed counts as unread (-1)."""
    unacked = {port: 0 for port in client_ports}
    unread = {port: -1 for port in client_ports}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = open(table).read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local_port = int(fields[1].rsplit(":", 1)[1], 16)
            remote_port = int(fields[2].rsplit(":", 1)[1], 16)
            tx_queue, rx_queue = (int(q, 16) for q in fields[4].split(":"))
            if local_port == server_port and remote_port in unread:
                unread[remote_port] = rx_queue
            elif remote_port == server_port and local_port in unacked:
                unacked[local_port] = tx_queue
    return {port: -1 if unread[port] < 0 else unread[port] + unacked[port] for port in client_ports}


def test_sigterm_during_load(pg, launch, figure):
    svc = launch(pg)
    u = urlsplit(svc.base_url)
    # Warm keep-alive connections, so that the requests below are read by the
    # server at once: in flight when SIGTERM arrives, not waiting in a backlog.
    conns = []
    for _ in range(IN_FLIGHT):
        c = http.client.HTTPConnection(u.hostname, u.port, timeout=15)
        c.request("GET", "/health")
        c.getresponse().read()
        conns.append(c)
    load = Wrk(svc.base_url, connections=16, seconds=8)
    time.sleep(2)

    results: list = [None] * IN_FLIGHT
    body = json.dumps({"username": "jane@example.com", "password": "CorrectHorse9!"})  # argon2id: slow on purpose

    done_at: list = [None] * IN_FLIGHT
    sent = [threading.Event() for _ in range(IN_FLIGHT)]

    def login(i):
        try:
            conns[i].request("POST", "/token", body=body, headers={"Content-Type": "application/json"})
            sent[i].set()
            r = conns[i].getresponse()
            payload = r.read()
            results[i] = (r.status, json.loads(payload))
        except Exception as e:  # noqa: BLE001 - recorded and asserted below
            results[i] = (0, f"{type(e).__name__}: {e}")
            sent[i].set()
        done_at[i] = time.monotonic()

    threads = [threading.Thread(target=login, args=(i,)) for i in range(IN_FLIGHT)]
    t_sent = time.monotonic()
    for t in threads:
        t.start()
    # SIGTERM only once the server has read every request off its socket: a graceful shutdown closes a
    # keep-alive connection whose request it has not read yet as idle (Tomcat after 30 ms, akka under wrk after
    # 100 ms had not), and that request was never in flight. The kernel's count of unread bytes says when.
    client_ports = {c.sock.getsockname()[1] for c in conns}
    deadline = time.monotonic() + 5
    while True:
        all_sent = all(e.is_set() for e in sent)
        unread = unread_bytes(u.port, client_ports)
        if all_sent and not any(unread.values()):
            break
        assert time.monotonic() < deadline, f"the server had not read the logins after 5 s (unread bytes {unread})"
        time.sleep(0.002)
    read_after = time.monotonic() - t_sent
    t0 = time.monotonic()
    os.killpg(svc.proc.pid, signal.SIGTERM)
    for t in threads:
        t.join(15)
    try:
        code = svc.proc.wait(timeout=15)
    finally:
        elapsed = time.monotonic() - t0
    result = load.result()

    cut = [r for r in results if r is None or r[0] != 200 or "access_token" not in r[1]]
    # The test means something only if a login was still being served when SIGTERM arrived: six argon2id logins
    # (tens of ms each, at most one per core at a time) cannot all be done by the time the last one is read.
    after = [d for d in done_at if d is not None and d > t0]
    figure("in-flight requests failed", f"{len(cut)}/{IN_FLIGHT}")
    figure("logins answered after SIGTERM", f"{len(after)}/{IN_FLIGHT}")
    figure("all logins read by the server after s", f"{read_after:.3f}")
    figure("exit code", code)
    figure("exit after SIGTERM s", f"{elapsed:.2f}")
    figure("wrk socket errors", result["socket_errors"])
    assert after, "every login was answered before SIGTERM: nothing was in flight, so nothing was shown"
    assert not cut, f"in-flight requests did not complete: {cut}"
    assert code == 0, f"exit code {code}"
    assert elapsed <= 10.5, f"took {elapsed:.1f}s to exit"
    # wrk's logins: served (200), or, sent on a kept-alive connection as the shutdown began, refused with the
    # shutdown's 503 (spec/README.md, "Shutdown"); its other requests end in socket errors. Never another answer:
    # Tomcat, left to itself, answers a request line it reads just as it pauses with 400 and an HTML page.
    assert set(map(int, result["status"])) <= {200, 503}, result["status"]
