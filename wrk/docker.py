#!/usr/bin/env python3
"""Docker plumbing for the benchmark runner's `--target docker` and for wrk/docker-ci.sh.

    python3 wrk/docker.py standins            # stand in debian:bookworm-slim, eclipse-temurin:25-jre, postgres:15-bookworm if absent
    python3 wrk/docker.py up [STACK...]       # build images from host-built artifacts, compose up, wait until healthy
    python3 wrk/docker.py down                # compose down -v (containers, network, database volume)
    python3 wrk/docker.py ports               # NAME=URL of every stack in the compose file

The compose project is docker-compose.yml at the root; images are built with
each stack's Dockerfile at `--target runtime-prebuilt` (the host-built artifact
from `wrk/stackctl.py build`), so no toolchain image is needed. Limits come from
docker-compose.fly.yml (STACK_CPUS / STACK_MEMORY).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import stackctl
from stackctl import ROOT, ToolError

COMPOSE_FILE = ROOT / "docker-compose.yml"
LIMITS_FILE = ROOT / "docker-compose.fly.yml"
STANDINS = ROOT / "docker" / "standins"
PROJECT = os.environ.get("COMPOSE_PROJECT_NAME", "simple-auth")
# The stacks' published ports (docker-compose.yml).
PORTS = {"actix": 8081, "spring": 8082, "akka": 8083, "zio": 8084}
# What the conformance suite expects (spec/conformance/service.py).
CONFORMANCE_ENV = {"JWT_ISSUER": "https://issuer.conformance.test", "JWT_AUDIENCE": "conformance-api",
                   "TOKEN_TTL_SECONDS": "900"}
STATE = Path(os.environ.get("SIMPLE_AUTH_DOCKER_STATE", "/var/tmp/simple-auth-docker"))


def log(msg: str) -> None:
    print(f"[docker] {msg}", file=sys.stderr, flush=True)


def run(cmd: list[str], check: bool = True, quiet: bool = False, **kw) -> subprocess.CompletedProcess:
    if not quiet:
        log("$ " + " ".join(cmd))
    res = subprocess.run(cmd, text=True, capture_output=quiet, **kw)
    if check and res.returncode != 0:
        detail = ((res.stderr or "") + (res.stdout or "")).strip()[-1500:] if quiet else ""
        raise ToolError(f"{' '.join(cmd[:3])} ... failed (exit {res.returncode}) {detail}")
    return res


def compose_cmd() -> list[str]:
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    if subprocess.run(["docker", "compose", "version"], capture_output=True).returncode == 0:
        return ["docker", "compose"]
    raise ToolError("neither docker-compose nor the docker compose plugin is installed")


def image_exists(tag: str) -> bool:
    return subprocess.run(["docker", "image", "inspect", tag], capture_output=True).returncode == 0


# --------------------------------------------------------------------------- stand-ins for public base images


def standin_debian() -> None:
    tag = "debian:bookworm-slim"
    if image_exists(tag):
        return
    if not shutil.which("debootstrap"):
        raise ToolError("debootstrap not found (apt-get install debootstrap)")
    rootfs = STATE / "rootfs"
    if not (rootfs / "etc" / "debian_version").exists():
        shutil.rmtree(rootfs, ignore_errors=True)
        rootfs.parent.mkdir(parents=True, exist_ok=True)
        mirror = os.environ.get("DEBIAN_MIRROR") or _host_mirror()
        run(["debootstrap", "--variant=minbase", "--include=ca-certificates", "bookworm", str(rootfs), mirror])
    # Slim: no downloaded packages in the image. HTTPS inside: the host's CA bundle.
    for deb in (rootfs / "var" / "cache" / "apt" / "archives").glob("*.deb"):
        deb.unlink()
    host_ca = Path("/etc/ssl/certs/ca-certificates.crt")
    if host_ca.exists():
        shutil.copy(host_ca, rootfs / "etc" / "ssl" / "certs" / "ca-certificates.crt")
    log(f"docker import {rootfs} as {tag}")
    tar = subprocess.Popen(["tar", "-C", str(rootfs), "-c", "."], stdout=subprocess.PIPE)
    run(["docker", "import", "-c", 'CMD ["bash"]',
         "-c", "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "-", tag], stdin=tar.stdout, quiet=True)
    tar.wait()


def _host_mirror() -> str:
    """The Debian mirror this machine's apt uses (so the stand-in reaches the same one)."""
    for f in [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*"))]:
        try:
            for line in f.read_text().splitlines():
                parts = line.split()
                if line.startswith("URIs:") and len(parts) > 1 and "security" not in parts[1]:
                    return parts[1]
                if parts[:1] == ["deb"] and len(parts) > 2 and "security" not in line:
                    return next(p for p in parts[1:] if "://" in p)
        except (OSError, StopIteration):
            continue
    raise ToolError("no Debian mirror found in /etc/apt; set DEBIAN_MIRROR")


def standin_jre() -> None:
    tag = "eclipse-temurin:25-jre"
    if image_exists(tag):
        return
    jdk = stackctl.find_java_home()
    if stackctl.java_version(jdk) < 25:
        raise ToolError(f"the JRE stand-in needs a JDK 25 (found {jdk})")
    with tempfile.TemporaryDirectory(prefix="simple-auth-jre-") as d:
        ctx = Path(d)
        shutil.copy(STANDINS / "jre" / "Dockerfile", ctx / "Dockerfile")
        mods = subprocess.run([str(jdk / "bin" / "java"), "--list-modules"], capture_output=True, text=True, check=True).stdout
        dev_tools = {"jdk.jlink", "jdk.jpackage", "jdk.javadoc", "jdk.jshell", "jdk.compiler", "jdk.jdeps", "jdk.jartool",
                     "jdk.jconsole", "jdk.hotspot.agent", "jdk.jstatd", "jdk.internal.ed", "jdk.internal.le",
                     "jdk.internal.opt", "jdk.editpad", "jdk.incubator.vector", "jdk.graal.compiler",
                     "jdk.graal.compiler.management", "jdk.internal.vm.ci"}
        wanted = [m.split("@")[0] for m in mods.split()]
        wanted = ",".join(m for m in wanted if m not in dev_tools)
        run([str(jdk / "bin" / "jlink"), "--add-modules", wanted, "--strip-debug", "--no-man-pages",
             "--no-header-files", "--compress=zip-6", "--output", str(ctx / "jre")])
        run(["docker", "build", "-q", "-t", tag, str(ctx)], quiet=True)


def standin_postgres() -> None:
    tag = "postgres:15-bookworm"
    if not image_exists(tag):
        run(["docker", "build", "-q", "-t", tag, str(STANDINS / "postgres")], quiet=True)


def standins() -> None:
    standin_debian()
    standin_jre()
    standin_postgres()


# --------------------------------------------------------------------------- compose


def compose_env(key_path: Path, limits: tuple[float | None, int | None] | None = None, **extra: str) -> dict:
    env = dict(os.environ)
    env.update({"COMPOSE_PROJECT_NAME": PROJECT, "DOCKER_TARGET": "runtime-prebuilt", "JWT_KEY_PATH": str(key_path),
                "BIND_ADDR": "127.0.0.1"})
    if limits:
        cpus, mem = limits
        if cpus is not None:
            env["STACK_CPUS"] = str(cpus)
        if mem is not None:
            env["STACK_MEMORY"] = f"{mem}m"
    env.update(extra)
    return env


def compose(args: list[str], env: dict, limited: bool = False, **kw) -> subprocess.CompletedProcess:
    files = ["-f", str(COMPOSE_FILE)] + (["-f", str(LIMITS_FILE)] if limited else [])
    return run(compose_cmd() + files + args, env=env, cwd=ROOT, **kw)


def readable_key(bits: int = 2048) -> Path:
    """The dev key, copied world-readable: the containers run as uid 10001, the repo's copy is 0600."""
    STATE.mkdir(parents=True, exist_ok=True)
    dst = STATE / f"jwt-dev-{bits}.pem"
    shutil.copy(stackctl.KEYS[bits], dst)
    dst.chmod(0o644)
    return dst


def container_id(env: dict, service: str) -> str:
    res = compose(["ps", "-q", service], env, quiet=True)
    cid = res.stdout.strip()
    if not cid:
        raise ToolError(f"no container for {service}")
    return cid


def container_pid(cid: str) -> int:
    return int(run(["docker", "inspect", "-f", "{{.State.Pid}}", cid], quiet=True).stdout.strip())


def wait_http(url: str, timeout: float, expect: int = 200) -> float:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == expect:
                    return time.monotonic() - t0
        except Exception:  # noqa: BLE001 - not up yet
            pass
        time.sleep(0.25)
    raise ToolError(f"{url} did not answer {expect} within {timeout:.0f} s")


class ContainerCgroup:
    """The container's own CPU time and memory, from its cgroup (v1 cgroupfs or systemd, or v2)."""

    def __init__(self, cid: str):
        self.cid = cid
        base = Path("/sys/fs/cgroup")
        cands_cpu = [base / "cpuacct" / "docker" / cid / "cpuacct.usage",
                     base / "cpu,cpuacct" / "docker" / cid / "cpuacct.usage",
                     base / "cpuacct" / "system.slice" / f"docker-{cid}.scope" / "cpuacct.usage"]
        cands_v2 = [base / "docker" / cid, base / "system.slice" / f"docker-{cid}.scope"]
        self.cpu_v1 = next((p for p in cands_cpu if p.exists()), None)
        self.mem_v1 = next((p for p in [base / "memory" / "docker" / cid,
                                        base / "memory" / "system.slice" / f"docker-{cid}.scope"] if p.exists()), None)
        self.v2 = next((p for p in cands_v2 if (p / "cpu.stat").exists()), None)

    def cpu_seconds(self) -> float | None:
        try:
            if self.cpu_v1:
                return int(self.cpu_v1.read_text()) / 1e9
            if self.v2:
                for line in (self.v2 / "cpu.stat").read_text().splitlines():
                    if line.startswith("usage_usec "):
                        return int(line.split()[1]) / 1e6
        except OSError:
            pass
        return None

    def memory(self) -> dict:
        def read(p: Path) -> int | None:
            try:
                return int(p.read_text().split()[0])
            except (OSError, ValueError, IndexError):
                return None
        if self.mem_v1:
            return {"current_bytes": read(self.mem_v1 / "memory.usage_in_bytes"),
                    "peak_bytes": read(self.mem_v1 / "memory.max_usage_in_bytes"),
                    "limit_bytes": read(self.mem_v1 / "memory.limit_in_bytes"),
                    "oom_kills": _oom_v1(self.mem_v1)}
        if self.v2:
            return {"current_bytes": read(self.v2 / "memory.current"), "peak_bytes": read(self.v2 / "memory.peak"),
                    "limit_bytes": read(self.v2 / "memory.max")}
        return {}


def _oom_v1(d: Path) -> int | None:
    try:
        for line in (d / "memory.oom_control").read_text().splitlines():
            if line.startswith("oom_kill "):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def build_images(stacks: list[str], env: dict, build_artifacts: bool = True) -> dict[str, float]:
    """Host build (stackctl), then the runtime-prebuilt image. Returns image build seconds per stack."""
    times = {}
    for name in stacks:
        st = stackctl.Stack.load(name)
        if build_artifacts:
            st.ensure_built()
        if not st.artifact.exists():
            raise ToolError(f"{st.artifact} does not exist")
        t0 = time.monotonic()
        compose(["build", "-q", name], env)
        times[name] = round(time.monotonic() - t0, 1)
    return times


def image_bytes(name: str) -> int | None:
    res = run(["docker", "image", "inspect", "-f", "{{.Size}}", f"simple-auth-{name}:latest"], check=False, quiet=True)
    return int(res.stdout.strip()) if res.returncode == 0 else None


def up(stacks: list[str], env: dict, limited: bool = False, timeout: float = 180) -> None:
    compose(["up", "-d", "postgres", *stacks], env, limited=limited)
    for name in stacks:
        wait_http(f"http://127.0.0.1:{PORTS[name]}/health", timeout)
        log(f"{name} up on http://127.0.0.1:{PORTS[name]}")


def down(env: dict | None = None) -> None:
    env = env or compose_env(readable_key())
    compose(["down", "-v", "--remove-orphans", "-t", "15"], env, check=False)


def compose_stacks() -> list[str]:
    """Stacks that have both a stack.json and a service in docker-compose.yml."""
    return [s for s in stackctl.list_stacks() if s in PORTS and (ROOT / s / "Dockerfile").exists()]


def main(argv: list[str]) -> int:
    cmd = argv[0] if argv else "help"
    try:
        if cmd == "standins":
            standins()
        elif cmd == "up":
            stacks = argv[1:] or compose_stacks()
            env = compose_env(readable_key(), **CONFORMANCE_ENV)
            standins()
            build_images(stacks, env)
            up(stacks, env)
        elif cmd == "down":
            down()
        elif cmd == "ports":
            for s in compose_stacks():
                print(f"{s}=http://127.0.0.1:{PORTS[s]}")
        else:
            print(__doc__)
            return 0 if cmd == "help" else 2
    except ToolError as e:
        print(f"docker: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
