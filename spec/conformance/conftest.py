"""Fixtures of the black-box conformance suite.

    pytest spec/conformance --stack actix            # build if needed, throw-away PostgreSQL, start, test
    pytest spec/conformance --stack actix --db-tls verify-full   # the same against a TLS-only PostgreSQL
    pytest spec/conformance --stack actix --key-type ed25519     # the same with another dev key (and algorithm)
    pytest spec/conformance --base-url http://host:8080   # an already-running service (no process tests)

With --stack, a PostgreSQL cluster of its own is created for the run unless
DATABASE_URL is set; the database-outage tests always use a cluster of their
own, since they stop and start it. In a throw-away cluster the service logs in
as sql/grants.sql's least-privilege role; fixtures read as the owner (pg.url). With --db-tls every cluster the suite
starts accepts TLS only (DATABASE_URL is then not used), and the service gets
sslmode=require or sslmode=verify-full&sslrootcert=<the cluster's CA>.
`-m tls_core` selects the tests whose outcome depends on the database
connection (the short TLS run). --key-type picks the dev key the service signs
with (spec/keys/README.md); `-m signing` selects the tests whose outcome
depends on it (the short run per key type).
"""
from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from pathlib import Path

import pytest
import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))

from service import KEYS, ROOT, Service, start_service  # noqa: E402,F401
import stackctl  # noqa: E402


def pytest_addoption(parser):
    parser.addoption("--stack", default=os.environ.get("STACK"), help="stack folder name (actix, akka, axum, spring, zio)")
    parser.addoption("--base-url", default=None, help="test an already-running service instead")
    parser.addoption("--metrics-url", default=None,
                     help="with --base-url: where that service serves /metrics (its METRICS_PORT), e.g. http://host:9091")
    parser.addoption("--db-tls", default=None, choices=stackctl.TLS_MODES,
                     help="run against TLS-only PostgreSQL clusters with this sslmode")
    parser.addoption("--key-type", default=stackctl.DEFAULT_KEY_TYPE, choices=list(KEYS),
                     help="the dev key the service signs with (its type decides the algorithm)")


def pytest_configure(config):
    config.addinivalue_line("markers", "tls_core: depends on the database connection; the subset CI runs under --db-tls")
    config.addinivalue_line("markers", "signing: depends on the signing key; the subset CI runs per --key-type")
    if config.getoption("--db-tls") and config.getoption("--base-url"):
        raise pytest.UsageError("--db-tls starts the stack on TLS-only clusters of its own; drop --base-url")


def pytest_report_header(config):
    return (f"simple-auth conformance: stack={config.getoption('--stack')} base-url={config.getoption('--base-url')} "
            f"db-tls={config.getoption('--db-tls')} key-type={config.getoption('--key-type')}")


@pytest.fixture(scope="session")
def db_tls(request) -> str | None:
    """The sslmode of --db-tls, or None for plain clusters."""
    return request.config.getoption("--db-tls")


@pytest.fixture(scope="session")
def new_cluster(db_tls):
    """Makes an unstarted throw-away cluster as the run asks for it (TLS-only under --db-tls)."""
    def make() -> stackctl.ThrowawayPostgres:
        return stackctl.ThrowawayPostgres(tls=db_tls is not None, tls_mode=db_tls or "verify-full")
    return make


@pytest.fixture(scope="session")
def open_database(db_tls, new_cluster):
    """The run's database, a context manager yielding (url, cluster or None): DATABASE_URL, else a throw-away
    cluster; under --db-tls always a TLS-only throw-away cluster (DATABASE_URL is not ours to make TLS-only)."""
    @contextlib.contextmanager
    def tls_only():
        with new_cluster() as pg:
            yield pg.service_url, pg
    return tls_only if db_tls else stackctl.database


@pytest.fixture(scope="session")
def key_type(request) -> str:
    return request.config.getoption("--key-type")


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


@pytest.fixture(scope="session")
def service(request, stack, workdir, open_database, key_type) -> Service:
    base_url = request.config.getoption("--base-url")
    if base_url:
        metrics = request.config.getoption("--metrics-url")
        yield Service(base_url.rstrip("/"), metrics_base=metrics.rstrip("/") if metrics else None)
        return
    with open_database() as (url, pg):
        svc = start_service(stack, url, workdir / f"{stack.name}.log", pg, key_type=key_type)
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
def signing_key(request, key_type, jwks) -> dict:
    """vectors.json's entry of the key the service signs with. Against --base-url, the dev key whose kid the
    JWKS serves first; a deployment with a key of its own has none, and the tests that need it skip."""
    if not request.config.getoption("--base-url"):
        return KEYS[key_type]
    first = jwks["keys"][0]["kid"] if jwks.get("keys") else None
    entry = next((k for k in KEYS.values() if k["kid"] == first), None)
    if entry is None:
        pytest.skip("the service signs with a key that is not a dev key (spec/keys)")
    return entry


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
