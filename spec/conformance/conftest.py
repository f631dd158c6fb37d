"""Fixtures of the black-box conformance suite.

    pytest spec/conformance --stack actix            # build if needed, throw-away PostgreSQL, start, test
    pytest spec/conformance --base-url http://host:8080   # an already-running service (no process tests)

With --stack, a PostgreSQL cluster of its own is created for the run (unless
DATABASE_URL is set, in which case the database-outage tests are skipped:
the suite never stops a database it did not start).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "wrk"))

import stackctl  # noqa: E402

VECTORS = json.loads((ROOT / "spec" / "vectors.json").read_text())
DEV_KEY = next(k for k in VECTORS["keys"] if k["bits"] == 2048)

# Set to values other than the contract's defaults, so a stack that ignores
# its environment is caught.
ISSUER = "https://issuer.conformance.test"
AUDIENCE = "conformance-api"
TTL = 900
START_TIMEOUT = float(os.environ.get("CONFORMANCE_START_TIMEOUT", "120"))


def pytest_addoption(parser):
    parser.addoption("--stack", default=os.environ.get("STACK"), help="stack folder name (actix, akka, spring, zio)")
    parser.addoption("--base-url", default=None, help="test an already-running service instead")


def pytest_report_header(config):
    return f"simple-auth conformance: stack={config.getoption('--stack')} base-url={config.getoption('--base-url')}"


@dataclass
class Service:
    base_url: str
    proc: subprocess.Popen | None = None
    log_path: Path | None = None
    pg: stackctl.ThrowawayPostgres | None = None
    stack: stackctl.Stack | None = None

    def url(self, path: str) -> str:
        return self.base_url + path

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path else ""


@pytest.fixture(scope="session")
def stack(request) -> stackctl.Stack | None:
    name = request.config.getoption("--stack")
    if request.config.getoption("--base-url"):
        return stackctl.Stack.load(name) if name else None
    if not name:
        pytest.exit("give --stack NAME (one of: %s) or --base-url URL" % ", ".join(stackctl.list_stacks()), 2)
    s = stackctl.Stack.load(name)
    s.ensure_built()
    return s


@pytest.fixture(scope="session")
def workdir():
    with tempfile.TemporaryDirectory(prefix="simple-auth-conformance-") as d:
        yield Path(d)


def start_service(stack: stackctl.Stack, database_url: str, log_path: Path, pg=None, wait_for: int = 200,
                  **env_overrides) -> Service:
    port = stackctl.free_port()
    env = stack.contract_env(database_url, port, JWT_ISSUER=ISSUER, JWT_AUDIENCE=AUDIENCE,
                             TOKEN_TTL_SECONDS=str(TTL), **env_overrides)
    proc = stack.spawn(env, log_path)
    svc = Service(f"http://127.0.0.1:{port}", proc, log_path, pg, stack)
    try:
        stackctl.wait_http(svc.url("/health"), proc, START_TIMEOUT, expect=wait_for)
    except stackctl.ToolError as e:
        stackctl.stop_process(proc)
        pytest.fail(f"{stack.name} did not start: {e}\n--- log ---\n{svc.log_text()[-4000:]}")
    return svc


@pytest.fixture(scope="session")
def service(request, stack, workdir) -> Service:
    base_url = request.config.getoption("--base-url")
    if base_url:
        yield Service(base_url.rstrip("/"))
        return
    with stackctl.database() as (url, pg):
        svc = start_service(stack, url, workdir / f"{stack.name}.log", pg)
        yield svc
        stackctl.stop_process(svc.proc)


@pytest.fixture(scope="session")
def own_process(request, stack):
    """Tests that start and stop processes need --stack and a database they own."""
    if request.config.getoption("--base-url") or stack is None:
        pytest.skip("needs --stack (processes are started and stopped)")
    return stack


@pytest.fixture(scope="session")
def http() -> requests.Session:
    s = requests.Session()
    yield s
    s.close()


@pytest.fixture(scope="session")
def jwks(service, http) -> dict:
    r = http.get(service.url("/.well-known/jwks.json"), timeout=10)
    assert r.status_code == 200
    return r.json()


@pytest.fixture(scope="session")
def user_row(service):
    """Reads a user from the database the service uses (None when the suite does not own it)."""
    def read(email: str) -> dict | None:
        if service.pg is None:
            return None
        out = service.pg.psql(f"SELECT id, username, name, email FROM users WHERE email = '{email}'")
        uid, username, name, mail = out.split("|")
        return {"id": uid, "username": username, "name": name, "email": mail}
    return read
