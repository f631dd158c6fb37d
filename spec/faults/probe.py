"""Load and probes for the fault suite: wrk in the background, and a probe
that sends one login at a time and records (time, status, seconds)."""
from __future__ import annotations

import http.client
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "wrk"))

import stackctl  # noqa: E402

JOHN = stackctl.JOHN_LOGIN


class Wrk:
    """wrk with users.lua in the background (the benchmark's own command line); .result() is its WRK_JSON line."""

    def __init__(self, base_url: str, connections: int, seconds: int, scenario: str = "users", timeout_s: int = 5,
                 threads: int = 2):
        self.proc = subprocess.Popen(stackctl.wrk_command(base_url, connections, seconds, threads, scenario, 0, timeout_s),
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.seconds = seconds

    def result(self) -> dict:
        out, err = self.proc.communicate(timeout=self.seconds + 60)
        data = stackctl.read_wrk_json(out)
        if data is None:
            raise AssertionError(f"wrk printed no result (exit {self.proc.returncode}): {err[-300:]}")
        return data


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
