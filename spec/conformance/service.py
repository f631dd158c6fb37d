"""Starting a stack for a test: the pieces the conformance and fault suites share."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "wrk"))

import stackctl  # noqa: E402

VECTORS = json.loads((ROOT / "spec" / "vectors.json").read_text())
# The dev signing keys by type (rsa-2048, rsa-4096, p-256, ed25519): vectors.json's entry of each.
KEYS = {k["type"]: k for k in VECTORS["keys"]}
DEV_KEY = KEYS[stackctl.DEFAULT_KEY_TYPE]

# Values other than the contract's defaults, so a stack that ignores its environment is caught
# (stackctl.CONFORMANCE_ENV: the Docker run uses the same).
ISSUER = stackctl.CONFORMANCE_ENV["JWT_ISSUER"]
AUDIENCE = stackctl.CONFORMANCE_ENV["JWT_AUDIENCE"]
TTL = int(stackctl.CONFORMANCE_ENV["TOKEN_TTL_SECONDS"])
START_TIMEOUT = float(os.environ.get("CONFORMANCE_START_TIMEOUT", "120"))


@dataclass
class Service:
    base_url: str
    proc: subprocess.Popen | None = None
    log_path: Path | None = None
    pg: stackctl.ThrowawayPostgres | None = None
    stack: stackctl.Stack | None = None
    # The METRICS_PORT listener (spec/README.md §3), or None when not known (--base-url without --metrics-url).
    metrics_base: str | None = None

    def url(self, path: str) -> str:
        return self.base_url + path

    def metrics_url(self, path: str = "/metrics") -> str:
        if self.metrics_base is None:
            pytest.skip("the metrics port of this service is not known (give --metrics-url)")
        return self.metrics_base + path

    def metrics(self, timeout: float = 10) -> str:
        """GET /metrics on the metrics port: the text, after checking the status."""
        r = requests.get(self.metrics_url(), timeout=timeout)
        assert r.status_code == 200, (r.status_code, r.text[:300])
        return r.text

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path else ""


def start_service(stack: stackctl.Stack, database_url: str, log_path: Path, pg=None, wait_for: int = 200,
                  key_type: str = stackctl.DEFAULT_KEY_TYPE, **env_overrides) -> Service:
    port = stackctl.free_port()
    env = stack.contract_env(database_url, port, key_type,
                             **{**stackctl.CONFORMANCE_ENV, **env_overrides})
    proc = stack.spawn(env, log_path)
    mport = stackctl.metrics_port(env)
    svc = Service(f"http://127.0.0.1:{port}", proc, log_path, pg, stack,
                  f"http://127.0.0.1:{mport}" if mport else None)
    try:
        stackctl.wait_http(svc.url("/health"), proc, START_TIMEOUT, expect=wait_for)
    except stackctl.ToolError as e:
        stackctl.stop_process(proc)
        pytest.fail(f"{stack.name} did not start: {e}\n--- log ---\n{svc.log_text()[-4000:]}")
    return svc
