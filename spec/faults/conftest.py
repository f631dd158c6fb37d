"""Fixtures of the fault suite: real processes, a real PostgreSQL, wrk.

    pytest spec/faults --stack actix                 # the CI part
    pytest spec/faults --stack actix --long          # plus the long parts (make test-faults)

Every test starts the stack itself, on a throw-away PostgreSQL of its own, so
that it may stop the database or the server; the cases that stop neither and
check afterwards that the server still answers (test_hostile's hand-made inputs,
test_timing's comparisons) share one per module. Figures (5xx seen, recovery
time, failed in-flight requests, ...) are printed in a summary per stack.
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "conformance"))
sys.path.insert(0, str(HERE))

from service import start_service  # noqa: E402  (also puts wrk/ on the path)
import stackctl  # noqa: E402

FIGURES: list[tuple[str, str, str]] = []


def pytest_addoption(parser):
    parser.addoption("--stack", default=os.environ.get("STACK"), help="stack folder name")
    parser.addoption("--long", action="store_true", help="also run the long fault tests (make test-faults)")
    parser.addoption("--schemathesis-seed", type=int, default=None,
                     help="seed of the random-seed schemathesis run (to replay one; default: a fresh one)")


def pytest_configure(config):
    config.addinivalue_line("markers", "long: minutes long; only with --long")
    # test_zz_secrets reads its patterns from the conformance suite's test_zz_logs, which carries these markers.
    config.addinivalue_line("markers", "tls_core: the conformance suite's subset under --db-tls")
    config.addinivalue_line("markers", "signing: the conformance suite's subset per --key-type")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--long"):
        return
    skip = pytest.mark.skip(reason="long; run with --long (make test-faults)")
    for item in items:
        if "long" in item.keywords:
            item.add_marker(skip)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if FIGURES:
        stack = config.getoption("--stack")
        terminalreporter.section(f"fault figures: {stack}")
        for test, name, value in FIGURES:
            terminalreporter.write_line(f"{stack:<8} {test:<28} {name:<34} {value}")


@pytest.fixture
def figure(request):
    """Records a figure for the summary: figure('recovery s', 0.4)."""
    def record(name: str, value) -> None:
        FIGURES.append((request.node.name.removeprefix("test_")[:28], name, str(value)))
    return record


@pytest.fixture(scope="session")
def stack(request) -> stackctl.Stack:
    name = request.config.getoption("--stack")
    if not name:
        pytest.exit("give --stack NAME (one of: %s)" % ", ".join(stackctl.list_stacks()), 2)
    s = stackctl.Stack.load(name)
    s.ensure_built()
    return s


@pytest.fixture(scope="session")
def workdir():
    with tempfile.TemporaryDirectory(prefix="simple-auth-faults-") as d:
        yield Path(d)


@pytest.fixture
def pg():
    with stackctl.ThrowawayPostgres() as db:
        yield db


@pytest.fixture(scope="module")
def svc(stack, workdir, request):
    """One service on a cluster of its own for a module's tests that neither stop it nor its database (test_hostile's
    hand-made inputs, test_timing's comparisons): each checks afterwards what it needs (the server still runs and
    logs John in; both kinds of login sampled alike), and a process start per test buys nothing but its start-up."""
    with stackctl.ThrowawayPostgres() as db:
        s = start_service(stack, db.service_url, workdir / f"{request.module.__name__}.log", db)
        try:
            yield s
        finally:
            stackctl.stop_process(s.proc)


@pytest.fixture
def launch(stack, workdir, request):
    """Starts the stack on the given database with env overrides; stops it at the end."""
    started = []

    def go(pg, **env):
        svc = start_service(stack, pg.service_url, workdir / f"{request.node.name}-{len(started)}.log", pg, **env)
        started.append(svc)
        return svc
    yield go
    for svc in started:
        stackctl.stop_process(svc.proc)
