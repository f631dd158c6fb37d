"""The docker target's static parts: the compose file against the stacks, bench's --target flag,
the cgroup reader. No Docker engine needed (wrk/docker-ci.sh is the end-to-end test)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import bench  # noqa: E402
import docker  # noqa: E402  (wrk/docker.py, not the Docker SDK)
import stackctl  # noqa: E402

ROOT = stackctl.ROOT
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
LIMITS = yaml.safe_load((ROOT / "docker-compose.fly.yml").read_text())


def test_the_plumbing_module_is_ours():
    assert Path(docker.__file__).resolve() == ROOT / "wrk" / "docker.py"


def test_every_stack_has_a_service_on_its_port():
    for name in stackctl.list_stacks():
        svc = COMPOSE["services"][name]
        assert svc["ports"] == [f"${{BIND_ADDR:-0.0.0.0}}:{docker.PORTS[name]}:8080"]
        assert svc["build"]["context"] == f"./{name}"
        assert (ROOT / name / "Dockerfile").is_file()
        assert svc["depends_on"]["postgres"]["condition"] == "service_healthy"
        assert svc["environment"]["JWT_PRIVATE_KEY_FILE"] == "/run/secrets/jwt-private-key.pem"
        assert svc["environment"]["DATABASE_URL"] == "postgres://auth:auth@postgres:5432/auth"


def test_no_limits_by_default_and_fly_sized_in_the_override():
    for name in docker.PORTS:
        assert "cpus" not in COMPOSE["services"][name] and "mem_limit" not in COMPOSE["services"][name]
        assert LIMITS["services"][name]["cpus"] == "${STACK_CPUS:-1}"
        assert LIMITS["services"][name]["mem_limit"] == "${STACK_MEMORY:-256m}"


def test_postgres_loads_sql_at_first_start():
    vols = COMPOSE["services"]["postgres"]["volumes"]
    assert vols == ["./sql/schema.sql:/docker-entrypoint-initdb.d/01-schema.sql:ro",
                    "./sql/seed.sql:/docker-entrypoint-initdb.d/02-seed.sql:ro"]
    assert "healthcheck" in COMPOSE["services"]["postgres"]


def test_bench_target_flag():
    assert bench.parse_args(["--stacks", "actix"]).target == "local"
    s = bench.parse_args(["--stacks", "actix", "--target", "docker", "--profile", "fly-shared-1x"])
    assert s.target == "docker" and s.limits.cpus == 1.0 and s.limits.memory_mb == 256
    with pytest.raises(SystemExit):
        bench.parse_args(["--target", "docker", "--url", "a=http://x"])


def test_compose_env_limits(tmp_path):
    env = docker.compose_env(tmp_path / "k.pem", (1.0, 256))
    assert env["STACK_CPUS"] == "1.0" and env["STACK_MEMORY"] == "256m"
    assert env["DOCKER_TARGET"] == "runtime-prebuilt" and env["BIND_ADDR"] == "127.0.0.1"


def test_cgroup_reader_without_a_container():
    cg = docker.ContainerCgroup("0" * 64)
    assert cg.cpu_seconds() is None and cg.memory() == {}
