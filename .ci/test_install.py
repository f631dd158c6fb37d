""".ci/install --check with tools taken away: .venv/bin/python -m pytest .ci"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
INSTALL = ROOT / ".ci" / "install"
# What the script itself runs, plus python3 (a probe).
SCRIPT_TOOLS = ("bash", "sed", "grep", "dirname", "id", "python3", "apt-cache")
# Each apt package of the list and the command that stands for it.
PROBES = {"wrk": "wrk", "postgresql-client": "psql", "maven": "mvn", "openssl": "openssl", "cmake": "cmake",
          "build-essential": "cc", "curl": "curl", "pkg-config": "pkg-config"}


def bin_dir(tmp_path: Path, without: set[str]) -> Path:
    d = tmp_path / "bin"
    d.mkdir()
    for tool in (*SCRIPT_TOOLS, "make", *PROBES.values(), "cargo"):
        found = shutil.which(tool) or (str(Path.home() / ".cargo/bin/cargo") if tool == "cargo" else None)
        if tool not in without and found and Path(found).exists():
            (d / tool).symlink_to(os.path.realpath(found) if tool != "cargo" else found)
    return d


def check(path: Path, home: Path, **env) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(INSTALL), "--check"], env={"PATH": str(path), "HOME": str(home), **env},
                          capture_output=True, text=True, timeout=60, cwd="/")


def test_check_passes_on_this_machine():
    """make test runs the check before the tool tests, so here everything is present."""
    res = subprocess.run(["bash", str(INSTALL), "--check"], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stderr == ""


@pytest.mark.parametrize("package", sorted(PROBES))
def test_check_names_the_missing_package_and_the_command(tmp_path, package):
    path = bin_dir(tmp_path, {PROBES[package]})
    res = check(path, Path.home())
    assert res.returncode == 1
    lines = res.stderr.strip().splitlines()
    assert f"install: missing: {package} (Debian package)" in lines
    assert lines[-1] == "install: run: sudo bash .ci/install"
    assert not any(f"missing: {p} " in res.stderr for p in PROBES if p != package), res.stderr


def test_check_without_rust_and_jdk(tmp_path):
    path = bin_dir(tmp_path, {"cargo"})
    empty_home = tmp_path / "home"
    empty_home.mkdir()
    res = check(path, empty_home)
    assert res.returncode == 1 and "install: missing: Rust (cargo) by rustup" in res.stderr
    # A JAVA_HOME that is no JDK 21+ is passed over for the machine's JDKs, found without it.
    res = check(path, Path.home(), JAVA_HOME=str(tmp_path))
    assert "JDK" not in res.stderr


def test_env_prints_java_home_and_cargo():
    res = subprocess.run(["bash", str(INSTALL), "--env"], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0
    assert "export JAVA_HOME=" in res.stdout and "export PATH=" in res.stdout


def test_unknown_option():
    res = subprocess.run(["bash", str(INSTALL), "--frobnicate"], capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and "unknown option" in res.stderr


def test_one_list():
    """.ci/run installs through .ci/install; the Makefile's test and bench check through it."""
    run = (ROOT / ".ci" / "run").read_text()
    assert "bash .ci/install" in run and "apt-get" not in run
    make = (ROOT / "Makefile").read_text()
    assert "bash .ci/install --check" in make
    for target in ("test:", "bench:"):
        line = next(l for l in make.splitlines() if l.startswith(target))
        assert "deps" in line.split(":", 1)[1], line
    text = INSTALL.read_text()
    for pkg in ("wrk", "postgresql", "postgresql-client", "maven", "openssl", "cmake", "build-essential", "curl",
                "python3-venv", "pkg-config", "libssl-dev"):
        assert f" {pkg}" in text.split("APT_PACKAGES=(", 1)[1].split(")", 1)[0] or text.split("APT_PACKAGES=(", 1)[1].startswith(pkg)
    assert "install_loadgen()" in text and "wrk/install-loadgen.sh" in text
