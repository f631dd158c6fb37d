"""The docker target's static parts: the compose file against the stacks, bench's --target flag,
the cgroup reader. No Docker engine needed (wrk/docker-ci.sh is the end-to-end test)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import bench  # noqa: E402
import containers  # noqa: E402
import stackctl  # noqa: E402
from harness import cli  # noqa: E402

ROOT = stackctl.ROOT
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
LIMITS = yaml.safe_load((ROOT / "docker-compose.fly.yml").read_text())


def test_every_stack_has_a_service_on_its_port():
    for name in stackctl.list_stacks():
        svc = COMPOSE["services"][name]
        assert svc["ports"] == [f"${{BIND_ADDR:-127.0.0.1}}:{containers.PORTS[name]}:8080"]
        # The repository root is every image's context (the stacks share rust-core/ and scala-core/).
        assert svc["build"] == {"context": ".", "dockerfile": f"{name}/Dockerfile",
                                "target": "${DOCKER_TARGET:-runtime}"}, name
        assert (ROOT / name / "Dockerfile").is_file()
        assert svc["depends_on"]["postgres"]["condition"] == "service_healthy"
        assert svc["environment"]["JWT_PRIVATE_KEY_FILE"] == "/run/secrets/jwt-private-key.pem"
        assert svc["environment"]["DATABASE_URL"] == "postgres://simple_auth:simple-auth@postgres:5432/auth"


def test_every_service_restarts_and_binds_to_loopback_by_default():
    for name, svc in COMPOSE["services"].items():
        assert svc["restart"] == "unless-stopped", name
        assert all(p.startswith(("${BIND_ADDR:-127.0.0.1}:", "127.0.0.1:")) for p in svc["ports"]), name


def test_stack_healthcheck_is_http_liveness():
    for name in stackctl.list_stacks():
        test = COMPOSE["services"][name]["healthcheck"]["test"]
        assert test[:3] == ["CMD", "bash", "-c"]
        script = test[3]
        assert "GET /health/live HTTP/1.1\\r\\n" in script and "/dev/tcp/127.0.0.1/8080" in script
        assert '[ "$$status" = 200 ]' in script  # the status line, compose-escaped


def test_base_images_are_pinned_by_digest_with_standin_overrides():
    for name in stackctl.list_stacks():
        dockerfile = ROOT / name / "Dockerfile"
        pins = containers.pinned_base_images(dockerfile)
        assert set(pins) == {"BUILD_IMAGE", "RUNTIME_IMAGE"}, name
        froms = re.findall(r"^FROM\s+(\S+)", dockerfile.read_text(), re.M)
        # Every external FROM goes through one of the pinned ARGs; the rest are the file's own stages.
        stages = set(re.findall(r"^FROM\s+\S+\s+AS\s+(\S+)", dockerfile.read_text(), re.M))
        assert all(f in ("${BUILD_IMAGE}", "${RUNTIME_IMAGE}") or f in stages for f in froms), (name, froms)
        args = containers.standin_build_args(dockerfile)
        runtime_tag = pins["RUNTIME_IMAGE"].split("@")[0]
        assert f"RUNTIME_IMAGE={runtime_tag}" in args and args[args.index(f"RUNTIME_IMAGE={runtime_tag}") - 1] == "--build-arg"
    image = COMPOSE["services"]["postgres"]["image"]
    assert re.fullmatch(r"\$\{POSTGRES_IMAGE:-postgres:15-bookworm@sha256:[0-9a-f]{64}\}", image)


def test_jvm_images_run_with_the_aot_cache_trained_in_the_build():
    for name in stackctl.list_stacks():
        st = stackctl.Stack.load(name)
        text = (ROOT / name / "Dockerfile").read_text()
        if not st.uses_java:
            assert "AOTCache" not in text
            continue
        entry = re.search(r"^ENTRYPOINT (.*)$", text, re.M).group(1)
        assert f"-XX:AOTCache=/app/simple-auth-{name}.aot" in entry
        # Each of the two targets copies a cache trained from its own application, against the stage's PostgreSQL.
        for target, trainer in (("runtime-prebuilt", "aot-prebuilt"), ("runtime", "aot")):
            stage = text.split(f"AS {target}\n", 1)[1].split("\nFROM ", 1)[0]
            assert f"COPY --from={trainer} /tmp/simple-auth-{name}.aot /app/simple-auth-{name}.aot" in stage
            trained = text.split(f"AS {trainer}\n", 1)[1].split("\nFROM ", 1)[0]
            assert f"RUN aot-train /tmp/simple-auth-{name}.aot " in trained
        assert "-XX:AOTCacheOutput=" in text and "DATABASE_URL=postgres://aot:aot@127.0.0.1:5432/aot" in text
        assert 'login answered $code' in text, "training fails unless a login succeeds"


def _sql_statement(text: str, start: str) -> str:
    """The SQL statement that begins with `start`, its comments dropped and its whitespace collapsed."""
    body = text[text.index(start):].split(";", 1)[0]
    lines = [ln.split("--", 1)[0] for ln in body.splitlines()]
    return re.sub(r"\s+", " ", " ".join(lines)).strip()


def test_aot_training_database_is_the_projects_tables_and_seed_users():
    schema = (ROOT / "sql" / "schema.sql").read_text()
    seed = (ROOT / "sql" / "seed.sql").read_text()
    tables = [_sql_statement(schema, f"CREATE TABLE IF NOT EXISTS {t} (") for t in ("users", "sessions",
                                                                                   "refresh_tokens", "login_failures")]
    for name in stackctl.list_stacks():
        if not stackctl.Stack.load(name).uses_java:
            continue
        text = (ROOT / name / "Dockerfile").read_text()
        block = text.split("RUN printf '%s\\n' > /usr/local/share/aot-train.sql \\\n", 1)[1].split("\n && ", 1)[0]
        sql = "\n".join(ln.strip()[1:-3].replace("'\\''", "'") for ln in block.splitlines())
        for table in tables:
            assert _sql_statement(sql, table.split(" (", 1)[0] + " (") == table, name
        rows = re.findall(r"\(md5\('user:[^']+'\)::uuid, '[^']*', '[^']*', '[^']*',\s*'[^']*'\)", sql)
        assert len(rows) == 3, name
        for row in rows:
            assert re.sub(r"\s+", " ", row) in re.sub(r"\s+", " ", seed), (name, row)


def test_no_limits_by_default_and_fly_sized_in_the_override():
    for name in containers.PORTS:
        assert "cpus" not in COMPOSE["services"][name] and "mem_limit" not in COMPOSE["services"][name]
        assert LIMITS["services"][name]["cpus"] == "${STACK_CPUS:-1}"
        # The memory of the stack's fly machine (fly/STACK.toml), unless STACK_MEMORY sets one for all.
        assert LIMITS["services"][name]["mem_limit"] == "${STACK_MEMORY:-%dm}" % cli.fly_memory_mb(name)
        assert LIMITS["services"][name]["memswap_limit"] == LIMITS["services"][name]["mem_limit"]


def test_postgres_loads_sql_at_first_start():
    vols = COMPOSE["services"]["postgres"]["volumes"]
    assert vols == ["./sql/schema.sql:/docker-entrypoint-initdb.d/01-schema.sql:ro",
                    "./sql/seed.sql:/docker-entrypoint-initdb.d/02-seed.sql:ro",
                    "./sql/grants.sql:/docker-entrypoint-initdb.d/03-grants.sql:ro",
                    "./docker/initdb/04-service-password.sql:/docker-entrypoint-initdb.d/04-service-password.sql:ro"]
    for vol in vols:
        assert (ROOT / vol.split(":", 1)[0]).is_file(), vol
    assert "healthcheck" in COMPOSE["services"]["postgres"]


def test_compose_stacks_log_in_as_the_least_privilege_role(tmp_path):
    """The stacks' DATABASE_URL names sql/grants.sql's role with the password docker/initdb gives it, and the
    initdb files, run as the official image runs them (psql -f, in order, as POSTGRES_USER), make exactly that
    role: checked against a throw-away cluster."""
    url = COMPOSE["x-stack"]["environment"]["DATABASE_URL"]
    m = re.fullmatch(r"postgres://([^:]+):([^@]+)@postgres:5432/auth", url)
    assert m and m.group(1) == stackctl.SERVICE_ROLE, url
    try:
        stackctl.pg_bindir()
    except stackctl.ToolError as e:
        pytest.skip(str(e))
    with stackctl.ThrowawayPostgres(service_user="someone_else") as pg:
        for vol in COMPOSE["services"]["postgres"]["volumes"][2:]:
            res = subprocess.run([stackctl.psql_bin(), pg.url, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-f",
                                  str(ROOT / vol.split(":", 1)[0])], capture_output=True, text=True)
            assert res.returncode == 0, (vol, res.stderr)
        login = f"postgres://{m.group(1)}:{m.group(2)}@127.0.0.1:{pg.port}/auth"
        res = subprocess.run([stackctl.psql_bin(), login, "-X", "-A", "-t", "-c", "SELECT count(id) FROM users"],
                             capture_output=True, text=True)
        assert res.returncode == 0 and int(res.stdout) > 10000, res.stderr


def test_images_build_with_the_root_as_context(monkeypatch):
    monkeypatch.setattr(containers, "buildkit_command", lambda: (["docker", "build"], {"DOCKER_BUILDKIT": "1"}))
    monkeypatch.setenv("SIMPLE_AUTH_STANDINS", "1")
    for name in stackctl.list_stacks():
        args, env = containers.build_command(name)
        assert args[:2] == ["docker", "build"] and env == {"DOCKER_BUILDKIT": "1"}
        assert args[-1] == str(ROOT), "the context is the repository root"
        assert args[args.index("-f") + 1] == str(ROOT / name / "Dockerfile")
        assert args[args.index("--target") + 1] == "runtime-prebuilt"
        assert "RUNTIME_IMAGE=" + containers.pinned_base_images(ROOT / name / "Dockerfile")["RUNTIME_IMAGE"].split("@")[0] in args


def test_context_size_from_buildkits_output():
    out = ("#4 [internal] load .dockerignore\n#6 [internal] load build context\n"
           "#6 transferring context: 2.10kB 0.0s\n#6 transferring context: 41.23MB 0.6s done\n")
    assert containers.context_sizes(out) == ["2.10kB", "41.23MB"]
    assert containers.context_sizes("nothing") == []


def test_bench_target_flag():
    assert bench.parse_args(["--stacks", "actix"]).target == "local"
    s = bench.parse_args(["--stacks", "actix", "--target", "docker", "--profile", "cpu1-256m"])
    assert s.target == "docker" and s.limits.cpus == 1.0 and s.limits.memory_mb == 256
    with pytest.raises(SystemExit):
        bench.parse_args(["--target", "docker", "--url", "a=http://x"])


def test_compose_env_limits(tmp_path, monkeypatch):
    monkeypatch.delenv("POSTGRES_IMAGE", raising=False)
    monkeypatch.setenv("SIMPLE_AUTH_STANDINS", "1")
    env = containers.compose_env(tmp_path / "k.pem", (1.0, 256))
    assert env["POSTGRES_IMAGE"] == "postgres:15-bookworm"
    monkeypatch.setenv("SIMPLE_AUTH_STANDINS", "0")
    assert "POSTGRES_IMAGE" not in containers.compose_env(tmp_path / "k.pem")
    monkeypatch.setenv("SIMPLE_AUTH_STANDINS", "1")
    env = containers.compose_env(tmp_path / "k.pem", (1.0, 256))
    assert env["STACK_CPUS"] == "1.0" and env["STACK_MEMORY"] == "256m"
    assert env["DOCKER_TARGET"] == "runtime-prebuilt" and env["BIND_ADDR"] == "127.0.0.1"


def test_cgroup_reader_without_a_container():
    cg = containers.ContainerCgroup("0" * 64)
    assert cg.cpu_seconds() is None and cg.memory() == {}


def test_started_at_is_the_engines_utc_timestamp(monkeypatch):
    class Res:
        stdout = "2026-11-23T15:46:19.250000000Z\n"
    monkeypatch.setattr(containers, "run", lambda *a, **k: Res())
    assert containers._started_at("cid") == 1795448779.25


def test_start_timing_asks_the_engine_once_not_per_poll(monkeypatch):
    """The container's start is timed as the local one: the polls check the process in /proc, and the engine is
    asked once (a docker inspect per 5 ms poll slowed the very start it measured)."""
    calls = []

    class Res:
        stdout = f"{os.getpid()} {'f' * 64} 2026-11-23T15:46:19.250000000Z\n"
    monkeypatch.setattr(containers, "run", lambda cmd, **k: calls.append(cmd) or Res())
    polls = []

    def fake_first(port, t0, alive, timeout=120):
        for _ in range(200):
            polls.append(alive())
        return 1.5, 2.0
    monkeypatch.setattr(containers.stackctl, "first_live_and_token", fake_first)
    live, token, cpu = containers._timed_from_exec("cid", 8080, wall0=1795448779.0, mono0=0.0)
    assert len(calls) == 1 and calls[0][:2] == ["docker", "inspect"]
    assert all(polls) and len(polls) == 200
    assert (live, token) == (1.25, 1.75)   # from exec: StartedAt was 0.25 s after the wall clock's start


def test_startup_verdict_fails_a_lost_aot_cache_and_reports_the_target():
    slack = containers.STARTUP_SLACK_S
    assert containers.startup_verdict((1.0, 1.1), (1.0, 1.0), 0.5, 0.2) == "ok"
    assert containers.startup_verdict((1.25, 1.25), (1.0, 1.0), 0.5, 0.2) == "over target"
    # no AOT cache: about twice the local start (2.2 s against 1.0 s measured): fails
    assert containers.startup_verdict((2.2, 2.3), (1.0, 1.05), 0.5, 0.2) == "over"
    # one figure over is enough; a gap within the measurement grain is never over
    assert containers.startup_verdict((1.0, 1.6), (1.0, 1.0), 0.5, 0.2) == "over"
    assert containers.startup_verdict((0.02 + slack * 0.9,), (0.02,), 0.5, 0.2) == "ok"


def test_startup_check_fails_only_when_over_twice():
    seen = []

    def measure(results):
        it = iter(results)
        return lambda stacks, env, runs: seen.append((list(stacks), runs)) or next(it)
    assert containers.startup_checked(["akka", "zio"], {}, measure([[]])) == [] and seen == [(["akka", "zio"], 1)]
    seen.clear()   # over once (zio), fine the second time (a median of three): passes; only zio is measured again
    assert containers.startup_checked(["akka", "zio"], {}, measure([["zio"], []])) == []
    assert seen == [(["akka", "zio"], 1), (["zio"], 3)]
    seen.clear()   # over both times: fails
    assert containers.startup_checked(["akka", "zio"], {}, measure([["zio"], ["zio"]])) == ["zio"]


def test_process_running_sees_exit_and_zombies():
    assert containers._process_running(os.getpid())
    child = subprocess.Popen(["true"])
    deadline = time.monotonic() + 10
    while Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert not containers._process_running(child.pid)   # exited, not yet reaped: a zombie is not running
    child.wait()
    assert not containers._process_running(child.pid)


def test_crypto_check_fails_on_the_fallback_warning(monkeypatch, capsys):
    logs = {"akka": "akka_1 | INFO listening (rsa AmazonCorrettoCryptoProvider 2.5.0)\n",
            "zio": "zio_1 | WARN native crypto provider unavailable, signing with the JDK's RSA: no libcrypto\n"}

    class Res:
        def __init__(self, text):
            self.stdout = text
    monkeypatch.setattr(containers, "compose", lambda args, env, **k: Res(logs[args[-1]]))
    assert containers.crypto_check(["akka", "zio", "actix"], {}) == ["zio"]
    out = capsys.readouterr().out
    assert "akka: no fallback warning; signing provider AmazonCorrettoCryptoProvider" in out
    assert "zio: FALLS BACK" in out and "actix" not in out


def test_aot_trainer_stage_is_the_same_in_every_jvm_image():
    # Each image builds from its own folder, so the training stage cannot be one shared file; it is one text,
    # copied, and must not drift between the three.
    stages = {}
    for name in stackctl.list_stacks():
        if stackctl.Stack.load(name).uses_java:
            text = (ROOT / name / "Dockerfile").read_text()
            start = text.index("# The AOT cache's training run")
            end = text.index(" && chmod 0755 /usr/local/bin/aot-train\n", start)
            stages[name] = text[start:end]
    assert len(stages) >= 2 and len(set(stages.values())) == 1, sorted(stages)


def test_published_ports_come_from_the_compose_file(tmp_path):
    # docker-compose.yml is the one list: every stack with a Dockerfile is published there, each on a port of its own
    # (the README's examples use actix's 8081).
    assert set(containers.PORTS) == {n for n in stackctl.list_stacks() if (ROOT / n / "Dockerfile").exists()}
    assert len(set(containers.PORTS.values())) == len(containers.PORTS)
    assert containers.PORTS["actix"] == 8081
    f = tmp_path / "c.yml"
    f.write_text('services:\n  axum:\n    ports: ["${BIND_ADDR:-127.0.0.1}:8085:8080"]\n'
                 '  postgres:\n    ports: ["${BIND_ADDR:-127.0.0.1}:${POSTGRES_PORT:-5433}:5432"]\n')
    assert containers.published_ports(f) == {"axum": 8085}


def test_the_conformance_pass_publishes_every_metrics_port_on_loopback_only():
    # docker-compose.yml keeps METRICS_PORT unpublished (the counters are for the compose network);
    # docker-compose.test.yml publishes each stack's on a host port of its own, 127.0.0.1 only, for docker-ci.sh's
    # `--metrics-url`.
    for name, svc in COMPOSE["services"].items():
        assert not any(str(p).endswith(":9091") for p in svc.get("ports") or []), name
        if name in containers.PORTS:
            assert svc["environment"]["METRICS_PORT"] == containers.METRICS_PORT, name
    test = yaml.safe_load(containers.TEST_FILE.read_text())
    assert set(test["services"]) == set(containers.PORTS) == set(containers.METRICS_PORTS)
    for name, svc in test["services"].items():
        assert svc == {"ports": [f"127.0.0.1:{containers.METRICS_PORTS[name]}:9091"]}, name
    used = list(containers.METRICS_PORTS.values()) + list(containers.PORTS.values())
    assert len(set(used)) == len(used)
    script = (ROOT / "wrk" / "docker-ci.sh").read_text()
    assert '-f "$ROOT/docker-compose.test.yml"' in script and '--metrics-url "$murl"' in script


def test_each_container_gets_the_issuer_it_is_reachable_at():
    issuers = containers.compose_issuers()
    shared = COMPOSE["x-stack"]["environment"]
    for name in stackctl.list_stacks():
        assert issuers[name] == f"http://localhost:{containers.PORTS[name]}", name
        env = COMPOSE["services"][name]["environment"]
        # The per-service issuer is added to the shared environment, not in place of it; JWT_ISSUER overrides it.
        assert {k: v for k, v in env.items() if k != "JWT_ISSUER"} == {k: v for k, v in shared.items()
                                                                       if k != "JWT_ISSUER"}, name
        assert env["JWT_ISSUER"] == f"${{JWT_ISSUER:-http://localhost:{containers.PORTS[name]}}}"
    assert "postgres" not in issuers
    assert "JWT_ISSUER" in containers.SUITE_OVERRIDES, "the docker bench drops the suite's issuer"


def test_readable_key_by_key_type(tmp_path, monkeypatch):
    monkeypatch.setattr(containers, "STATE", tmp_path)
    for kt in ("rsa-2048", "rsa-4096", "p-256", "ed25519"):
        path = containers.readable_key(kt)
        assert path == tmp_path / f"jwt-dev-{kt}.pem" and path.stat().st_mode & 0o777 == 0o644
        assert path.read_bytes() == stackctl.KEYS[kt].read_bytes()
    assert containers.readable_key() == tmp_path / "jwt-dev-rsa-2048.pem"
    with pytest.raises(stackctl.ToolError, match="unknown key type"):
        containers.readable_key("p-384")
    env = containers.compose_env(containers.readable_key("ed25519"))
    assert env["JWT_KEY_PATH"] == str(tmp_path / "jwt-dev-ed25519.pem")


def test_docker_ci_mounts_the_key_readable_key_names():
    script = (ROOT / "wrk" / "docker-ci.sh").read_text()
    assert 'JWT_KEY_PATH="$STATE/jwt-dev-rsa-2048.pem"' in script
    assert 'spec/keys/dev-rsa-2048.pem "$STATE/jwt-dev-rsa-2048.pem"' in script


def test_startup_check_measures_only_the_stacks_with_an_aot_cache(capsys):
    seen = []
    measure = lambda stacks, env, runs: seen.append(list(stacks)) or []
    assert containers.startup_checked(["actix", "akka", "axum", "spring"], {}, measure) == []
    assert seen == [["akka", "spring"]]
    assert "actix axum: no AOT cache, not checked" in capsys.readouterr().out
    seen.clear()
    assert containers.startup_checked(["actix"], {}, measure) == [] and seen == []
