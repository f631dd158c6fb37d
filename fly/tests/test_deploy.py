"""fly/deploy.sh against the flyctl stand-in (fly/tests/fakefly): .venv/bin/python -m pytest fly

The stand-in fails the way flyctl does on a wrong argument, an unknown flag, or a --config /
Dockerfile / COPY source that does not resolve from the directory `fly deploy` changes into, so
these tests fail if deploy.sh calls flyctl the way the old README did.
"""
from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "fly" / "deploy.sh"
FAKEFLY = ROOT / "fly" / "tests" / "fakefly"
KEYS = ROOT / "spec" / "keys"
# Every private key of spec/keys/ (the dev signing keys, and the invalid ones: public all the same).
DEV_KEYS = sorted(p for p in KEYS.rglob("*.pem") if "PRIVATE KEY-----" in p.read_text())
BUNDLE_SECRET = "JWT_PUBLIC_KEYS_BASE64"
SCHEMA = (ROOT / "sql" / "schema.sql").read_text()

sys.path.insert(0, str(ROOT / "wrk"))
import stackctl  # noqa: E402

# sql/schema.sql's tables: the channel API's and the token service's own (spec/README.md §6).
SCHEMA_TABLES = ["channel_members", "channels", "login_failures", "messages", "refresh_tokens", "users"]


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
    # The config mounts the bundle secret as a file: no secret, no machine.
    res = fly.fly("deploy", stack, "--config", f"../fly/{stack}.toml")
    assert res.returncode != 0 and BUNDLE_SECRET in res.stderr, res.stderr
    ok(fly.fly("secrets", "set", f"{BUNDLE_SECRET}=not base64!", "--app", app))
    res = fly.fly("deploy", stack, "--config", f"../fly/{stack}.toml")
    assert res.returncode != 0 and "not base64" in res.stderr, res.stderr
    ok(fly.fly("secrets", "set", f"{BUNDLE_SECRET}={base64.b64encode(b'# none').decode()}", "--app", app))
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
        "secrets list", "secrets set",      # JWT_PRIVATE_KEY
        "secrets list", "secrets set",      # JWT_PUBLIC_KEYS_BASE64, the empty bundle
        "deploy",
    ]
    sets = [c["argv"] for c in fly.calls() if c["command"] == "secrets set"]
    assert [a[2] for a in sets] == ["JWT_PRIVATE_KEY=-", f"{BUNDLE_SECRET}=-"] and all("--stage" in a for a in sets)
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


def dev_public_keys() -> set[bytes]:
    return {public_der(k.read_bytes()) for k in DEV_KEYS}


def test_fresh_key_is_rsa_2048_pkcs8_and_not_a_dev_key(fly):
    ok(fly.deploy("zio"))
    pem = fly.state()["apps"]["simple-auth-zio"]["secrets"]["JWT_PRIVATE_KEY"]
    assert pem.startswith("-----BEGIN PRIVATE KEY-----")  # PKCS#8
    key = serialization.load_pem_private_key(pem.encode(), password=None)
    assert isinstance(key, rsa.RSAPrivateKey) and key.key_size == 2048
    assert public_der(pem.encode()) not in dev_public_keys()
    assert "PRIVATE KEY" not in json.dumps([c["argv"] for c in fly.calls()])  # never in argv


@pytest.mark.parametrize("key_type, check", [
    ("rsa-4096", lambda k: isinstance(k, rsa.RSAPrivateKey) and k.key_size == 4096),
    ("p-256", lambda k: isinstance(k, ec.EllipticCurvePrivateKey) and k.curve.name == "secp256r1"),
    ("ed25519", lambda k: isinstance(k, ed25519.Ed25519PrivateKey)),
])
def test_fresh_key_of_each_type(fly, key_type, check):
    res = ok(fly.deploy("actix", "--key-type", key_type))
    pem = fly.state()["apps"]["simple-auth-actix"]["secrets"]["JWT_PRIVATE_KEY"]
    assert pem.startswith("-----BEGIN PRIVATE KEY-----") and pem.count("-----BEGIN") == 1  # PKCS#8, one block
    assert check(serialization.load_pem_private_key(pem.encode(), password=None))
    assert public_der(pem.encode()) not in dev_public_keys()
    assert {"rsa-4096": "RS256", "p-256": "ES256", "ed25519": "EdDSA"}[key_type] in res.stderr
    assert "PRIVATE KEY" not in json.dumps([c["argv"] for c in fly.calls()])


def test_fresh_ec_key_names_its_curve(fly):
    """A JWK needs a named curve: explicit EC parameters would not say P-256."""
    ok(fly.deploy("actix", "--key-type", "p-256"))
    pem = fly.state()["apps"]["simple-auth-actix"]["secrets"]["JWT_PRIVATE_KEY"]
    text = subprocess.run(["openssl", "pkey", "-noout", "-text"], input=pem, capture_output=True, text=True).stdout
    assert "ASN1 OID: prime256v1" in text or "NIST CURVE: P-256" in text, text


def test_empty_bundle_is_mounted_at_jwt_public_keys_file(fly):
    import tomllib
    ok(fly.deploy("spring"))
    app = fly.state()["apps"]["simple-auth-spring"]
    bundle = base64.b64decode(app["secrets"][BUNDLE_SECRET], validate=True).decode()
    assert bundle.startswith("#") and "-----BEGIN" not in bundle  # no key: the contract's empty bundle
    path = tomllib.loads((ROOT / "fly" / "spring.toml").read_text())["env"]["JWT_PUBLIC_KEYS_FILE"]
    assert app["deployed"]["files"] == {path: bundle}


def test_rerun_is_idempotent(fly):
    ok(fly.deploy("spring"))
    first = fly.state()["apps"]["simple-auth-spring"]["secrets"]
    n = len(fly.calls())
    res = ok(fly.deploy("spring"))
    again = fly.commands()[n:]
    assert again == ["apps list", "mpg list", "secrets list", "mpg connect", "secrets list", "secrets list", "deploy"]
    assert fly.state()["apps"]["simple-auth-spring"]["secrets"] == first  # key, bundle and URL kept
    assert fly.state()["apps"]["simple-auth-spring"]["deploys"] == 2
    assert "already has JWT_PRIVATE_KEY: kept" in res.stderr
    assert f"already has {BUNDLE_SECRET}" in res.stderr


def test_rerun_keeps_a_published_bundle(fly, tmp_path):
    """A re-run must not reset a bundle that holds a rotation's keys."""
    ok(fly.deploy("akka"))
    bundle = base64.b64encode(b"# next\n" + public_pem(ed25519.Ed25519PrivateKey.generate())).decode()
    ok(fly.fly("secrets", "set", f"{BUNDLE_SECRET}={bundle}", "--app", "simple-auth-akka"))
    ok(fly.deploy("akka", "--key-type", "p-256"))
    assert fly.state()["apps"]["simple-auth-akka"]["secrets"][BUNDLE_SECRET] == bundle


def test_second_stack_shares_the_cluster(fly):
    ok(fly.deploy("actix"))
    ok(fly.deploy("akka"))
    assert fly.commands().count("mpg create") == 1
    assert len(fly.state()["mpg"]) == 1


def pkcs8(key) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())


def public_pem(key) -> bytes:
    return key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def test_every_dev_key_is_covered():
    names = {p.name for p in DEV_KEYS}
    assert {"dev-rsa-2048.pem", "dev-rsa-4096.pem", "dev-p256.pem", "dev-ed25519.pem", "ec-p256-sec1.pem"} <= names


@pytest.mark.parametrize("key", DEV_KEYS, ids=lambda p: p.name)
def test_dev_keys_are_refused(fly, tmp_path, key):
    copy = tmp_path / "innocent-looking.pem"  # by its public key, not its path
    shutil.copy(key, copy)
    for path in (key, copy):
        res = fly.deploy("actix", "--key", str(path))
        assert res.returncode == 2 and "development key" in res.stderr, res.stderr
    assert fly.calls() == []  # refused before anything is created


def test_a_key_of_the_dev_bundle_is_refused_in_pkcs8_form(fly, tmp_path):
    """dev-p256.pem rewritten (PKCS#8 again, other bytes): still its public key, still refused."""
    key = serialization.load_pem_private_key((KEYS / "invalid" / "ec-p256-sec1.pem").read_bytes(), password=None)
    (tmp_path / "k.pem").write_bytes(pkcs8(key))
    res = fly.deploy("actix", "--key", str(tmp_path / "k.pem"))
    assert res.returncode == 2 and "development key" in res.stderr, res.stderr


@pytest.mark.parametrize("make", [
    lambda: rsa.generate_private_key(public_exponent=65537, key_size=2048),
    lambda: rsa.generate_private_key(public_exponent=65537, key_size=3072),
    lambda: ec.generate_private_key(ec.SECP256R1()),
    lambda: ed25519.Ed25519PrivateKey.generate(),
], ids=["rsa-2048", "rsa-3072", "p-256", "ed25519"])
def test_own_key_is_used(fly, tmp_path, make):
    pem = pkcs8(make())
    (tmp_path / "k.pem").write_bytes(pem)
    ok(fly.deploy("actix", "--key", str(tmp_path / "k.pem")))
    assert fly.state()["apps"]["simple-auth-actix"]["secrets"]["JWT_PRIVATE_KEY"] == pem.decode().strip()


REFUSED = {
    "rsa-1024": (lambda: pkcs8(rsa.generate_private_key(public_exponent=65537, key_size=1024)), "2048"),
    "rsa-pkcs1": (lambda: rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()),
        "not PKCS#8"),
    "ec-sec1": (lambda: ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL, serialization.NoEncryption()),
        "not PKCS#8"),
    "ec-p384": (lambda: pkcs8(ec.generate_private_key(ec.SECP384R1())), "P-256 only"),
    "ec-secp256k1": (lambda: pkcs8(ec.generate_private_key(ec.SECP256K1())), "P-256 only"),
    "ed448": (lambda: pkcs8(ed448.Ed448PrivateKey.generate()), "ED448"),
    "encrypted": (lambda: ed25519.Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.BestAvailableEncryption(b"pw")),
        "encrypted"),
    "public-key": (lambda: public_pem(ed25519.Ed25519PrivateKey.generate()), "public key"),
    "two-keys": (lambda: pkcs8(ed25519.Ed25519PrivateKey.generate()) + pkcs8(ed25519.Ed25519PrivateKey.generate()),
                 "2 PEM blocks"),
    "not-a-key": (lambda: b"hello\n", "no private key"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_other_keys_are_refused(fly, tmp_path, name):
    make, message = REFUSED[name]
    (tmp_path / "k.pem").write_bytes(make())
    res = fly.deploy("actix", "--key", str(tmp_path / "k.pem"))
    assert res.returncode == 2 and message in res.stderr, res.stderr
    assert res.stderr.count("\n") == 1, "one clear line"
    assert fly.calls() == []


def test_key_type_option(fly, tmp_path):
    res = fly.deploy("actix", "--key-type", "p-384")
    assert res.returncode == 2 and "rsa-2048, rsa-4096, p-256, ed25519" in res.stderr
    (tmp_path / "k.pem").write_bytes(pkcs8(ed25519.Ed25519PrivateKey.generate()))
    res = fly.deploy("actix", "--key", str(tmp_path / "k.pem"), "--key-type", "ed25519")
    assert res.returncode == 2 and "give one of the two" in res.stderr
    assert fly.calls() == []


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
    assert tables(url) == {"tables": SCHEMA_TABLES, "users": 0}


def test_unmanaged_postgres_path(fly, postgres):
    url = empty_database(postgres, "simple_auth")
    ok(fly.deploy("akka", "--unmanaged", "--db", "sa-pg", env={"FAKEFLY_PSQL_URL": url}))
    assert fly.commands() == [
        "apps list", "apps create",
        "apps list", "postgres create",
        "secrets list", "postgres attach", "proxy",
        "secrets list", "secrets set", "secrets list", "secrets set", "deploy",
    ]
    attach = next(c for c in fly.calls() if c["command"] == "postgres attach")["argv"]
    assert attach[:3] == ["postgres", "attach", "sa-pg"] and "--database-name" in attach
    assert tables(url) == {"tables": SCHEMA_TABLES, "users": 0}
    n = len(fly.calls())
    ok(fly.deploy("akka", "--unmanaged", "--db", "sa-pg", env={"FAKEFLY_PSQL_URL": url}))
    assert fly.commands()[n:] == ["apps list", "apps list", "secrets list", "secrets list", "secrets list", "deploy"]


# --------------------------------------------------------------------------------------------- rotation on fly.io

ROTATION_DOC = ROOT / "docs" / "key-rotation.md"
JWKS_PEM = ROOT / "fly" / "jwks_pem.py"
# docs/key-rotation.md's fly.io commands, verbatim (the test fails if the document and these drift apart).
PUBLISH = "openssl base64 -A < bundle.pem | fly secrets set JWT_PUBLIC_KEYS_BASE64=- --app $APP"
SWITCH = "fly secrets set JWT_PRIVATE_KEY=- --app $APP < next.pem"
RETIRE = ("printf '# retired the previous key\\n' | openssl base64 -A | "
          "fly secrets set JWT_PUBLIC_KEYS_BASE64=- --app $APP")
SCALE = "fly scale count 2 --app $APP --yes"


def pem_blocks(text: str) -> list[bytes]:
    """DER of each public key in a bundle, in order (what a stack publishes after its signing key)."""
    return [serialization.load_pem_public_key(("-----BEGIN PUBLIC KEY-----" + b).encode())
            .public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
            for b in text.split("-----BEGIN PUBLIC KEY-----")[1:]]


def test_rotation_commands_run_against_flyctl(fly, tmp_path):
    doc = ROTATION_DOC.read_text()
    for line in (PUBLISH, SWITCH, RETIRE, SCALE):
        assert line in doc, line
    old = ed25519.Ed25519PrivateKey.generate()
    (tmp_path / "old.pem").write_bytes(pkcs8(old))
    ok(fly.deploy("actix", "--key", str(tmp_path / "old.pem")))
    app = "simple-auth-actix"
    path = "/etc/simple-auth/jwt-public-keys.pem"

    def run(line: str) -> None:
        ok(subprocess.run(["bash", "-euo", "pipefail", "-c", line], cwd=tmp_path, env={**fly.env, "APP": app},
                          capture_output=True, text=True, timeout=60))

    nxt = ec.generate_private_key(ec.SECP256R1())
    (tmp_path / "next.pem").write_bytes(pkcs8(nxt))
    # 1. publish: the served keys (here: old's, as fly/jwks_pem.py would print it) and the next key
    (tmp_path / "bundle.pem").write_bytes(b"# kid=... alg=EdDSA\n" + public_pem(old) + public_pem(nxt))
    run(SCALE)
    run(PUBLISH)
    state = fly.state()["apps"][app]
    assert state["restarts"] == 1 and state["secrets"]["JWT_PRIVATE_KEY"] == pkcs8(old).decode().strip()
    assert pem_blocks(state["deployed"]["files"][path]) == [public_der(pkcs8(old)), public_der(pkcs8(nxt))]
    # 2. switch: the bundle stays, so every machine publishes both keys before and after
    run(SWITCH)
    state = fly.state()["apps"][app]
    assert state["restarts"] == 2 and state["secrets"]["JWT_PRIVATE_KEY"] == pkcs8(nxt).decode().strip()
    assert pem_blocks(state["deployed"]["files"][path]) == [public_der(pkcs8(old)), public_der(pkcs8(nxt))]
    # 3. retire: an empty bundle, still a file
    run(RETIRE)
    state = fly.state()["apps"][app]
    assert state["restarts"] == 3 and state["deployed"]["files"][path] == "# retired the previous key\n"
    assert "PRIVATE KEY" not in json.dumps([c["argv"] for c in fly.calls()])  # never in argv


def test_jwks_pem_gives_back_the_dev_bundle(tmp_path):
    """spec/vectors.json's JWKS of the dev bundle -> the bundle's own keys, byte for byte, in order."""
    vectors = json.loads((ROOT / "spec" / "vectors.json").read_text())["public_key_bundle"]
    (tmp_path / "jwks.json").write_text(json.dumps(vectors["jwks"]))
    res = ok(subprocess.run([sys.executable, str(JWKS_PEM), str(tmp_path / "jwks.json")], capture_output=True,
                            text=True))
    expected = (ROOT / "spec" / vectors["file"]).read_text()
    assert "".join(l + "\n" for l in res.stdout.splitlines() if not l.startswith("#")) == expected
    assert [l.split()[1] for l in res.stdout.splitlines() if l.startswith("#")] == [f"kid={k}" for k in vectors["kids"]]
    assert pem_blocks(res.stdout) == pem_blocks(expected)


def test_jwks_pem_refuses_a_wrong_kid_and_other_types(tmp_path):
    vectors = json.loads((ROOT / "spec" / "vectors.json").read_text())["public_key_bundle"]
    for change, message in [
        (lambda k: k.update(kid="AAAA"), "thumbprint"),
        (lambda k: k.update(kty="EC", crv="P-384"), "none of the contract's types"),
    ]:
        jwks = json.loads(json.dumps(vectors["jwks"]))
        change(jwks["keys"][-1])
        res = subprocess.run([sys.executable, str(JWKS_PEM), "-"], input=json.dumps(jwks), capture_output=True,
                             text=True)
        assert res.returncode == 2 and message in res.stderr and res.stdout == "", res.stderr
