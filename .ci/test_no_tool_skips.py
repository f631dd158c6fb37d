"""The CI plugin that turns a skip for a missing tool into a failure (.ci/pytest_no_tool_skips.py)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CI = Path(__file__).resolve().parent


def run(tmp_path: Path, body: str) -> subprocess.CompletedProcess:
    (tmp_path / "test_x.py").write_text("import pytest\n" + body)
    env = {**os.environ, "PYTHONPATH": str(CI), "PYTEST_ADDOPTS": "-p pytest_no_tool_skips"}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)


def test_a_skip_for_a_missing_tool_fails_the_run(tmp_path):
    res = run(tmp_path, "def test_a():\n    pytest.skip('wrk not installed')\n\ndef test_b():\n    pass\n")
    assert res.returncode == 1, res.stdout
    assert "skipped for a missing tool" in res.stdout and "test_x.py::test_a: " in res.stdout


def test_a_designed_skip_and_a_pass_do_not(tmp_path):
    res = run(tmp_path, "def test_a():\n    pytest.skip('runs with --db-tls')\n\ndef test_b():\n    pass\n")
    assert res.returncode == 0, res.stdout
    assert "missing tool" not in res.stdout


def test_a_real_failure_keeps_its_own_exit_code(tmp_path):
    res = run(tmp_path, "def test_a():\n    pytest.skip('oha not installed')\n\ndef test_b():\n    assert False\n")
    assert res.returncode == 1 and "1 failed" in res.stdout
