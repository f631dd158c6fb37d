"""Load and probes for the fault suite: wrk in the background, and a probe
that sends one login at a time and records (time, status, seconds)."""
from __future__ import annotations

import http.client
import json
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

WRK = Path(__file__).resolve().parents[2] / "wrk"
JOHN = b'{"username":"john@example.com","password":"TopSecret0!"}'


class Wrk:
    """wrk with users.lua in the background; .result() is its WRK_JSON line."""

    def __init__(self, base_url: str, connections: int, seconds: int, scenario: str = "users", timeout_s: int = 5):
        self.proc = subprocess.Popen(
            ["wrk", "-t", "2", "-c", str(connections), "-d", f"{seconds}s", "--latency", "--timeout", f"{timeout_s}s",
             "-s", str(WRK / "users.lua"), base_url + "/token", "--", scenario, "0"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.seconds = seconds

    def result(self) -> dict:
        out, err = self.proc.communicate(timeout=self.seconds + 60)
        line = next((ln for ln in out.splitlines() if ln.startswith("WRK_JSON ")), None)
        if line is None:
            raise AssertionError(f"wrk printed no result (exit {self.proc.returncode}): {err[-300:]}")
        return json.loads(line[len("WRK_JSON "):])


@dataclass
class Sample:
    t: float          # seconds since the probe started, when the request was sent
    status: int       # HTTP status, or 0 for a connection-level failure
    seconds: float    # time to the full response (or the failure)
    retry_after: str | None = None
    body: bytes = b""
    error: str = ""


@dataclass
class Probe:
    """One login at a time, every `interval` seconds, each on a new connection."""
    base_url: str
    interval: float = 0.05
    timeout: float = 10.0
    samples: list[Sample] = field(default_factory=list)

    def __post_init__(self):
        self._halt = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.t0 = time.monotonic()

    def start(self) -> "Probe":
        self._thread.start()
        return self

    def now(self) -> float:
        return time.monotonic() - self.t0

    def _run(self) -> None:
        u = urlsplit(self.base_url)
        while not self._halt.is_set():
            t = self.now()
            conn = http.client.HTTPConnection(u.hostname, u.port, timeout=self.timeout)
            try:
                conn.request("POST", "/token", body=JOHN, headers={"Content-Type": "application/json"})
                r = conn.getresponse()
                body = r.read()
                self.samples.append(Sample(t, r.status, self.now() - t, r.getheader("Retry-After"), body))
            except (OSError, http.client.HTTPException) as e:
                self.samples.append(Sample(t, 0, self.now() - t, error=f"{type(e).__name__}: {e}"))
            finally:
                conn.close()
            self._halt.wait(self.interval)

    def stop(self) -> list[Sample]:
        self._halt.set()
        self._thread.join(self.timeout + 2)
        return self.samples
