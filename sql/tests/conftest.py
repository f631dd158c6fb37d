"""The throw-away PostgreSQL the sql/ tests run against: schema, seed and sql/grants.sql (stackctl loads them), never
$DATABASE_URL; one cluster per test module."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "wrk"))
import stackctl  # noqa: E402


@pytest.fixture(scope="module")
def db():
    try:
        stackctl.pg_bindir()
    except stackctl.ToolError as e:
        pytest.skip(str(e))
    with stackctl.ThrowawayPostgres() as pg:
        yield pg
