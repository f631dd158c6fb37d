"""fly/deploy.sh against the flyctl stand-in (fly/tests/fakefly): .venv/bin/python -m pytest fly

The stand-in fails the way flyctl does on a wrong argument, an unknown flag, or a --config /
Dockerfile / COPY source that does not resolve from the directory `fly deploy` changes into, so
these tests fail if deploy.sh calls flyctl the way the old README did.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "fly" / "deploy.sh"
FAKEFLY = ROOT / "fly" / "tests" / "fakefly"
DEV_KEYS = sorted((ROOT / "spec" / "keys").glob("dev-rsa-*.pem"))
SCHEMA = (ROOT / "sql" / "schema.sql").read_text()

sys.path.insert(0, str(ROOT / "wrk"))
import stackctl  # noqa: E402


class Fly:
    """A fake fly.io account: a PATH with `fly` first, and what the stand-in recorded."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.bin = tmp / "bin"
        self.bin.mkdir()
        (self.bin / "fly").symlink_to(FAKEFLY)
        # The stand-in and deploy.sh's JSON reading run this Python (a version manager's shim costs ~0.5 s a call).
        (self.bin / "python3").symlink_to(sys.executable)
        self.state_dir = tmp / "fly-state"
        self.env = {**os.environ, "PATH": f"{self.bin}:{os.environ['PATH']}", "FAKEFLY_STATE": str(self.state_dir)}
        self.env.pop("FLY_ORG", None)

    def deploy(self, *args: str, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", str(DEPLOY), *args], cwd=cwd or self.tmp, env={**self.env, **(env or {})},
                              capture_output=True, text=True, timeout=120)

    def fly(self, *args: str, cwd: Path | None = None, stdin: str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.bin / "fly"), *args], cwd=cwd or ROOT, env=self.env, input=stdin,
                              capture_output=True, text=True, timeout=60)

    def calls(self) -> list[dict]:
        path = self.state_dir / "calls.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    def commands(self) -> list[str]:
        return [c["command"] for c in self.calls()]

    def state(self) -> dict:
        return json.loads((self.state_dir / "state.json").read_text())


@pytest.fixture
def fly(tmp_path):
    return Fly(tmp_path)


def ok(res: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert res.returncode == 0, f"exit {res.returncode}\nstdout:\n{res.stdout}\nstderr:\n{res.stderr}"
    return res


def public_der(pem: bytes) -> bytes:
    key = serialization.load_pem_private_key(pem, password=None)
    return key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)


# --------------------------------------------------------------------------------------------- the stand-in


def test_fakefly_refuses_the_old_readme_command(fly):
    """`fly deploy actix --config fly/actix.toml` from the root: deploy changes into actix/ first."""
    ok(fly.fly("apps", "create", "simple-auth-actix"))
    res = fly.fly("deploy", "actix", "--config", "fly/actix.toml")
    assert res.returncode != 0 and "config file not found" in res.stderr
    # From the root without the working directory the build context is the root: no Cargo.toml there.
    ok(fly.fly("secrets", "set", "DATABASE_URL=postgres://x", "JWT_PRIVATE_KEY=k", "--app", "simple-auth-actix"))
    res = fly.fly("deploy", "--config", "fly/actix.toml")
    assert res.returncode != 0 and "Cargo.toml" in res.stderr


@pytest.mark.parametrize("stack", sorted(p.stem for p in (ROOT / "fly").glob("*.toml")))
def test_fakefly_accepts_the_documented_command(fly, stack):
    app = f"simple-auth-{stack}"
    ok(fly.fly("apps", "create", app))
    ok(fly.fly("secrets", "set", "DATABASE_URL=postgres://x", "JWT_PRIVATE_KEY=k", "--app", app))
    ok(fly.fly("deploy", stack, "--config", f"../fly/{stack}.toml"))
    deployed = fly.state()["apps"][app]["deployed"]
    assert deployed["context"] == str(ROOT / stack) and deployed["dockerfile"] == str(ROOT / stack / "Dockerfile")


def test_fakefly_refuses_unknown_flags_and_wrong_arity(fly):
    assert "unknown flag: --bogus" in fly.fly("apps", "list", "--bogus").stderr
    assert fly.fly("postgres", "attach", "--app", "x").returncode != 0  # needs exactly one POSTGRES APP
    assert fly.fly("deploy", "a", "b").returncode != 0
    assert "needs an argument" in fly.fly("secrets", "set", "A=b", "--app").stderr
    assert fly.fly("nonsense").returncode != 0


def test_fakefly_checks_copy_sources_against_dockerignore(fly, tmp_path):
    ctx = tmp_path / "ctx"
    (ctx / "src").mkdir(parents=True)
    (ctx / "src" / "main.rs").write_text("")
    (ctx / "Dockerfile").write_text("FROM scratch AS build\nCOPY src ./src\nFROM scratch AS runtime\n"
                                    "COPY --from=build /src /src\n")
    (ctx / "fly.toml").write_text('app = "demo"\n[env]\nDATABASE_URL = "x"\nJWT_PRIVATE_KEY = "y"\n')
    ok(fly.fly("apps", "create", "demo"))
    ok(fly.fly("deploy", str(ctx)))
    (ctx / ".dockerignore").write_text("*\n!Dockerfile\n")
    res = fly.fly("deploy", str(ctx))
    assert res.returncode != 0 and "excluded" in res.stderr


# --------------------------------------------------------------------------------------------- deploy.sh


def test_first_run_sequence(fly):
    res = ok(fly.deploy("actix"))
    assert fly.commands() == [
        "apps list", "apps create",
        "mpg list", "mpg create", "mpg list",
        "secrets list", "mpg attach", "mpg connect",
        "secrets list", "secrets set",
        "deploy",
    ]
    calls = {c["command"]: c for c in fly.calls()}
    assert calls["apps create"]["argv"][2] == "simple-auth-actix"
    create = calls["mpg create"]["argv"]
    assert create[create.index("--region") + 1] == "ams"  # the config's primary_region
    # Absolute paths: right whatever the caller's working directory.
    assert calls["deploy"]["argv"] == ["deploy", str(ROOT / "actix"), "--config", str(ROOT / "fly" / "actix.toml")]
    assert "https://simple-auth-actix.fly.dev" in res.stdout
    assert "make bench BENCH_ARGS=\"--url actix=https://simple-auth-actix.fly.dev\"" in res.stdout
    # The URL's password is not echoed.
    assert "s3cret" not in res.stdout + res.stderr


def test_fresh_key_is_rsa_2048_pkcs8_and_not_a_dev_key(fly):
    ok(fly.deploy("zio"))
    pem = fly.state()["apps"]["simple-auth-zio"]["secrets"]["JWT_PRIVATE_KEY"]
    assert pem.startswith("-----BEGIN PRIVATE KEY-----")  # PKCS#8
    key = serialization.load_pem_private_key(pem.encode(), password=None)
    assert isinstance(key, rsa.RSAPrivateKey) and key.key_size == 2048
    assert public_der(pem.encode()) not in {public_der(k.read_bytes()) for k in DEV_KEYS}
    assert "PRIVATE KEY" not in json.dumps([c["argv"] for c in fly.calls()])  # never in argv


def test_rerun_is_idempotent(fly):
    ok(fly.deploy("spring"))
    first = fly.state()["apps"]["simple-auth-spring"]["secrets"]
    n = len(fly.calls())
    res = ok(fly.deploy("spring"))
    again = fly.commands()[n:]
    assert again == ["apps list", "mpg list", "secrets list", "mpg connect", "secrets list", "deploy"]
    assert fly.state()["apps"]["simple-auth-spring"]["secrets"] == first  # key and URL kept
    assert fly.state()["apps"]["simple-auth-spring"]["deploys"] == 2
    assert "already has JWT_PRIVATE_KEY: kept" in res.stderr


def test_second_stack_shares_the_cluster(fly):
    ok(fly.deploy("actix"))
    ok(fly.deploy("akka"))
    assert fly.commands().count("mpg create") == 1
    assert len(fly.state()["mpg"]) == 1


@pytest.mark.parametrize("key", DEV_KEYS, ids=lambda p: p.name)
def test_dev_keys_are_refused(fly, tmp_path, key):
    copy = tmp_path / "innocent-looking.pem"  # by its public key, not its path
    shutil.copy(key, copy)
    for path in (key, copy):
        res = fly.deploy("actix", "--key", str(path))
        assert res.returncode != 0 and "development key" in res.stderr, res.stderr
    assert fly.calls() == []  # refused before anything is created


def test_own_key_is_used(fly, tmp_path):
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    (tmp_path / "k.pem").write_bytes(pem)
    ok(fly.deploy("actix", "--key", str(tmp_path / "k.pem")))
    assert fly.state()["apps"]["simple-auth-actix"]["secrets"]["JWT_PRIVATE_KEY"] == pem.decode().strip()


def test_pkcs1_and_small_keys_are_refused(fly, tmp_path):
    key = rsa.generate_private_key(public_exponent=65537, key_size=1024)
    (tmp_path / "small.pem").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                           serialization.NoEncryption()))
    res = fly.deploy("actix", "--key", str(tmp_path / "small.pem"))
    assert res.returncode != 0 and "2048" in res.stderr
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    (tmp_path / "pkcs1.pem").write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                                           serialization.PrivateFormat.TraditionalOpenSSL,
                                                           serialization.NoEncryption()))
    res = fly.deploy("actix", "--key", str(tmp_path / "pkcs1.pem"))
    assert res.returncode != 0 and "PKCS#8" in res.stderr


def test_unknown_stack_and_option(fly):
    res = fly.deploy("cobol")
    assert res.returncode == 2 and "unknown stack 'cobol'" in res.stderr and "actix" in res.stderr
    res = fly.deploy("actix", "--frobnicate")
    assert res.returncode == 2 and "unknown option" in res.stderr
    assert fly.calls() == []


@pytest.mark.parametrize("missing", ["fly", "openssl", "psql"])
def test_missing_tool(fly, tmp_path, missing):
    """PATH with only the tools deploy.sh needs, minus one."""
    only = tmp_path / "only"
    only.mkdir()
    for tool in ("bash", "sed", "head", "ls", "tr", "cat", "grep", "awk", "openssl", "psql", "dirname", "cut",
                 "basename"):
        if tool != missing and shutil.which(tool):
            (only / tool).symlink_to(shutil.which(tool))
    (only / "python3").symlink_to(sys.executable)
    if missing != "fly":
        (only / "fly").symlink_to(FAKEFLY)
    res = fly.deploy("actix", env={"PATH": str(only)})
    assert res.returncode == 2
    assert {"fly": "flyctl not found", "openssl": "openssl not found", "psql": "psql not found"}[missing] in res.stderr
    assert fly.calls() == []


def test_schema_only_stream(fly):
    ok(fly.deploy("actix"))
    (connect,) = [c for c in fly.calls() if c["command"] == "mpg connect"]
    sql = connect["stdin"]
    assert SCHEMA in sql and "ON_ERROR_STOP on" in sql and "BEGIN;" in sql and "COMMIT;" in sql
    assert "INSERT" not in sql.upper() and "seed" not in sql


# --------------------------------------------------------------------------------------------- against PostgreSQL


@pytest.fixture(scope="module")
def postgres():
    try:
        stackctl.pg_bindir()
    except stackctl.ToolError as e:
        pytest.skip(str(e))
    with stackctl.ThrowawayPostgres() as pg:
        yield pg


def empty_database(pg, name: str) -> str:
    pg.psql(f"DROP DATABASE IF EXISTS {name}")
    pg.psql(f"CREATE DATABASE {name}")
    return pg.url.rsplit("/", 1)[0] + f"/{name}"


def tables(url: str) -> dict:
    res = subprocess.run([stackctl.psql_bin(), url, "-X", "-A", "-t", "-c",
                          "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"],
                         capture_output=True, text=True, check=True)
    names = sorted(res.stdout.split())
    users = subprocess.run([stackctl.psql_bin(), url, "-X", "-A", "-t", "-c", "SELECT count(*) FROM users"],
                           capture_output=True, text=True, check=True).stdout.strip()
    return {"tables": names, "users": int(users)}


def test_managed_postgres_loads_the_schema_and_no_users(fly, postgres):
    url = empty_database(postgres, "fly_mpg")
    ok(fly.deploy("actix", env={"FAKEFLY_PSQL_URL": url}))
    ok(fly.deploy("actix", env={"FAKEFLY_PSQL_URL": url}))  # idempotent
    assert tables(url) == {"tables": ["channel_members", "channels", "messages", "users"], "users": 0}


def test_unmanaged_postgres_path(fly, postgres):
    url = empty_database(postgres, "simple_auth")
    ok(fly.deploy("akka", "--unmanaged", "--db", "sa-pg", env={"FAKEFLY_PSQL_URL": url}))
    assert fly.commands() == [
        "apps list", "apps create",
        "apps list", "postgres create",
        "secrets list", "postgres attach", "proxy",
        "secrets list", "secrets set", "deploy",
    ]
    attach = next(c for c in fly.calls() if c["command"] == "postgres attach")["argv"]
    assert attach[:3] == ["postgres", "attach", "sa-pg"] and "--database-name" in attach
    assert tables(url) == {"tables": ["channel_members", "channels", "messages", "users"], "users": 0}
    n = len(fly.calls())
    ok(fly.deploy("akka", "--unmanaged", "--db", "sa-pg", env={"FAKEFLY_PSQL_URL": url}))
    assert fly.commands()[n:] == ["apps list", "apps list", "secrets list", "secrets list", "deploy"]
