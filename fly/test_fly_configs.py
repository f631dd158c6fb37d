"""Every fly config matches its stack: .venv/bin/python -m pytest fly"""
from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FLY = ROOT / "fly"
# The contract's environment variables (spec/README.md §5, spec/openapi.yaml).
CONTRACT_ENV = {"PORT", "HOST", "METRICS_PORT", "DATABASE_URL", "DB_POOL_SIZE", "DB_ACQUIRE_TIMEOUT_MS", "JWT_PRIVATE_KEY_FILE",
                "JWT_PRIVATE_KEY", "JWT_PUBLIC_KEYS_FILE", "JWT_ISSUER", "JWT_AUDIENCE", "TOKEN_TTL_SECONDS",
                "DEFAULT_CLIENT_ID", "REFRESH_TTL_SECONDS", "REFRESH_MAX_LIFETIME_SECONDS", "LOGIN_MAX_FAILURES",
                "LOGIN_FAILURE_WINDOW_SECONDS", "LOGIN_IP_MAX_FAILURES", "TRUSTED_PROXIES", "MAX_PASSWORD_CHECKS", "LOG_LEVEL",
                "DB_MAX_LIFETIME_SECONDS", "DB_IDLE_TIMEOUT_SECONDS"}
# Secrets and attachments, never in a committed config.
SECRETS = {"DATABASE_URL", "JWT_PRIVATE_KEY", "JWT_PRIVATE_KEY_FILE"}
STACKS = sorted(p.parent.name for p in ROOT.glob("*/stack.json"))
CONFIGS = sorted(FLY.glob("*.toml"))


def load(name: str) -> dict:
    return tomllib.loads((FLY / f"{name}.toml").read_text())


def test_one_config_per_stack():
    assert sorted(p.stem for p in CONFIGS) == STACKS


@pytest.mark.parametrize("name", STACKS)
def test_app_and_build(name):
    """The repository root is the build context (`fly deploy` from the root); the config names the stack's
    Dockerfile and its own ignore file, both relative to the config (flyctl's resolveDockerfilePath and
    resolveIgnorefilePath join them to the config's folder)."""
    cfg = load(name)
    assert cfg["app"] == f"simple-auth-{name}"
    dockerfile = (FLY / cfg["build"]["dockerfile"]).resolve()
    assert dockerfile == ROOT / name / "Dockerfile" and dockerfile.is_file()
    ignorefile = (FLY / cfg["build"]["ignorefile"]).resolve()
    # BuildKit reads <Dockerfile>.dockerignore next to the Dockerfile; flyctl's classic builder reads ignorefile.
    assert ignorefile == dockerfile.with_name(dockerfile.name + ".dockerignore") and ignorefile.is_file()
    # The image fly builds is the Dockerfile's last stage: the full build, not the prebuilt shortcut.
    assert "build_target" not in cfg["build"] and "build-target" not in cfg["build"]
    stages = re.findall(r"^FROM\s+\S+\s+AS\s+(\S+)", dockerfile.read_text(), re.M | re.I)
    assert stages[-1] == "runtime" and "runtime-prebuilt" in stages


@pytest.mark.parametrize("name", STACKS)
def test_http_service_and_health_check(name):
    cfg = load(name)
    svc = cfg["http_service"]
    assert svc["internal_port"] == 8080 == int(cfg["env"]["PORT"])
    assert svc["force_https"] is True
    # Routing check: liveness only (a database outage must not take every machine out of the proxy;
    # the service answers 503 temporarily_unavailable itself).
    checks = svc["checks"]
    assert checks and all(c["path"] == "/health/live" and c.get("method", "GET").upper() == "GET" for c in checks)
    assert "services" not in cfg, "one way of declaring the service: [http_service]"


@pytest.mark.parametrize("name", STACKS)
def test_no_check_asks_the_database(name):
    """fly's proxy routes on the service's checks, and `fly deploy` (and the restart of a `fly secrets set`)
    waits for every check in a machine's config, the top-level [checks] too (flyctl's
    WaitForHealthchecksToPass counts config.Checks and each service's checks). So every check is liveness:
    a database outage neither takes the machines out of routing nor holds a deploy or a key rotation."""
    cfg = load(name)
    assert "checks" not in cfg, "a top-level check is waited for by every deploy"
    checks = cfg["http_service"]["checks"]
    assert checks and all(c["path"] == "/health/live" for c in checks)


@pytest.mark.parametrize("name", STACKS)
def test_metrics_are_scraped_from_the_metrics_port(name):
    """spec/README.md §3: /metrics is served on METRICS_PORT only; fly scrapes it there over the private network,
    and no service of the config exposes that port through fly's proxy."""
    cfg = load(name)
    assert cfg["metrics"] == {"port": 9091, "path": "/metrics"}
    assert int(cfg["env"]["METRICS_PORT"]) == cfg["metrics"]["port"] != cfg["http_service"]["internal_port"]


@pytest.mark.parametrize("name", STACKS)
def test_trusted_proxies_is_fly_proxys_range(name):
    """The range fly's proxy connects from (fly/README.md, "Client addresses"), in the contract's form (§5): a
    CIDR with no host bits set. Never everything: a peer outside it is the client, whatever it sends."""
    import ipaddress
    value = load(name)["env"]["TRUSTED_PROXIES"]
    networks = [ipaddress.ip_network(entry.strip(), strict=True) for entry in value.split(",")]
    assert networks == [ipaddress.ip_network("172.16.0.0/12")]
    assert "TRUST_PROXY_HEADERS" not in load(name)["env"], "refused at start by every stack"
    assert "TRUSTED_PROXIES" in (FLY / "deploy.sh").read_text(), "deploy.sh adds the app's own addresses"


@pytest.mark.parametrize("name", STACKS)
def test_concurrency_from_the_measured_knee(name):
    """fly/README.md, "Concurrency limits": one full core saturates at c=16 in every stack, a shared-cpu-1x
    sustains 1/16 of a core; the same limits for every stack (fairness)."""
    conc = load(name)["http_service"]["concurrency"]
    assert conc == {"type": "requests", "soft_limit": 16, "hard_limit": 32}
    assert conc["hard_limit"] <= 4 * int(load(name)["env"]["DB_POOL_SIZE"])


@pytest.mark.parametrize("name", STACKS)
def test_header_comment_is_the_real_command(name):
    """From the repository root, the build context: `fly deploy --config fly/STACK.toml`."""
    text = (FLY / f"{name}.toml").read_text()
    assert f"fly deploy --config fly/{name}.toml" in text
    readme = (FLY / "README.md").read_text()
    assert f"--config ../fly/{name}.toml" not in readme, "the stack folder is no longer the context"


@pytest.mark.parametrize("name", STACKS)
def test_vm_is_the_benchmarked_size(name):
    """shared-cpu-1x for every stack (the benchmark's fly-shared-cpu-1x model runs each in its config's memory):
    the size's default 256 MB for a native binary, 512 MB for a JVM, whose footprint under load does not fit 256."""
    (vm,) = load(name)["vm"]
    jvm = json.loads((ROOT / name / "stack.json").read_text())["run"][0] == "{java}"
    assert vm["size"] == "shared-cpu-1x" and vm["memory"] == ("512mb" if jvm else "256mb")


@pytest.mark.parametrize("name", STACKS)
def test_env_names_are_the_contracts(name):
    env = load(name)["env"]
    assert set(env) <= CONTRACT_ENV, set(env) - CONTRACT_ENV
    assert not set(env) & SECRETS, "DATABASE_URL and the key are set by fly postgres attach / fly secrets"
    assert env["HOST"] == "0.0.0.0" and env["DB_POOL_SIZE"] == "10"
    assert env["JWT_ISSUER"] == f"https://simple-auth-{name}.fly.dev"
    assert all(isinstance(v, str) for v in env.values())


@pytest.mark.parametrize("name", STACKS)
def test_dockerfile_speaks_the_contract(name):
    text = (ROOT / name / "Dockerfile").read_text()
    for var in re.findall(r"^\s*(?:ENV\s+)?([A-Z_]+)=", text, re.M):
        assert var in CONTRACT_ENV | {"JAVA_OPTS"}, var
    assert re.search(r"^USER\s+(?!root|0\b)\S+", text, re.M), "runs as a non-root user"
    assert re.search(r"^EXPOSE\s+8080\b", text, re.M)
    assert re.search(r"^ARG\s+BUILD_IMAGE=", text, re.M) and re.search(r"^ARG\s+RUNTIME_IMAGE=", text, re.M)


@pytest.mark.parametrize("name", STACKS)
def test_prebuilt_target_ships_the_manifest_artifact(name):
    """The manifest's artifact (relative to the stack folder) is what the prebuilt stage copies (relative to
    the build context, the repository root), or what the build derives from it next to it."""
    manifest = json.loads((ROOT / name / "stack.json").read_text())
    text = (ROOT / name / "Dockerfile").read_text()
    prebuilt = text.split("AS runtime-prebuilt", 1)[1].split("\nFROM", 1)[0]
    sources = [(ROOT / src).resolve() for src in re.findall(r"^COPY\s+(?!--from)(\S+)", prebuilt, re.M)]
    artifact = (ROOT / name / manifest["artifact"]).resolve()
    assert any(src == artifact or artifact.parent in src.parents or src == artifact.parent for src in sources), sources


def spec_env_names() -> set[str]:
    """The variables of spec/README.md's §5 table."""
    table = (ROOT / "spec" / "README.md").read_text().split("The environment, the same names in every stack", 1)[1]
    return set(re.findall(r"^\| `([A-Z_]+)` \|", table.split("\n\n", 2)[1], re.M))


def test_contract_env_is_the_specs():
    assert spec_env_names() == CONTRACT_ENV


def deploy_sh_bundle_secret() -> str:
    (name,) = re.findall(r'^BUNDLE_SECRET="([A-Z_0-9]+)"', (FLY / "deploy.sh").read_text(), re.M)
    return name


@pytest.mark.parametrize("name", STACKS)
def test_published_keys_bundle_is_a_secret_file(name):
    """JWT_PUBLIC_KEYS_FILE is the [[files]] entry that fly writes from the secret deploy.sh sets
    (docs/key-rotation.md, "fly.io"). A secret file, not local_path/raw_value: a rotation changes the
    bundle with `fly secrets set`, without a commit or an image."""
    cfg = load(name)
    (entry,) = cfg["files"]
    assert set(entry) == {"guest_path", "secret_name"}
    assert entry["guest_path"] == cfg["env"]["JWT_PUBLIC_KEYS_FILE"]
    assert entry["secret_name"] == deploy_sh_bundle_secret()
    # Absolute (flyctl: "must be an absolute path"), and not under a folder the image or init may mount over.
    path = entry["guest_path"]
    assert path.startswith("/") and not path.startswith(("/tmp/", "/run/", "/data/", "/app/"))
    assert entry["secret_name"] not in CONTRACT_ENV, "fly also exposes every secret as a variable"


@pytest.mark.parametrize("name", STACKS)
def test_rolling_one_machine_at_a_time(name):
    """A key switch is a secrets change: flyctl redeploys the deployed config with its [deploy] strategy.
    Rolling, one started machine at a time (max_unavailable >= 1 is a count in flyctl's getPoolSize):
    with two started machines one always serves."""
    deploy = load(name)["deploy"]
    assert deploy["strategy"] == "rolling"
    assert isinstance(deploy["max_unavailable"], float) and deploy["max_unavailable"] == 1.0
    assert load(name)["http_service"]["checks"], "rolling waits for the health checks of each replaced machine"


@pytest.mark.parametrize("name", STACKS)
def test_default_client_id_is_the_contracts(name):
    assert load(name)["env"]["DEFAULT_CLIENT_ID"] == "public"
