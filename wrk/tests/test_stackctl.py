"""The runner's own tests: the throw-away database, the seed, the manifests."""
from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import json
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from argon2 import PasswordHasher
from cryptography import x509

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import pgcluster  # noqa: E402
import stackctl  # noqa: E402


@pytest.fixture(scope="module")
def pg():
    with stackctl.ThrowawayPostgres() as db:
        yield db


def test_seed_populations(pg):
    counts = pg.psql("SELECT count(*) FILTER (WHERE email LIKE 'legacy%'), count(*) FILTER (WHERE email LIKE 'argon%') FROM users")
    legacy, argon = map(int, counts.split("|"))
    assert legacy >= 10_000 and argon >= 100


@pytest.mark.parametrize("n", [1, 777, 10000])
def test_legacy_population_follows_its_documented_pattern(pg, n):
    stored = pg.psql(f"SELECT password_hash FROM users WHERE email = 'legacy{n}@example.com'")
    _, scheme, salt, digest = stored.split("$")
    assert scheme == "hmac-sha256"
    assert base64.b64decode(salt) == hashlib.sha256(f"salt:{n}".encode()).digest()[:16]
    mac = hmac.new(base64.b64decode(salt), f"legacy-pass-{n}".encode(), hashlib.sha256).digest()
    assert base64.b64decode(digest) == mac


@pytest.mark.parametrize("n", [1, 100])
def test_argon2_population_follows_its_documented_pattern(pg, n):
    stored = pg.psql(f"SELECT password_hash FROM users WHERE email = 'argon{n}@example.com'")
    assert stored.startswith("$argon2id$v=19$m=19456,t=2,p=1$")
    assert PasswordHasher().verify(stored, f"argon-pass-{n}")


def test_login_query_uses_the_email_index(pg):
    plan = pg.psql("EXPLAIN SELECT id, username, name, email, password_hash FROM users WHERE email = lower('John@Example.com')")
    assert "users_email_key" in plan


def test_email_must_be_lowercase(pg):
    with pytest.raises(stackctl.ToolError):
        pg.psql("INSERT INTO users (id, username, name, email, password_hash) "
                "VALUES (gen_random_uuid(), 'x', 'X', 'Mixed@Example.com', 'h')")


def test_loading_twice_is_harmless(pg):
    stackctl.load_sql(pg.url)
    assert int(pg.psql("SELECT count(*) FROM users WHERE email = 'john@example.com'")) == 1


def test_the_services_url_is_the_least_privilege_role(pg):
    """A service started against a throw-away cluster logs in as sql/grants.sql's role, not as the owner."""
    assert pg.service_url == f"postgres://simple_auth:{pg.service_password}@127.0.0.1:{pg.port}/auth"
    assert psql_as(pg.service_url, "SELECT current_user").stdout.strip() == stackctl.SERVICE_ROLE
    assert psql_as(pg.service_url, "SELECT rolsuper FROM pg_roles WHERE rolname = current_user").stdout.strip() == "f"
    assert psql_as(pg.service_url, "SELECT created_at FROM users WHERE email = 'john@example.com'").returncode != 0
    assert psql_as(pg.service_url, "SELECT count(id) FROM users WHERE email = 'john@example.com'").stdout.strip() == "1"
    assert pg.service_backends() == []  # psql's own queries run as the owner


def test_database_yields_the_service_role(monkeypatch):
    monkeypatch.delenv("DATABASE_URL", raising=False)
    with stackctl.database() as (url, pg):
        assert url == pg.service_url and url != pg.url
    monkeypatch.setenv("DATABASE_URL", "postgres://someone:secret@db.example:5432/app")
    with stackctl.database() as (url, pg):
        assert (url, pg) == ("postgres://someone:secret@db.example:5432/app", None)


def test_clusters_start_as_copies_of_the_loaded_template_and_are_independent(pg):
    """Every throw-away cluster starts as a copy of one loaded template: what one cluster changes, neither another
    cluster nor a later one sees."""
    with stackctl.ThrowawayPostgres() as other:
        other.psql("DELETE FROM users WHERE email = 'john@example.com'")
        assert other.psql("SELECT count(*) FROM users WHERE email = 'john@example.com'") == "0"
        assert pg.psql("SELECT count(*) FROM users WHERE email = 'john@example.com'") == "1"
        assert other.datadir.parent != pg.datadir.parent and other.port != pg.port
    with stackctl.ThrowawayPostgres() as later:
        assert later.psql("SELECT count(*) FROM users WHERE email = 'john@example.com'") == "1"
        assert psql_as(later.service_url, "SELECT current_user").stdout.strip() == stackctl.SERVICE_ROLE


def test_the_template_is_made_again_when_the_sql_or_the_credentials_change(tmp_path, monkeypatch):
    base = stackctl.ThrowawayPostgres()
    key = base.template_key()
    assert stackctl.ThrowawayPostgres().template_key() == key
    assert stackctl.ThrowawayPostgres(service_password="other").template_key() != key
    seed = tmp_path / "seed.sql"
    seed.write_bytes(pgcluster.SQL_FILES[1].read_bytes() + b"\n-- one more line\n")
    monkeypatch.setattr(pgcluster, "SQL_FILES", [pgcluster.SQL_FILES[0], seed])
    assert base.template_key() != key


def test_stop_and_start(pg):
    pg.pg_stop()
    assert not pg.is_running()
    pg.pg_start()
    assert pg.psql("SELECT 1") == "1"


@pytest.mark.parametrize("name", stackctl.list_stacks())
def test_manifest_is_complete(name):
    stack = stackctl.Stack.load(name)
    for key in ("build", "test", "run"):
        assert isinstance(stack.manifest[key], list) and stack.manifest[key]
    for src in stack.manifest.get("sources", []):
        assert (stack.dir / src).exists(), f"{name}: source path {src} does not exist"
    assert (stack.dir / "README.md").exists()


def test_every_started_service_gets_a_metrics_port_of_its_own():
    """METRICS_PORT (spec/README.md §5) is a free port, never PORT, and another one per environment: the suites run
    several instances at once, which the contract's default 9091 would make collide."""
    stack = stackctl.Stack.load(stackctl.list_stacks()[0])
    envs = [stack.contract_env("postgres://x@127.0.0.1:1/x", stackctl.free_port()) for _ in range(5)]
    for env in envs:
        assert env["METRICS_PORT"].isdigit() and env["METRICS_PORT"] != env["PORT"]
        assert stackctl.metrics_port(env) == int(env["METRICS_PORT"])
    assert len({env["METRICS_PORT"] for env in envs}) > 1
    assert stack.contract_env("postgres://x@127.0.0.1:1/x", 8080, METRICS_PORT="9100")["METRICS_PORT"] == "9100"
    assert stackctl.metrics_port({"METRICS_PORT": ""}) == stackctl.metrics_port({}) == 9091
    assert stackctl.metrics_port({"METRICS_PORT": "ninety"}) is None


def test_free_port_avoids_the_port_given():
    taken = stackctl.free_port()
    assert all(stackctl.free_port(avoid=taken) != taken for _ in range(20))


def test_unknown_stack_is_a_clear_error():
    with pytest.raises(stackctl.ToolError, match="unknown stack"):
        stackctl.Stack.load("cobol")


def test_java_home_is_21_or_newer():
    assert stackctl.java_version(stackctl.find_java_home()) >= 21


def _java_stack(tmp_path: Path, monkeypatch, jdk: int) -> stackctl.Stack:
    home = tmp_path / f"jdk{jdk}"
    (home / "bin").mkdir(parents=True)
    (home / "release").write_text(f'JAVA_VERSION="{jdk}.0.1"\n')
    monkeypatch.setenv("JAVA_HOME", str(home))
    (tmp_path / "target").mkdir()
    manifest = {"build": ["true"], "test": ["true"], "artifact": "target/app.jar", "aot_cache": "target/app.aot",
                "run": ["{java}", "-Xmx96m", "-jar", "target/app.jar"]}
    return stackctl.Stack("demo", tmp_path, manifest)


def test_aot_cache_is_used_only_when_trained_after_the_artifact(tmp_path, monkeypatch):
    import os
    stack = _java_stack(tmp_path, monkeypatch, 25)
    java = str(tmp_path / "jdk25" / "bin" / "java")
    (tmp_path / "target" / "app.jar").write_text("jar")
    assert stack.command("run") == [java, "-Xmx96m", "-jar", "target/app.jar"]  # no cache yet
    cache = tmp_path / "target" / "app.aot"
    cache.write_text("cache")
    os.utime(tmp_path / "target" / "app.jar", (1_000, 1_000))
    assert stack.command("run")[:2] == [java, f"-XX:AOTCache={cache}"]
    os.utime(cache, (500, 500))  # the jar was rebuilt after the training: stale
    assert stack.command("run") == [java, "-Xmx96m", "-jar", "target/app.jar"]
    # The training run is the run command itself, so the flags the cache records are the ones it is used with.
    assert stack.command("run", aot_output=cache) == [java, f"-XX:AOTCacheOutput={cache}", "-Xmx96m", "-jar", "target/app.jar"]


def _sbt_stacks(tmp_path: Path, fail_task: str = "") -> list[stackctl.Stack]:
    """Two stacks whose build and tests run one fake sbt launcher (it records each start's tasks, and fails a start
    that names fail_task), and one that runs something else."""
    launcher = tmp_path / "sbt"
    launcher.write_text(f"#!/bin/sh\necho \"$*\" >> {tmp_path / 'starts'}\n"
                        f"case \" $* \" in *\" {fail_task} \"*) exit 1;; esac\nexit 0\n" if fail_task else
                        f"#!/bin/sh\necho \"$*\" >> {tmp_path / 'starts'}\n")
    launcher.chmod(0o755)
    stacks = []
    for name in ("one", "other", "two"):
        (tmp_path / name).mkdir()
        if name == "other":
            manifest = {"build": ["true"], "test": ["true"], "run": ["true"], "artifact": "x"}
        else:
            manifest = {"build": ["../sbt", "-batch", f"{name}/assembly"], "run": ["true"], "artifact": "x",
                        "test": ["../sbt", "-batch", "core/test", f"{name}/test"]}
        stacks.append(stackctl.Stack(name, tmp_path / name, manifest))
    return stacks


def test_stacks_on_one_sbt_launcher_share_one_start(tmp_path):
    one, other, two = _sbt_stacks(tmp_path)
    merged = stackctl.merged_commands([one, other, two], "test")
    assert [([st.name for st in members], cmd) for members, cmd in merged] == [
        (["one", "two"], ["../sbt", "-batch", "core/test", "one/test", "two/test"]),
        (["other"], ["true"])]
    assert [cmd for _, cmd in stackctl.merged_commands([one, two], "build")] == [
        ["../sbt", "-batch", "one/assembly", "two/assembly"]]
    assert stackctl.unit_test_all([one, other, two]) == []
    assert (tmp_path / "starts").read_text().splitlines() == ["-batch core/test one/test two/test"]


def test_a_failed_shared_start_runs_each_stack_alone_to_tell_which_failed(tmp_path):
    one, other, two = _sbt_stacks(tmp_path, fail_task="two/test")
    assert stackctl.unit_test_all([one, other, two]) == ["two"]
    assert (tmp_path / "starts").read_text().splitlines() == [
        "-batch core/test one/test two/test", "-batch core/test one/test", "-batch core/test two/test"]


def test_no_aot_cache_before_jdk_25(tmp_path, monkeypatch):
    stack = _java_stack(tmp_path, monkeypatch, 21)
    (tmp_path / "target" / "app.jar").write_text("jar")
    (tmp_path / "target" / "app.aot").write_text("cache")
    assert stack.aot_cache is None
    assert not any("AOT" in part for part in stack.command("run"))
    stack.train_aot_cache()  # nothing to do, no JVM started


def test_training_workload_covers_every_path():
    reqs = [r for i in range(20) for r in stackctl.training_requests(i)]
    paths = {(m, p) for m, p, _, _ in reqs}
    assert {("POST", "/token"), ("GET", "/token"), ("GET", "/health"), ("GET", "/.well-known/jwks.json"), ("GET", "/nope")} <= paths
    types = {t for _, _, t, _ in reqs}
    assert {"application/json", "application/x-www-form-urlencoded", "text/plain"} <= types
    assert any(b"jane@example.com" in (b or b"") for _, _, _, b in reqs), "an argon2id login"


# --------------------------------------------------------------------------- TLS-only cluster

@pytest.fixture(scope="module")
def tls_pg():
    with stackctl.ThrowawayPostgres(tls=True) as db:
        yield db


def psql_as(url: str, sql: str = "SELECT 1") -> subprocess.CompletedProcess:
    return subprocess.run([stackctl.psql_bin(), url, "-X", "-A", "-t", "-c", sql], capture_output=True, text=True,
                          timeout=30)


def test_tls_cluster_refuses_plain_tcp(tls_pg):
    res = psql_as(tls_pg.url_for("disable"))
    assert res.returncode != 0
    assert "no encryption" in res.stderr, res.stderr


@pytest.mark.parametrize("mode", stackctl.TLS_MODES)
def test_tls_cluster_accepts_tls(tls_pg, mode):
    res = psql_as(tls_pg.url_for(mode), "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "t"


def test_tls_cluster_certificate_names_localhost_and_127_0_0_1(tls_pg):
    res = psql_as(tls_pg.url_for("verify-full", host="localhost"))
    assert res.returncode == 0, res.stderr
    cert = x509.load_pem_x509_certificate((tls_pg.base / "tls" / "server.crt").read_bytes())
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == ["localhost"]
    assert [str(ip) for ip in san.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]


def test_tls_cluster_is_not_trusted_under_another_ca(tls_pg, tmp_path):
    other = stackctl.make_ca(tmp_path / "other", "some other CA")
    res = psql_as(tls_pg.url_for("verify-full", rootcert=other))
    assert res.returncode != 0
    assert "certificate verify failed" in res.stderr, res.stderr


def test_tls_cluster_urls(tls_pg):
    assert tls_pg.url == tls_pg.url_for("verify-full")
    assert tls_pg.url.endswith(f"?sslmode=verify-full&sslrootcert={tls_pg.ca_file}")
    assert tls_pg.url_for("require").endswith("?sslmode=require")
    assert tls_pg.psql("SELECT count(*) FROM users WHERE email = 'john@example.com'") == "1"  # loaded over TLS


def test_tls_database_yields_the_asked_mode(monkeypatch):
    monkeypatch.delenv("DATABASE_URL", raising=False)
    with stackctl.database(tls=True, tls_mode="require") as (url, pg):
        assert url == pg.url_for("require", service=True)
        assert psql_as(url).returncode == 0
        assert psql_as(pg.url_for("disable")).returncode != 0


def test_unknown_tls_mode_is_a_clear_error():
    with pytest.raises(stackctl.ToolError, match="unknown TLS mode"):
        stackctl.ThrowawayPostgres(tls=True, tls_mode="verify-ca").start()


def test_db_command_with_tls_prints_both_urls():
    proc = subprocess.Popen([sys.executable, str(Path(stackctl.__file__)), "db", "--tls"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        first, second = proc.stdout.readline().strip(), proc.stdout.readline().strip()
        assert first.startswith("DATABASE_URL=postgres://simple_auth:") and "sslmode=verify-full&sslrootcert=" in first
        assert psql_as(first.removeprefix("DATABASE_URL=")).returncode == 0
        require = second.rpartition("DATABASE_URL=")[2]
        assert require.endswith("?sslmode=require") and psql_as(require).returncode == 0
    finally:
        proc.terminate()
        assert proc.wait(30) == 0


# --------------------------------------------------------------------------- the one HTTP poller, the one wrk command


class _Answers(BaseHTTPRequestHandler):
    """GET /health answers 503 until `ready`, then 200; POST /token records the body and answers 200."""
    ready = False
    bodies: list[bytes] = []

    def do_GET(self):  # noqa: N802
        self.send_response(200 if (self.path != "/health" or _Answers.ready) else 503)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):  # noqa: N802
        _Answers.bodies.append(self.rfile.read(int(self.headers["Content-Length"])))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *a):
        pass


@pytest.fixture()
def answers():
    _Answers.ready, _Answers.bodies = False, []
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Answers)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()


def test_http_status_answers_and_nothing(answers):
    assert stackctl.http_status(answers, "GET", "/health") == 503
    assert stackctl.http_status(answers, "POST", "/token", stackctl.JOHN_LOGIN) == 200
    assert json.loads(_Answers.bodies[-1]) == {"username": "john@example.com", "password": "TopSecret0!"}
    assert stackctl.http_status(f"http://127.0.0.1:{stackctl.free_port()}", "GET", "/") is None


def test_wait_http_waits_for_the_status_and_stops_on_exit_or_timeout(answers):
    threading.Timer(0.2, lambda: setattr(_Answers, "ready", True)).start()
    assert stackctl.wait_http(answers + "/health", None, timeout=10) >= 0.2
    assert stackctl.wait_http(answers + "/health", None, timeout=1, expect=200) < 1
    dead = subprocess.Popen(["sh", "-c", "exit 4"])
    dead.wait()
    with pytest.raises(stackctl.ToolError, match="exited with 4"):
        stackctl.wait_http(f"http://127.0.0.1:{stackctl.free_port()}/health", dead, timeout=5)
    with pytest.raises(stackctl.ToolError, match="no 200 from"):
        stackctl.wait_http(f"http://127.0.0.1:{stackctl.free_port()}/health", lambda: True, timeout=0.3)


def test_first_live_and_token_in_that_order(answers):
    t0 = time.monotonic()
    live, token = stackctl.first_live_and_token(answers, t0, lambda: True, timeout=5)
    assert 0 <= live <= token and _Answers.bodies == [stackctl.JOHN_LOGIN]


def test_wrk_command_is_users_lua_against_token():
    cmd = stackctl.wrk_command("http://127.0.0.1:9", 64, 15, 2, "mixed", 0.2, timeout_s=5)
    assert cmd[:2] == ["wrk", "-t"] and cmd[cmd.index("-c") + 1] == "64" and "15s" in cmd and "5s" in cmd
    assert cmd[cmd.index("-s") + 1] == str(stackctl.ROOT / "wrk" / "users.lua")
    assert cmd[-4:] == ["http://127.0.0.1:9/token", "--", "mixed", "0.2"]
    assert stackctl.wrk_command("http://x", 1, 1, threads=8)[2] == "1"   # never more threads than connections
    assert stackctl.read_wrk_json("noise\nWRK_JSON {\"rps\": 1}\n") == {"rps": 1}
    assert stackctl.read_wrk_json("no result\n") is None


IGNORED_THEN_SPAWN = """
import signal, subprocess, sys
signal.signal(signal.SIGHUP, signal.SIG_IGN)  # as nohup leaves it
signal.signal(signal.SIGINT, signal.SIG_IGN)  # as a shell's background job leaves it
if sys.argv[1] == "with-stackctl":
    sys.path.insert(0, sys.argv[2])
    import stackctl  # noqa: F401
print(subprocess.run(["cat", "/proc/self/status"], capture_output=True, text=True).stdout)
print("parent HUP ignored:", signal.getsignal(signal.SIGHUP) is not signal.SIG_DFL)
"""


def ignored_in_child(mode: str) -> tuple[int, str]:
    out = subprocess.run([sys.executable, "-c", IGNORED_THEN_SPAWN, mode, str(Path(stackctl.__file__).parent)],
                         capture_output=True, text=True, check=True).stdout
    mask = int(next(ln for ln in out.splitlines() if ln.startswith("SigIgn:")).split()[1], 16)
    return mask, out


def test_services_start_with_sighup_and_sigint_at_their_defaults_under_nohup():
    """A harness run under nohup (or as a background job) must not pass its ignored SIGHUP/SIGINT on to the services it
    starts: a JVM keeps an inherited SIG_IGN and its key reload on SIGHUP would never run. The parent itself still
    survives a hangup."""
    hup, intr = 1 << (1 - 1), 1 << (2 - 1)  # SigIgn's bit n-1 is signal n
    mask, _ = ignored_in_child("plain")
    assert mask & hup and mask & intr, "the control: without stackctl the child inherits both as ignored"
    mask, out = ignored_in_child("with-stackctl")
    assert not mask & hup and not mask & intr, f"SigIgn {mask:#x}"
    assert "parent HUP ignored: True" in out


def _cargo_stacks(tmp_path: Path, fail_package: str = "") -> list[stackctl.Stack]:
    """Two stacks whose tests run one fake cargo (it records each run's arguments, and fails a run that names
    fail_package), each naming its own package and the shared core."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    cargo = bindir / "cargo"
    cargo.write_text(f"#!/bin/sh\necho \"$*\" >> {tmp_path / 'runs'}\n"
                     + (f"case \" $* \" in *\" {fail_package} \"*) exit 1;; esac\n" if fail_package else "") + "exit 0\n")
    cargo.chmod(0o755)
    stacks = []
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        manifest = {"build": ["true"], "run": ["true"], "artifact": "x",
                    "test": [str(cargo), "test", "--release", "-p", f"app-{name}", "-p", "core"]}
        stacks.append(stackctl.Stack(name, tmp_path / name, manifest))
    return stacks


def test_a_shared_cargo_package_is_tested_once(tmp_path):
    one, two = _cargo_stacks(tmp_path)
    assert stackctl.unit_test_all([one, two]) == []
    assert (tmp_path / "runs").read_text().splitlines() == [
        "test --release -p app-one -p core", "test --release -p app-two"]
    (tmp_path / "runs").unlink()
    assert stackctl.unit_test_all([two]) == []  # alone, a stack tests the shared package itself
    assert (tmp_path / "runs").read_text().splitlines() == ["test --release -p app-two -p core"]


def test_compiling_only_runs_the_same_cargo_commands_with_no_run_and_leaves_the_others_to_their_run(tmp_path):
    """make test compiles the cargo stacks' tests beside the other suites: the run after it must find the very same
    commands compiled (--no-run added, nothing else), and an sbt or other start is not made twice."""
    one, two = _cargo_stacks(tmp_path)
    (tmp_path / "scala").mkdir()
    scala_one, other, scala_two = _sbt_stacks(tmp_path / "scala")
    assert stackctl.unit_test_all([one, two, scala_one, other, scala_two], compile_only=True) == []
    assert (tmp_path / "runs").read_text().splitlines() == [
        "test --release -p app-one -p core --no-run", "test --release -p app-two --no-run"]
    assert not (tmp_path / "scala" / "starts").exists()


def test_a_failing_shared_cargo_package_fails_the_stack_that_ran_it(tmp_path):
    one, two = _cargo_stacks(tmp_path, fail_package="core")
    assert stackctl.unit_test_all([one, two]) == ["one"]


def test_free_ports_are_distinct_and_below_the_ephemeral_range():
    lo, _ = stackctl.ephemeral_ports()
    ports = [stackctl.free_port() for _ in range(300)]
    assert len(set(ports)) == len(ports)
    if lo - stackctl.LOWEST_PORT >= 1000:
        assert all(stackctl.LOWEST_PORT <= p < lo for p in ports), [p for p in ports if p >= lo][:5]
    avoid = stackctl.free_port()
    assert all(stackctl.free_port(avoid=avoid) != avoid for _ in range(50))


def test_free_port_without_room_below_the_ephemeral_range(monkeypatch, tmp_path):
    (tmp_path / "range").write_text("1024\t65535\n")
    assert stackctl.ephemeral_ports(str(tmp_path / "range")) == (1024, 65535)
    monkeypatch.setattr(stackctl, "ephemeral_ports", lambda: (1024, 65535))
    ports = [stackctl.free_port() for _ in range(50)]
    assert len(set(ports)) == len(ports)


def test_run_stops_its_service_when_it_is_stopped_with_sigterm(tmp_path, monkeypatch):
    """`stackctl.py run` stopped by SIGTERM passes it on: the service drains and exits, and run returns its code
    (and then stops its throw-away database, here DATABASE_URL is given), instead of leaving the service running."""
    up, got = tmp_path / "up", tmp_path / "got"
    script = tmp_path / "service.py"
    script.write_text("import pathlib, signal, sys, time\n"
                      f"signal.signal(signal.SIGTERM, lambda *_: (pathlib.Path({str(got)!r}).write_text('TERM'), "
                      "sys.exit(0)))\n"
                      f"pathlib.Path({str(up)!r}).write_text('up')\n"
                      "time.sleep(60)\n"
                      "sys.exit(3)\n")
    (tmp_path / "artifact").write_text("")
    stack = stackctl.Stack("fake", tmp_path, {"build": ["true"], "run": [sys.executable, str(script)],
                                              "artifact": "artifact"})
    monkeypatch.setattr(stackctl.Stack, "load", classmethod(lambda cls, name: stack))
    monkeypatch.setenv("DATABASE_URL", "postgres://auth:auth@127.0.0.1:1/auth")

    def stop_when_up():
        deadline = time.monotonic() + 30
        while not up.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        os.kill(os.getpid(), signal.SIGTERM)
    before = signal.getsignal(signal.SIGTERM)
    threading.Thread(target=stop_when_up, daemon=True).start()
    assert stackctl.cmd_run(argparse.Namespace(stack="fake", port=stackctl.free_port(), key_type="rsa-2048")) == 0
    assert got.read_text() == "TERM"
    assert signal.getsignal(signal.SIGTERM) is before
