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
a warm-up at the highest concurrency until the median CPU per request of the
last three windows is within 3 % of the three before (one window at each
other concurrency), then the repeats, the concurrencies and the stacks
interleaved round-robin (both orders rotate each repeat and are recorded;
each measured run follows an unmeasured re-warm window at its concurrency).
Then the open-loop phase (oha at constant arrival rates, latency from each request's intended start):
the same absolute rates for every stack (fractions of the slowest stack's
closed-loop maximum: 50 and 75 %) and 25/50/75/90 % of the stack's own
maximum, five 30 s runs each, then the capacity range. Every run
records the server's, wrk's and PostgreSQL's CPU time, the machine's idle
and stolen CPU; any non-200 answer (or socket error) in any load phase fails
the stack, and the runner exits non-zero when any stack failed. The report
gives each stack's own cost per request: its CPU per request minus its
signing per token pair (most telling with the cheap signatures, p-256 and
ed25519).

Profiles (--profile): local (no limits), cpu1-256m (a whole core by CFS quota,
256 MiB), fly-shared-cpu-1x (fly.io's shared vCPU on one CPU by cpuset: 80 ms
period, 5 ms baseline, a balance of unused baseline time up to 500 s, 100 % of
that CPU while it lasts; 256 MiB), fly-performance-1x (one CPU by cpuset;
2 GiB), argon2 (the argon2id users at 2, 8 and 32 connections, 503s counted
as shed; beside the machine's argon2id ceiling and Keycloak's 15 per vCPU). Both fly profiles put the server alone on the machine's last CPU and
wrk, oha and PostgreSQL on the others. cgroup v1 and v2 both work.

Output: results/<UTC time>-<profile>/{results.json,results.md,*.png}.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import time
import tomllib
from dataclasses import replace
from pathlib import Path

import stackctl
from stackctl import ROOT

from harness.keys import DEFAULT_KEY_TYPE
from harness.records import CAPACITY_P99_MS, FlyShared, Limits, Settings

SCENARIOS = ("users", "john", "argon2", "mixed", "refresh")


PROFILES = {
    "local": Limits(),
    # One whole core by CFS quota and 256 MiB: what this profile used to call fly-shared-1x. It is not fly's
    # shared vCPU (that sustains 1/16 of a core): the name says what it is.
    "cpu1-256m": Limits(cpus=1.0, memory_mb=256),
    # fly.io shared-cpu-1x: one vCPU (the server alone on the last CPU by cpuset), the shared-CPU rule (FlyShared) on
    # that CPU, modelled with the cgroup's CFS quota, and each stack's memory from its fly/STACK.toml (FLY_MEMORY);
    # 256 MiB, the size's default, for the floor.
    "fly-shared-cpu-1x": Limits(memory_mb=256, cpuset="last", shared=FlyShared()),
    # fly.io performance-1x: one dedicated core and 2 GiB; the server alone on the last CPU by cpuset.
    "fly-performance-1x": Limits(memory_mb=2048, cpuset="last"),
    # The real login (issue 40 item 6): no limits, the argon2 scenario (the contract's argon2id users), concurrencies
    # that show the sustained rate (one per core) and the overload limit shedding (503s counted, not failures),
    # beside the argon2id ceiling of this machine (ceilings.argon2_ceiling) and Keycloak's published sizing figure.
    "argon2": Limits(),
}
ARGON2_CONCURRENCY = "2,8,32"   # one check per core (2 cores); MAX_PASSWORD_CHECKS' edge; well past it
ALIASES = {"fly-shared-1x": "cpu1-256m"}  # the old, misleading name of cpu1-256m
FLY_MEMORY = {"fly-shared-cpu-1x"}  # profiles whose stacks get the memory of their own fly machine


def fly_memory_mb(stack: str) -> int | None:
    """The memory of the stack's fly machine ([[vm]] memory in fly/STACK.toml, e.g. "512mb" or "1gb"), in MiB;
    None for a stack without a fly config. fly counts a machine's memory in MiB: "256mb" is 256 MiB."""
    path = ROOT / "fly" / f"{stack}.toml"
    if not path.is_file():
        return None
    vms = tomllib.loads(path.read_text()).get("vm") or [{}]
    memory = str(vms[0].get("memory", "")).strip().lower()
    m = re.fullmatch(r"(\d+)\s*(mb|gb)?", memory)
    if not m:
        raise ValueError(f"{path}: [[vm]] memory {memory!r} is not a size like \"512mb\" or \"1gb\"")
    return int(m[1]) * (1024 if m[2] == "gb" else 1)


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
    ap.add_argument("--warmup", type=int, default=600,
                    help="cap in seconds of the warm-up, once per stack at the highest concurrency (it ends earlier "
                         "once the median CPU per request of the last 3 windows is within 3 %% of the 3 before and, "
                         "for a JVM, its JIT compiler threads took at most 2 %% of its CPU in each of the last 3; then "
                         "one window at each other concurrency)")
    ap.add_argument("--warmup-window", type=int, default=10, help="seconds per warm-up window")
    ap.add_argument("--rewarm", type=int, default=5,
                    help="seconds of unmeasured load at a run's concurrency right before it (the sweep interleaves "
                         "concurrencies, so the stack may have just run another one)")
    ap.add_argument("--primer", type=int, default=5, help="primer seconds at 8 connections")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--wrk-threads", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--open-loop-seconds", type=int, default=30, help="seconds per open-loop run")
    ap.add_argument("--open-loop-repeats", type=int, default=5,
                    help="runs at every open-loop point (each shared rate, each fraction of a stack's own maximum), "
                         "interleaved; their requests are pooled for the percentiles, and the tables give the range "
                         "across runs")
    ap.add_argument("--capacity-steps", type=int, default=2,
                    help=f"bisection steps for the highest constant rate with p99 under {CAPACITY_P99_MS:.0f} ms "
                         "(0: skip)")
    ap.add_argument("--capacity-runs", type=int, default=3,
                    help="runs a capacity step's rate must hold in, every one of them (a step ends at its first run "
                         "that does not hold); the open-loop points count with all their runs")
    ap.add_argument("--open-loop-rewarm", type=int, default=2,
                    help="seconds of unmeasured load at an open-loop run's rate right before it, when the process's "
                         "previous run was an open-loop run too (after the closed loop: --rewarm)")
    ap.add_argument("--estimate", action="store_true",
                    help="print the schedule's time estimate (per phase and target, and the total) and exit")
    ap.add_argument("--gc-log", action="store_true",
                    help="JVM stacks log their collections (-Xlog:gc, asynchronous, into the run's folder); results "
                         "attribute the pauses to each open-loop run")
    ap.add_argument("--no-open-loop", action="store_true", help="skip the open-loop latency phase (oha)")
    ap.add_argument("--no-floor", action="store_true",
                    help="do not run the floor (wrk/floor/: the two tokens signed and nothing else) beside the stacks")
    ap.add_argument("--skip-conformance", action="store_true", help="skip the conformance gate (verification still runs)")
    ap.add_argument("--no-build", action="store_true", help="use the existing artifacts (build time not measured)")
    ap.add_argument("--smoke", action="store_true", help="short phases, one concurrency, one repeat (CI)")
    ap.add_argument("--out", type=Path, default=ROOT / "results")
    ap.add_argument("--target", choices=("local", "docker"), default="local",
                    help="docker: build the images, compose up, measure the containers on their published ports")
    a = ap.parse_args(argv)

    if not 0 <= a.wrong_share <= 1:
        ap.error("--wrong-share must be between 0 and 1")
    if a.profile == "argon2":
        if a.scenario not in ("users", "argon2") or a.wrong_share:
            ap.error("--profile argon2 runs the argon2 scenario with right passwords")
        a.scenario = "argon2"
        a.no_open_loop = True   # the figure is logins/s per core at saturation; 503s would fail an open-loop run
    if a.concurrency is None:
        a.concurrency = ("4,16" if ALIASES.get(a.profile, a.profile) == "fly-shared-cpu-1x" else
                         ARGON2_CONCURRENCY if a.profile == "argon2" else "16,64,256")
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
    elif profile in FLY_MEMORY:
        try:
            by_stack = {s: mb for s in stacks if (mb := fly_memory_mb(s)) is not None}
        except (ValueError, tomllib.TOMLDecodeError) as e:
            ap.error(str(e))
        limits = replace(limits, memory_mb_by_stack=by_stack or None)
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
    capacity_runs = 1 if a.smoke else a.capacity_runs
    if capacity_steps < 0:
        ap.error("--capacity-steps must be 0 or more")
    if capacity_runs < 1:
        ap.error("--capacity-runs must be at least 1")
    if a.open_loop_rewarm < 0:
        ap.error("--open-loop-rewarm must be 0 or more")
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
                    not a.no_open_loop, open_s, window, rewarm, open_repeats, a.gc_log, capacity_steps,
                    not a.no_floor, capacity_runs, a.open_loop_rewarm, a.estimate)




class Progress:
    def __init__(self, total_seconds: float):
        self.total = total_seconds
        self.t0 = time.monotonic()

    def say(self, stack: str, phase: str, seconds: float | None = None) -> None:
        left = max(0.0, self.total - (time.monotonic() - self.t0))
        extra = f" {seconds:.0f}s" if seconds else ""
        print(f"[bench {time.strftime('%H:%M:%S')}] {stack:<8} {phase}{extra}  (about {left / 60:.1f} min left)",
              file=sys.stderr, flush=True)
