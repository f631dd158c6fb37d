"""Every Python file of the project (harness, suites, fly script, tools) passes pyflakes' checks as ruff implements
them (rule set F): an undefined name, such as a module a refactoring stopped importing, fails here and not in the
one CI step that happens to reach the line. Only F is selected: this is a check for mistakes, not a style guide."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def ruff(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    try:
        import ruff as _  # noqa: F401  (spec/requirements.txt pins it)
    except ImportError:
        pytest.skip("ruff not installed (make venv installs spec/requirements.txt)")
    return subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--select", "F",
                           "--output-format", "concise", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def python_sources() -> list[str]:
    if shutil.which("git") and (ROOT / ".git").exists():
        listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.py"],
                                cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
        return [f for f in listed if (ROOT / f).is_file()]
    return [str(p.relative_to(ROOT)) for p in ROOT.rglob("*.py")
            if not any(part.startswith(".") or part == "target" for part in p.relative_to(ROOT).parts)]


def test_every_python_file_passes_pyflakes_checks():
    files = python_sources()
    assert len(files) > 50, files
    res = ruff(*files)
    assert res.returncode == 0, res.stdout + res.stderr


def test_the_check_catches_a_name_no_longer_imported(tmp_path):
    (tmp_path / "split.py").write_text("import os\n\n\ndef f():\n    return tempfile.mkdtemp(dir=os.getcwd())\n")
    res = ruff("split.py", cwd=tmp_path)
    assert res.returncode == 1 and "F821" in res.stdout and "tempfile" in res.stdout, res.stdout + res.stderr
