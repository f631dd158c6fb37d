"""A pytest plugin for CI (.ci/run loads it with PYTEST_ADDOPTS=-p pytest_no_tool_skips): a test skipped because a
tool is missing fails the run. On a developer's machine such a skip is a hint (install the tool); in CI, where
.ci/install put every tool in place, it means a test that should have run did not, and a green run would hide it.
Skips that are part of a suite's design (a subset that needs --db-tls, a check for services the suite did not
start) keep passing: only reasons that say a tool is missing count."""
from __future__ import annotations

import re

MISSING_TOOL = re.compile(r"not installed|not found|no such (file|command)", re.IGNORECASE)
_SKIPS: list[str] = []


def _reason(report) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)



def pytest_runtest_logreport(report):
    if report.skipped and not hasattr(report, "wasxfail"):
        reason = _reason(report)
        if MISSING_TOOL.search(reason):
            _SKIPS.append(f"{report.nodeid}: {reason}")


def pytest_sessionfinish(session, exitstatus):
    if _SKIPS and exitstatus == 0:
        session.exitstatus = 1


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if _SKIPS:
        terminalreporter.section("skipped for a missing tool (fails the run in CI)")
        for line in _SKIPS:
            terminalreporter.write_line(line)
