#!/usr/bin/env python3
"""The benchmark runner behind `make bench`.

    python3 wrk/bench.py                                # every stack, profile local, scenario users
    python3 wrk/bench.py --stacks actix,spring --profile fly-shared-1x
    python3 wrk/bench.py --cpus 0.5 --memory 128        # custom limits for the server
    python3 wrk/bench.py --url actix=https://simple-auth-actix.fly.dev   # already-running services
    python3 wrk/bench.py --smoke                        # short phases, one concurrency (CI)
    python3 wrk/bench.py --target docker --smoke        # the images of docker-compose.yml (wrk/docker.py)

Per stack: release build (timed), artifact size, conformance gate, the
stack's own signing ceiling (its `signbench` entry point: the service's own
signer minting token pairs on one thread), start with
the contract's environment, start-up time (exec -> first 200 on /token),
verification (two logins, tokens checked against the served JWKS), primer,
warm-up at the top concurrency, then measured runs over the concurrency sweep
(repeats, median and spread), sampling the server's RSS and CPU time. The
ceiling, RSA signing speed by `openssl speed`, is measured in the same run.

Output: results/<UTC time>-<profile>/{results.json,results.md,*.png}.
"""
from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import http.client
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import stackctl
from stackctl import ROOT, Stack, ToolError

WRK_DIR = ROOT / "wrk"
VECTORS = json.loads((ROOT / "spec" / "vectors.json").read_text())
CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
SCENARIOS = ("users", "john", "argon2", "mixed")


# --------------------------------------------------------------------------- settings


@dataclass
class Limits:
    cpus: float | None = None
    memory_mb: int | None = None

    def __bool__(self) -> bool:
        return self.cpus is not None or self.memory_mb is not None


PROFILES = {
    "local": Limits(),
    # fly.io's smallest VM: one shared CPU, 256 MB. Only the server is confined.
    "fly-shared-1x": Limits(cpus=1.0, memory_mb=256),
}


@dataclass
class Settings:
    stacks: list[str]
    urls: dict[str, str]
    profile: str
    limits: Limits
    scenario: str
    wrong_share: float
    key_bits: int
    concurrency: list[int]
    duration: int
    warmup: int
    primer: int
    repeats: int
    wrk_threads: int
    conformance: bool
    build: bool
    out: Path
    target: str = "local"

    @property
    def startup_probes(self) -> int:
        """Extra starts per stack for the start-up median (none in the smoke run)."""
        return 0 if "smoke" in self.profile else 4

    @property
    def signbench_s(self) -> float:
        """Timed seconds of each stack's own signing measurement (openssl speed gets the same)."""
        return 2 if "smoke" in self.profile else 5

    @property
    def signbench_runs(self) -> int:
        """Runs of each stack's own signing measurement; the fastest is its ceiling."""
        return 1 if "smoke" in self.profile else 3


def parse_args(argv: list[str] | None) -> Settings:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stacks", help="comma-separated (default: every folder with a stack.json)")
    ap.add_argument("--url", action="append", default=[], metavar="NAME=URL",
                    help="benchmark an already-running service by base URL (repeatable); no local stacks then")
    ap.add_argument("--profile", choices=sorted(PROFILES), default="local")
    ap.add_argument("--cpus", type=float, help="CPU limit for the server (cgroup quota), overrides the profile")
    ap.add_argument("--memory", type=int, metavar="MiB", help="memory limit for the server, overrides the profile")
    ap.add_argument("--scenario", choices=SCENARIOS, default="users")
    ap.add_argument("--wrong-share", type=float, default=0.0, help="share of logins with a wrong password (0..1)")
    ap.add_argument("--key-bits", type=int, choices=sorted(stackctl.KEYS), default=2048)
    ap.add_argument("--concurrency", default="16,64,256", help="comma-separated connection counts")
    ap.add_argument("--duration", type=int, default=15, help="seconds per measured run")
    ap.add_argument("--warmup", type=int, default=40,
                    help="warm-up seconds at the top concurrency (the JVMs' JIT settles ~45 s into load)")
    ap.add_argument("--primer", type=int, default=5, help="primer seconds at 8 connections")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--wrk-threads", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--skip-conformance", action="store_true", help="skip the conformance gate (verification still runs)")
    ap.add_argument("--no-build", action="store_true", help="use the existing artifacts (build time not measured)")
    ap.add_argument("--smoke", action="store_true", help="short phases, one concurrency, one repeat (CI)")
    ap.add_argument("--out", type=Path, default=ROOT / "results")
    ap.add_argument("--target", choices=("local", "docker"), default="local",
                    help="docker: build the images, compose up, measure the containers on their published ports")
    a = ap.parse_args(argv)

    if not 0 <= a.wrong_share <= 1:
        ap.error("--wrong-share must be between 0 and 1")
    try:
        concurrency = sorted({int(c) for c in a.concurrency.split(",") if c.strip()})
    except ValueError:
        ap.error("--concurrency takes whole numbers, e.g. 16,64,256")
    if not concurrency or min(concurrency) < 1:
        ap.error("--concurrency needs at least one positive number")
    urls = {}
    for item in a.url:
        name, sep, url = item.partition("=")
        if not sep or not name or not url.startswith(("http://", "https://")):
            ap.error(f"--url takes NAME=http(s)://host[:port], got {item!r}")
        urls[name] = url.rstrip("/")
    stacks = [] if urls and not a.stacks else (a.stacks.split(",") if a.stacks else stackctl.list_stacks())
    for s in stacks:
        if s not in stackctl.list_stacks():
            ap.error(f"unknown stack {s!r}; known: {', '.join(stackctl.list_stacks())}")
    if not stacks and not urls:
        ap.error("no stacks to benchmark")
    limits = Limits(**asdict(PROFILES[a.profile]))
    profile = a.profile
    if a.cpus is not None or a.memory is not None:
        if a.cpus is not None and a.cpus <= 0 or a.memory is not None and a.memory < 16:
            ap.error("--cpus must be > 0 and --memory at least 16 MiB")
        limits = Limits(a.cpus if a.cpus is not None else limits.cpus, a.memory if a.memory is not None else limits.memory_mb)
        profile = "custom"
    if urls and limits:
        ap.error("limits apply to servers this runner starts, not to --url targets")
    if a.target == "docker" and urls:
        ap.error("--target docker measures the compose stacks, not --url targets")
    if a.smoke:
        concurrency, duration, warmup, primer, repeats = [concurrency[0]], 3, 2, 1, 1
    else:
        duration, warmup, primer, repeats = a.duration, a.warmup, a.primer, a.repeats
    if duration < 1 or repeats < 1:
        ap.error("--duration and --repeats must be at least 1")
    return Settings(stacks, urls, profile + ("-smoke" if a.smoke else ""), limits, a.scenario, a.wrong_share,
                    a.key_bits, concurrency, duration, warmup, primer, repeats, a.wrk_threads,
                    not (a.skip_conformance or a.smoke), not a.no_build, a.out, a.target)


# --------------------------------------------------------------------------- progress


class Progress:
    def __init__(self, total_seconds: float):
        self.total = total_seconds
        self.t0 = time.monotonic()

    def say(self, stack: str, phase: str, seconds: float | None = None) -> None:
        left = max(0.0, self.total - (time.monotonic() - self.t0))
        extra = f" {seconds:.0f}s" if seconds else ""
        print(f"[bench {time.strftime('%H:%M:%S')}] {stack:<8} {phase}{extra}  (about {left / 60:.1f} min left)",
              file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- cgroups


class Cgroup:
    """Confines one process tree to a CPU quota and a memory limit (cgroup v2 or v1)."""

    def __init__(self, name: str, limits: Limits):
        self.limits = limits
        self.paths: dict[str, Path] = {}
        unified = Path("/sys/fs/cgroup")
        self.v2 = (unified / "cgroup.controllers").exists() and \
            {"cpu", "memory"} <= set((unified / "cgroup.controllers").read_text().split())
        own = self._own_paths()
        if self.v2:
            parent = unified / own.get("", "/").lstrip("/")
            path = parent / name
            path.mkdir(exist_ok=True)
            self.paths = {"cpu": path, "memory": path}
            if limits.cpus:
                (path / "cpu.max").write_text(f"{int(limits.cpus * 100000)} 100000")
            if limits.memory_mb:
                (path / "memory.max").write_text(str(limits.memory_mb * 2**20))
                with contextlib.suppress(OSError):
                    (path / "memory.swap.max").write_text("0")
        else:
            for ctrl in ("cpu", "memory"):
                base = Path("/sys/fs/cgroup") / ctrl
                if not base.exists():
                    raise ToolError(f"cgroup v1 controller '{ctrl}' is not mounted: cannot apply limits")
                path = base / own.get(ctrl, "/").lstrip("/") / name
                path.mkdir(exist_ok=True)
                self.paths[ctrl] = path
            if limits.cpus:
                (self.paths["cpu"] / "cpu.cfs_period_us").write_text("100000")
                (self.paths["cpu"] / "cpu.cfs_quota_us").write_text(str(int(limits.cpus * 100000)))
            if limits.memory_mb:
                (self.paths["memory"] / "memory.limit_in_bytes").write_text(str(limits.memory_mb * 2**20))
                with contextlib.suppress(OSError):
                    (self.paths["memory"] / "memory.memsw.limit_in_bytes").write_text(str(limits.memory_mb * 2**20))
                with contextlib.suppress(OSError):
                    (self.paths["memory"] / "memory.swappiness").write_text("0")

    @staticmethod
    def _own_paths() -> dict[str, str]:
        out = {}
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, ctrls, path = line.split(":", 2)
            for c in ctrls.split(","):
                out[c] = path
        return out

    def wrap(self, cmd: list[str]) -> list[str]:
        """The command, made to join the cgroup(s) before it execs."""
        joins = "; ".join(f"echo $$ > '{p / 'cgroup.procs'}'" for p in dict.fromkeys(self.paths.values()))
        return ["sh", "-c", f'{joins}; exec "$@"', "sh", *cmd]

    def oom_kills(self) -> int:
        mem = self.paths["memory"]
        f = mem / ("memory.events" if self.v2 else "memory.oom_control")
        with contextlib.suppress(OSError):
            m = re.search(r"oom_kill (\d+)", f.read_text())
            if m:
                return int(m.group(1))
        return 0

    def destroy(self) -> None:
        for p in dict.fromkeys(self.paths.values()):
            for _ in range(50):
                try:
                    p.rmdir()
                    break
                except OSError:
                    time.sleep(0.1)


# --------------------------------------------------------------------------- sampling


def proc_cpu_seconds(pid: int) -> float | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime + stime, all threads


def proc_rss_bytes(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
    except OSError:
        return None


class Sampler(threading.Thread):
    """Samples the server's RSS and CPU time every `interval` seconds."""

    def __init__(self, pid: int, t0: float, interval: float = 0.5):
        super().__init__(daemon=True)
        self.pid, self.t0, self.interval = pid, t0, interval
        self.samples: list[tuple[float, int, float]] = []  # (seconds since start, rss bytes, cpu seconds)
        self.phase = "start"
        self.phases: list[tuple[float, str]] = []
        self._halt = threading.Event()

    def mark(self, phase: str) -> None:
        self.phase = phase
        self.phases.append((round(time.monotonic() - self.t0, 2), phase))

    def run(self) -> None:
        while not self._halt.is_set():
            rss, cpu = proc_rss_bytes(self.pid), proc_cpu_seconds(self.pid)
            if rss is None or cpu is None:
                break
            self.samples.append((round(time.monotonic() - self.t0, 2), rss, round(cpu, 3)))
            self._halt.wait(self.interval)

    def stop(self) -> None:
        self._halt.set()
        self.join(2)


# --------------------------------------------------------------------------- measurements


def openssl_ceiling(bits: int, seconds: int) -> dict:
    """RSA signing speed on one core, the unavoidable cost of a request (two signatures)."""
    res = subprocess.run(["openssl", "speed", "-seconds", str(seconds), f"rsa{bits}"], capture_output=True, text=True)
    m = re.search(rf"^rsa\s+{bits}\s+bits\s+\S+s\s+\S+s\s+([\d.]+)\s+([\d.]+)", res.stdout, re.M)
    if res.returncode != 0 or not m:
        raise ToolError(f"openssl speed rsa{bits} failed: {res.stderr.strip()[-300:]}")
    signs = float(m.group(1))
    return {
        "tool": subprocess.run(["openssl", "version"], capture_output=True, text=True).stdout.strip(),
        "key_bits": bits,
        "signs_per_s_per_core": signs,
        "sign_ms": 1000 / signs,
        "token_pairs_per_s_per_core": signs / 2,
        "token_pairs_per_s_all_cores": signs / 2 * (os.cpu_count() or 1),
    }


def own_ceiling(stack: Stack, env: dict, seconds: float, runs: int = 1) -> dict:
    """The stack's own signing speed: its `signbench` entry point (stack.json) has the service's own signer
    (same settings, key and crypto provider) issue token pairs on one thread, and prints one JSON line.
    Per core = per CPU second of that thread. A ceiling is what the signer can do, and noise (a busy VM, a
    JIT still compiling after the 2 s warm-up) only ever slows a run down: with `runs` > 1 the fastest run is
    reported and every run's pairs per core are kept. Raises ToolError when a run fails or prints nonsense."""
    results = [_signbench_once(stack, env, seconds) for _ in range(max(1, runs))]
    best = max(results, key=lambda r: r["token_pairs_per_s_per_core"])
    best["runs_token_pairs_per_s_per_core"] = [round(r["token_pairs_per_s_per_core"], 1) for r in results]
    return best


def _signbench_once(stack: Stack, env: dict, seconds: float) -> dict:
    cmd = stack.command("signbench") + [f"{seconds:g}"]
    try:
        res = subprocess.run(cmd, cwd=stack.dir, env=env, capture_output=True, text=True, timeout=seconds + 120)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ToolError(f"signbench of {stack.name}: {e}") from e
    lines = [ln for ln in res.stdout.splitlines() if ln.strip()]
    if res.returncode != 0 or not lines:
        raise ToolError(f"signbench of {stack.name} failed (exit {res.returncode}): "
                        f"{(res.stderr or res.stdout).strip()[-300:]}")
    try:
        data = json.loads(lines[-1])
        pairs, cpu, wall = int(data["token_pairs"]), float(data["thread_cpu_seconds"]), float(data["seconds"])
        provider = str(data["provider"])
    except (ValueError, KeyError, TypeError) as e:
        raise ToolError(f"signbench of {stack.name} printed no valid result line: {lines[-1][:200]!r}") from e
    if pairs <= 0 or not cpu > 0 or not wall > 0:
        raise ToolError(f"signbench of {stack.name}: implausible result {lines[-1][:200]!r}")
    return {
        "tool": f"{stack.name} signbench",
        "provider": provider,
        "token_pairs": pairs,
        "seconds": round(wall, 3),
        "thread_cpu_seconds": round(cpu, 3),
        "token_pairs_per_s_per_core": pairs / cpu,
        "pair_ms": cpu * 1000 / pairs,
    }


def run_wrk(url: str, connections: int, seconds: int, threads: int, scenario: str, wrong: float) -> dict:
    threads = max(1, min(threads, connections))
    cmd = ["wrk", "-t", str(threads), "-c", str(connections), "-d", f"{seconds}s", "--latency", "--timeout", "10s",
           "-s", str(WRK_DIR / "users.lua"), url + "/token", "--", scenario, str(wrong)]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 60)
    line = next((ln for ln in res.stdout.splitlines() if ln.startswith("WRK_JSON ")), None)
    if res.returncode != 0 or line is None:
        raise ToolError(f"wrk failed (exit {res.returncode}): {(res.stderr or res.stdout).strip()[-400:]}")
    data = json.loads(line[len("WRK_JSON "):])
    expected = {200} | ({400} if wrong > 0 else set())
    data["unexpected_status"] = sum(n for s, n in data["status"].items() if int(s) not in expected)
    data["errors"] = data["unexpected_status"] + sum(data["socket_errors"].values())
    data["connections"] = connections
    return data


def verify_service(base_url: str, issuer: str | None, key_bits: int | None) -> str | None:
    """Two logins whose tokens verify against the served JWKS; None when all is well, else the reason."""
    import jwt
    import requests
    from jwt.algorithms import RSAAlgorithm

    try:
        jwks = requests.get(base_url + "/.well-known/jwks.json", timeout=10).json()
        keys = {k["kid"]: k for k in jwks["keys"]}
        if key_bits is not None:
            want = next(k["kid"] for k in VECTORS["keys"] if k["bits"] == key_bits)
            if want not in keys:
                return f"JWKS does not serve the {key_bits}-bit dev key (kid {want})"
        for creds in ({"username": "john@example.com", "password": "TopSecret0!"},
                      {"username": "legacy42@example.com", "password": "legacy-pass-42"}):
            r = requests.post(base_url + "/token", json=creds, timeout=10)
            if r.status_code != 200:
                return f"login of {creds['username']} answered {r.status_code}: {r.text[:200]}"
            body = r.json()
            for name in ("access_token", "id_token"):
                token = body[name]
                kid = jwt.get_unverified_header(token).get("kid")
                if kid not in keys:
                    return f"{name} has kid {kid!r}, not in the JWKS"
                claims = jwt.decode(token, RSAAlgorithm.from_jwk(json.dumps(keys[kid])), algorithms=["RS256"],
                                    audience="channel-api", issuer=issuer, options={"verify_iss": issuer is not None})
                if name == "id_token" and claims.get("email") != creds["username"]:
                    return f"id_token email is {claims.get('email')!r}"
        return None
    except Exception as e:  # noqa: BLE001 - any failure is a reason not to measure
        return f"{type(e).__name__}: {e}"


def time_to_first_token(url: str, proc: subprocess.Popen, t0: float, timeout: float = 120) -> float:
    """Seconds from `t0` (just before exec) to the first 200 on /token for John.

    Plain http.client on a new connection per attempt, every 5 ms: nothing is imported or set up inside the
    timed window (importing `requests` there cost ~0.1 s, charged to whichever stack was measured first)."""
    parts = urlsplit(url)
    body = json.dumps({"username": "john@example.com", "password": "TopSecret0!"}).encode()
    headers = {"Content-Type": "application/json", "Content-Length": str(len(body))}
    while time.monotonic() - t0 < timeout:
        if proc.poll() is not None:
            raise ToolError(f"exited with {proc.returncode} during start-up")
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=2)
        try:
            conn.request("POST", "/token", body=body, headers=headers)
            resp = conn.getresponse()
            resp.read()
            if resp.status == 200:
                return time.monotonic() - t0
        except (OSError, http.client.HTTPException):
            pass
        finally:
            conn.close()
        time.sleep(0.005)
    raise ToolError(f"no 200 on /token within {timeout:.0f}s")


def startup_probe(cmd: list[str], cwd: Path, env: dict, url: str) -> float:
    """One extra start just for its start-up time: exec, first token, stop."""
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        return time_to_first_token(url, proc, t0)
    finally:
        stackctl.stop_process(proc)


def conformance_gate(stack: str) -> str | None:
    """The suite on its own throw-away database (its outage tests stop and start it)."""
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", str(ROOT / "spec" / "conformance"), "--stack", stack],
                         capture_output=True, text=True, env=env)
    if res.returncode != 0:
        tail = [ln for ln in res.stdout.splitlines() if ln.startswith(("FAILED", "ERROR"))][:3]
        return "conformance suite failed: " + ("; ".join(tail) or res.stdout.strip()[-300:])
    return None


# --------------------------------------------------------------------------- environment


def cmd_out(cmd: list[str]) -> str | None:
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
        out = (res.stdout + res.stderr).strip()
        return out.splitlines()[0] if out else None
    return None


def library_versions(stack: Stack) -> dict:
    """The main libraries each stack resolved, read from its lock or build files."""
    d, out = stack.dir, {}
    lock = d / "Cargo.lock"
    if lock.exists():
        wanted = {"actix-web", "tokio", "tokio-postgres", "deadpool-postgres", "jsonwebtoken", "aws-lc-rs", "argon2"}
        for name, ver in re.findall(r'name = "([^"]+)"\nversion = "([^"]+)"', lock.read_text()):
            if name in wanted:
                out[name] = ver
    sbt = d / "build.sbt"
    if sbt.exists():
        text = sbt.read_text()
        for m in re.finditer(r'"([\w.-]+)"\s+%%?%?\s+"([\w.-]+)"\s+%\s+("[\w.-]+"|\w+)', text):
            ver = m.group(3).strip('"')
            if not m.group(3).startswith('"'):
                vm = re.search(rf"val\s+{ver}\s*=\s*\"([^\"]+)\"", text)
                ver = vm.group(1) if vm else ver
            out[m.group(2)] = ver
        vm = re.search(r'scalaVersion\s*:?=\s*"([^"]+)"', text)
        if vm:
            out["scala"] = vm.group(1)
    pom = d / "pom.xml"
    if pom.exists():
        text = pom.read_text()
        pm = re.search(r"<parent>.*?<artifactId>([^<]+)</artifactId>\s*<version>([^<]+)</version>", text, re.S)
        if pm:
            out[pm.group(1)] = pm.group(2)
        jar = stack.artifact
        if jar.exists():
            names = cmd_out(["sh", "-c", f"unzip -Z1 '{jar}' 'BOOT-INF/lib/*' 2>/dev/null | tr '\\n' ' '"]) or ""
            for lib in ("spring-webmvc", "tomcat-embed-core", "HikariCP", "postgresql", "nimbus-jose-jwt", "bcprov-jdk18on",
                        "AmazonCorrettoCryptoProvider"):
                m = re.search(rf"BOOT-INF/lib/{lib}-([\d][\w.]*?(?:-[A-Z][\w]*)?)(?:-linux-x86_64)?\.jar", names)
                if m:
                    out[lib] = m.group(1)
    return out


def cpu_model() -> str:
    return next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                 if ln.startswith("model name")), platform.processor())


def environment(settings: Settings, stacks: list[Stack]) -> dict:
    mem_kb = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1))
    commit = cmd_out(["git", "-C", str(ROOT), "rev-parse", "HEAD"])
    dirty = bool(cmd_out(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"]))
    java_home = None
    with contextlib.suppress(ToolError):
        java_home = stackctl.find_java_home()
    return {
        "date_utc": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "host": platform.node(),
        "cpu_model": cpu_model(),
        "cores": os.cpu_count(),
        "memory_gib": round(mem_kb / 2**20, 1),
        "kernel": platform.release(),
        "os": cmd_out(["sh", "-c", ". /etc/os-release && echo $PRETTY_NAME"]),
        "commit": commit,
        "dirty": dirty,
        "jdk": cmd_out([str(java_home / "bin" / "java"), "-version"]) if java_home else None,
        "rustc": cmd_out(["rustc", "--version"]),
        "postgresql": cmd_out([stackctl.psql_bin(), "--version"]),
        "wrk": cmd_out(["wrk", "--version"]),
        "python": platform.python_version(),
        "libraries": {s.name: library_versions(s) for s in stacks},
        "settings": {
            "profile": settings.profile,
            "target": settings.target,
            "limits": asdict(settings.limits),
            "scenario": settings.scenario,
            "wrong_share": settings.wrong_share,
            "key_bits": settings.key_bits,
            "concurrency": settings.concurrency,
            "duration_s": settings.duration,
            "warmup_s": settings.warmup,
            "primer_s": settings.primer,
            "repeats": settings.repeats,
            "wrk_threads": settings.wrk_threads,
            "db_pool_size": 10,
            "db_acquire_timeout_ms": 1000,
            "conformance_gate": settings.conformance,
            "note": "wrk, PostgreSQL and the server share this machine's cores; limits confine the server only.",
        },
    }


# --------------------------------------------------------------------------- one stack


def measure(name: str, url: str, settings: Settings, progress: Progress, sampler: Sampler | None) -> dict:
    """Primer, warm-up, then the sweep. Returns raw runs keyed by concurrency."""
    def wrk(c: int, secs: int) -> dict:
        return run_wrk(url, c, secs, settings.wrk_threads, settings.scenario, settings.wrong_share)

    out: dict = {"primer": None, "warmup": None, "runs": {}}
    if settings.primer:
        progress.say(name, "primer c=8", settings.primer)
        sampler and sampler.mark("primer")
        out["primer"] = wrk(8, settings.primer)
    if settings.warmup:
        top = max(settings.concurrency)
        progress.say(name, f"warm-up c={top}", settings.warmup)
        sampler and sampler.mark("warmup")
        out["warmup"] = wrk(top, settings.warmup)
    for c in settings.concurrency:
        runs = []
        for rep in range(settings.repeats):
            progress.say(name, f"measure c={c} run {rep + 1}/{settings.repeats}", settings.duration)
            sampler and sampler.mark(f"c={c}#{rep + 1}")
            cpu0 = proc_cpu_seconds(sampler.pid) if sampler else None
            run = wrk(c, settings.duration)
            cpu1 = proc_cpu_seconds(sampler.pid) if sampler else None
            if cpu0 is not None and cpu1 is not None and run["requests"]:
                run["server_cpu_s"] = round(cpu1 - cpu0, 3)
                run["cpu_ms_per_request"] = round((cpu1 - cpu0) * 1000 / run["requests"], 4)
            runs.append(run)
        out["runs"][str(c)] = runs
    sampler and sampler.mark("end")
    return out


def bench_stack(stack: Stack, settings: Settings, db_url: str, progress: Progress, workdir: Path) -> dict:
    result: dict = {"name": stack.name, "description": stack.manifest.get("description", ""), "target": "local"}
    try:
        if settings.build:
            progress.say(stack.name, "release build")
            result["build_s"] = round(stack.build(), 1)
        elif not stack.artifact.exists():
            raise ToolError(f"{stack.artifact} does not exist (run without --no-build)")
        result["artifact_bytes"] = stack.artifact.stat().st_size
        if settings.conformance:
            progress.say(stack.name, "conformance gate")
            reason = conformance_gate(stack.name)
            if reason:
                result["failed"] = reason
                return result
    except ToolError as e:
        result["failed"] = str(e)
        return result

    port = stackctl.free_port()
    env = stack.contract_env(db_url, port, settings.key_bits)
    # The machine's speed drifts by several per cent over minutes (a shared VM): the ceilings this stack's
    # numbers are divided by are measured right before its own load, not once at the start of the run.
    progress.say(stack.name, f"openssl speed rsa{settings.key_bits}")
    try:
        result["openssl_ceiling"] = openssl_ceiling(settings.key_bits, round(settings.signbench_s))
    except ToolError as e:
        print(f"bench: {e}", file=sys.stderr)
    if "signbench" in stack.manifest:
        progress.say(stack.name, f"own signing ceiling (signbench, best of {settings.signbench_runs})")
        try:
            result["own_ceiling"] = own_ceiling(stack, env, settings.signbench_s, settings.signbench_runs)
        except ToolError as e:
            result["own_ceiling_error"] = str(e)
            print(f"bench: {e}", file=sys.stderr)
    cmd = stack.command("run")
    cgroup = Cgroup(f"simple-auth-bench-{stack.name}-{os.getpid()}", settings.limits) if settings.limits else None
    if cgroup:
        cmd = cgroup.wrap(cmd)
    log_path = workdir / f"{stack.name}.log"
    url = f"http://127.0.0.1:{port}"
    # Start-up is one number per start and the shared VM makes single starts vary by ±15 %: a few starts
    # before the measured one, the median of all of them is reported.
    probes: list[float] = []
    if settings.startup_probes:
        progress.say(stack.name, f"start-up x{settings.startup_probes + 1}")
        try:
            probes = [round(startup_probe(cmd, stack.dir, env, url), 3) for _ in range(settings.startup_probes)]
        except ToolError as e:
            result["failed"] = f"start-up: {e}"
            if cgroup:
                cgroup.destroy()
            return result
    progress.say(stack.name, "start")
    t0 = time.monotonic()
    with open(log_path, "wb") as logf:
        proc = subprocess.Popen(cmd, cwd=stack.dir, env=env, stdout=logf, stderr=subprocess.STDOUT, start_new_session=True)
    sampler = Sampler(proc.pid, t0)
    sampler.start()
    try:
        result["startup_samples_s"] = probes + [round(time_to_first_token(url, proc, t0), 3)]
        result["startup_s"] = round(statistics.median(result["startup_samples_s"]), 3)
        reason = verify_service(url, env["JWT_ISSUER"], settings.key_bits)
        if reason:
            result["failed"] = f"verification: {reason}"
            return result
        result.update(measure(stack.name, url, settings, progress, sampler))
        if proc.poll() is not None:
            raise ToolError(f"exited with {proc.returncode} during the benchmark")
    except (ToolError, subprocess.TimeoutExpired) as e:
        result["failed"] = str(e)
    finally:
        sampler.stop()
        died = proc.poll()  # before we stop it: a SIGKILL we did not send, under a memory limit, is the OOM killer
        code = stackctl.stop_process(proc)
        oom = cgroup.oom_kills() if cgroup else 0
        if oom or (died == -signal.SIGKILL and settings.limits.memory_mb):
            result["failed"] = f"OOM-killed (memory limit {settings.limits.memory_mb} MiB; oom_kill={oom})"
            result["oom_killed"] = True
        if cgroup:
            cgroup.destroy()
        result["exit_code"] = code
        result["samples"] = sampler.samples
        result["phases"] = sampler.phases
        result["log_tail"] = log_path.read_text(errors="replace")[-2000:]
    return result


def bench_docker(stacks: list[Stack], settings: Settings, progress: Progress, workdir: Path) -> list[dict]:
    """The compose stacks: images from host-built artifacts, containers on their published ports.
    CPU time and RSS of the container's main process (the server itself: the images exec it), plus the
    container's cgroup CPU time and memory (peak, limit). The conformance suite against the containers is
    wrk/docker-ci.sh's job (it needs the suite's issuer/audience); here the verification gates the numbers."""
    import docker
    limits = (settings.limits.cpus, settings.limits.memory_mb) if settings.limits else None
    env = docker.compose_env(docker.readable_key(settings.key_bits), limits)
    names = [s.name for s in stacks if s.name in docker.PORTS]
    results = [{"name": s.name, "target": "docker", "failed": "no service in docker-compose.yml"}
               for s in stacks if s.name not in docker.PORTS]
    try:
        progress.say("docker", "stand-in base images, PostgreSQL")
        docker.standins()
        docker.compose(["up", "-d", "postgres"], env)
        for stack in stacks:
            if stack.name not in docker.PORTS:
                continue
            result: dict = {"name": stack.name, "description": stack.manifest.get("description", ""), "target": "docker"}
            results.append(result)
            url = f"http://127.0.0.1:{docker.PORTS[stack.name]}"
            try:
                if settings.build:
                    progress.say(stack.name, "release build")
                    result["build_s"] = round(stack.build(), 1)
                result["artifact_bytes"] = stack.artifact.stat().st_size
                progress.say(stack.name, "image build")
                result["image_build_s"] = docker.build_images([stack.name], env, build_artifacts=False)[stack.name]
                result["image_bytes"] = docker.image_bytes(stack.name)
                progress.say(stack.name, "start container")
                t0 = time.monotonic()
                docker.compose(["up", "-d", "--no-deps", stack.name], env, limited=bool(limits))
                docker.wait_http(url + "/health", 180)
                result["startup_s"] = round(time.monotonic() - t0, 3)  # compose up -> /health 200
                cid = docker.container_id(env, stack.name)
                cg = docker.ContainerCgroup(cid)
                reason = verify_service(url, "http://localhost:8080", settings.key_bits)
                if reason:
                    result["failed"] = f"verification: {reason}"
                    continue
                sampler = Sampler(docker.container_pid(cid), t0)
                sampler.start()
                cpu0 = cg.cpu_seconds()
                try:
                    result.update(measure(stack.name, url, settings, progress, sampler))
                finally:
                    sampler.stop()
                cpu1 = cg.cpu_seconds()
                result["samples"] = sampler.samples
                result["phases"] = sampler.phases
                result["container"] = {"cgroup_cpu_s": round(cpu1 - cpu0, 3) if cpu0 is not None and cpu1 is not None else None,
                                       **cg.memory(), "limits": {"cpus": settings.limits.cpus,
                                                                 "memory_mb": settings.limits.memory_mb}}
                if result["container"].get("oom_kills"):
                    result["failed"] = f"OOM-killed in the container (oom_kill={result['container']['oom_kills']})"
            except (ToolError, subprocess.TimeoutExpired, OSError) as e:
                result["failed"] = str(e)
            finally:
                logs = docker.compose(["logs", "--no-color", "--tail", "40", stack.name], env, check=False, quiet=True)
                result["log_tail"] = (logs.stdout or "")[-2000:]
                docker.compose(["stop", "-t", "15", stack.name], env, check=False, quiet=True)
    finally:
        docker.down(env)
    return results


def bench_url(name: str, url: str, settings: Settings, progress: Progress) -> dict:
    result: dict = {"name": name, "description": url, "target": "url", "url": url}
    progress.say(name, f"verify {url}")
    reason = verify_service(url, None, None)
    if reason:
        result["failed"] = f"verification: {reason}"
        return result
    try:
        result.update(measure(name, url, settings, progress, None))
    except (ToolError, subprocess.TimeoutExpired) as e:
        result["failed"] = str(e)
    return result


# --------------------------------------------------------------------------- summary


def spread(values: list[float]) -> dict:
    return {"median": round(statistics.median(values), 3), "min": round(min(values), 3), "max": round(max(values), 3)}


def summarize(result: dict, ceiling: dict | None) -> dict:
    """Medians per concurrency. Crypto share divides by the OpenSSL ceiling measured just before this stack
    (`openssl_ceiling`), else by the run's one at the start."""
    if result.get("failed") or not result.get("runs"):
        return {}
    ceiling = result.get("openssl_ceiling") or ceiling
    summary: dict = {"by_concurrency": {}}
    for c, runs in result["runs"].items():
        s = {
            "rps": spread([r["rps"] for r in runs]),
            "errors": sum(r["errors"] for r in runs),
            "requests": sum(r["requests"] for r in runs),
            "latency_ms": {p: round(statistics.median(r["latency_ms"][p] for r in runs), 3)
                           for p in ("p50", "p90", "p99", "p99_9", "max")},
        }
        cpu = [r["cpu_ms_per_request"] for r in runs if "cpu_ms_per_request" in r]
        if cpu:
            s["cpu_ms_per_request"] = round(statistics.median(cpu), 4)
            if ceiling:
                s["crypto_share"] = round(2 * ceiling["sign_ms"] / s["cpu_ms_per_request"], 3)
            if result.get("own_ceiling"):
                s["own_share"] = round(result["own_ceiling"]["pair_ms"] / s["cpu_ms_per_request"], 3)
        summary["by_concurrency"][c] = s
    knee = max(summary["by_concurrency"], key=lambda c: summary["by_concurrency"][c]["rps"]["median"])
    summary["knee"] = knee
    samples = result.get("samples") or []
    if samples:
        summary["rss_peak_mb"] = round(max(s[1] for s in samples) / 2**20, 1)
        measured_from = next((t for t, p in result.get("phases", []) if p.startswith("c=")), None)
        steady = [s[1] for s in samples if measured_from is not None and s[0] >= measured_from]
        if steady:
            summary["rss_steady_mb"] = round(statistics.median(steady) / 2**20, 1)
    return summary


def describe_limits(limits: dict) -> str:
    parts = []
    if limits.get("cpus"):
        parts.append(f"{limits['cpus']:g} CPU")
    if limits.get("memory_mb"):
        parts.append(f"{limits['memory_mb']} MiB")
    return ", ".join(parts) or "none"


def fmt(v, spec: str = ".0f", na: str = "n/a") -> str:
    return na if v is None else format(v, spec)


def write_markdown(path: Path, env: dict, ceiling: dict | None, results: list[dict]) -> str:
    st = env["settings"]
    lines = [
        f"# simple-auth benchmark — {st['profile']}, scenario `{st['scenario']}`, RSA-{st['key_bits']}",
        "",
        f"{env['date_utc']} · {env['cpu_model']} · {env['cores']} cores · {env['memory_gib']} GiB · "
        f"Linux {env['kernel']} · commit `{(env['commit'] or '?')[:10]}`{' (dirty)' if env['dirty'] else ''}",
        "",
        f"Settings: concurrency {', '.join(map(str, st['concurrency']))}; {st['repeats']} × {st['duration_s']} s each "
        f"after a {st['primer_s']} s primer and {st['warmup_s']} s warm-up; wrk {st['wrk_threads']} threads; "
        f"pool {st['db_pool_size']}; server limits: {describe_limits(st['limits'])}; wrong passwords {st['wrong_share']:.0%}. "
        "Median of the repeats, [min–max] beside it.",
        "",
    ]
    if ceiling:
        lines += [f"Ceiling at the start of the run ({ceiling['tool']}): {ceiling['signs_per_s_per_core']:.0f} RSA-{ceiling['key_bits']} "
                  f"signatures/s per core = {ceiling['token_pairs_per_s_per_core']:.0f} token pairs/s per core "
                  f"({ceiling['token_pairs_per_s_all_cores']:.0f} on all {env['cores']} cores, if nothing else ran).", ""]
    owned = [r for r in results if r.get("openssl_ceiling") or r.get("own_ceiling") or r.get("own_ceiling_error")]
    if owned:
        lines += ["Measured again right before each stack (the machine's speed drifts), and each stack's own ceiling "
                  "(`signbench`: the service's own signer, settings and key issue token pairs on one thread; per CPU "
                  "second of that thread; the fastest of its runs, all of them in results.json). A stack's shares "
                  "below divide by these:", "",
                  "| stack | OpenSSL signatures/s per core | own provider | own token pairs/s per core | own ms per pair "
                  "| own vs OpenSSL (2 signatures) |",
                  "| --- | ---: | --- | ---: | ---: | ---: |"]
        for r in owned:
            c = r.get("openssl_ceiling") or ceiling
            signs = fmt(c["signs_per_s_per_core"] if c else None)
            o = r.get("own_ceiling")
            if not o:
                why = f"failed: {r['own_ceiling_error'][:120]}" if r.get("own_ceiling_error") else "no signbench"
                lines.append(f"| {r['name']} | {signs} | {why} | n/a | n/a | n/a |")
                continue
            vs = f"{2 * c['sign_ms'] / o['pair_ms']:.0%}" if c else "n/a"
            lines.append(f"| {r['name']} | {signs} | {o['provider']} | {o['token_pairs_per_s_per_core']:.0f} | "
                         f"{o['pair_ms']:.3f} | {vs} |")
        lines.append("")
    ok = [r for r in results if not r.get("failed")]
    conc = sorted({int(c) for r in ok for c in r["summary"]["by_concurrency"]})
    lines += ["## Throughput (requests/s)", "", "| stack | " + " | ".join(f"c={c}" for c in conc) + " | errors |",
              "| --- | " + " | ".join("---:" for _ in conc) + " | ---: |"]
    for r in ok:
        bc = r["summary"]["by_concurrency"]
        cells = []
        for c in conc:
            s = bc.get(str(c))
            cells.append(f"{s['rps']['median']:.0f} [{s['rps']['min']:.0f}–{s['rps']['max']:.0f}]" if s else "")
        lines.append(f"| {r['name']} | " + " | ".join(cells) + f" | {sum(s['errors'] for s in bc.values())} |")
    lines += ["", "## Latency at each stack's knee (ms, median of repeats)", "",
              "| stack | knee | p50 | p90 | p99 | p99.9 | max |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in ok:
        k = r["summary"]["knee"]
        lat = r["summary"]["by_concurrency"][k]["latency_ms"]
        lines.append(f"| {r['name']} | c={k} | {lat['p50']:.1f} | {lat['p90']:.1f} | {lat['p99']:.1f} | "
                     f"{lat['p99_9']:.1f} | {lat['max']:.1f} |")
    lines += ["", "## Cost", "",
              "| stack | CPU ms/request (knee) | crypto share | own share | RSS peak MB | RSS steady MB | start-up s | artifact MB | build s |",
              "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in ok:
        s = r["summary"]
        k = s["by_concurrency"][s["knee"]]
        share, own = k.get("crypto_share"), k.get("own_share")
        lines.append(
            f"| {r['name']} | {fmt(k.get('cpu_ms_per_request'), '.2f')} | {fmt(share * 100 if share else None, '.0f')}{'%' if share else ''} | "
            f"{fmt(own * 100 if own else None, '.0f')}{'%' if own else ''} | "
            f"{fmt(s.get('rss_peak_mb'), '.0f')} | {fmt(s.get('rss_steady_mb'), '.0f')} | {fmt(r.get('startup_s'), '.2f')} | "
            f"{fmt(r['artifact_bytes'] / 2**20 if r.get('artifact_bytes') else None, '.1f')} | {fmt(r.get('build_s'), '.0f')} |")
    failed = [r for r in results if r.get("failed")]
    if failed:
        lines += ["", "## No number", ""] + [f"- **{r['name']}**: {r['failed']}" for r in failed]
    lines += ["", "Crypto share = 2 × (one RSA signature's CPU time, OpenSSL, measured before the stack) ÷ the server's CPU time per "
              "request: how close a stack comes to doing nothing but the two unavoidable signatures. "
              "Own share = the stack's own CPU time per token pair (signbench) ÷ its CPU time per request: the part "
              "of each request that is minting the tokens, with the stack's own code.",
              "Start-up = exec → first token, median of the starts (`startup_samples_s` in results.json). "
              "Server-side figures (CPU, RSS) are n/a for `--url` targets.", ""]
    text = "\n".join(lines)
    path.write_text(text)
    return text


def write_charts(out: Path, results: list[dict]) -> list[str]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ok = [r for r in results if not r.get("failed")]
    if not ok:
        return []
    files = []
    conc = sorted({int(c) for r in ok for c in r["summary"]["by_concurrency"]})
    width = 0.8 / len(ok)

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for i, r in enumerate(ok):
        bc = r["summary"]["by_concurrency"]
        med = [bc[str(c)]["rps"]["median"] if str(c) in bc else 0 for c in conc]
        lo = [m - bc[str(c)]["rps"]["min"] if str(c) in bc else 0 for m, c in zip(med, conc)]
        hi = [bc[str(c)]["rps"]["max"] - m if str(c) in bc else 0 for m, c in zip(med, conc)]
        ax.bar([x + i * width for x in range(len(conc))], med, width, yerr=[lo, hi], capsize=3, label=r["name"])
    ax.set_xticks([x + width * (len(ok) - 1) / 2 for x in range(len(conc))], [f"c={c}" for c in conc])
    ax.set_ylabel("requests/s (median, min–max)")
    ax.set_title("POST /token throughput")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "rps.png", dpi=110)
    plt.close(fig)
    files.append("rps.png")

    fig, ax = plt.subplots(figsize=(8, 4.5))
    pcts = ["p50", "p90", "p99", "p99_9"]
    for r in ok:
        k = r["summary"]["knee"]
        lat = r["summary"]["by_concurrency"][k]["latency_ms"]
        ax.plot(pcts, [lat[p] for p in pcts], marker="o", label=f"{r['name']} (c={k})")
    ax.set_yscale("log")
    ax.set_ylabel("latency ms (log)")
    ax.set_title("Latency percentiles at each stack's knee")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "latency.png", dpi=110)
    plt.close(fig)
    files.append("latency.png")

    with_samples = [r for r in ok if r.get("samples")]
    if with_samples:
        fig, ax = plt.subplots(figsize=(8, 4.5))
        for r in with_samples:
            ax.plot([s[0] for s in r["samples"]], [s[1] / 2**20 for s in r["samples"]], label=r["name"])
        ax.set_xlabel("seconds since exec")
        ax.set_ylabel("RSS MiB")
        ax.set_title("Server memory over the run")
        ax.legend()
        fig.tight_layout()
        fig.savefig(out / "rss.png", dpi=110)
        plt.close(fig)
        files.append("rss.png")
    return files


# --------------------------------------------------------------------------- main


def estimated_seconds(settings: Settings, n: int) -> float:
    per = settings.primer + settings.warmup + len(settings.concurrency) * settings.repeats * settings.duration
    return n * (per + (90 if settings.conformance else 0) + 30 + settings.signbench_s
                + settings.signbench_runs * (settings.signbench_s + 3) + 5 + 3 * settings.startup_probes)


def main(argv: list[str] | None = None) -> int:
    settings = parse_args(argv)
    for tool in ("wrk", "openssl"):
        if not shutil.which(tool):
            print(f"bench: {tool} not found (apt-get install {tool})", file=sys.stderr)
            return 2
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    if settings.target == "docker":
        settings.profile = "docker-" + settings.profile
    out = settings.out / f"{stamp}-{settings.profile}"
    out.mkdir(parents=True, exist_ok=True)
    stacks = [Stack.load(s) for s in settings.stacks]
    progress = Progress(estimated_seconds(settings, len(stacks) + len(settings.urls)))
    env = environment(settings, stacks)

    progress.say("ceiling", f"openssl speed rsa{settings.key_bits}")
    ceiling = None
    try:
        ceiling = openssl_ceiling(settings.key_bits, round(settings.signbench_s))
    except ToolError as e:
        print(f"bench: {e}", file=sys.stderr)

    results = []
    try:
        if stacks and settings.target == "docker":
            results.extend(bench_docker(stacks, settings, progress, out))
        elif stacks:
            with stackctl.database() as (db_url, _pg):
                for stack in stacks:
                    results.append(bench_stack(stack, settings, db_url, progress, out))
        for name, url in settings.urls.items():
            results.append(bench_url(name, url, settings, progress))
    except KeyboardInterrupt:
        print("bench: interrupted; writing what was measured", file=sys.stderr)
    except ToolError as e:
        print(f"bench: {e}", file=sys.stderr)
        return 2
    for r in results:
        r["summary"] = summarize(r, ceiling)

    (out / "results.json").write_text(json.dumps({"environment": env, "ceiling": ceiling, "stacks": results}, indent=1))
    table = write_markdown(out / "results.md", env, ceiling, results)
    charts = write_charts(out, results)
    print(table)
    print(f"results: {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out} "
          f"(results.json, results.md{', ' + ', '.join(charts) if charts else ''})")
    return 1 if all(r.get("failed") for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
