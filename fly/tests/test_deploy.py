"""fly/deploy.sh against the flyctl stand-in (fly/tests/fakefly): .venv/bin/python -m pytest fly

The stand-in fails the way flyctl does on a wrong argument, an unknown flag, or a --config /
Dockerfile / COPY source that does not resolve from the directory `fly deploy` changes into, and
it can be told to fail any call (FAKEFLY_FAIL). deploy.sh runs here in a small copy of the
repository (its fly/ configs, sql/schema.sql, spec/keys/, and a stand-in Dockerfile per stack
laid out like the real ones: the repository root as the context, <stack>/Dockerfile.dockerignore),
so its tests do not depend on a stack's build; the stacks' own Dockerfiles and ignore files are
checked against the stand-in's build rules in test_the_stacks_build_from_the_repository_root.
"""
from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
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
STACKS = sorted(p.stem for p in (ROOT / "fly").glob("*.toml"))
PYCACHE = Path(tempfile.gettempdir()) / f"fakefly-pycache-{os.getuid()}"

sys.path.insert(0, str(ROOT / "wrk"))
import stackctl  # noqa: E402

# sql/schema.sql's tables: the channel API's and the token service's own (spec/README.md §6).
SCHEMA_TABLES = ["channel_members", "channels", "login_failures", "messages", "refresh_tokens", "sessions", "users"]
FIRST_RUN = ["apps list", "apps create", "secrets list",
             "mpg list", "mpg create", "mpg list", "mpg attach", "mpg connect",
             "secrets set",     # JWT_PRIVATE_KEY
             "secrets set",     # JWT_PUBLIC_KEYS_BASE64, the empty bundle
             "ips list", "ips allocate-v6", "ips allocate-v4", "ips list",  # the app's addresses, for TRUSTED_PROXIES
             "deploy"]
RERUN = ["apps list", "secrets list", "mpg list", "mpg connect", "ips list", "deploy"]
READS = {"apps list", "secrets list", "mpg list", "ips list"}
KEY = ("--key-type", "ed25519")  # the cheapest fresh key (the tests run deploy.sh a hundred times)


def mini_repo(at: Path) -> Path:
    """deploy.sh, the real fly configs, the schema, spec/keys/, and per stack a Dockerfile that builds from
    the repository root the way the stacks' do (COPY <stack>/..., <stack>/Dockerfile.dockerignore)."""
    (at / "fly").mkdir(parents=True)
    shutil.copy(DEPLOY, at / "fly" / "deploy.sh")
    for stack in STACKS:
        shutil.copy(ROOT / "fly" / f"{stack}.toml", at / "fly" / f"{stack}.toml")
        (at / stack / "src").mkdir(parents=True)
        (at / stack / "src" / "main").write_text("")
        (at / stack / "Dockerfile").write_text(
            f"FROM scratch AS build\nCOPY {stack}/src /src\nFROM scratch AS runtime-prebuilt\n"
            f"COPY target/{stack} /app\nFROM scratch AS runtime\nCOPY --from=build /src /app\n")
        (at / stack / "Dockerfile.dockerignore").write_text(f"*\n!{stack}/src\n")
    (at / "sql").mkdir()
    shutil.copy(ROOT / "sql" / "schema.sql", at / "sql" / "schema.sql")
    shutil.copytree(KEYS, at / "spec" / "keys")
    return at


class Fly:
    """A fake fly.io account: a PATH with `fly` first, and what the stand-in recorded."""

    def __init__(self, tmp: Path, repo: Path | None = None):
        self.tmp = tmp
        self.repo = repo or mini_repo(tmp / "repo")
        self.bin = tmp / "bin"
        self.bin.mkdir(parents=True)
        (self.bin / "fly").symlink_to(FAKEFLY)
        # The stand-in and deploy.sh's JSON reading run this Python (a version manager's shim costs ~0.5 s a call).
        (self.bin / "python3").symlink_to(sys.executable)
        self.state_dir = tmp / "fly-state"
        # The stand-in's bytecode cached once for every call (it is a module behind fly/tests/fakefly).
        self.env = {**os.environ, "PATH": f"{self.bin}:{os.environ['PATH']}", "FAKEFLY_STATE": str(self.state_dir),
                    "DEPLOY_POLL_SECONDS": "0", "PYTHONPYCACHEPREFIX": str(PYCACHE)}
        for var in ("PYTHONDONTWRITEBYTECODE", "FLY_ORG", "FAKEFLY_FAIL", "FAKEFLY_LEAK", "FAKEFLY_MPG_PROVISIONING", "FAKEFLY_DATABASE_DOWN",
                    "FAKEFLY_MPG_FINAL_STATUS", "FAKEFLY_PSQL_URL", "DEPLOY_MPG_WAIT_SECONDS"):
            self.env.pop(var, None)

    def deploy(self, *args: str, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", str(self.repo / "fly" / "deploy.sh"), *args], cwd=cwd or self.tmp,
                              env={**self.env, **(env or {})}, capture_output=True, text=True, timeout=120)

    def fly(self, *args: str, cwd: Path | None = None, stdin: str | None = None,
            env: dict | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.bin / "fly"), *args], cwd=cwd or ROOT, env={**self.env, **(env or {})},
                              input=stdin, capture_output=True, text=True, timeout=60)

    def calls(self) -> list[dict]:
        path = self.state_dir / "calls.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    def commands(self) -> list[str]:
        return [c["command"] for c in self.calls()]

    def state(self) -> dict:
        path = self.state_dir / "state.json"
        return json.loads(path.read_text()) if path.exists() else {"apps": {}, "mpg": {}, "postgres": {}}

    def secrets(self, app: str = "simple-auth-actix") -> dict:
        return self.state()["apps"].get(app, {}).get("secrets", {})

    def clone(self, tmp: Path) -> Fly:
        """Another account in the same state as this one (same repository copy)."""
        other = Fly(tmp, self.repo)
        if self.state_dir.exists():
            shutil.copytree(self.state_dir, other.state_dir)
        return other


@pytest.fixture
def fly(tmp_path):
    return Fly(tmp_path)


@pytest.fixture(scope="module")
def deployed(tmp_path_factory) -> Fly:
    """An account in which `fly/deploy.sh actix` ran once: the tests that start there clone it."""
    base = Fly(tmp_path_factory.mktemp("deployed"))
    ok(base.deploy("actix", *KEY))
    assert base.commands() == FIRST_RUN
    return base


def ok(res: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert res.returncode == 0, f"exit {res.returncode}\nstdout:\n{res.stdout}\nstderr:\n{res.stderr}"
    return res


def public_der(pem: bytes) -> bytes:
    key = serialization.load_pem_private_key(pem, password=None)
    return key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)


# --------------------------------------------------------------------------------------------- the stand-in


def test_fakefly_changes_into_the_working_directory_first(fly):
    """`fly deploy actix --config fly/actix.toml` from the root: deploy changes into actix/ first."""
    ok(fly.fly("apps", "create", "simple-auth-actix"))
    res = fly.fly("deploy", "actix", "--config", "fly/actix.toml", cwd=fly.repo)
    assert res.returncode != 0 and "config file not found" in res.stderr


def secrets_for_a_machine(fly: Fly, app: str) -> None:
    ok(fly.fly("secrets", "set", "DATABASE_URL=postgres://x", "JWT_PRIVATE_KEY=k",
               f"{BUNDLE_SECRET}={base64.b64encode(b'# none').decode()}", "--app", app))


@pytest.mark.parametrize("stack", STACKS)
def test_the_stacks_build_from_the_repository_root(fly, stack):
    """The real Dockerfile and Dockerfile.dockerignore of each stack, with the documented command
    (`fly deploy --config fly/STACK.toml` from the root): every COPY source is in the context as BOTH of
    flyctl's builders filter it, and neither context holds the repository's bulk."""
    app = f"simple-auth-{stack}"
    ok(fly.fly("apps", "create", app))
    secrets_for_a_machine(fly, app)
    ok(fly.fly("deploy", "--config", f"fly/{stack}.toml", cwd=ROOT))
    deployed = fly.state()["apps"][app]["deployed"]
    assert deployed["context"] == str(ROOT) and deployed["dockerfile"] == str(ROOT / stack / "Dockerfile")
    artifact = (ROOT / stack / json.loads((ROOT / stack / "stack.json").read_text())["artifact"]).resolve()
    for builder, ctx in deployed["contexts"].items():
        assert ctx["ignore"] == str(ROOT / stack / "Dockerfile.dockerignore"), builder
        assert ctx["files"] < 2000, (builder, ctx["files"], ctx["top"])
        assert not {".git", ".venv", "results", "fly", "spec", "docs"} & set(ctx["top"]), (builder, ctx["top"])
        # Of wrk/, only the benchmark floor's manifest may go in (the Cargo workspace names it as a member).
        assert {p for p in ctx["paths"] if p.startswith("wrk/")} <= {"wrk/floor/Cargo.toml"}, (builder, ctx["top"])
        # Another stack's sources, or a build's output other than this stack's artifact (what the prebuilt
        # target copies), never: a context holds what this image needs.
        others = [p for p in ctx["paths"] if any(p.startswith(f"{s}/src/") for s in STACKS if s != stack)]
        built = [p for p in ctx["paths"] if "target" in p.split("/")
                 and not str((ROOT / p).resolve()).startswith(str(artifact.parent))]
        assert not others and not built, (builder, others[:5], built[:5])


def test_fakefly_filters_the_context_as_each_builder_does(fly, tmp_path):
    """BuildKit reads <Dockerfile>.dockerignore; flyctl's classic builder reads [build] ignorefile or the
    context's .dockerignore (internal/build/imgsrc/archive.go)."""
    ctx = tmp_path / "ctx"
    (ctx / "svc" / "src").mkdir(parents=True)
    (ctx / "svc" / "src" / "main.rs").write_text("")
    (ctx / "big").mkdir()
    (ctx / "big" / "blob").write_text("x")
    (ctx / "svc" / "Dockerfile").write_text("FROM scratch AS build\nCOPY svc/src ./src\nFROM scratch AS runtime\n"
                                            "COPY --from=build /src /src\n")
    (ctx / "svc" / "Dockerfile.dockerignore").write_text("*\n!svc/src\n")
    (ctx / ".dockerignore").write_text("svc\n")
    config = '[env]\nDATABASE_URL = "x"\nJWT_PRIVATE_KEY = "y"\n[build]\ndockerfile = "svc/Dockerfile"\n'
    (ctx / "fly.toml").write_text('app = "demo"\n' + config)
    ok(fly.fly("apps", "create", "demo"))
    res = fly.fly("deploy", str(ctx))
    assert res.returncode != 0 and "classic build" in res.stderr and "excluded" in res.stderr, res.stderr
    (ctx / "fly.toml").write_text('app = "demo"\n' + config + 'ignorefile = "svc/Dockerfile.dockerignore"\n')
    ok(fly.fly("deploy", str(ctx)))
    contexts = fly.state()["apps"]["demo"]["deployed"]["contexts"]
    assert contexts["BuildKit"]["top"] == contexts["classic"]["top"] == ["svc"]
    (ctx / "svc" / "Dockerfile.dockerignore").unlink()
    res = fly.fly("deploy", str(ctx))
    assert res.returncode != 0 and "BuildKit build" in res.stderr, res.stderr


def test_fakefly_refuses_unknown_flags_and_wrong_arity(fly):
    assert "unknown flag: --bogus" in fly.fly("apps", "list", "--bogus").stderr
    assert fly.fly("postgres", "attach", "--app", "x").returncode != 0  # needs exactly one POSTGRES APP
    assert fly.fly("deploy", "a", "b").returncode != 0
    assert "needs an argument" in fly.fly("secrets", "set", "A=b", "--app").stderr
    assert fly.fly("nonsense").returncode != 0


def test_fakefly_fails_any_call_it_is_told_to(fly):
    ok(fly.fly("apps", "create", "a1"))                                       # call 1
    res = fly.fly("apps", "create", "a2", env={"FAKEFLY_FAIL": "2:fail"})     # call 2: refused, nothing done
    assert res.returncode == 1 and "502" in res.stderr and "a2" not in fly.state()["apps"]
    res = fly.fly("apps", "create", "a3", env={"FAKEFLY_FAIL": "3:after"})    # call 3: done, then the 502
    assert res.returncode == 1 and "502" in res.stderr and "a3" in fly.state()["apps"]
    res = fly.fly("apps", "list", "--json", env={"FAKEFLY_FAIL": "apps list:garbage"})
    assert res.returncode == 0 and res.stdout.startswith("<html>")
    res = fly.fly("apps", "list", "--json", env={"FAKEFLY_FAIL": "9:fail"})  # not its number
    assert res.returncode == 0 and json.loads(res.stdout)


def test_fakefly_waits_for_every_configured_check(fly, tmp_path):
    """flyctl's deploy waits for the top-level [checks] as for the service's: during a database outage a
    /health check holds the deploy (and fails it), a /health/live check does not."""
    ok(fly.fly("apps", "create", "simple-auth-actix"))
    secrets_for_a_machine(fly, "simple-auth-actix")
    down = {"FAKEFLY_DATABASE_DOWN": "1"}
    ok(fly.fly("deploy", "--config", "fly/actix.toml", cwd=fly.repo, env=down))
    config = fly.repo / "fly" / "actix.toml"
    config.write_text(config.read_text() + '\n[checks.database]\n  type = "http"\n  port = 8080\n  path = "/health"\n')
    res = fly.fly("deploy", "--config", "fly/actix.toml", cwd=fly.repo, env=down)
    assert res.returncode != 0 and "timeout reached waiting for health checks" in res.stderr


# --------------------------------------------------------------------------------------------- deploy.sh


def test_first_run_sequence(fly):
    res = ok(fly.deploy("actix"))
    assert fly.commands() == FIRST_RUN
    sets = [c["argv"] for c in fly.calls() if c["command"] == "secrets set"]
    assert [a[2] for a in sets] == ["JWT_PRIVATE_KEY=-", f"{BUNDLE_SECRET}=-"] and all("--stage" in a for a in sets)
    calls = {c["command"]: c for c in fly.calls()}
    assert calls["apps create"]["argv"][2] == "simple-auth-actix"
    create = calls["mpg create"]["argv"]
    assert create[create.index("--region") + 1] == "ams"  # the config's primary_region
    # Absolute paths, the repository root as the context: right whatever the caller's working directory.
    assert calls["deploy"]["argv"][:4] == ["deploy", str(fly.repo), "--config", str(fly.repo / "fly" / "actix.toml")]
    deployed = fly.state()["apps"]["simple-auth-actix"]["deployed"]
    assert deployed["dockerfile"] == str(fly.repo / "actix" / "Dockerfile")
    assert "https://simple-auth-actix.fly.dev" in res.stdout
    assert "make bench BENCH_ARGS=\"--url actix=https://simple-auth-actix.fly.dev\"" in res.stdout
    assert re.search(r"curl .*https://simple-auth-actix\.fly\.dev/token -d grant_type=password", res.stdout)


def trusted(run: Fly, app: str = "simple-auth-actix") -> list[str]:
    """TRUSTED_PROXIES as the deployed machines have it."""
    return run.state()["apps"][app]["deployed"]["env"]["TRUSTED_PROXIES"].split(",")


def addresses(run: Fly, app: str = "simple-auth-actix") -> list[str]:
    return [ip["Address"] for ip in run.state()["apps"][app]["ips"]]


def test_trusted_proxies_are_the_proxy_range_and_the_apps_addresses(fly):
    """fly's proxy appends the address the client connected to (one of the app's) as the last X-Forwarded-For
    entry: the machines trust the config's proxy range and every address of the app, allocated before the first
    deploy (a dedicated IPv6, a shared IPv4) so that the first deploy has them too."""
    ok(fly.deploy("actix", *KEY))
    ips = fly.state()["apps"]["simple-auth-actix"]["ips"]
    assert sorted(ip["Type"] for ip in ips) == ["shared_v4", "v6"]
    deploy = [c for c in fly.calls() if c["command"] == "deploy"][-1]["argv"]
    assert deploy[4:] == ["--env", "TRUSTED_PROXIES=" + ",".join(["172.16.0.0/12", *addresses(fly)])]
    assert trusted(fly) == ["172.16.0.0/12", *addresses(fly)]
    # A re-run allocates nothing; an address added meanwhile (a dedicated IPv4) is trusted from the next deploy.
    ok(fly.fly("ips", "allocate-v6", "--private", "--app", "simple-auth-actix"))
    n = len(fly.calls())
    ok(fly.deploy("actix", *KEY))
    assert fly.commands()[n:] == RERUN
    assert len(addresses(fly)) == 3 and trusted(fly) == ["172.16.0.0/12", *addresses(fly)]


def test_an_app_with_a_dedicated_ipv4_gets_no_shared_one(fly):
    ok(fly.fly("apps", "create", "simple-auth-actix"))
    ok(fly.fly("ips", "allocate-v4", "--app", "simple-auth-actix"))
    ok(fly.deploy("actix", *KEY))
    assert sorted(ip["Type"] for ip in fly.state()["apps"]["simple-auth-actix"]["ips"]) == ["v4", "v6"]
    assert trusted(fly) == ["172.16.0.0/12", *addresses(fly)]


def test_an_answer_that_is_not_an_address_list_stops_the_run(fly):
    for mode in ("garbage",):
        res = fly.deploy("actix", *KEY, env={"FAKEFLY_FAIL": f"ips list:{mode}"})
        assert res.returncode == 1 and "fly ips list: flyctl answered something that is not its JSON" in res.stderr
        assert "deploy" not in fly.commands()


def test_the_dockerfile_ignore_file_is_required(fly):
    """Without it every builder would be sent the whole repository (the context is the root)."""
    (fly.repo / "axum" / "Dockerfile.dockerignore").unlink()
    res = fly.deploy("axum")
    assert res.returncode == 2 and "axum/Dockerfile.dockerignore not found" in res.stderr
    assert fly.calls() == []


def test_plan_names(fly):
    res = fly.deploy("actix", "--plan", "performance")
    assert res.returncode == 2 and "basic, starter, launch, scale" in res.stderr and fly.calls() == []
    ok(fly.deploy("actix", "--plan", "starter", "--key-type", "ed25519"))
    assert [c["plan"] for c in fly.state()["mpg"].values()] == ["starter"]


# --------------------------------------------------------------------------------------------- flyctl failing


def modes(command: str) -> list[str]:
    """fail: refused, nothing done; after: done, then the error (the answer was lost); garbage: done, exit 0,
    an HTML error page instead of the answer. A read that fails after it was done is just a failed read."""
    return ["fail", "garbage"] if command in READS else ["fail", "after", "garbage"]


def cases(commands: list[str]) -> list[tuple[int, str, str]]:
    return [(n, c, m) for n, c in enumerate(commands, 1) for m in modes(c)]


def run_all(check, items) -> None:
    """Runs check(item) for every item, four at a time (each runs deploy.sh, which waits on processes);
    fails with every case that broke, not only the first."""
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda item: (item, _try(check, item)), items))
    broken = [f"{item}: {err}" for item, err in results if err]
    assert not broken, f"{len(broken)} of {len(results)} cases broke:\n" + "\n\n".join(broken)


def _try(check, item) -> str | None:
    try:
        check(item)
    except AssertionError as e:
        return str(e) or repr(e)
    return None


def stopped_cleanly(res: subprocess.CompletedProcess, run: Fly, calls_before: int, position: int, command: str):
    """Non-zero, the last line says what failed, and nothing was called after the failed call."""
    assert res.returncode == 1, f"exit {res.returncode}\n{res.stderr}"
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("deploy: ") and ("stopped" in last or "failed" in last), last
    made = run.commands()[calls_before:]
    assert len(made) == position and made[-1] == command, made


def test_every_call_of_a_rerun_failing(deployed, tmp_path):
    """A re-run with call N failing, for every N and every way: it stops (non-zero, one clear line) or it
    did all its work; no secret is ever replaced or dropped."""
    fly = deployed
    base = fly.clone(tmp_path / "clean")
    n = len(base.calls())
    ok(base.deploy("actix", *KEY))
    assert base.commands()[n:] == RERUN
    before = fly.secrets()

    def check(case):
        position, command, mode = case
        run = fly.clone(tmp_path / f"re-{position}-{mode}")
        calls_before = len(run.calls())
        res = run.deploy("actix", *KEY, env={"FAKEFLY_FAIL": f"{calls_before + position}:{mode}"})
        assert run.secrets() == before, "a secret was replaced or dropped"
        if res.returncode == 0:
            assert run.commands()[calls_before:] == RERUN, "exit 0 with work skipped"
            assert run.state()["apps"]["simple-auth-actix"]["deploys"] == 2
        else:
            stopped_cleanly(res, run, calls_before, position, command)

    run_all(check, cases(RERUN))


def test_every_call_of_a_first_run_failing(fly, tmp_path):
    """A first run with call N failing, for every N and every way, then a plain re-run: the re-run
    finishes, and every secret the failed run staged is still the same value (a half-done run never
    leaves a key that the next run replaces); one cluster, never two. The re-run is made once for each
    state a failure can leave (what exists, not the random values: the same state, the same re-run)."""
    ok(fly.deploy("actix", *KEY))
    assert fly.commands() == FIRST_RUN
    recovered, lock = set(), threading.Lock()

    def shape(run: Fly) -> tuple:
        state = run.state()
        app = state["apps"].get("simple-auth-actix", {})
        return (tuple(sorted(state["apps"])), tuple(sorted(app.get("secrets", {}))), app.get("deploys"),
                tuple(sorted((c["status"], tuple(c["attached_apps"])) for c in state["mpg"].values())))

    def check(case):
        position, command, mode = case
        run = Fly(tmp_path / f"first-{position}-{mode}", fly.repo)
        res = run.deploy("actix", *KEY, env={"FAKEFLY_FAIL": f"{position}:{mode}"})
        staged = run.secrets()
        if res.returncode == 0:
            assert run.commands() == FIRST_RUN, "exit 0 with work skipped"
            assert {"DATABASE_URL", "JWT_PRIVATE_KEY", BUNDLE_SECRET} <= set(staged)
            assert run.state()["apps"]["simple-auth-actix"]["deploys"] == 1
            return
        stopped_cleanly(res, run, 0, position, command)
        with lock:
            if shape(run) in recovered:
                return
            recovered.add(shape(run))
        ok(run.deploy("actix", *KEY))
        final = run.secrets()
        assert {k: final.get(k) for k in staged} == staged, "the re-run replaced what the failed run staged"
        assert {"DATABASE_URL", "JWT_PRIVATE_KEY", BUNDLE_SECRET} <= set(final)
        assert run.state()["apps"]["simple-auth-actix"]["deploys"] >= 1 and len(run.state()["mpg"]) == 1

    run_all(check, cases(FIRST_RUN))
    assert len(recovered) >= 7, recovered  # nothing; the app; + cluster; + URL; + key; + bundle; + deploy


def test_every_call_of_an_unmanaged_rerun_failing(fly, tmp_path):
    """The --unmanaged re-run (apps list, secrets list, deploy), each call failing in turn."""
    ok(fly.fly("apps", "create", "simple-auth-zio"))
    ok(fly.fly("postgres", "create", "--name", "sa-pg", "--region", "ams"))
    ok(fly.fly("secrets", "set", "DATABASE_URL=postgres://u:p@sa-pg.flycast/simple_auth", "--app", "simple-auth-zio"))
    ok(fly.deploy("zio", "--unmanaged", "--db", "sa-pg", *KEY))
    base = fly.clone(tmp_path / "clean")
    n = len(base.calls())
    ok(base.deploy("zio", "--unmanaged", "--db", "sa-pg", *KEY))
    rerun = base.commands()[n:]
    assert rerun == ["apps list", "secrets list", "ips list", "deploy"]
    before = fly.secrets("simple-auth-zio")

    def check(case):
        position, command, mode = case
        run = fly.clone(tmp_path / f"un-{position}-{mode}")
        calls_before = len(run.calls())
        res = run.deploy("zio", "--unmanaged", "--db", "sa-pg", *KEY,
                         env={"FAKEFLY_FAIL": f"{calls_before + position}:{mode}"})
        assert run.secrets("simple-auth-zio") == before
        if res.returncode == 0:
            assert run.commands()[calls_before:] == rerun
        else:
            stopped_cleanly(res, run, calls_before, position, command)

    run_all(check, cases(rerun))


def test_an_unmanaged_run_stopped_after_the_attach_says_what_is_left(fly):
    """--unmanaged loads the schema with the URL that only the attach prints (a secret cannot be read
    back): a run stopped after the attach says so, and the re-run says what it cannot check."""
    res = fly.deploy("akka", "--unmanaged", "--db", "sa-pg", *KEY, env={"FAKEFLY_FAIL": "postgres attach:after"})
    last = res.stderr.strip().splitlines()[-1]
    assert res.returncode == 1 and "the attach was done" in last and "sql/schema.sql not loaded" in last, res.stderr
    res = ok(fly.deploy("akka", "--unmanaged", "--db", "sa-pg", *KEY))
    assert "fly postgres connect --app sa-pg --database simple_auth" in res.stderr


def test_a_failed_secrets_read_generates_nothing(deployed, tmp_path):
    """The issue's case: `fly secrets list` answering 502 (or garbage) on a re-run."""
    fly = deployed.clone(tmp_path)
    before = fly.secrets()
    for mode in ("fail", "garbage"):
        n = len(fly.calls())
        res = fly.deploy("actix", *KEY, env={"FAKEFLY_FAIL": f"secrets list:{mode}"})
        assert res.returncode == 1 and "fly secrets list" in res.stderr.splitlines()[-1], res.stderr
        assert fly.commands()[n:] == ["apps list", "secrets list"] and fly.secrets() == before
    n = len(fly.calls())
    res = fly.deploy("actix", *KEY, env={"FAKEFLY_FAIL": "secrets list:fail"})
    assert "502" in res.stderr.splitlines()[-1] and res.stderr.count("\n") <= 2, res.stderr


# --------------------------------------------------------------------------------------------- no secret shown


def test_no_password_or_connection_string_is_shown(fly, tmp_path):
    """flyctl prints them (mpg create, both attach commands; here also every call, on stderr first, as a
    debug line or an error message might); the script's output never carries one: not on a first run, a
    re-run, or a run stopped by a failing call (whose first stderr line it quotes, masked)."""
    leak = {"FAKEFLY_LEAK": "1"}
    outputs = []
    res = ok(fly.deploy("actix", *KEY, env=leak))
    outputs.append(res.stdout + res.stderr)
    res = ok(fly.deploy("actix", *KEY, env=leak))
    outputs.append(res.stdout + res.stderr)

    def check(case):  # zio's first run, the cluster there: every call can print its password
        command, mode = case
        run = fly.clone(tmp_path / f"leak-{command}-{mode}")
        res = run.deploy("zio", *KEY, env={**leak, "FAKEFLY_FAIL": f"{command}:{mode}"})
        outputs.append(res.stdout + res.stderr)
        assert res.returncode == 1, res.stderr
        assert mode == "garbage" or "DEBUG" in res.stderr, res.stderr  # quoted, masked

    run_all(check, [("apps list", "fail"), ("secrets list", "garbage"), ("mpg attach", "after"),
                    ("mpg connect", "fail"), ("secrets set", "after"), ("deploy", "fail")])
    (c,) = fly.state()["mpg"].values()
    shown = "\n".join(outputs)
    assert c["password"] not in shown and not re.search(r"pw-[0-9a-f]{16}", shown), shown
    assert "flympg.net" not in shown and "postgresql://" not in shown, shown
    raw = fly.fly("mpg", "create", "--name", "x", "--region", "ams", "--org", "personal")
    assert "postgresql://fly-user:pw-" in raw.stdout, "the stand-in prints what flyctl prints"


# --------------------------------------------------------------------------------------------- one database


def test_db_on_an_app_with_a_database_is_refused(deployed, tmp_path):
    """--db naming another cluster than the one the app is attached to: refused before anything is created,
    with the commands that switch on purpose; they work as printed."""
    fly = deployed.clone(tmp_path)
    ok(fly.deploy("actix", "--db", "simple-auth-db", *KEY))  # the same one again: fine
    n = len(fly.calls())
    res = fly.deploy("actix", "--db", "other-db", *KEY)
    last = res.stderr.strip().splitlines()[-1]
    assert res.returncode == 2 and "refused" in last and "other-db" in last, res.stderr
    assert fly.commands()[n:] == ["apps list", "secrets list", "mpg list"] and len(fly.state()["mpg"]) == 1
    steps = last.split("to switch on purpose", 1)[1].split(": ", 1)[1].strip().split(", then ")
    (old,) = fly.state()["mpg"]
    assert steps == [f"fly mpg detach {old} --app simple-auth-actix",
                     "fly secrets unset DATABASE_URL --app simple-auth-actix --stage",
                     "fly/deploy.sh actix --db other-db"]
    for step in steps[:2]:
        ok(fly.fly(*step.split()[1:]))
    ok(fly.deploy(*steps[2].split()[1:], *KEY))
    new = next(c for c in fly.state()["mpg"].values() if c["name"] == "other-db")
    assert f"pgbouncer.{new['id']}." in fly.secrets()["DATABASE_URL"]
    assert new["attached_apps"] == ["simple-auth-actix"] and fly.state()["mpg"][old]["attached_apps"] == []
    ok(fly.deploy("actix", *KEY))  # no --db: the cluster the app is attached to
    assert fly.calls()[-3]["argv"][:3] == ["mpg", "connect", new["id"]]


def test_db_with_a_database_of_your_own(fly):
    """DATABASE_URL set by hand: kept; --db would add a second database, refused."""
    ok(fly.fly("apps", "create", "simple-auth-actix"))
    ok(fly.fly("secrets", "set", "DATABASE_URL=postgres://me@db.example.org/auth", "--app", "simple-auth-actix"))
    res = ok(fly.deploy("actix", *KEY))
    assert "a database of your own" in res.stderr and "mpg create" not in fly.commands()
    res = fly.deploy("actix", "--db", "simple-auth-db", *KEY)
    assert res.returncode == 2 and "fly secrets unset DATABASE_URL" in res.stderr
    assert "mpg create" not in fly.commands()


def test_a_lost_attachment_record_still_gets_the_schema(deployed, tmp_path):
    """flyctl's attach sets DATABASE_URL, then records the attachment, and only warns when that fails: the
    re-run finds the app attached nowhere and loads the schema into the cluster named --db."""
    fly = Fly(tmp_path, deployed.repo)
    ok(fly.deploy("actix", *KEY, env={"FAKEFLY_MPG_NO_ATTACHMENT_RECORD": "1"}))
    (c,) = fly.state()["mpg"].values()
    assert c["attached_apps"] == [] and "DATABASE_URL" in fly.secrets()
    n = len(fly.calls())
    res = ok(fly.deploy("actix", *KEY))
    assert fly.commands()[n:] == RERUN and fly.calls()[-3]["argv"][:3] == ["mpg", "connect", c["id"]]
    assert "no cluster lists it as attached" in res.stderr


def test_waits_for_the_cluster_to_be_ready(fly):
    """`fly mpg create` broke off while the cluster provisions; the re-run waits for "ready" before it
    attaches (flyctl's own attach would hand out no credentials before)."""
    slow = {"FAKEFLY_MPG_PROVISIONING": "3", "DEPLOY_MPG_WAIT_SECONDS": "60"}
    res = fly.deploy("actix", *KEY, env=slow)
    assert res.returncode == 1 and "fly mpg create" in res.stderr.splitlines()[-1]
    assert not fly.secrets()
    n = len(fly.calls())
    res = ok(fly.deploy("actix", *KEY, env=slow))
    assert fly.commands()[n:] == ["apps list", "secrets list", "mpg list", "mpg list", "mpg list", "mpg list",
                                  "mpg attach", "mpg connect", "secrets set", "secrets set",
                                  "ips list", "ips allocate-v6", "ips allocate-v4", "ips list", "deploy"]
    assert "waiting until it is ready" in res.stderr


@pytest.mark.parametrize("final, message", [("provisioning", "still 'provisioning' after 0s"),
                                            ("error", "status 'error'")])
def test_the_wait_is_bounded(fly, final, message):
    env = {"FAKEFLY_MPG_PROVISIONING": "1" if final == "error" else "100", "FAKEFLY_MPG_FINAL_STATUS": final,
           "DEPLOY_MPG_WAIT_SECONDS": "0" if final != "error" else "60"}
    assert fly.deploy("actix", *KEY, env=env).returncode == 1
    n = len(fly.calls())
    res = fly.deploy("actix", *KEY, env=env)
    assert res.returncode == 1 and message in res.stderr.splitlines()[-1], res.stderr
    assert "mpg attach" not in fly.commands()[n:] and "secrets set" not in fly.commands() and not fly.secrets()


def test_deploy_and_key_rotation_during_a_database_outage(deployed, tmp_path):
    """The configs gate deploys on liveness only: with every /health answering 503, a deploy and a
    secrets change (the rotation's restart) complete."""
    fly = deployed.clone(tmp_path / "account")
    down = {"FAKEFLY_DATABASE_DOWN": "1"}
    ok(fly.deploy("actix", *KEY, env=down))
    (tmp_path / "next.pem").write_bytes(pkcs8(ed25519.Ed25519PrivateKey.generate()))
    ok(subprocess.run(["bash", "-c", "fly secrets set JWT_PRIVATE_KEY=- --app simple-auth-actix < next.pem"],
                      cwd=tmp_path, env={**fly.env, **down}, capture_output=True, text=True, timeout=60))
    assert fly.state()["apps"]["simple-auth-actix"]["restarts"] == 1


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


# rsa-4096 takes the rsa-2048 branch with another size (and seconds of key generation): not repeated here.
@pytest.mark.parametrize("key_type, check", [
    ("p-256", lambda k: isinstance(k, ec.EllipticCurvePrivateKey) and k.curve.name == "secp256r1"),
    ("ed25519", lambda k: isinstance(k, ed25519.Ed25519PrivateKey)),
])
def test_fresh_key_of_each_type(fly, key_type, check):
    res = ok(fly.deploy("actix", "--key-type", key_type))
    pem = fly.state()["apps"]["simple-auth-actix"]["secrets"]["JWT_PRIVATE_KEY"]
    assert pem.startswith("-----BEGIN PRIVATE KEY-----") and pem.count("-----BEGIN") == 1  # PKCS#8, one block
    assert check(serialization.load_pem_private_key(pem.encode(), password=None))
    assert public_der(pem.encode()) not in dev_public_keys()
    assert {"p-256": "ES256", "ed25519": "EdDSA"}[key_type] in res.stderr
    assert "PRIVATE KEY" not in json.dumps([c["argv"] for c in fly.calls()])


def test_fresh_ec_key_names_its_curve(fly):
    """A JWK needs a named curve: explicit EC parameters would not say P-256."""
    ok(fly.deploy("actix", "--key-type", "p-256"))
    pem = fly.state()["apps"]["simple-auth-actix"]["secrets"]["JWT_PRIVATE_KEY"]
    text = subprocess.run(["openssl", "pkey", "-noout", "-text"], input=pem, capture_output=True, text=True).stdout
    assert "ASN1 OID: prime256v1" in text or "NIST CURVE: P-256" in text, text


def test_empty_bundle_is_mounted_at_jwt_public_keys_file(fly):
    import tomllib
    ok(fly.deploy("spring", *KEY))
    app = fly.state()["apps"]["simple-auth-spring"]
    bundle = base64.b64decode(app["secrets"][BUNDLE_SECRET], validate=True).decode()
    assert bundle.startswith("#") and "-----BEGIN" not in bundle  # no key: the contract's empty bundle
    path = tomllib.loads((ROOT / "fly" / "spring.toml").read_text())["env"]["JWT_PUBLIC_KEYS_FILE"]
    assert app["deployed"]["files"] == {path: bundle}


def test_rerun_is_idempotent(deployed, tmp_path):
    fly = deployed.clone(tmp_path)
    first = fly.secrets()
    n = len(fly.calls())
    res = ok(fly.deploy("actix", *KEY))
    assert fly.commands()[n:] == RERUN
    assert fly.secrets() == first  # key, bundle and URL kept
    assert fly.state()["apps"]["simple-auth-actix"]["deploys"] == 2
    assert "already has JWT_PRIVATE_KEY: kept" in res.stderr
    assert f"already has {BUNDLE_SECRET}" in res.stderr


def test_rerun_keeps_a_published_bundle(deployed, tmp_path):
    """A re-run must not reset a bundle that holds a rotation's keys."""
    fly = deployed.clone(tmp_path)
    bundle = base64.b64encode(b"# next\n" + public_pem(ed25519.Ed25519PrivateKey.generate())).decode()
    ok(fly.fly("secrets", "set", f"{BUNDLE_SECRET}={bundle}", "--app", "simple-auth-actix"))
    ok(fly.deploy("actix", "--key-type", "p-256"))
    assert fly.secrets()[BUNDLE_SECRET] == bundle


def test_second_stack_shares_the_cluster(deployed, tmp_path):
    fly = deployed.clone(tmp_path)
    ok(fly.deploy("akka", *KEY))
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
    res = fly.deploy("actix", "--key", str(copy))
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
    res = fly.deploy("--help")
    assert res.returncode == 2 and res.stderr.startswith("Deploys one stack") and "DEPLOY_POLL_SECONDS" in res.stderr
    assert "Steps" not in res.stderr and not any(line.startswith("#") for line in res.stderr.splitlines())
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
    ok(fly.deploy("actix", *KEY))
    (connect,) = [c for c in fly.calls() if c["command"] == "mpg connect"]
    sql = connect["stdin"]
    assert SCHEMA in sql and "ON_ERROR_STOP on" in sql and "BEGIN;" in sql and "COMMIT;" in sql
    # No user: the schema's own INSERT is the upgrade of an older schema's sessions (sql/README.md).
    assert "INSERT INTO USERS" not in sql.upper() and "seed" not in sql


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
    ok(fly.deploy("actix", *KEY, env={"FAKEFLY_PSQL_URL": url}))
    ok(fly.deploy("actix", *KEY, env={"FAKEFLY_PSQL_URL": url}))  # idempotent
    assert tables(url) == {"tables": SCHEMA_TABLES, "users": 0}


def test_unmanaged_postgres_path(fly, postgres):
    url = empty_database(postgres, "simple_auth")
    res = ok(fly.deploy("akka", "--unmanaged", "--db", "sa-pg", *KEY, env={"FAKEFLY_PSQL_URL": url}))
    assert fly.commands() == [
        "apps list", "apps create", "secrets list",
        "postgres create", "postgres attach", "proxy",
        "secrets set", "secrets set", "ips list", "ips allocate-v6", "ips allocate-v4", "ips list", "deploy",
    ]
    attach = next(c for c in fly.calls() if c["command"] == "postgres attach")["argv"]
    assert attach[:3] == ["postgres", "attach", "sa-pg"] and "--database-name" in attach
    assert tables(url) == {"tables": SCHEMA_TABLES, "users": 0}
    # Neither the operator's password (postgres create) nor the app's URL (attach) is shown, nor in an argv.
    operator = fly.state()["apps"]["sa-pg"]["password"]
    database_url = fly.secrets("simple-auth-akka")["DATABASE_URL"]
    assert operator not in res.stdout + res.stderr and "postgres://" not in res.stdout + res.stderr
    assert database_url.split("@")[0] not in res.stdout + res.stderr + json.dumps([c["argv"] for c in fly.calls()])
    n = len(fly.calls())
    ok(fly.deploy("akka", "--unmanaged", "--db", "sa-pg", *KEY, env={"FAKEFLY_PSQL_URL": url}))
    assert fly.commands()[n:] == ["apps list", "secrets list", "ips list", "deploy"]
    res = fly.deploy("akka", "--unmanaged", "--db", "another-pg", env={"FAKEFLY_PSQL_URL": url})
    assert res.returncode == 2 and "refused" in res.stderr and "another-pg" not in fly.state()["apps"]


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
