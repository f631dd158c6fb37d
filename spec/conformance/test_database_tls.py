"""Under --db-tls: the service's own connections to PostgreSQL are encrypted."""
from __future__ import annotations

import pytest

from helpers import JOHN

pytestmark = pytest.mark.tls_core


def test_every_service_connection_uses_tls(http, service, db_tls):
    if db_tls is None:
        pytest.skip("runs with --db-tls")
    if service.pg is None:
        pytest.skip("the suite does not own this service's database")
    for _ in range(3):  # the pool has opened its connections
        assert http.post(service.url("/token"), json=JOHN, timeout=10).status_code == 200
    rows = service.pg.psql(
        "SELECT a.pid, coalesce(a.application_name, ''), s.ssl, coalesce(s.version, '') "
        "FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid) "
        f"WHERE a.usename = '{service.pg.service_user}' AND a.backend_type = 'client backend'")
    connections = [line.split("|") for line in rows.splitlines() if line]
    assert connections, "the service holds no connection to the database"
    plain = [c for c in connections if c[2] != "t"]
    assert not plain, f"connections without TLS (pid, application, ssl, version): {plain}"
    assert all(c[3].startswith("TLSv1.") for c in connections), connections
