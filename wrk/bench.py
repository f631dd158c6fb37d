#!/usr/bin/env python3
"""The benchmark runner behind `make bench`.

    python3 wrk/bench.py                                # every stack, profile local, scenario users
    python3 wrk/bench.py --stacks actix,spring --profile fly-shared-cpu-1x
    python3 wrk/bench.py --profile fly-performance-1x   # the server alone on one CPU, 2 GiB
    python3 wrk/bench.py --cpus 0.5 --memory 128        # custom limits for the server
    python3 wrk/bench.py --url actix=https://simple-auth-actix.fly.dev   # already-running services
    python3 wrk/bench.py --url orig=http://127.0.0.1:3000 --verify basic # a token service without a JWKS
    python3 wrk/bench.py --smoke                        # short phases, one concurrency (CI)
    python3 wrk/bench.py --key-type ed25519             # another dev key: rsa-2048 (default), rsa-4096, p-256, ed25519
    python3 wrk/bench.py --target docker --smoke        # the images of docker-compose.yml (wrk/containers.py)

Per stack: release build (timed), artifact size, conformance gate, OpenSSL's
and the stack's own signing ceiling for the key type in use (--key-type; its
`signbench` entry point: the service's own signer minting token pairs on one
thread; a JVM stack whose provider is not Amazon Corretto Crypto Provider gets
no number), start with the contract's environment in a cgroup of its own,
start-up time (exec -> first 200 on /token), verification (two logins, the
chosen dev key's kid in the served JWKS, tokens checked against it) and a
primer. Then, with every server up at once, the closed-loop sweep (wrk):
at each concurrency a warm-up until two consecutive windows agree on CPU per
request within 3 %, then the repeats, the concurrencies and the stacks
interleaved round-robin (both orders rotate each repeat and are recorded;
each measured run follows an unmeasured re-warm window at its concurrency).
Then the open-loop phase (oha at constant arrival rates, latency from each request's intended start):
the same absolute rates for every stack (fractions of the slowest stack's
closed-loop maximum) and 50/75/90 % of the stack's own maximum. Every run
records the server's, wrk's and PostgreSQL's CPU time, the machine's idle
and stolen CPU; any non-200 answer (or socket error) in any load phase fails
the stack, and the runner exits non-zero when any stack failed. The report
gives each stack's own cost per request: its CPU per request minus its
signing per token pair (most telling with the cheap signatures, p-256 and
ed25519).

Profiles (--profile): local (no limits), cpu1-256m (a whole core by CFS quota,
256 MiB), fly-shared-cpu-1x (fly.io's shared vCPU: 80 ms period, 5 ms
baseline, a balance of unused baseline time up to 500 s, 100 % of one CPU
while it lasts; 256 MiB), fly-performance-1x (the server alone on one CPU by
cpuset, wrk and PostgreSQL on the others; 2 GiB).

Output: results/<UTC time>-<profile>/{results.json,results.md,*.png}.
"""
from __future__ import annotations

import argparse
import base64
import contextlib
import datetime as dt
import http.client
import json
import os
import platform
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import urlsplit

import stackctl
from stackctl import ROOT, Stack, ToolError

VECTORS = json.loads((ROOT / "spec" / "vectors.json").read_text())
CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
SCENARIOS = ("users", "john", "argon2", "mixed", "refresh")
OHA_VERSION = "1.15.0"  # wrk/install-loadgen.sh installs this one
STABLE_WITHIN = 0.03    # warm-up: two consecutive windows' CPU per request within 3 %
SHARED_FRACTIONS = (0.25, 0.5, 0.75, 0.9)  # open loop: of the slowest stack's closed-loop maximum, for every stack
OWN_FRACTIONS = (0.5, 0.75, 0.9)           # open loop: of the stack's own closed-loop maximum
# The signing key's type decides the tokens' algorithm (spec/README.md §2). Per dev key type (spec/vectors.json
# `keys[].type`, the keys of stackctl.KEYS): how the report names it, the `openssl speed` algorithm that measures its
# signing speed and the label that starts openssl's result line for it (`openssl speed -seconds 1 ALG` prints, e.g.,
# "rsa 2048 bits 0.000295s 0.000017s   3390.0  59647.5", " 256 bits ecdsa (nistp256)   0.0000s   0.0001s  50309.1
# 15860.2", " 253 bits EdDSA (Ed25519)   0.0000s   0.0001s  24434.0   9451.0" under a header naming the columns).
KEY_TYPE_NAMES = {"rsa-2048": "RSA-2048", "rsa-4096": "RSA-4096", "p-256": "P-256", "ed25519": "Ed25519"}
OPENSSL_SPEED = {
    "rsa-2048": ("rsa2048", r"rsa\s+2048\s+bits", "RSA-2048"),
    "rsa-4096": ("rsa4096", r"rsa\s+4096\s+bits", "RSA-4096"),
    "p-256": ("ecdsap256", r"256\s+bits\s+ecdsa\s+\(nistp256\)", "ECDSA P-256"),
    "ed25519": ("ed25519", r"253\s+bits\s+EdDSA\s+\(Ed25519\)", "Ed25519"),
}
DEFAULT_KEY_TYPE = stackctl.DEFAULT_KEY_TYPE
JWS_ALGS = ("RS256", "ES256", "EdDSA")  # what a token may be signed with (spec/README.md §2)
CRYPTO_FLAGS = ("avx512ifma", "avx512f", "avx512bw", "avx512vl", "vaes", "vpclmulqdq", "sha_ni", "avx2", "adx",
                "bmi2", "aes", "pclmulqdq")


# --------------------------------------------------------------------------- key types


def key_alg(key_type: str) -> str:
    """The JWS algorithm a dev key of this type signs with (spec/vectors.json)."""
    return next(k["alg"] for k in VECTORS["keys"] if k["type"] == key_type)


def key_kid(key_type: str) -> str:
    """The dev key's RFC 7638 thumbprint, the `kid` its JWKS entry and tokens carry (spec/vectors.json)."""
    return next(k["kid"] for k in VECTORS["keys"] if k["type"] == key_type)


def recorded_key_type(record: dict | None) -> str | None:
    """The key type a result set's settings (or a ceiling) record: `key_type` since issue 22, `key_bits` (always
    RSA) in the sets made before it. None when neither is there."""
    record = record or {}
    if record.get("key_type"):
        return record["key_type"]
    if record.get("key_bits"):
        return f"rsa-{record['key_bits']}"
    return None


def key_label(key_type: str | None, alg: str | None = None) -> str:
    """How the report names a key type: "RSA-2048 (RS256)", "P-256 (ES256)", "Ed25519 (EdDSA)"."""
    if key_type is None:
        return "key type unknown"
    if alg is None:
        alg = next((k["alg"] for k in VECTORS["keys"] if k["type"] == key_type), None)
    name = KEY_TYPE_NAMES.get(key_type, key_type)
    return f"{name} ({alg})" if alg else name


# --------------------------------------------------------------------------- settings


@dataclass(frozen=True)
class FlyShared:
    """fly.io's shared-CPU rule ("CPU Performance" in fly's docs): every `period_us` the vCPU earns
    `baseline_us` of CPU time; what it does not use accrues as a balance of at most `max_balance_s`; while
    there is a balance it may run at 100 % of one CPU, without one it gets the baseline."""
    period_us: int = 80_000
    baseline_us: int = 5_000
    max_balance_s: float = 500.0

    @property
    def baseline_share(self) -> float:
        return self.baseline_us / self.period_us


@dataclass
class Limits:
    cpus: float | None = None
    memory_mb: int | None = None
    cpuset: str | None = None          # CPUs the server is confined to (the rest run wrk and PostgreSQL)
    shared: FlyShared | None = None    # fly's shared-CPU rule, enforced by a governor thread

    def __bool__(self) -> bool:
        return any(v is not None for v in (self.cpus, self.memory_mb, self.cpuset, self.shared))


PROFILES = {
    "local": Limits(),
    # One whole core by CFS quota and 256 MiB: what this profile used to call fly-shared-1x. It is not fly's
    # shared vCPU (that sustains 1/16 of a core): the name says what it is.
    "cpu1-256m": Limits(cpus=1.0, memory_mb=256),
    # fly.io shared-cpu-1x: 256 MiB and the shared-CPU rule (FlyShared), modelled with the cgroup's CFS quota.
    "fly-shared-cpu-1x": Limits(memory_mb=256, shared=FlyShared()),
    # fly.io performance-1x: one dedicated core and 2 GiB; the server alone on the last CPU by cpuset.
    "fly-performance-1x": Limits(memory_mb=2048, cpuset="last"),
}
ALIASES = {"fly-shared-1x": "cpu1-256m"}  # the old, misleading name of cpu1-256m


@dataclass
class Settings:
    stacks: list[str]
    urls: dict[str, str]
    profile: str
    limits: Limits
    scenario: str
    wrong_share: float
    key_type: str
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
    verify: str = "jwks"
    open_loop: bool = True
    open_loop_s: int = 15
    warmup_window: int = 10
    rewarm: int = 5
    open_loop_repeats: int = 3
    gc_log: bool = False
    capacity_steps: int = 3

    @property
    def smoke(self) -> bool:
        return "smoke" in self.profile

    @property
    def startup_probes(self) -> int:
        """Extra starts per stack for the start-up median (none in the smoke run, none under fly's shared rule:
        there every start is from an empty balance and takes tens of seconds)."""
        return 0 if self.smoke or self.limits.shared else 4

    @property
    def signbench_s(self) -> float:
        """Timed seconds of each stack's own signing measurement (openssl speed gets the same)."""
        return 2 if self.smoke else 5

    @property
    def signbench_runs(self) -> int:
        """Runs of each stack's own signing measurement and of openssl speed; the fastest is the ceiling."""
        return 1 if self.smoke else 3

    @property
    def shared_fractions(self) -> tuple[float, ...]:
        return (0.5,) if self.smoke else SHARED_FRACTIONS

    @property
    def own_fractions(self) -> tuple[float, ...]:
        return (0.9,) if self.smoke else OWN_FRACTIONS


def parse_args(argv: list[str] | None) -> Settings:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stacks", help="comma-separated (default: every folder with a stack.json)")
    ap.add_argument("--url", action="append", default=[], metavar="NAME=URL",
                    help="benchmark an already-running service by base URL (repeatable); no local stacks then")
    ap.add_argument("--verify", choices=("jwks", "basic"), default="jwks",
                    help="jwks: tokens checked against the served JWKS (default); basic: for --url targets "
                         "without a JWKS, /token must answer 200 with two JWTs (signatures not checked, "
                         "marked so in the results)")
    ap.add_argument("--profile", choices=sorted(PROFILES) + sorted(ALIASES), default="local")
    ap.add_argument("--cpus", type=float, help="CPU limit for the server (cgroup quota), overrides the profile")
    ap.add_argument("--memory", type=int, metavar="MiB", help="memory limit for the server, overrides the profile")
    ap.add_argument("--scenario", choices=SCENARIOS, default="users")
    ap.add_argument("--wrong-share", type=float, default=0.0, help="share of logins with a wrong password (0..1)")
    ap.add_argument("--key-type", choices=list(stackctl.KEYS), default=DEFAULT_KEY_TYPE,
                    help="the dev key every stack signs with; its type decides the algorithm: rsa-2048 and rsa-4096 "
                         "-> RS256, p-256 -> ES256, ed25519 -> EdDSA (default %(default)s)")
    ap.add_argument("--concurrency", help="comma-separated connection counts (default 16,64,256; 4,16 under "
                                          "fly-shared-cpu-1x, where the baseline serves ~100 requests/s and more "
                                          "connections only queue past the pool's 1 s acquire timeout)")
    ap.add_argument("--duration", type=int, default=15, help="seconds per measured run")
    ap.add_argument("--warmup", type=int, default=120,
                    help="cap in seconds of the warm-up at each concurrency (it ends earlier once two consecutive "
                         "windows agree on CPU per request within 3 %%)")
    ap.add_argument("--warmup-window", type=int, default=10, help="seconds per warm-up window")
    ap.add_argument("--rewarm", type=int, default=5,
                    help="seconds of unmeasured load at a run's concurrency right before it (the sweep interleaves "
                         "concurrencies, so the stack may have just run another one)")
    ap.add_argument("--primer", type=int, default=5, help="primer seconds at 8 connections")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--wrk-threads", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--open-loop-seconds", type=int, default=15, help="seconds per open-loop rate")
    ap.add_argument("--open-loop-repeats", type=int, default=3,
                    help="runs at each fraction of a stack's own maximum, interleaved (one 15 s run does not decide a "
                         "p99 near saturation); the tables give the median and the range")
    ap.add_argument("--capacity-steps", type=int, default=3,
                    help=f"bisection steps for the highest constant rate with p99 under {CAPACITY_P99_MS:.0f} ms "
                         "(0: skip)")
    ap.add_argument("--gc-log", action="store_true",
                    help="JVM stacks log their collections (-Xlog:gc, asynchronous, into the run's folder); results "
                         "attribute the pauses to each open-loop run")
    ap.add_argument("--no-open-loop", action="store_true", help="skip the open-loop latency phase (oha)")
    ap.add_argument("--skip-conformance", action="store_true", help="skip the conformance gate (verification still runs)")
    ap.add_argument("--no-build", action="store_true", help="use the existing artifacts (build time not measured)")
    ap.add_argument("--smoke", action="store_true", help="short phases, one concurrency, one repeat (CI)")
    ap.add_argument("--out", type=Path, default=ROOT / "results")
    ap.add_argument("--target", choices=("local", "docker"), default="local",
                    help="docker: build the images, compose up, measure the containers on their published ports")
    a = ap.parse_args(argv)

    if not 0 <= a.wrong_share <= 1:
        ap.error("--wrong-share must be between 0 and 1")
    if a.concurrency is None:
        a.concurrency = "4,16" if ALIASES.get(a.profile, a.profile) == "fly-shared-cpu-1x" else "16,64,256"
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
    if a.verify == "basic" and not urls:
        ap.error("--verify basic is for --url targets that serve no JWKS; local stacks are always checked against theirs")
    profile = ALIASES.get(a.profile, a.profile)
    if profile != a.profile:
        print(f"bench: profile {a.profile!r} is now called {profile!r} (a whole core is not fly's shared vCPU; "
              "--profile fly-shared-cpu-1x models that)", file=sys.stderr)
    limits = Limits(**{k: getattr(PROFILES[profile], k) for k in ("cpus", "memory_mb", "cpuset", "shared")})
    if a.cpus is not None or a.memory is not None:
        if a.cpus is not None and a.cpus <= 0 or a.memory is not None and a.memory < 16:
            ap.error("--cpus must be > 0 and --memory at least 16 MiB")
        limits = Limits(a.cpus if a.cpus is not None else limits.cpus,
                        a.memory if a.memory is not None else limits.memory_mb, limits.cpuset,
                        None if a.cpus is not None else limits.shared)
        profile = "custom"
    if limits.cpuset and (os.cpu_count() or 1) < 2:
        ap.error(f"--profile {profile} needs at least two CPUs (one for the server, the rest for wrk and PostgreSQL)")
    if urls and limits:
        ap.error("limits apply to servers this runner starts, not to --url targets")
    if a.target == "docker" and urls:
        ap.error("--target docker measures the compose stacks, not --url targets")
    if a.target == "docker" and (limits.shared or limits.cpuset):
        ap.error(f"--target docker takes CPU/memory limits only, not the {profile} profile")
    if a.smoke:
        concurrency, duration, warmup, window, primer, repeats, open_s, rewarm = [concurrency[0]], 3, 6, 2, 1, 1, 2, 1
    else:
        duration, warmup, window, primer, repeats, open_s, rewarm = (a.duration, a.warmup, a.warmup_window, a.primer,
                                                                    a.repeats, a.open_loop_seconds, a.rewarm)
    open_repeats = 1 if a.smoke else a.open_loop_repeats
    capacity_steps = 1 if a.smoke and a.capacity_steps else a.capacity_steps
    if capacity_steps < 0:
        ap.error("--capacity-steps must be 0 or more")
    if duration < 1 or repeats < 1 or window < 1 or open_s < 1 or rewarm < 1 or open_repeats < 1:
        ap.error("--duration, --repeats, --warmup-window, --rewarm, --open-loop-seconds and --open-loop-repeats must "
                 "be at least 1")
    if a.scenario == "refresh" and a.wrong_share > 0:
        ap.error("--wrong-share does not apply to the refresh scenario (it logs in once per connection)")
    if a.scenario == "refresh" and not a.no_open_loop:
        # oha sends fixed bodies (a random line of a file per request), and a refresh token is good once.
        print("bench: the refresh scenario has no open-loop phase (a refresh token is good once; oha sends fixed "
              "bodies)", file=sys.stderr)
        a.no_open_loop = True
    return Settings(stacks, urls, profile + ("-smoke" if a.smoke else ""), limits, a.scenario, a.wrong_share,
                    a.key_type, concurrency, duration, warmup, primer, repeats, a.wrk_threads,
                    not (a.skip_conformance or a.smoke), not a.no_build, a.out, a.target, a.verify,
                    not a.no_open_loop, open_s, window, rewarm, open_repeats, a.gc_log, capacity_steps)


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


def resolve_cpuset(spec: str, cpus: int | None = None) -> str:
    """'last' → the machine's last CPU (the server's; wrk and PostgreSQL get the others), else as given."""
    cpus = cpus or os.cpu_count() or 1
    return str(cpus - 1) if spec == "last" else spec


class Cgroup:
    """Confines one process tree (cgroup v1 or v2): CPU quota, fly's shared rule (through a governor), a
    cpuset and a memory limit. Every server gets one, limits or not: its memory peak and CPU time come from it."""

    def __init__(self, name: str, limits: Limits):
        self.limits = limits
        self.paths: dict[str, Path] = {}
        unified = Path("/sys/fs/cgroup")
        wanted = {"cpu", "memory"} | ({"cpuset"} if limits.cpuset else set())
        self.v2 = (unified / "cgroup.controllers").exists() and \
            wanted <= set((unified / "cgroup.controllers").read_text().split())
        own = self._own_paths()
        if self.v2:
            parent = unified / own.get("", "/").lstrip("/")
            path = parent / name
            path.mkdir(exist_ok=True)
            self.paths = {c: path for c in ("cpu", "cpuacct", "memory", "cpuset")}
            if limits.cpus:
                (path / "cpu.max").write_text(f"{int(limits.cpus * 100000)} 100000")
            if limits.cpuset:
                (path / "cpuset.cpus").write_text(resolve_cpuset(limits.cpuset))
            if limits.memory_mb:
                (path / "memory.max").write_text(str(limits.memory_mb * 2**20))
                with contextlib.suppress(OSError):
                    (path / "memory.swap.max").write_text("0")
        else:
            for ctrl in ("cpu", "cpuacct", "memory") + (("cpuset",) if limits.cpuset else ()):
                base = Path("/sys/fs/cgroup") / ctrl
                if not base.exists():
                    raise ToolError(f"cgroup v1 controller '{ctrl}' is not mounted: cannot confine the server")
                path = base / own.get(ctrl, "/").lstrip("/") / name
                path.mkdir(exist_ok=True)
                self.paths[ctrl] = path
            if limits.cpus:
                (self.paths["cpu"] / "cpu.cfs_period_us").write_text("100000")
                (self.paths["cpu"] / "cpu.cfs_quota_us").write_text(str(int(limits.cpus * 100000)))
            if limits.cpuset:  # v1: cpus and mems must be set before a task may join
                cs = self.paths["cpuset"]
                (cs / "cpuset.mems").write_text((cs.parent / "cpuset.mems").read_text().strip() or "0")
                (cs / "cpuset.cpus").write_text(resolve_cpuset(limits.cpuset))
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

    def set_cfs(self, quota_us: int, period_us: int) -> None:
        if self.v2:
            (self.paths["cpu"] / "cpu.max").write_text(f"{quota_us} {period_us}")
        else:
            cpu = self.paths["cpu"]
            if int((cpu / "cpu.cfs_period_us").read_text()) != period_us:
                (cpu / "cpu.cfs_quota_us").write_text("-1")
                (cpu / "cpu.cfs_period_us").write_text(str(period_us))
            (cpu / "cpu.cfs_quota_us").write_text(str(quota_us))

    def cpu_usage_s(self) -> float | None:
        """CPU time of everything in the cgroup (cpuacct.usage on v1, cpu.stat usage_usec on v2)."""
        with contextlib.suppress(OSError, ValueError, KeyError):
            if self.v2:
                return parse_kv((self.paths["cpu"] / "cpu.stat").read_text())["usage_usec"] / 1e6
            return int((self.paths["cpuacct"] / "cpuacct.usage").read_text()) / 1e9
        return None

    def cpu_stat(self) -> dict[str, int]:
        """nr_periods, nr_throttled, throttled time (µs on v2, ns on v1: normalised to throttled_us)."""
        with contextlib.suppress(OSError):
            kv = parse_kv((self.paths["cpu"] / "cpu.stat").read_text())
            throttled_us = kv.get("throttled_usec", kv.get("throttled_time", 0) // 1000)
            return {"nr_periods": kv.get("nr_periods", 0), "nr_throttled": kv.get("nr_throttled", 0),
                    "throttled_us": throttled_us}
        return {}

    def reset_memory_peak(self) -> None:
        """Forget the start-up probes' peak (cgroup v1; v2's memory.peak has no global reset)."""
        if not self.v2:
            with contextlib.suppress(OSError):
                (self.paths["memory"] / "memory.max_usage_in_bytes").write_text("0")

    def memory_peak_bytes(self) -> int | None:
        f = self.paths["memory"] / ("memory.peak" if self.v2 else "memory.max_usage_in_bytes")
        with contextlib.suppress(OSError, ValueError):
            return int(f.read_text())
        return None

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


def parse_kv(text: str) -> dict[str, int]:
    out = {}
    for line in text.splitlines():
        k, _, v = line.partition(" ")
        with contextlib.suppress(ValueError):
            out[k] = int(v)
    return out


class ShareGovernor:
    """fly's shared-CPU rule as arithmetic, no clock and no cgroup of its own (GovernorThread drives it).

    Each step is told the seconds that passed and the CPU seconds the server used in them: the balance gains
    the baseline share of the elapsed time and loses what was used, up to max_balance_s. The quota for the
    next period is the baseline plus the balance, at most the whole period (100 % of one CPU), at least the
    kernel's 1 ms minimum.

    The kernel enforces a CFS quota only at its scheduler ticks, on every CPU the cgroup runs on, so a 5 ms
    quota lets through ~6.5-8 ms per period (measured: 0.084-0.106 CPU s/s against 0.0625). The balance may
    therefore go below zero, down to one period's worth (`max_debt_s`): overuse is charged and the next
    quotas shrink until the average is the baseline. What is reported as the balance is never below zero."""

    MIN_QUOTA_US = 1000

    def __init__(self, rule: FlyShared, balance_s: float = 0.0, max_debt_s: float | None = None):
        self.rule = rule
        self.max_debt_s = rule.period_us / 1e6 if max_debt_s is None else max_debt_s
        self._balance = min(max(balance_s, 0.0), rule.max_balance_s)
        self.used_s = 0.0

    @property
    def balance_s(self) -> float:
        return max(0.0, self._balance)

    def quota_us(self) -> int:
        q = self.rule.baseline_us + self._balance * 1e6
        return int(max(self.MIN_QUOTA_US, min(self.rule.period_us, q)))

    def step(self, elapsed_s: float, used_s: float) -> int:
        used_s = max(used_s, 0.0)
        self.used_s += used_s
        self._balance = min(self.rule.max_balance_s,
                            max(-self.max_debt_s, self._balance + elapsed_s * self.rule.baseline_share - used_s))
        return self.quota_us()

    def set_balance(self, balance_s: float) -> int:
        self._balance = min(max(balance_s, 0.0), self.rule.max_balance_s)
        return self.quota_us()


def burst_seconds(balance_s: float, cpu_per_s: float, baseline_share: float) -> float | None:
    """How long a balance lasts at a rate of use: balance ÷ (CPU seconds used per second − baseline share).
    None when the rate does not exceed the baseline (the balance never runs out)."""
    drain = cpu_per_s - baseline_share
    return None if drain <= 0 else balance_s / drain


class GovernorThread(threading.Thread):
    """Every period: reads the server cgroup's CPU time, steps the ShareGovernor, writes the next quota."""

    def __init__(self, cgroup: Cgroup, governor: ShareGovernor, clock=time.monotonic):
        super().__init__(daemon=True)
        self.cgroup, self.gov, self.clock = cgroup, governor, clock
        self.lock = threading.Lock()
        self._halt = threading.Event()
        self.ticks = 0
        self.quota_us = self.gov.quota_us()
        self.cgroup.set_cfs(self.quota_us, self.gov.rule.period_us)

    def set_balance(self, balance_s: float) -> None:
        with self.lock:
            self.quota_us = self.gov.set_balance(balance_s)
            self.cgroup.set_cfs(self.quota_us, self.gov.rule.period_us)

    @property
    def balance_s(self) -> float:
        with self.lock:
            return self.gov.balance_s

    def run(self) -> None:
        period = self.gov.rule.period_us / 1e6
        last_t, last_cpu = self.clock(), self.cgroup.cpu_usage_s() or 0.0
        next_t = last_t + period
        while not self._halt.wait(max(0.0, next_t - self.clock())):
            now, cpu = self.clock(), self.cgroup.cpu_usage_s()
            if cpu is None:
                break
            with self.lock:
                quota = self.gov.step(now - last_t, cpu - last_cpu)
                # Only a change is written: the kernel refills the period's runtime on every write, so
                # rewriting an unchanged quota each period would hand out up to twice the baseline.
                if quota != self.quota_us:
                    with contextlib.suppress(OSError):
                        self.cgroup.set_cfs(quota, self.gov.rule.period_us)
                        self.quota_us = quota
            self.ticks += 1
            last_t, last_cpu = now, cpu
            next_t = max(next_t + period, now)

    def stop(self) -> None:
        self._halt.set()
        self.join(2)


# --------------------------------------------------------------------------- sampling


def proc_cpu_seconds(pid: int, reaped_children: bool = False) -> float | None:
    """utime + stime of all the process's threads; with reaped_children, also the CPU of the children it has
    waited for (cutime + cstime), which is where an exited child's CPU time goes."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    ticks = int(fields[11]) + int(fields[12])
    if reaped_children:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / CLK_TCK


def proc_rss_bytes(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
    except OSError:
        return None


def proc_anon_bytes(pid: int) -> int | None:
    """RssAnon: the process's anonymous resident memory (heap, stacks, JIT code: not mapped files)."""
    with contextlib.suppress(OSError, AttributeError):
        m = re.search(r"^RssAnon:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text(), re.M)
        return int(m.group(1)) * 1024
    return None


def children_of(pid: int) -> list[int]:
    kids = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                if int((d / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    kids.append(int(d.name))
    return kids


def postgres_pid(pg) -> int | None:
    """The throw-away cluster's postmaster (its backends are its children); None for a DATABASE_URL database."""
    with contextlib.suppress(AttributeError, OSError, ValueError, AssertionError, TypeError):
        return int((pg.datadir / "postmaster.pid").read_text().split()[0])
    return None


def tree_cpu_seconds(pid: int | None) -> float | None:
    """A process and its children (PostgreSQL: the postmaster and its backends), the exited ones included: a pool
    that retires a connection ends a backend, and counting only the live ones made PostgreSQL's CPU over a run
    come out negative."""
    if pid is None:
        return None
    total = proc_cpu_seconds(pid, reaped_children=True)
    if total is None:
        return None
    return total + sum(proc_cpu_seconds(k) or 0.0 for k in children_of(pid))


def system_cpu() -> dict[str, float]:
    """The machine's CPU seconds from /proc/stat: busy (user, nice, system, irq, softirq), idle (with
    iowait) and steal (time the hypervisor gave to someone else)."""
    f = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    f += [0] * (8 - len(f))
    user, nice, system, idle, iowait, irq, softirq, steal = f[:8]
    return {"busy": (user + nice + system + irq + softirq) / CLK_TCK, "idle": (idle + iowait) / CLK_TCK,
            "steal": steal / CLK_TCK}


def children_cpu_seconds() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


class Sampler(threading.Thread):
    """Samples the server's RSS, anonymous RSS and CPU time every `interval` seconds."""

    def __init__(self, pid: int, t0: float, interval: float = 0.5):
        super().__init__(daemon=True)
        self.pid, self.t0, self.interval = pid, t0, interval
        self.samples: list[tuple[float, int, float, int]] = []  # (s since start, rss bytes, cpu s, anon bytes)
        self.phase = "start"
        self.phases: list[tuple[float, str]] = []
        self._halt = threading.Event()

    def mark(self, phase: str) -> None:
        self.phase = phase
        self.phases.append((round(time.monotonic() - self.t0, 2), phase))

    def run(self) -> None:
        while not self._halt.is_set():
            rss, cpu, anon = proc_rss_bytes(self.pid), proc_cpu_seconds(self.pid), proc_anon_bytes(self.pid)
            if rss is None or cpu is None:
                break
            self.samples.append((round(time.monotonic() - self.t0, 2), rss, round(cpu, 3), anon or 0))
            self._halt.wait(self.interval)

    def stop(self) -> None:
        self._halt.set()
        self.join(2)


# --------------------------------------------------------------------------- measurements


def openssl_ceiling(key_type: str, seconds: int, runs: int = 1) -> dict:
    """OpenSSL's signing speed on one core for the key type in use (RSA-2048/4096: `openssl speed rsa2048`/`rsa4096`,
    P-256: `ecdsap256`, Ed25519: `ed25519`), the unavoidable cost of a request (two signatures). Like the stacks'
    own ceilings, the fastest of `runs` readings (noise only ever slows a reading down); every reading is kept."""
    if key_type not in OPENSSL_SPEED:
        raise ToolError(f"no openssl speed algorithm for key type {key_type!r}")
    readings = [_openssl_speed_once(key_type, seconds) for _ in range(max(1, runs))]
    signs = max(readings)
    algo, _, name = OPENSSL_SPEED[key_type]
    return {
        "tool": subprocess.run(["openssl", "version"], capture_output=True, text=True).stdout.strip(),
        "key_type": key_type,
        "alg": key_alg(key_type),
        "signature": name,
        "openssl_speed": algo,
        "signs_per_s_per_core": signs,
        "sign_ms": 1000 / signs,
        "token_pairs_per_s_per_core": signs / 2,
        "token_pairs_per_s_all_cores": signs / 2 * (os.cpu_count() or 1),
        "runs_signs_per_s_per_core": readings,
    }


def parse_openssl_speed(text: str, key_type: str) -> float | None:
    """The sign/s figure of `openssl speed`'s result line for the key type, or None. The column is found by its
    header (`sign verify sign/s verify/s` in OpenSSL 3.0/3.1; 3.2+ adds encrypt/decrypt columns for RSA), the
    figures being the line's last fields, after the label ("rsa 2048 bits", "256 bits ecdsa (nistp256)", ...)."""
    _, label, _ = OPENSSL_SPEED[key_type]
    header: list[str] | None = None
    for line in text.splitlines():
        fields = line.split()
        if "sign/s" in fields:
            header = fields
        elif header and re.match(rf"^\s*{label}\s", line) and len(fields) > len(header):
            with contextlib.suppress(ValueError):
                return float(fields[len(fields) - len(header) + header.index("sign/s")])
    return None


def _openssl_speed_once(key_type: str, seconds: int) -> float:
    algo = OPENSSL_SPEED[key_type][0]
    res = subprocess.run(["openssl", "speed", "-seconds", str(seconds), algo], capture_output=True, text=True)
    signs = parse_openssl_speed(res.stdout, key_type)
    if res.returncode != 0 or not signs:
        raise ToolError(f"openssl speed {algo} failed: {(res.stderr or res.stdout).strip()[-300:]}")
    return signs


NATIVE_JVM_PROVIDER = "AmazonCorrettoCryptoProvider"


def provider_problem(stack: Stack, own: dict | None, error: str | None) -> str | None:
    """A JVM stack must sign with the native provider (ACCP, AWS-LC) like the others, for every key type: with the
    JDK's own RSA, EC or EdDSA its numbers would measure a different signer. None when fine (non-JVM stacks are
    not checked)."""
    if not stack.uses_java:
        return None
    if own is None:
        return f"signing provider unknown (signbench: {error or 'no signbench entry in stack.json'}); " \
               f"a JVM stack gets a number only with {NATIVE_JVM_PROVIDER}"
    if NATIVE_JVM_PROVIDER not in own.get("provider", ""):
        return f"signs with {own.get('provider')!r}, not {NATIVE_JVM_PROVIDER} (the native provider every JVM " \
               "stack must use)"
    return None


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
    """One wrk run with users.lua. Throughput counts 200s only (`rps`; `rps_all` counts every answer); every
    other status (400s aside when wrong passwords are sent on purpose) and every socket error is an error.
    `wrk_cpu_s` is wrk's own CPU time (user + system), from the rusage of the reaped child."""
    cmd = stackctl.wrk_command(url, connections, seconds, threads, scenario, wrong)
    cpu0 = children_cpu_seconds()
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 60)
    wrk_cpu = children_cpu_seconds() - cpu0
    raw = stackctl.read_wrk_json(res.stdout)
    if res.returncode != 0 or raw is None:
        raise ToolError(f"wrk failed (exit {res.returncode}): {(res.stderr or res.stdout).strip()[-400:]}")
    data = count_wrk_answers(raw, wrong)
    data["connections"] = connections
    data["wrk_cpu_s"] = round(wrk_cpu, 3)
    return data


def count_wrk_answers(data: dict, wrong: float) -> dict:
    """users.lua's counts → throughput of 200s (`rps`; `rps_all` every answer) and the errors: every other status
    (400s aside when wrong passwords are sent on purpose) and every socket error."""
    expected = {200} | ({400} if wrong > 0 else set())
    data["unexpected_status"] = sum(n for s, n in data["status"].items() if int(s) not in expected)
    data["errors"] = data["unexpected_status"] + sum(data["socket_errors"].values())
    ok = data["status"].get("200", 0)
    data["requests_ok"] = ok
    data["rps_all"] = data["rps"]
    data["rps"] = round(ok / data["duration_s"], 2) if data["duration_s"] else 0.0
    return data


def run_failure(run: dict, phase: str) -> str | None:
    """Why a load run disqualifies the stack (any unexpected status or socket error), or None."""
    if not run.get("errors"):
        return None
    parts = []
    if run.get("unexpected_status"):
        bad = {s: n for s, n in run["status"].items() if s != "200" and not (s == "400" and run.get("wrong_share"))}
        parts.append(f"{run['unexpected_status']} unexpected answers {json.dumps(bad, sort_keys=True)}")
    sock = {k: v for k, v in (run.get("socket_errors") or {}).items() if v}
    if sock:
        parts.append(f"socket errors {json.dumps(sock, sort_keys=True)}")
    other = run.get("error_kinds")
    if other:
        parts.append(f"client errors {json.dumps(other, sort_keys=True)[:300]}")
    return f"{phase}: " + "; ".join(parts or [f"{run['errors']} errors"])


# --------------------------------------------------------------------------- open loop (oha)


def loadgen() -> str | None:
    """oha, as wrk/install-loadgen.sh installs it (.cache/oha/bin), else from PATH."""
    local = ROOT / ".cache" / "oha" / "bin" / "oha"
    if local.exists():
        return str(local)
    return shutil.which("oha")


def open_loop_bodies(scenario: str, wrong_share: float) -> list[str]:
    """The request bodies of a scenario, one per line for `oha -Z` (which sends a random line per request): the
    populations and mix users.lua walks, wrong passwords (answered 400) in the same share."""
    legacy = [(f"legacy{n}@example.com", f"legacy-pass-{n}") for n in range(1, 10001)]
    argon = [(f"argon{n}@example.com", f"argon-pass-{n}") for n in range(1, 101)]
    creds = {"users": legacy, "argon2": argon, "john": [("john@example.com", "TopSecret0!")],
             "mixed": legacy + argon * 25}[scenario]  # mixed: 10,000 legacy + 2,500 argon2id lines = 80/20

    def body(user: str, pw: str) -> str:
        return json.dumps({"username": user, "password": pw}, separators=(",", ":"))
    if wrong_share >= 1:
        return [body(u, p + "-wrong") for u, p in creds]
    right = [body(u, p) for u, p in creds]
    want = round(len(right) * wrong_share / (1 - wrong_share))
    return right + [body(creds[i * len(creds) // want][0], creds[i * len(creds) // want][1] + "-wrong")
                    for i in range(want)]


def open_loop_connections(rate: float, settings: Settings) -> int:
    """Enough connections that oha never has to queue at a healthy latency: the top concurrency."""
    return max(settings.concurrency)


def run_oha(url: str, rate: float, seconds: int, connections: int, bodies: Path, wrong: float, oha: str) -> dict:
    """Open loop: `rate × seconds` requests at a constant arrival rate, latency from each one's intended start
    (--latency-correction), every request sent (-n, not -z: none is dropped at a deadline)."""
    n = max(1, round(rate * seconds))
    cmd = [oha, "-n", str(n), "-q", f"{rate:.3f}", "--latency-correction", "-c", str(connections), "--no-tui",
           "--output-format", "json", "-m", "POST", "-T", "application/json", "-Z", str(bodies),
           "-t", "10s", url + "/token"]
    cpu0 = children_cpu_seconds()
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds * 3 + 120)
    cpu = children_cpu_seconds() - cpu0
    if res.returncode != 0:
        raise ToolError(f"oha failed (exit {res.returncode}): {(res.stderr or res.stdout).strip()[-400:]}")
    out = parse_oha(res.stdout, rate, wrong)
    out["loadgen_cpu_s"] = round(cpu, 3)
    out["connections"] = connections
    return out


def parse_oha(text: str, target_rps: float, wrong: float) -> dict:
    """oha's JSON summary → {target_rps, achieved_rps, errors, latency_ms: {p50, p90, p99, p99_9, max}}.
    Achieved = 200s per second of the run; errors = other statuses (400s aside when wrong passwords are sent on
    purpose) plus client-side errors (connection refused, timeouts...)."""
    try:
        d = json.loads(text[text.index("{"):])
        total_s = float(d["summary"]["total"])
        statuses = {str(k): int(v) for k, v in d.get("statusCodeDistribution", {}).items()}
        kinds = {str(k): int(v) for k, v in d.get("errorDistribution", {}).items()}
        pct = d["latencyPercentiles"]
    except (ValueError, KeyError, TypeError) as e:
        raise ToolError(f"oha printed no valid JSON summary: {text.strip()[:200]!r}") from e
    expected = {"200"} | ({"400"} if wrong > 0 else set())
    unexpected = sum(n for s, n in statuses.items() if s not in expected)

    def ms(v) -> float | None:
        return None if v is None or v != v else round(float(v) * 1000, 3)
    ok = statuses.get("200", 0)
    return {
        "target_rps": round(target_rps, 1),
        "achieved_rps": round(ok / total_s, 1) if total_s else 0.0,
        "errors": unexpected + sum(kinds.values()),
        "requests": sum(statuses.values()) + sum(kinds.values()),
        "status": statuses,
        "error_kinds": kinds,
        "unexpected_status": unexpected,
        "wrong_share": wrong,
        "duration_s": round(total_s, 3),
        "latency_ms": {"p50": ms(pct.get("p50")), "p90": ms(pct.get("p90")), "p99": ms(pct.get("p99")),
                       "p99_9": ms(pct.get("p99.9")), "max": ms(d["summary"].get("slowest"))},
    }


GC_PAUSE = re.compile(r"^\[(?P<time>\d{4}-\d\d-\d\dT[\d:.]+[+-]\d{4})\].*GC\(\d+\) (?P<what>Pause [^(]*?)\s*\(.*?"
                      r"(?P<ms>\d+(?:\.\d+)?)ms\s*$")


def gc_pauses(path: Path) -> list[tuple[float, float, str]]:
    """(wall-clock end, milliseconds, kind) of every stop-the-world pause in a JDK `-Xlog:gc:...:time` log."""
    out = []
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return out
    for line in lines:
        m = GC_PAUSE.match(line)
        if m:
            ts = dt.datetime.strptime(m["time"], "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()
            out.append((ts, float(m["ms"]), m["what"].strip()))
    return out


def attribute_gc_pauses(result: dict, pauses: list[tuple[float, float, str]]) -> None:
    """Each open-loop run gets the collections that ended inside it: how many, how long (p50, max, sum), and the
    share of the run's wall time the application stood still. A pause of d ms at r requests/s delays about r*d/1000
    requests by up to d ms each: when that is over 1 % of them, the pauses alone set the p99."""
    for run in result.get("open_loop") or []:
        w0, w1 = (run.get("wall") or (None, None))
        if w0 is None:
            continue
        ms = sorted(d for t, d, _ in pauses if w0 <= t <= w1)
        kinds = sorted({k for t, _, k in pauses if w0 <= t <= w1})
        run["gc"] = {"pauses": len(ms), "kinds": kinds, "sum_ms": round(sum(ms), 1),
                     "p50_ms": round(statistics.median(ms), 2) if ms else None, "max_ms": round(ms[-1], 2) if ms else None,
                     "paused_share": round(sum(ms) / 1000 / max(w1 - w0, 1e-9), 4)}


def open_loop_rates(max_rps: dict[str, float], shared: tuple[float, ...], own: tuple[float, ...],
                    own_repeats: int = 1) -> dict[str, list[dict]]:
    """Per stack, the rates it is offered: the same absolute rates for all (fractions of the slowest stack's
    closed-loop maximum), then fractions of its own maximum, `own_repeats` rounds of them (each round the
    fractions in a rotated order, so no fraction always follows the same one)."""
    if not max_rps:
        return {}
    slowest = min(max_rps.values())
    out = {}
    for name, top in max_rps.items():
        rates = [{"kind": "shared", "fraction": f, "of": "slowest", "target_rps": round(slowest * f, 1)} for f in shared]
        for k in range(own_repeats):
            rates += [{"kind": "own", "fraction": f, "of": "own", "target_rps": round(top * f, 1), "repeat": k + 1}
                      for f in rotated(list(own), k)]
        out[name] = [r for r in rates if r["target_rps"] >= 1]
    return out


# --------------------------------------------------------------------------- verification


def verify_service(base_url: str, issuer: str | None, key_type: str | None) -> str | None:
    """Two logins whose tokens verify against the served JWKS; None when all is well, else the reason. With a
    key type (the services this runner starts), the JWKS must serve that dev key's `kid` (spec/vectors.json) and
    both tokens must be signed by it with its algorithm; without one (a --url target), each token's `kid` must be
    in the JWKS and its algorithm one the contract allows, RS256, ES256 or EdDSA."""
    import jwt
    import requests

    try:
        jwks = requests.get(base_url + "/.well-known/jwks.json", timeout=10).json()
        keys = {k["kid"]: k for k in jwks["keys"]}
        want = None
        if key_type is not None:
            want, alg = key_kid(key_type), key_alg(key_type)
            if want not in keys:
                return f"JWKS does not serve the {key_label(key_type)} dev key (kid {want})"
        for creds in ({"username": "john@example.com", "password": "TopSecret0!"},
                      {"username": "legacy42@example.com", "password": "legacy-pass-42"}):
            r = requests.post(base_url + "/token", json=creds, timeout=10)
            if r.status_code != 200:
                return f"login of {creds['username']} answered {r.status_code}: {r.text[:200]}"
            body = r.json()
            for name in ("access_token", "id_token"):
                token = body[name]
                header = jwt.get_unverified_header(token)
                kid = header.get("kid")
                if kid not in keys:
                    return f"{name} has kid {kid!r}, not in the JWKS"
                if want is not None and kid != want:
                    return f"{name} is signed with kid {kid!r}, not the {key_label(key_type)} dev key ({want})"
                expected = alg if want is not None else keys[kid].get("alg") or header.get("alg")
                if expected not in JWS_ALGS or header.get("alg") != expected:
                    return f"{name} is signed with {header.get('alg')!r}, expected {expected!r}"
                claims = jwt.decode(token, jwt.PyJWK(keys[kid], expected).key, algorithms=[expected],
                                    audience="channel-api", issuer=issuer, options={"verify_iss": issuer is not None})
                if name == "id_token" and claims.get("email") != creds["username"]:
                    return f"id_token email is {claims.get('email')!r}"
        return None
    except Exception as e:  # noqa: BLE001 - any failure is a reason not to measure
        return f"{type(e).__name__}: {e}"


def looks_like_jwt(token) -> bool:
    """Three base64url segments whose first two decode to JSON objects, the header naming an algorithm."""
    if not isinstance(token, str) or token.count(".") != 2:
        return False
    try:
        parts = token.split(".")
        header, payload = (json.loads(base64.urlsafe_b64decode(p + "=" * (-len(p) % 4))) for p in parts[:2])
        return isinstance(header, dict) and isinstance(payload, dict) and bool(header.get("alg")) and bool(parts[2])
    except (ValueError, UnicodeDecodeError):
        return False


def verify_basic(base_url: str) -> str | None:
    """For a target without a JWKS (--verify basic): John's login answers 200 with two JWTs (`access_token`,
    `id_token`); signatures are not checked. None when so, else the reason."""
    body = stackctl.JOHN_LOGIN
    parts = urlsplit(base_url)
    conn_cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    conn = conn_cls(parts.hostname, parts.port, timeout=10)
    try:
        conn.request("POST", (parts.path or "") + "/token", body=body, headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        text = resp.read().decode(errors="replace")
    except (OSError, http.client.HTTPException) as e:
        return f"{type(e).__name__}: {e}"
    finally:
        conn.close()
    if resp.status != 200:
        return f"login of john@example.com answered {resp.status}: {text[:200]}"
    try:
        data = json.loads(text)
    except ValueError:
        return f"login answered 200 without JSON: {text[:200]!r}"
    for name in ("access_token", "id_token"):
        if not looks_like_jwt(data.get(name) if isinstance(data, dict) else None):
            return f"login answered 200 but {name} is not a JWT: {str(data)[:200]}"
    return None


def time_to_first_token(url: str, proc: subprocess.Popen, t0: float, timeout: float = 120) -> float:
    """Seconds from `t0` (just before exec) to the first 200 on /token for John (stackctl's poller)."""
    return stackctl.first_token(url, t0, proc, timeout)


def startup_probe(cmd: list[str], cwd: Path, env: dict, url: str) -> float:
    """One extra start just for its start-up time: exec, first token, stop."""
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        return time_to_first_token(url, proc, t0)
    finally:
        stackctl.stop_process(proc)


def conformance_gate(stack: str, key_type: str = stackctl.DEFAULT_KEY_TYPE, log: Path | None = None) -> str | None:
    """The whole suite on its own throw-away database (its outage tests stop and start it), signing with the key
    type the run measures: a stack is measured only with the algorithm it was just shown to get right. When it fails,
    its whole output goes to `log` (the results folder's <stack>-conformance.log) and the reason names the failed test
    and its first assertion line."""
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", str(ROOT / "spec" / "conformance"), "--stack", stack,
                          "--key-type", key_type], capture_output=True, text=True, env=env)
    if res.returncode == 0:
        return None
    lines = res.stdout.splitlines()
    failed = [ln for ln in lines if ln.startswith(("FAILED", "ERROR"))][:3]
    first_error = next((ln[1:].strip() for ln in lines if ln.startswith("E ")), "")
    reason = "; ".join(failed) or res.stdout.strip()[-300:]
    if first_error:
        reason += f" ({first_error[:300]})"
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(res.stdout + res.stderr)
        reason += f"; output: {log.name}"
    return "conformance suite failed: " + reason


# --------------------------------------------------------------------------- environment


def cmd_out(cmd: list[str]) -> str | None:
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
        out = (res.stdout + res.stderr).strip()
        return out.splitlines()[0] if out else None
    return None


def library_versions(stack: Stack) -> dict:
    """The versions of the libraries the stack's manifest names (`libraries` in stack.json, spec/README.md "Stack
    manifests"), as the stack resolved them: from Cargo.lock, build.sbt (plus its Scala version) or the libraries
    inside the built Spring Boot jar. A stack without the list records every dependency its build.sbt declares."""
    d, out = stack.dir, {}
    wanted = set(stack.manifest.get("libraries") or [])
    lock = d / "Cargo.lock"
    if lock.exists():
        for name, ver in re.findall(r'name = "([^"]+)"\nversion = "([^"]+)"', lock.read_text()):
            if name in wanted:
                out[name] = ver
    sbt = d / "build.sbt"
    if sbt.exists():
        text = sbt.read_text()
        for m in re.finditer(r'"([\w.-]+)"\s+%%?%?\s+"([\w.-]+)"\s+%\s+("[\w.-]+"|\w+)', text):
            if wanted and m.group(2) not in wanted:
                continue
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
            for lib in sorted(wanted):
                m = re.search(rf"BOOT-INF/lib/{re.escape(lib)}-([\d][\w.]*?(?:-[A-Z][\w]*)?)(?:-linux-x86_64)?\.jar", names)
                if m:
                    out[lib] = m.group(1)
    return out


def cpu_model() -> str:
    return next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                 if ln.startswith("model name")), platform.processor())


def cpu_identity(cpuinfo: str, lscpu: str | None) -> dict:
    """Which CPU the numbers come from: family/model/stepping, the flags that change crypto speed
    (AVX-512 IFMA and VAES make AWS-LC's RSA several times faster than AVX2 alone), and lscpu's topology."""
    first = cpuinfo.split("\n\n", 1)[0]
    info = dict((k.strip(), v.strip()) for k, _, v in (ln.partition(":") for ln in first.splitlines()) if k.strip())
    flags = set(info.get("flags", "").split())
    topo = {}
    for ln in (lscpu or "").splitlines():
        k, _, v = ln.partition(":")
        if k.strip() in ("Model name", "CPU family", "Model", "Stepping", "CPU(s)", "On-line CPU(s) list",
                         "Thread(s) per core", "Core(s) per socket", "Socket(s)", "NUMA node(s)", "Hypervisor vendor",
                         "Virtualization type", "L1d cache", "L2 cache", "L3 cache", "BogoMIPS", "CPU max MHz"):
            topo[k.strip()] = v.strip()
    return {
        "vendor": info.get("vendor_id"),
        "model_name": info.get("model name"),
        "family": info.get("cpu family"),
        "model": info.get("model"),
        "stepping": info.get("stepping"),
        "microcode": info.get("microcode"),
        "crypto_flags": {f: f in flags for f in CRYPTO_FLAGS},
        "lscpu": topo,
    }


def environment(settings: Settings, stacks: list[Stack]) -> dict:
    mem_kb = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1))
    commit = cmd_out(["git", "-C", str(ROOT), "rev-parse", "HEAD"])
    dirty = bool(cmd_out(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"]))
    java_home = None
    with contextlib.suppress(ToolError):
        java_home = stackctl.find_java_home()
    lscpu = None
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=20).stdout
    oha = loadgen()
    limits = asdict(settings.limits)
    if settings.limits.cpuset:
        limits["cpuset"] = resolve_cpuset(settings.limits.cpuset)
        limits["others_cpus"] = ",".join(str(c) for c in sorted(os.sched_getaffinity(0)) if str(c) != limits["cpuset"])
    if settings.limits.shared:
        limits["shared"]["baseline_share"] = settings.limits.shared.baseline_share
        limits["shared"]["how"] = ("cgroup v1/v2 CFS quota rewritten every period by a governor thread: balance += "
                                   "baseline share × elapsed − CPU used (cpuacct), within [0, max_balance_s]; quota = "
                                   "min(period, baseline + balance)")
    return {
        "date_utc": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "host": platform.node(),
        "cpu_model": cpu_model(),
        "cpu": cpu_identity(Path("/proc/cpuinfo").read_text(), lscpu),
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
        "oha": cmd_out([oha, "--version"]) if oha else None,
        "python": platform.python_version(),
        "libraries": {s.name: library_versions(s) for s in stacks},
        "settings": {
            "profile": settings.profile,
            "target": settings.target,
            "limits": limits,
            "scenario": settings.scenario,
            "wrong_share": settings.wrong_share,
            "key_type": settings.key_type,
            "alg": key_alg(settings.key_type),
            "kid": key_kid(settings.key_type),
            "concurrency": settings.concurrency,
            "duration_s": settings.duration,
            "warmup_cap_s": settings.warmup,
            "warmup_window_s": settings.warmup_window,
            "warmup_criterion": f"two consecutive windows' server CPU per request within {STABLE_WITHIN:.0%} "
                                f"(requests/s for targets without a server process), at most the cap",
            "primer_s": settings.primer,
            "repeats": settings.repeats,
            "rewarm_s": settings.rewarm,
            "order": "concurrencies and stacks interleaved round-robin: both orders rotate by one each repeat, "
                     "an unmeasured re-warm window at the run's concurrency before each run (recorded per run)",
            "wrk_threads": settings.wrk_threads,
            "open_loop": {"tool": "oha", "seconds": settings.open_loop_s, "latency": "from each request's intended "
                          "start (--latency-correction), all requests sent (-n), exact percentiles",
                          "shared_fractions_of_slowest_max": list(settings.shared_fractions),
                          "own_fractions": list(settings.own_fractions),
                          "own_fraction_repeats": settings.open_loop_repeats, "gc_log": settings.gc_log,
                          "capacity": {"p99_under_ms": CAPACITY_P99_MS, "bisection_steps": settings.capacity_steps},
                          "bodies": f"scenario {settings.scenario}: a random line per request of the same "
                                    "population users.lua walks"} if settings.open_loop else None,
            "verify": settings.verify,
            "db_pool_size": 10,
            "db_acquire_timeout_ms": 1000,
            "conformance_gate": settings.conformance,
            "note": "wrk, PostgreSQL and the server share this machine's cores unless the profile pins them; limits "
                    "confine the server only.",
        },
    }


# --------------------------------------------------------------------------- one running service


@dataclass
class Live:
    """A service under load: one of ours (process, cgroup, sampler, maybe a governor) or a --url target."""
    name: str
    url: str
    result: dict
    proc: subprocess.Popen | None = None
    sampler: Sampler | None = None
    cgroup: Cgroup | None = None
    governor: GovernorThread | None = None
    pg_pid: int | None = None
    log_path: Path | None = None
    stopped: bool = False

    @property
    def pid(self) -> int | None:
        return self.sampler.pid if self.sampler else None

    def mark(self, phase: str) -> None:
        if self.sampler:
            self.sampler.mark(phase)

    def fail(self, reason: str) -> None:
        self.result.setdefault("failed", reason)

    @property
    def failed(self) -> bool:
        return bool(self.result.get("failed"))

    def snapshot(self) -> dict:
        return {"t": time.monotonic(), "server": proc_cpu_seconds(self.pid) if self.pid else None,
                "cgroup": self.cgroup.cpu_usage_s() if self.cgroup else None,
                "pg": tree_cpu_seconds(self.pg_pid), "cpu_stat": self.cgroup.cpu_stat() if self.cgroup else {},
                **system_cpu()}


def account(before: dict, after: dict, requests: int, client_cpu_s: float | None) -> dict:
    """Where the machine's CPU went during one run, per request and in cores: the server (its process), the load
    generator (its rusage), PostgreSQL (postmaster and backends), the rest (the kernel's network work, the
    runner, idle stacks), idle and stolen time. None where not measurable (a --url target)."""
    wall = after["t"] - before["t"]
    out: dict = {"wall_s": round(wall, 3)}

    def delta(k):
        return None if before.get(k) is None or after.get(k) is None else after[k] - before[k]
    server, pg = delta("server"), delta("pg")
    busy, idle, steal = delta("busy"), delta("idle"), delta("steal")
    if server is not None:
        out["server_cpu_s"] = round(server, 3)
        if requests:
            out["cpu_ms_per_request"] = round(server * 1000 / requests, 4)
    if client_cpu_s is not None:
        out["wrk_cpu_s"] = round(client_cpu_s, 3)
        if requests:
            out["wrk_cpu_ms_per_request"] = round(client_cpu_s * 1000 / requests, 4)
    if pg is not None:
        out["pg_cpu_s"] = round(pg, 3)
        if requests:
            out["pg_cpu_ms_per_request"] = round(pg * 1000 / requests, 4)
    if wall > 0 and busy is not None:
        known = sum(v for v in (server, client_cpu_s, pg) if v is not None)
        out["machine"] = {"busy_cores": round(busy / wall, 3), "idle_cores": round(idle / wall, 3),
                          "steal_cores": round(steal / wall, 3), "rest_cores": round(max(0.0, busy - known) / wall, 3)}
    cs0, cs1 = before.get("cpu_stat") or {}, after.get("cpu_stat") or {}
    if cs0 and cs1:
        out["throttled"] = {k: cs1.get(k, 0) - cs0.get(k, 0) for k in ("nr_periods", "nr_throttled", "throttled_us")}
    cg = delta("cgroup")
    if cg is not None and wall > 0:
        out["cgroup_cpu_per_s"] = round(cg / wall, 4)
    return out


def load_run(live: Live, settings: Settings, c: int, secs: int, phase: str, measured: bool = True) -> dict | None:
    """One wrk run against a live service, with the CPU accounting around it. A measured run with any unexpected
    status or socket error marks the service failed (the run is returned); in a primer or warm-up window the
    errors are recorded (`unmeasured_errors`) and the measured runs decide. When wrk itself fails: failed, None."""
    live.mark(phase)
    before = live.snapshot()
    try:
        run = run_wrk(live.url, c, secs, settings.wrk_threads, settings.scenario, settings.wrong_share)
    except (ToolError, subprocess.TimeoutExpired) as e:
        live.fail(f"{phase}: {e}")
        return None
    after = live.snapshot()
    run.update(account(before, after, run["requests"], run.get("wrk_cpu_s")))
    if live.governor:
        run["balance_s_after"] = round(live.governor.balance_s, 3)
    if live.proc is not None and live.proc.poll() is not None:
        live.fail(f"{phase}: the server exited with {live.proc.returncode} during the run")
    reason = run_failure(run, phase)
    if reason and measured:
        live.fail(reason)
    elif reason:
        live.result.setdefault("unmeasured_errors", []).append(reason)
    return run


def agree(a: float, b: float, within: float = STABLE_WITHIN) -> bool:
    return a > 0 and b > 0 and abs(a - b) / min(a, b) <= within


def warm_up(live: Live, settings: Settings, c: int, progress: Progress, window: int | None = None,
            cap: int | None = None, phase: str | None = None) -> dict:
    """wrk at `c` in windows until two consecutive ones agree on the server's CPU per request within 3 %
    (requests/s where the server's CPU cannot be read), or the cap is reached."""
    window = window or settings.warmup_window
    cap = settings.warmup if cap is None else cap
    key = "cpu_ms_per_request" if live.pid else "rps"
    windows: list[dict] = []
    t0 = time.monotonic()
    stable = False
    while not live.failed and (time.monotonic() - t0) < cap:
        progress.say(live.name, f"warm-up c={c} window {len(windows) + 1}", window)
        run = load_run(live, settings, c, window, phase or f"warm-up c={c}", measured=False)
        if run is None:
            break
        windows.append({"rps": run["rps"], key: run.get(key), "errors": run["errors"]})
        if len(windows) >= 2 and windows[-1][key] and windows[-2][key] and agree(windows[-1][key], windows[-2][key]):
            stable = True
            break
    return {"concurrency": c, "criterion": f"{key} within {STABLE_WITHIN:.0%} in two consecutive {window} s windows",
            "cap_s": cap, "seconds": round(time.monotonic() - t0, 1), "stable": stable, "windows": windows}


def rotated(items: list, k: int) -> list:
    """Round-robin order for repeat k: the list rotated by k (each stack takes every position in turn)."""
    if not items:
        return []
    k %= len(items)
    return items[k:] + items[:k]


def sweep(lives: list[Live], settings: Settings, progress: Progress, order_log: list) -> None:
    """The closed-loop sweep, every stack up at once. First, at each concurrency, each stack warmed up until
    stable. Then the repeats: in repeat k both the concurrencies and the stacks in an order rotated by k (16, 64,
    256 / 64, 256, 16 / 256, 16, 64), and before every measured run one unmeasured window at its concurrency (the
    stack may have just run another one). So no concurrency always runs last: the VM's drift within a run (10-20 %
    here) spreads over every cell instead of landing on the highest concurrency. Under fly's shared rule the
    balance is emptied before every run (the sustained state)."""
    for c in settings.concurrency:
        for live in lives:
            if live.failed:
                continue
            if live.governor:
                live.governor.set_balance(0.0)
            live.result.setdefault("warmups", []).append(warm_up(live, settings, c, progress))
    for rep in range(settings.repeats):
        for c in rotated(settings.concurrency, rep):
            order = [lv for lv in rotated(lives, rep) if not lv.failed]
            order_log.append({"concurrency": c, "repeat": rep + 1, "order": [lv.name for lv in order]})
            for live in order:
                if live.failed:
                    continue
                if live.governor:
                    live.governor.set_balance(0.0)
                progress.say(live.name, f"re-warm c={c} run {rep + 1}/{settings.repeats}", settings.rewarm)
                pre = load_run(live, settings, c, settings.rewarm, f"re-warm c={c}#{rep + 1}", measured=False)
                if pre is not None:
                    live.result.setdefault("rewarms", []).append(
                        {"concurrency": c, "repeat": rep + 1, "rps": pre["rps"],
                         "cpu_ms_per_request": pre.get("cpu_ms_per_request"), "errors": pre["errors"]})
                if live.failed:
                    continue
                if live.governor:
                    live.governor.set_balance(0.0)
                progress.say(live.name, f"measure c={c} run {rep + 1}/{settings.repeats}", settings.duration)
                run = load_run(live, settings, c, settings.duration, f"c={c}#{rep + 1}")
                if run is not None:
                    live.result.setdefault("runs", {}).setdefault(str(c), []).append(run)


def closed_loop_max(result: dict) -> float | None:
    """The highest median requests/s (200s) over the concurrency sweep."""
    meds = [statistics.median(r["rps"] for r in runs) for runs in (result.get("runs") or {}).values() if runs]
    return max(meds) if meds else None


def open_loop(lives: list[Live], settings: Settings, progress: Progress, order_log: list) -> None:
    """oha at constant arrival rates: the shared absolute rates, then each stack's own fractions, the stacks
    interleaved at every rate; then, per stack, the highest constant rate it serves with p99 under
    CAPACITY_P99_MS (capacity_search)."""
    oha = loadgen()
    ok = [lv for lv in lives if not lv.failed]
    tops = {lv.name: closed_loop_max(lv.result) for lv in ok}
    plan = open_loop_rates({k: v for k, v in tops.items() if v}, settings.shared_fractions, settings.own_fractions,
                           settings.open_loop_repeats)
    with tempfile.NamedTemporaryFile("w", prefix="bench-bodies-", suffix=".txt", delete=False) as f:
        f.write("\n".join(open_loop_bodies(settings.scenario, settings.wrong_share)) + "\n")
        bodies = Path(f.name)
    try:
        steps = max((len(v) for v in plan.values()), default=0)
        for i in range(steps):
            order = [lv for lv in rotated(ok, i) if not lv.failed and i < len(plan.get(lv.name, []))]
            order_log.append({"open_loop_step": i + 1, "order": [lv.name for lv in order]})
            for live in order:
                run = open_run(live, plan[live.name][i], settings, progress, bodies, oha, settings.open_loop_s)
                if run is not None:
                    live.result.setdefault("open_loop", []).append(run)
        if settings.capacity_steps:
            capacity_search([lv for lv in ok if not lv.failed and tops.get(lv.name)], tops, settings, progress,
                            order_log, bodies, oha)
    finally:
        bodies.unlink(missing_ok=True)


def open_run(live: Live, spec: dict, settings: Settings, progress: Progress, bodies: Path, oha: str,
             seconds: int) -> dict | None:
    """One oha run at spec's rate against a live stack, with the server's, oha's and PostgreSQL's CPU and the wall
    clock (for the GC log). None, and the stack marked failed, when it does not hold."""
    if live.governor:
        live.governor.set_balance(0.0)
    if settings.rewarm and not settings.smoke:
        # Unmeasured, at the same rate: a change of load (another rate, or the closed loop before) makes the JITs
        # deoptimize and recompile (akka: 144 deoptimizations and 1.3 s of C2 compilation in the first 15 s of a
        # constant rate after wrk), which is the change's cost, not the steady state's tail.
        progress.say(live.name, f"open-loop re-warm {spec['target_rps']:.0f}/s", settings.rewarm)
        with contextlib.suppress(ToolError, subprocess.TimeoutExpired):
            run_oha(live.url, spec["target_rps"], settings.rewarm, open_loop_connections(spec["target_rps"], settings),
                    bodies, settings.wrong_share, oha)
        if live.governor:
            live.governor.set_balance(0.0)
    progress.say(live.name, f"open loop {spec['target_rps']:.0f}/s ({spec['kind']} {spec['fraction']:.0%})", seconds)
    live.mark(f"open {spec['target_rps']:.0f}/s")
    before = live.snapshot()
    wall0 = time.time()
    try:
        run = run_oha(live.url, spec["target_rps"], seconds, open_loop_connections(spec["target_rps"], settings),
                      bodies, settings.wrong_share, oha)
    except (ToolError, subprocess.TimeoutExpired) as e:
        live.fail(f"open loop at {spec['target_rps']:.0f}/s: {e}")
        return None
    after = live.snapshot()
    run["wall"] = [round(wall0, 3), round(time.time(), 3)]
    run.update({k: spec[k] for k in ("kind", "fraction", "of", "repeat") if k in spec})
    run.update(account(before, after, run["status"].get("200", 0), run.get("loadgen_cpu_s")))
    reason = run_failure(run, f"open loop at {spec['target_rps']:.0f}/s")
    if reason:
        live.fail(reason)
    return run


CAPACITY_P99_MS = 100.0   # "the highest constant rate each sustains with p99 under 100 ms"


def capacity_bounds(runs: list[dict], top: float) -> tuple[float, float]:
    """Where the search starts, from the runs already made: the highest rate whose median p99 was under
    CAPACITY_P99_MS, and the lowest one above it (1.1 x the closed-loop maximum when none was)."""
    by_rate: dict[float, list[float]] = {}
    for r in runs:
        if r["achieved_rps"] >= 0.98 * r["target_rps"]:
            by_rate.setdefault(r["target_rps"], []).append(r["latency_ms"]["p99"])
        else:
            by_rate.setdefault(r["target_rps"], []).append(float("inf"))   # did not keep up: over by definition
    good = [t for t, p in by_rate.items() if statistics.median(p) < CAPACITY_P99_MS]
    lo = max(good, default=0.0)
    hi = min([t for t, p in by_rate.items() if statistics.median(p) >= CAPACITY_P99_MS and t > lo],
             default=round(1.1 * top, 1))
    return lo, hi


def capacity_search(lives: list[Live], tops: dict[str, float], settings: Settings, progress: Progress,
                    order_log: list, bodies: Path, oha: str) -> None:
    """Bisection between capacity_bounds, the stacks interleaved at each step; each step is one run of
    open_loop_s, so the answer is within (hi - lo) of the truth and as noisy as one run (both recorded)."""
    bounds = {lv.name: capacity_bounds(lv.result.get("open_loop") or [], tops[lv.name]) for lv in lives}
    for step in range(settings.capacity_steps):
        order = [lv for lv in rotated(lives, step) if not lv.failed]
        order_log.append({"capacity_step": step + 1, "order": [lv.name for lv in order]})
        for live in order:
            lo, hi = bounds[live.name]
            mid = round((lo + hi) / 2, 1)
            spec = {"kind": "capacity", "fraction": mid / tops[live.name], "of": "own", "target_rps": mid,
                    "repeat": step + 1}
            run = open_run(live, spec, settings, progress, bodies, oha, settings.open_loop_s)
            if run is None:
                continue
            live.result.setdefault("open_loop", []).append(run)
            held = run["achieved_rps"] >= 0.98 * mid and run["latency_ms"]["p99"] < CAPACITY_P99_MS
            bounds[live.name] = (mid, hi) if held else (lo, mid)
    for live in lives:
        lo, hi = bounds[live.name]
        live.result["capacity"] = {"p99_under_ms": CAPACITY_P99_MS, "rps": lo, "next_failed_rps": hi,
                                   "of_closed_loop_max": round(lo / tops[live.name], 3),
                                   "steps": settings.capacity_steps, "seconds_per_step": settings.open_loop_s}


def fly_burst(live: Live, settings: Settings, progress: Progress) -> None:
    """fly-shared-cpu-1x from a full balance: primer and warm-up at 100 % of one CPU, then one run at the top
    concurrency measures the top rate and the CPU it uses per second, and so how many seconds of such a burst a
    full balance buys. The 500 s balance is not burned through: burst = balance ÷ (CPU/s − baseline)."""
    rule = live.governor.gov.rule
    top = max(settings.concurrency)
    live.governor.set_balance(rule.max_balance_s)
    if settings.primer:
        progress.say(live.name, "primer c=8 (full balance)", settings.primer)
        live.result["primer"] = load_run(live, settings, 8, settings.primer, "primer", measured=False)
    live.result["burst_warmup"] = warm_up(live, settings, top, progress, phase=f"burst warm-up c={top}")
    if live.failed:
        return
    live.governor.set_balance(rule.max_balance_s)
    progress.say(live.name, f"burst c={top} (full balance)", settings.duration)
    run = load_run(live, settings, top, settings.duration, f"burst c={top}")
    if run is None:
        return
    cpu_per_s = run.get("cgroup_cpu_per_s")
    live.result["fly"]["burst"] = {
        "balance_at_start_s": rule.max_balance_s,
        "concurrency": top,
        "rps": run["rps"],
        "latency_ms": run["latency_ms"],
        "cpu_per_s": cpu_per_s,
        "burst_s": round(b, 1) if cpu_per_s and (b := burst_seconds(rule.max_balance_s, cpu_per_s,
                                                                      rule.baseline_share)) else None,
        "note": "a full balance is not burned through: burst_s = balance ÷ (CPU seconds used per second − baseline "
                "share), at the rate measured here",
        "run": run,
    }
    live.governor.set_balance(0.0)


def stop_live(live: Live, settings: Settings) -> None:
    """Stops the server and records what only the end can tell: exit, OOM, memory peaks, samples, log tail."""
    if live.stopped:
        return
    live.stopped = True
    result = live.result
    if live.governor:
        live.governor.stop()
    if live.sampler:
        live.sampler.stop()
    if live.proc is not None:
        died = live.proc.poll()  # before we stop it: a SIGKILL we did not send, under a memory limit, is the OOM killer
        code = stackctl.stop_process(live.proc)
        oom = live.cgroup.oom_kills() if live.cgroup else 0
        if oom or (died == -signal.SIGKILL and settings.limits.memory_mb):
            result["failed"] = f"OOM-killed (memory limit {settings.limits.memory_mb} MiB; oom_kill={oom})"
            result["oom_killed"] = True
        result["exit_code"] = code
    if live.cgroup:
        peak = live.cgroup.memory_peak_bytes()
        result["cgroup"] = {"memory_peak_bytes": peak, "cpu_stat": live.cgroup.cpu_stat(),
                            "paths": {k: str(v) for k, v in live.cgroup.paths.items()}}
        live.cgroup.destroy()
    if live.sampler:
        result["samples"] = live.sampler.samples
        result["phases"] = live.sampler.phases
    if live.log_path and live.log_path.exists():
        result["log_tail"] = live.log_path.read_text(errors="replace")[-2000:]
    if result.get("gc_log"):
        attribute_gc_pauses(result, gc_pauses(Path(result["gc_log"])))


def prepare_stack(stack: Stack, settings: Settings, db_url: str, pg, progress: Progress, workdir: Path) -> Live | None:
    """Build, gate, ceilings, start-up probes, start (kept running), verification. Returns the live server, or
    None with the reason in the result (appended to `results` by the caller through live/none)."""
    result: dict = {"name": stack.name, "description": stack.manifest.get("description", ""), "target": "local"}
    live = Live(stack.name, "", result)
    try:
        if settings.build:
            progress.say(stack.name, "release build")
            result["build_s"] = round(stack.build(), 1)
        elif not stack.artifact.exists():
            raise ToolError(f"{stack.artifact} does not exist (run without --no-build)")
        result["artifact_bytes"] = stack.artifact.stat().st_size
        if settings.conformance:
            progress.say(stack.name, "conformance gate")
            reason = conformance_gate(stack.name, settings.key_type, workdir / f"{stack.name}-conformance.log")
            if reason:
                live.fail(reason)
                return live
    except ToolError as e:
        live.fail(str(e))
        return live

    port = stackctl.free_port()
    env = stack.contract_env(db_url, port, settings.key_type, **stackctl.BENCH_ENV)
    # The machine's speed drifts by several per cent over minutes (a shared VM): the ceilings this stack's
    # numbers are divided by are measured right before it, not once at the start of the run.
    progress.say(stack.name, f"openssl speed {OPENSSL_SPEED[settings.key_type][0]} (best of {settings.signbench_runs})")
    try:
        result["openssl_ceiling"] = openssl_ceiling(settings.key_type, round(settings.signbench_s), settings.signbench_runs)
    except ToolError as e:
        print(f"bench: {e}", file=sys.stderr)
    own_error = None
    if "signbench" in stack.manifest:
        progress.say(stack.name, f"own signing ceiling (signbench, best of {settings.signbench_runs})")
        try:
            result["own_ceiling"] = own_ceiling(stack, env, settings.signbench_s, settings.signbench_runs)
        except ToolError as e:
            own_error = result["own_ceiling_error"] = str(e)
            print(f"bench: {e}", file=sys.stderr)
    problem = provider_problem(stack, result.get("own_ceiling"), own_error)
    if problem:
        live.fail(problem)
        return live

    cgroup = None
    try:
        cgroup = Cgroup(f"simple-auth-bench-{stack.name}-{os.getpid()}", settings.limits)
    except (OSError, ToolError) as e:
        if settings.limits:
            live.fail(f"cannot confine the server: {e}")
            return live
        print(f"bench: no cgroup for {stack.name} ({e}); no cgroup memory peak", file=sys.stderr)
    governor = None
    if cgroup and settings.limits.shared:
        governor = GovernorThread(cgroup, ShareGovernor(settings.limits.shared, balance_s=0.0))
        governor.start()
        result["fly"] = {"rule": asdict(settings.limits.shared)}
    cmd = stack.command("run")
    if settings.gc_log and stack.uses_java:
        # Asynchronous, so a slow disk never stalls a safepoint; the last start (the measured one) overwrites it.
        result["gc_log"] = str(workdir / f"{stack.name}-gc.log")
        cmd[1:1] = ["-Xlog:async", f"-Xlog:gc:file={result['gc_log']}:time,uptime"]
    if cgroup:
        cmd = cgroup.wrap(cmd)
    url = f"http://127.0.0.1:{port}"
    live.url, live.cgroup, live.governor = url, cgroup, governor
    live.log_path = workdir / f"{stack.name}.log"
    # Start-up is one number per start and the shared VM makes single starts vary by ±15 %: a few starts
    # before the measured one, the median of all of them is reported.
    probes: list[float] = []
    if settings.startup_probes:
        progress.say(stack.name, f"start-up x{settings.startup_probes + 1}")
        try:
            probes = [round(startup_probe(cmd, stack.dir, env, url), 3) for _ in range(settings.startup_probes)]
        except ToolError as e:
            live.fail(f"start-up: {e}")
            stop_live(live, settings)
            return live
    if cgroup:
        cgroup.reset_memory_peak()
    if governor:
        governor.set_balance(0.0)  # the measured start is from an empty balance
    progress.say(stack.name, "start" + (" (empty balance)" if governor else ""))
    t0 = time.monotonic()
    with open(live.log_path, "wb") as logf:
        live.proc = subprocess.Popen(cmd, cwd=stack.dir, env=env, stdout=logf, stderr=subprocess.STDOUT,
                                     start_new_session=True)
    live.sampler = Sampler(live.proc.pid, t0)
    live.sampler.start()
    live.pg_pid = postgres_pid(pg)
    try:
        result["startup_samples_s"] = probes + [round(time_to_first_token(url, live.proc, t0, timeout=300), 3)]
        result["startup_s"] = round(statistics.median(result["startup_samples_s"]), 3)
        if governor:
            result["fly"]["startup_empty_balance_s"] = result["startup_samples_s"][-1]
            result["fly"]["startup_cpu_s"] = round(cgroup.cpu_usage_s() or 0.0, 3)
        reason = verify_service(url, env["JWT_ISSUER"], settings.key_type)
        result["verification"] = "jwks: two logins, both tokens verified against the served JWKS"
        if reason:
            live.fail(f"verification: {reason}")
    except (ToolError, subprocess.TimeoutExpired) as e:
        live.fail(str(e))
    return live


def prepare_url(name: str, url: str, settings: Settings, progress: Progress) -> Live:
    result: dict = {"name": name, "description": url, "target": "url", "url": url}
    live = Live(name, url, result)
    progress.say(name, f"verify {url} ({settings.verify})")
    if settings.verify == "basic":
        result["verification"] = "basic: /token answered 200 with two JWTs; signatures NOT checked (no JWKS)"
        reason = verify_basic(url)
    else:
        result["verification"] = "jwks: two logins, both tokens verified against the served JWKS"
        reason = verify_service(url, None, None)
    if reason:
        live.fail(f"verification: {reason}")
    return live


def measure(name: str, url: str, settings: Settings, progress: Progress, sampler: Sampler | None) -> dict:
    """One service on its own (the docker target): primer, then per concurrency a warm-up until stable and
    the repeats. Returns the raw phases; `failed` is set on the first error."""
    live = Live(name, url, {}, sampler=sampler)
    if settings.primer:
        progress.say(name, "primer c=8", settings.primer)
        live.result["primer"] = load_run(live, settings, 8, settings.primer, "primer", measured=False)
    order: list = []
    if not live.failed:
        sweep([live], settings, progress, order)
    live.mark("end")
    return live.result


def bench_local(stacks: list[Stack], urls: dict[str, str], settings: Settings, db_url: str | None, pg,
                progress: Progress, workdir: Path, order_log: list) -> list[dict]:
    lives: list[Live] = []
    try:
        for stack in stacks:
            lives.append(prepare_stack(stack, settings, db_url, pg, progress, workdir))
            if lives[-1].failed:
                stop_live(lives[-1], settings)
        for name, url in urls.items():
            lives.append(prepare_url(name, url, settings, progress))
        up = [lv for lv in lives if not lv.failed]
        for live in up:
            if live.governor:
                fly_burst(live, settings, progress)
            elif settings.primer:
                progress.say(live.name, "primer c=8", settings.primer)
                live.result["primer"] = load_run(live, settings, 8, settings.primer, "primer", measured=False)
        sweep([lv for lv in up if not lv.failed], settings, progress, order_log)
        if settings.open_loop:
            open_loop([lv for lv in up if not lv.failed], settings, progress, order_log)
    except KeyboardInterrupt:
        print("bench: interrupted; writing what was measured", file=sys.stderr)
        for live in lives:
            live.fail(live.result.get("failed") or "interrupted")
    finally:
        for live in lives:
            live.mark("end")
            if live.proc is not None or live.cgroup is not None:
                stop_live(live, settings)
    return [lv.result for lv in lives]


def bench_docker(stacks: list[Stack], settings: Settings, progress: Progress, workdir: Path) -> list[dict]:
    """The compose stacks: images from host-built artifacts, containers on their published ports.
    CPU time and RSS of the container's main process (the server itself: the images exec it), plus the
    container's cgroup CPU time and memory (peak, limit). The conformance suite against the containers is
    wrk/docker-ci.sh's job (it needs the suite's issuer/audience); here the verification gates the numbers."""
    import containers
    limits = (settings.limits.cpus, settings.limits.memory_mb) if settings.limits else None
    env = containers.compose_env(containers.readable_key(settings.key_type), limits)
    for var in containers.SUITE_OVERRIDES:  # each container keeps the issuer it is reachable at (docker-compose.yml)
        env.pop(var, None)
    env.update(stackctl.BENCH_ENV)
    issuers = containers.compose_issuers()
    results = [{"name": s.name, "target": "docker", "failed": "no service in docker-compose.yml"}
               for s in stacks if s.name not in containers.PORTS]
    try:
        progress.say("docker", "stand-in base images, PostgreSQL")
        containers.standins()
        containers.compose(["up", "-d", "postgres"], env)
        for stack in stacks:
            if stack.name not in containers.PORTS:
                continue
            result: dict = {"name": stack.name, "description": stack.manifest.get("description", ""), "target": "docker"}
            results.append(result)
            url = f"http://127.0.0.1:{containers.PORTS[stack.name]}"
            try:
                if settings.build:
                    progress.say(stack.name, "release build")
                    result["build_s"] = round(stack.build(), 1)
                result["artifact_bytes"] = stack.artifact.stat().st_size
                progress.say(stack.name, "image build")
                result["image_build_s"] = containers.build_images([stack.name], env, build_artifacts=False)[stack.name]
                result["image_bytes"] = containers.image_bytes(stack.name)
                progress.say(stack.name, "start container")
                t0 = time.monotonic()
                containers.compose(["up", "-d", "--no-deps", stack.name], env, limited=bool(limits))
                stackctl.wait_http(url + "/health", None, 180)
                result["startup_s"] = round(time.monotonic() - t0, 3)  # compose up -> /health 200
                cid = containers.container_id(env, stack.name)
                cg = containers.ContainerCgroup(cid)
                reason = verify_service(url, issuers.get(stack.name), settings.key_type)
                if reason:
                    result["failed"] = f"verification: {reason}"
                    continue
                sampler = Sampler(containers.container_pid(cid), t0)
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
                logs = containers.compose(["logs", "--no-color", "--tail", "40", stack.name], env, check=False, quiet=True)
                result["log_tail"] = (logs.stdout or "")[-2000:]
                containers.compose(["stop", "-t", "15", stack.name], env, check=False, quiet=True)
    finally:
        containers.down(env)
    return results


def bench_url(name: str, url: str, settings: Settings, progress: Progress) -> dict:
    """One --url target on its own (kept for callers that measure a single service)."""
    order: list = []
    return bench_local([], {name: url}, settings, None, None, progress, settings.out, order)[0]


# --------------------------------------------------------------------------- summary


def spread(values: list[float]) -> dict:
    return {"median": round(statistics.median(values), 3), "min": round(min(values), 3), "max": round(max(values), 3)}


def _median_of(runs: list[dict], key: str, nd: int = 4):
    vals = [r[key] for r in runs if r.get(key) is not None]
    return round(statistics.median(vals), nd) if vals else None


def signed_share(runs: list[dict]) -> float:
    """The share of the answers that issued tokens (200s; a wrong password is answered 400 unsigned), over the
    runs: what the signing cost per token pair is weighed by in the CPU per answer. 1.0 when not recorded."""
    ok, total = sum(r.get("requests_ok", 0) for r in runs), sum(r.get("requests", 0) for r in runs)
    if not total or any("requests_ok" not in r for r in runs):
        return 1.0
    return ok / total


def own_cost(cpu_ms: float, result: dict, ceiling: dict | None, share: float = 1.0) -> tuple[float, str] | None:
    """The stack's own cost per request: its CPU per request minus its signing per token pair (its own signbench
    for the key type in use; OpenSSL's two signatures when it has none), times the share of answers that sign.
    What is left is the framework, HTTP, JSON, the pool and the password check: the same for every key type, and
    measured most precisely when the signature is cheap (P-256, Ed25519). (ms, basis) or None."""
    if result.get("own_ceiling"):
        return round(cpu_ms - result["own_ceiling"]["pair_ms"] * share, 4), "signbench"
    if ceiling:
        return round(cpu_ms - 2 * ceiling["sign_ms"] * share, 4), "openssl"
    return None


def summarize(result: dict, ceiling: dict | None) -> dict:
    """Medians per concurrency with the repeats' spread (what wrk/compare.py weighs a difference against).
    Crypto share divides by the OpenSSL ceiling measured just before this stack, else by the run's one; the
    stack's own cost per request subtracts its signing (own_cost) from the median CPU per request."""
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
            s["cpu_ms_per_request_spread"] = spread(cpu)
            if ceiling:
                s["crypto_share"] = round(2 * ceiling["sign_ms"] / s["cpu_ms_per_request"], 3)
            if result.get("own_ceiling"):
                s["own_share"] = round(result["own_ceiling"]["pair_ms"] / s["cpu_ms_per_request"], 3)
            share = signed_share(runs)
            own = own_cost(s["cpu_ms_per_request"], result, ceiling, share)
            if own:
                s["own_cost_ms_per_request"], s["own_cost_basis"] = own
                s["own_cost_ms_per_request_spread"] = {k: round(v - (s["cpu_ms_per_request"] - own[0]), 4)
                                                       for k, v in s["cpu_ms_per_request_spread"].items()}
                if share != 1.0:
                    s["signed_share"] = round(share, 4)
        for key in ("wrk_cpu_ms_per_request", "pg_cpu_ms_per_request"):
            v = _median_of(runs, key)
            if v is not None:
                s[key] = v
        machines = [r["machine"] for r in runs if r.get("machine")]
        if machines:
            s["machine"] = {k: round(statistics.median(m[k] for m in machines), 3)
                            for k in ("busy_cores", "idle_cores", "steal_cores", "rest_cores")}
        thr = [r["throttled"] for r in runs if r.get("throttled")]
        if thr:
            s["throttled"] = {k: sum(t[k] for t in thr) for k in ("nr_periods", "nr_throttled", "throttled_us")}
        summary["by_concurrency"][c] = s
    best = max(summary["by_concurrency"], key=lambda c: summary["by_concurrency"][c]["rps"]["median"])
    summary["max_rps"] = summary["by_concurrency"][best]["rps"]["median"]
    summary["max_rps_at"] = best
    if result.get("startup_samples_s"):
        summary["startup_s"] = spread(result["startup_samples_s"])
    samples = result.get("samples") or []
    if samples:
        measured_from = next((t for t, p in result.get("phases", []) if p.startswith("c=")), None)
        steady = [s for s in samples if measured_from is not None and s[0] >= measured_from]
        summary["rss_peak_mib"] = round(max(s[1] for s in samples) / 2**20, 1)
        if steady:
            summary["rss_steady_mib"] = round(statistics.median(s[1] for s in steady) / 2**20, 1)
        anon = [s for s in samples if len(s) > 3 and s[3]]
        if anon:
            summary["anon_peak_mib"] = round(max(s[3] for s in anon) / 2**20, 1)
            steady_anon = [s[3] for s in anon if measured_from is not None and s[0] >= measured_from]
            if steady_anon:
                summary["anon_steady_mib"] = round(statistics.median(steady_anon) / 2**20, 1)
    peak = (result.get("cgroup") or {}).get("memory_peak_bytes")
    if peak:
        summary["cgroup_peak_mib"] = round(peak / 2**20, 1)
    if result.get("open_loop"):
        summary["open_loop"] = [{k: r[k] for k in ("kind", "fraction", "repeat", "target_rps", "achieved_rps", "errors",
                                                   "latency_ms", "gc") if k in r} for r in result["open_loop"]]
        summary["open_loop_own"] = open_loop_own_summary(result["open_loop"], result.get("cores"))
    if result.get("capacity"):
        summary["capacity"] = result["capacity"]
    if result.get("fly"):
        top = summary["by_concurrency"][best]
        summary["fly"] = {
            "sustained_rps": summary["max_rps"],
            "sustained_at": best,
            "sustained_p99_ms": top["latency_ms"]["p99"],
            "throttled": top.get("throttled"),
            "startup_empty_balance_s": result["fly"].get("startup_empty_balance_s"),
            "burst_rps": (result["fly"].get("burst") or {}).get("rps"),
            "burst_cpu_per_s": (result["fly"].get("burst") or {}).get("cpu_per_s"),
            "burst_s": (result["fly"].get("burst") or {}).get("burst_s"),
        }
    return summary


def open_loop_own_summary(runs: list[dict], cores: int | None = None) -> list[dict]:
    """The runs at fractions of the stack's own maximum, one entry per fraction: the medians of the repeats'
    percentiles, the p99's range, the machine's busy share (server, load generator and PostgreSQL together: what
    "75 % of the closed-loop maximum" is as load on the machine), and the collections' pauses where logged."""
    cores = cores or os.cpu_count() or 1
    out = []
    for f in sorted({r["fraction"] for r in runs if r.get("kind") == "own"}):
        rs = [r for r in runs if r.get("kind") == "own" and r["fraction"] == f]
        lat = {p: round(statistics.median(r["latency_ms"][p] for r in rs if r["latency_ms"].get(p) is not None), 3)
               for p in ("p50", "p90", "p99", "p99_9", "max")}
        e = {"fraction": f, "runs": len(rs), "target_rps": rs[0]["target_rps"],
             "achieved_rps": round(statistics.median(r["achieved_rps"] for r in rs), 1),
             "errors": sum(r["errors"] for r in rs), "latency_ms": lat,
             "p99_spread": spread([r["latency_ms"]["p99"] for r in rs]),
             "p99_over_p50": round(lat["p99"] / lat["p50"], 1) if lat["p50"] else None}
        busy = [r["machine"]["busy_cores"] for r in rs if r.get("machine")]
        if busy:
            e["machine_busy_share"] = round(statistics.median(busy) / cores, 3)
        gcs = [r["gc"] for r in rs if r.get("gc")]
        if gcs:
            e["gc"] = {"pauses_per_s": round(statistics.median(g["pauses"] / max(r["wall"][1] - r["wall"][0], 1e-9)
                                                               for g, r in zip(gcs, [r for r in rs if r.get("gc")])), 1),
                       "p50_ms": statistics.median([g["p50_ms"] for g in gcs if g["p50_ms"] is not None] or [0]),
                       "max_ms": max((g["max_ms"] for g in gcs if g["max_ms"] is not None), default=None),
                       "paused_share": round(statistics.median(g["paused_share"] for g in gcs), 4)}
        out.append(e)
    return out


def describe_limits(limits: dict) -> str:
    parts = []
    if limits.get("cpus"):
        parts.append(f"{limits['cpus']:g} CPU")
    if limits.get("cpuset"):
        parts.append(f"CPU {limits['cpuset']} alone (cpuset; wrk and PostgreSQL on {limits.get('others_cpus', 'the rest')})")
    if limits.get("shared"):
        sh = limits["shared"]
        parts.append(f"fly shared vCPU: {sh['baseline_us'] / 1000:g} ms per {sh['period_us'] / 1000:g} ms period "
                     f"baseline, balance up to {sh['max_balance_s']:g} s, 100 % of one CPU while it lasts")
    if limits.get("memory_mb"):
        parts.append(f"{limits['memory_mb']} MiB")
    return ", ".join(parts) or "none"


def fmt(v, spec: str = ".0f", na: str = "n/a") -> str:
    return na if v is None else format(v, spec)


def pct(v) -> str:
    return "n/a" if v is None else f"{v * 100:.0f}%"


def signature_name(ceiling: dict) -> str:
    """What an OpenSSL ceiling measured: "RSA-2048", "ECDSA P-256", "Ed25519" (sets before issue 22: RSA)."""
    if ceiling.get("signature"):
        return ceiling["signature"]
    kt = recorded_key_type(ceiling)
    return OPENSSL_SPEED[kt][2] if kt in OPENSSL_SPEED else "RSA"


def write_markdown(path: Path, env: dict, ceiling: dict | None, results: list[dict], order: list | None = None) -> str:
    st = env["settings"]
    cpu = env.get("cpu") or {}
    flags = ", ".join(f for f, on in (cpu.get("crypto_flags") or {}).items() if on) or "n/a"
    key_type = recorded_key_type(st)
    lines = [
        f"# simple-auth benchmark — {st['profile']}, scenario `{st['scenario']}`, {key_label(key_type, st.get('alg'))}",
        "",
        f"{env['date_utc']} · {env['cpu_model']}"
        + (f" (family {cpu.get('family')} model {cpu.get('model')} stepping {cpu.get('stepping')})" if cpu else "")
        + f" · {env['cores']} cores · {env['memory_gib']} GiB · "
        f"Linux {env['kernel']} · commit `{(env['commit'] or '?')[:10]}`{' (dirty)' if env['dirty'] else ''}",
        "",
        f"Crypto-relevant CPU flags: {flags}.",
        "",
        f"Settings: concurrency {', '.join(map(str, st['concurrency']))}; {st['repeats']} × {st['duration_s']} s each, "
        f"concurrencies and stacks interleaved round-robin, each run after a {st.get('rewarm_s', 0)} s re-warm at its "
        f"concurrency, after a {st['primer_s']} s primer and a warm-up at each concurrency until "
        f"two {st.get('warmup_window_s', '?')} s windows agree on CPU per request within 3 % (at most "
        f"{st.get('warmup_cap_s', st.get('warmup_s'))} s); wrk {st['wrk_threads']} threads; "
        f"pool {st['db_pool_size']}; server limits: {describe_limits(st['limits'])}; wrong passwords {st['wrong_share']:.0%}. "
        "Throughput counts 200 answers only. Median of the repeats, [min–max] beside it.",
        "",
    ]
    if ceiling:
        lines += [f"Ceiling at the start of the run ({ceiling['tool']}, best of "
                  f"{len(ceiling.get('runs_signs_per_s_per_core') or [1])}): {ceiling['signs_per_s_per_core']:.0f} "
                  f"{signature_name(ceiling)} signatures/s per core = {ceiling['token_pairs_per_s_per_core']:.0f} "
                  f"token pairs/s per core ({ceiling['token_pairs_per_s_all_cores']:.0f} on all {env['cores']} cores, "
                  "if nothing else ran)." + (f" At the end, every server stopped: {ceiling['end_of_run']['signs_per_s_per_core']:.0f}"
                                             f" ({ceiling['end_of_run']['ratio_to_start']:.0%} of the start): the "
                                             "machine's own drift during the run." if ceiling.get("end_of_run") else ""),
                  ""]
    owned = [r for r in results if r.get("openssl_ceiling") or r.get("own_ceiling") or r.get("own_ceiling_error")]
    if owned:
        lines += ["Measured again right before each stack (the machine's speed drifts), each the best of its runs "
                  "(all of them in results.json), and each stack's own ceiling (`signbench`: the service's own signer, "
                  "settings and key issue token pairs on one thread; per CPU second of that thread). A stack's shares "
                  "below divide by these:", "",
                  f"| stack | OpenSSL {OPENSSL_SPEED[key_type][2] + ' ' if key_type in OPENSSL_SPEED else ''}"
                  "signatures/s per core | own provider | own token pairs/s per core | own ms per pair "
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
    ok = [r for r in results if not r.get("failed") and r.get("summary")]
    conc = sorted({int(c) for r in ok for c in r["summary"]["by_concurrency"]})
    lines += ["## Throughput (closed loop, wrk: 200 answers/s)", "",
              "| stack | " + " | ".join(f"c={c}" for c in conc) + " | errors |",
              "| --- | " + " | ".join("---:" for _ in conc) + " | ---: |"]
    for r in ok:
        bc = r["summary"]["by_concurrency"]
        cells = []
        for c in conc:
            s = bc.get(str(c))
            cells.append(f"{s['rps']['median']:.0f} [{s['rps']['min']:.0f}–{s['rps']['max']:.0f}]" if s else "")
        lines.append(f"| {r['name']} | " + " | ".join(cells) + f" | {sum(s['errors'] for s in bc.values())} |")
    lines.append("")

    with_open = [r for r in ok if r["summary"].get("open_loop")]
    if with_open:
        shared = sorted({o["target_rps"] for r in with_open for o in r["summary"]["open_loop"] if o.get("kind") == "shared"})
        lines += ["## Open-loop latency (oha, constant arrival rate, from each request's intended start)", "",
                  "The same absolute rates for every stack (fractions of the slowest stack's closed-loop maximum): "
                  "p99 in ms, achieved rate in brackets.", "",
                  "| stack | " + " | ".join(f"{t:.0f}/s" for t in shared) + " |",
                  "| --- | " + " | ".join("---:" for _ in shared) + " |"]
        for r in with_open:
            by = {o["target_rps"]: o for o in r["summary"]["open_loop"] if o.get("kind") == "shared"}
            cells = [f"{fmt(by[t]['latency_ms']['p99'], '.1f')} [{by[t]['achieved_rps']:.0f}]" if t in by else ""
                     for t in shared]
            lines.append(f"| {r['name']} | " + " | ".join(cells) + " |")
        runs_each = max((o["runs"] for r in with_open for o in r["summary"].get("open_loop_own") or []), default=1)
        lines += ["", f"At fractions of each stack's own closed-loop maximum (ms; median of {runs_each} interleaved "
                  "runs, the p99's range beside it). `busy` is the machine's CPU in use during the runs (server, oha and "
                  "PostgreSQL on the same cores): open loop costs more CPU per request than wrk's closed loop, so a "
                  "fraction of the closed-loop maximum is a higher share of the machine. `GC` (with --gc-log): "
                  "collections per second, and the longest pause.", "",
                  "| stack | rate | target/s | achieved/s | p50 | p90 | p99 | p99.9 | max | p99 range | p99/p50 | busy "
                  "| GC | errors |",
                  "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for r in with_open:
            for o in r["summary"].get("open_loop_own") or []:
                lat, sp, gc = o["latency_ms"], o["p99_spread"], o.get("gc")
                rng = f"{sp['min']:.1f}–{sp['max']:.1f}" if o["runs"] > 1 else ""
                gcs = f"{gc['pauses_per_s']:.1f}/s, ≤{fmt(gc['max_ms'], '.0f')} ms" if gc else ""
                lines.append(f"| {r['name']} | {o['fraction']:.0%} | {o['target_rps']:.0f} | {o['achieved_rps']:.0f} | "
                             f"{fmt(lat['p50'], '.1f')} | {fmt(lat['p90'], '.1f')} | {fmt(lat['p99'], '.1f')} | "
                             f"{fmt(lat['p99_9'], '.1f')} | {fmt(lat['max'], '.1f')} | {rng} | "
                             f"{fmt(o['p99_over_p50'], '.1f')} | {pct(o.get('machine_busy_share'))} | {gcs} | "
                             f"{o['errors']} |")
        lines.append("")
        caps = [r for r in with_open if r["summary"].get("capacity")]
        if caps:
            c0 = caps[0]["summary"]["capacity"]
            lines += [f"The highest constant rate with p99 under {c0['p99_under_ms']:.0f} ms (bisection from the runs "
                      f"above, {c0['steps']} more runs of {c0['seconds_per_step']} s; the answer lies between it and "
                      "the lowest rate that failed):", "",
                      "| stack | sustained/s | of closed-loop max | lowest failed/s |", "| --- | ---: | ---: | ---: |"]
            for r in caps:
                c = r["summary"]["capacity"]
                lines.append(f"| {r['name']} | {c['rps']:.0f} | {pct(c['of_closed_loop_max'])} | {c['next_failed_rps']:.0f} |")
            lines.append("")

    lines += ["## Cost (at each stack's highest-throughput concurrency)", "",
              "| stack | c | server CPU ms/req | signing ms/pair | own cost ms/req | wrk CPU ms/req "
              "| PostgreSQL CPU ms/req | idle cores | steal cores | crypto share | own share | start-up s "
              "| artifact MiB | build s |",
              "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in ok:
        s = r["summary"]
        k = s["by_concurrency"][s["max_rps_at"]]
        m = k.get("machine") or {}
        lines.append(
            f"| {r['name']} | {s['max_rps_at']} | {fmt(k.get('cpu_ms_per_request'), '.3f')} | "
            f"{signing_cell(r, ceiling)} | {own_cost_cell(k)} | "
            f"{fmt(k.get('wrk_cpu_ms_per_request'), '.3f')} | {fmt(k.get('pg_cpu_ms_per_request'), '.3f')} | "
            f"{fmt(m.get('idle_cores'), '.2f')} | {fmt(m.get('steal_cores'), '.2f')} | {pct(k.get('crypto_share'))} | "
            f"{pct(k.get('own_share'))} | {fmt(r.get('startup_s'), '.2f')} | "
            f"{fmt(r['artifact_bytes'] / 2**20 if r.get('artifact_bytes') else None, '.1f')} | {fmt(r.get('build_s'), '.0f')} |")
    with_own = [r for r in ok if any(k.get("own_cost_ms_per_request") is not None
                                     for k in r["summary"]["by_concurrency"].values())]
    if with_own:
        lines += ["", f"## Own cost per request (ms CPU): server CPU per request minus its signing, "
                      f"{key_label(key_type, st.get('alg'))}", "",
                  "What each stack spends on a request apart from signing its token pair (signing ms/pair: the "
                  "service's own signer minting a pair, claims, `at_hash` and both signatures, on one thread, "
                  "`signbench`): HTTP, the request's JSON, the pool and PostgreSQL's client, the password check, the "
                  "answer. It hardly depends on the key type, and it is measured best where the signature is cheap "
                  "(P-256, Ed25519): there the signing is a small part of the CPU per request, and the difference of "
                  "two numbers of which one is most of the other no longer amplifies their errors. Each cell: "
                  "CPU per request → own cost [the repeats' range].", "",
                  "| stack | signing ms/pair | " + " | ".join(f"c={c}" for c in conc) + " |",
                  "| --- | ---: | " + " | ".join("---:" for _ in conc) + " |"]
        for r in with_own:
            bc = r["summary"]["by_concurrency"]
            cells = []
            for c in conc:
                k = bc.get(str(c)) or {}
                if k.get("own_cost_ms_per_request") is None:
                    cells.append("")
                    continue
                sp = k.get("own_cost_ms_per_request_spread")
                rng = f" [{sp['min']:.3f}–{sp['max']:.3f}]" if sp and sp["min"] != sp["max"] else ""
                cells.append(f"{k['cpu_ms_per_request']:.3f} → {own_cost_cell(k)}{rng}")
            lines.append(f"| {r['name']} | {signing_cell(r, ceiling)} | " + " | ".join(cells) + " |")
    lines += ["", "## Memory (MiB)", "",
              "| stack | RSS peak | RSS steady | anonymous peak | anonymous steady | cgroup peak |",
              "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for r in ok:
        s = r["summary"]
        lines.append(f"| {r['name']} | {fmt(s.get('rss_peak_mib'))} | {fmt(s.get('rss_steady_mib'))} | "
                     f"{fmt(s.get('anon_peak_mib'))} | {fmt(s.get('anon_steady_mib'))} | {fmt(s.get('cgroup_peak_mib'))} |")
    fly = [r for r in ok if r["summary"].get("fly")]
    if fly:
        lines += ["", "## fly.io shared vCPU (modelled)", "",
                  "Sustained = the sweep with the balance emptied before every run (the baseline only); burst = from a "
                  "full balance at the top concurrency; burst seconds = balance ÷ (CPU s/s used − baseline share), "
                  "the full balance not burned through.", "",
                  "| stack | start-up from empty balance s | sustained rps | at c | p99 ms (throttled) | throttled periods "
                  "| burst rps | burst CPU s/s | burst seconds |",
                  "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for r in fly:
            f = r["summary"]["fly"]
            thr = f.get("throttled") or {}
            lines.append(f"| {r['name']} | {fmt(f.get('startup_empty_balance_s'), '.2f')} | {fmt(f['sustained_rps'])} | "
                         f"{f['sustained_at']} | {fmt(f['sustained_p99_ms'], '.0f')} | "
                         f"{thr.get('nr_throttled', 'n/a')} of {thr.get('nr_periods', 'n/a')} | {fmt(f.get('burst_rps'))} | "
                         f"{fmt(f.get('burst_cpu_per_s'), '.2f')} | {fmt(f.get('burst_s'))} |")
    warm = [r for r in ok if r.get("warmups")]
    if warm:
        lines += ["", "Warm-up per concurrency (seconds, * = stopped at the cap without two agreeing windows): " +
                  "; ".join(f"{r['name']} " + ", ".join(f"c={w['concurrency']} {w['seconds']:.0f}{'' if w['stable'] else '*'}"
                                                      for w in r["warmups"]) for r in warm) + "."]
    if order:
        firsts = [o for o in order if "repeat" in o]
        if firsts:
            lines += ["", "Order: " + "; ".join(f"c={o['concurrency']}#{o['repeat']} {' → '.join(o['order'])}"
                                               for o in firsts) + "."]
    failed = [r for r in results if r.get("failed")]
    if failed:
        lines += ["", "## No number", ""] + [f"- **{r['name']}**: {r['failed']}" for r in failed]
    basic = [r for r in results if (r.get("verification") or "").startswith("basic")]
    if basic:
        lines += ["", "Verified `basic` only (answers 200 with two JWTs, signatures not checked): "
                  + ", ".join(r["name"] for r in basic) + "."]
    lines += ["", "Crypto share = 2 × (one signature's CPU time, OpenSSL, measured before the stack) ÷ the server's CPU "
              "time per request. Own share = the stack's own CPU time per token pair (signbench) ÷ its CPU time per "
              "request. Signing ms/pair = the stack's own CPU time per token pair (signbench; † = OpenSSL's two "
              "signatures, the stack has no signbench). Own cost = server CPU per request − signing ms/pair × the "
              "share of answers that issue tokens (all of them unless wrong passwords are sent). wrk and "
              "PostgreSQL CPU per request are theirs during the same runs; idle and steal are the machine's "
              "(/proc/stat), in cores.",
              "Start-up = exec → first token, median of the starts (`startup_samples_s` in results.json). "
              "Server-side figures (CPU, memory) are n/a for `--url` targets.", ""]
    text = "\n".join(lines)
    path.write_text(text)
    return text


def signing_cell(result: dict, ceiling: dict | None) -> str:
    """The stack's signing time per token pair: its own signbench's, else († ) OpenSSL's two signatures."""
    if result.get("own_ceiling"):
        return f"{result['own_ceiling']['pair_ms']:.3f}"
    if result.get("target") == "url":  # a service this runner did not start: its key is not known
        return "n/a"
    c = result.get("openssl_ceiling") or ceiling
    return f"{2 * c['sign_ms']:.3f}†" if c else "n/a"


def own_cost_cell(k: dict) -> str:
    v = k.get("own_cost_ms_per_request")
    return "n/a" if v is None else f"{v:.3f}" + ("†" if k.get("own_cost_basis") == "openssl" else "")


def write_charts(out: Path, results: list[dict]) -> list[str]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ok = [r for r in results if not r.get("failed") and r.get("summary")]
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
    ax.set_ylabel("200 answers/s (median, min–max)")
    ax.set_title("POST /token throughput (closed loop, wrk)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "rps.png", dpi=110)
    plt.close(fig)
    files.append("rps.png")

    with_open = [r for r in ok if r["summary"].get("open_loop")]
    if with_open:
        fig, ax = plt.subplots(figsize=(8, 4.5))
        for r in with_open:
            pts = sorted((o["target_rps"], o["latency_ms"]["p99"]) for o in r["summary"]["open_loop"]
                         if o["latency_ms"].get("p99"))
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=r["name"])
        ax.set_yscale("log")
        ax.set_xlabel("offered requests/s (constant arrival rate)")
        ax.set_ylabel("p99 latency ms (log), from intended start")
        ax.set_title("Open-loop latency vs rate (oha)")
        ax.legend()
        fig.tight_layout()
        fig.savefig(out / "latency.png", dpi=110)
        plt.close(fig)
        files.append("latency.png")

    with_samples = [r for r in ok if r.get("samples")]
    if with_samples:
        fig, ax = plt.subplots(figsize=(8, 4.5))
        for r in with_samples:
            ax.plot([s[0] for s in r["samples"]], [s[1] / 2**20 for s in r["samples"]], label=f"{r['name']} RSS")
        ax.set_xlabel("seconds since exec")
        ax.set_ylabel("MiB")
        ax.set_title("Server memory over the run")
        ax.legend()
        fig.tight_layout()
        fig.savefig(out / "rss.png", dpi=110)
        plt.close(fig)
        files.append("rss.png")
    return files


# --------------------------------------------------------------------------- main


def estimated_seconds(settings: Settings, n: int) -> float:
    warm = len(settings.concurrency) * min(settings.warmup, 3 * settings.warmup_window)
    per = settings.primer + warm + len(settings.concurrency) * settings.repeats * (settings.duration + settings.rewarm)
    if settings.limits.shared:
        per += min(settings.warmup, 3 * settings.warmup_window) + settings.duration + 20
    if settings.open_loop:
        per += ((len(settings.shared_fractions) + len(settings.own_fractions) * settings.open_loop_repeats
                 + settings.capacity_steps)
                * (settings.open_loop_s + 1 + (0 if settings.smoke else settings.rewarm + 1)))
    ceilings = settings.signbench_runs * (2 * settings.signbench_s + 3)
    return n * (per + (90 if settings.conformance else 0) + 30 + ceilings + 5 + 3 * settings.startup_probes)


def main(argv: list[str] | None = None) -> int:
    settings = parse_args(argv)
    for tool in ("wrk", "openssl"):
        if not shutil.which(tool):
            print(f"bench: {tool} not found (apt-get install {tool})", file=sys.stderr)
            return 2
    if settings.open_loop and settings.target == "local" and not loadgen():
        print("bench: oha (the open-loop load generator) not found: bash wrk/install-loadgen.sh "
              "(or --no-open-loop)", file=sys.stderr)
        return 2
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    if settings.target == "docker":
        settings.profile = "docker-" + settings.profile
    out = settings.out / f"{stamp}-{settings.profile}"
    out.mkdir(parents=True, exist_ok=True)
    if settings.limits.cpuset:
        # Everything but the server (this runner, wrk, oha, PostgreSQL started below) on the other CPUs; the
        # server's cgroup cpuset moves it to its own when it joins.
        server_cpu = int(resolve_cpuset(settings.limits.cpuset))
        os.sched_setaffinity(0, {c for c in os.sched_getaffinity(0) if c != server_cpu})
    stacks = [Stack.load(s) for s in settings.stacks]
    progress = Progress(estimated_seconds(settings, len(stacks) + len(settings.urls)))
    env = environment(settings, stacks)

    progress.say("ceiling", f"openssl speed {OPENSSL_SPEED[settings.key_type][0]}")
    ceiling = None
    try:
        ceiling = openssl_ceiling(settings.key_type, round(settings.signbench_s), settings.signbench_runs)
    except ToolError as e:
        print(f"bench: {e}", file=sys.stderr)

    results: list[dict] = []
    order: list = []
    steal0 = system_cpu()
    t0 = time.monotonic()
    try:
        if stacks and settings.target == "docker":
            results.extend(bench_docker(stacks, settings, progress, out))
            for name, url in settings.urls.items():
                results.append(bench_url(name, url, settings, progress))
        elif stacks:
            with stackctl.database() as (db_url, pg):
                results.extend(bench_local(stacks, settings.urls, settings, db_url, pg, progress, out, order))
        else:
            results.extend(bench_local([], settings.urls, settings, None, None, progress, out, order))
    except KeyboardInterrupt:
        print("bench: interrupted; writing what was measured", file=sys.stderr)
    except ToolError as e:
        print(f"bench: {e}", file=sys.stderr)
        return 2
    steal1 = system_cpu()
    wall = time.monotonic() - t0
    if ceiling and results:
        # Once more with every server stopped: how far the machine's own speed moved during the run.
        progress.say("ceiling", f"openssl speed {OPENSSL_SPEED[settings.key_type][0]} again (end of the run)")
        try:
            end = openssl_ceiling(settings.key_type, round(settings.signbench_s), settings.signbench_runs)
            ceiling["end_of_run"] = {"signs_per_s_per_core": end["signs_per_s_per_core"],
                                     "runs_signs_per_s_per_core": end.get("runs_signs_per_s_per_core"),
                                     "ratio_to_start": round(end["signs_per_s_per_core"]
                                                             / ceiling["signs_per_s_per_core"], 3)}
        except ToolError as e:
            print(f"bench: {e}", file=sys.stderr)
    env["steal_cores_whole_run"] = round((steal1["steal"] - steal0["steal"]) / wall, 4) if wall > 0 else None
    for r in results:
        r["summary"] = summarize(r, ceiling)

    (out / "results.json").write_text(json.dumps({"environment": env, "ceiling": ceiling, "order": order,
                                                  "stacks": results}, indent=1))
    table = write_markdown(out / "results.md", env, ceiling, results, order)
    charts = write_charts(out, results)
    print(table)
    print(f"results: {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out} "
          f"(results.json, results.md{', ' + ', '.join(charts) if charts else ''})")
    failed = [r["name"] for r in results if r.get("failed")]
    if failed:
        print(f"bench: FAILED: {', '.join(failed)} (reasons in results.md, 'No number')", file=sys.stderr)
    return 1 if failed or not results else 0


if __name__ == "__main__":
    sys.exit(main())
