"""Environment capture: the machine, the tools, the libraries each stack resolved, and the run's settings as
results.json records them."""
from __future__ import annotations

import contextlib
import datetime as dt
import os
import platform
import re
import subprocess
from dataclasses import asdict
from pathlib import Path

import stackctl
from stackctl import ROOT, Stack, ToolError

from harness.cgroups import cgroup_version, resolve_cpuset
from harness.keys import key_alg, key_kid
from harness.loadgen import loadgen
from harness.records import CAPACITY_P99_MS, JIT_QUIET, SAME_POINT_WITHIN, STABLE_WITHIN, Settings

CRYPTO_FLAGS = ("avx512ifma", "avx512f", "avx512bw", "avx512vl", "vaes", "vpclmulqdq", "sha_ni", "avx2", "adx",
                "bmi2", "aes", "pclmulqdq")


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
    # A workspace member resolves its versions in the workspace's lock (actix and axum: the root Cargo.lock).
    lock = d / "Cargo.lock"
    if not lock.exists() and (d / "Cargo.toml").exists():
        lock = d.parent / "Cargo.lock"
    if lock.exists():
        for name, ver in re.findall(r'name = "([^"]+)"\nversion = "([^"]+)"', lock.read_text()):
            if name in wanted:
                out[name] = ver
    # akka and zio are projects of the root sbt build, which their manifests run (../sbt).
    sbt = d / "build.sbt"
    if not sbt.exists() and Path(stack.manifest.get("build", [""])[0]).name == "sbt":
        sbt = d.parent / "build.sbt"
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
        limits["shared"]["how"] = ("cgroup v1/v2 CFS quota (cpu.cfs_quota_us / cpu.max) on the server's one CPU "
                                   "(cpuset), rewritten every period by a governor thread: balance += baseline share "
                                   "× elapsed − CPU used (cpuacct.usage / cpu.stat usage_usec), within [0, "
                                   "max_balance_s]; quota = min(period, baseline + balance)")
    return {
        "date_utc": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "host": platform.node(),
        "cpu_model": cpu_model(),
        "cpu": cpu_identity(Path("/proc/cpuinfo").read_text(), lscpu),
        "cores": os.cpu_count(),
        "memory_gib": round(mem_kb / 2**20, 1),
        "kernel": platform.release(),
        "cgroup_version": cgroup_version(),
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
            "warmup_criterion": f"the median of the last {settings.warmup_k} windows' server CPU per request "
                                f"within {STABLE_WITHIN:.0%} of the median of the {settings.warmup_k} before, at "
                                f"least {2 * settings.warmup_k} windows (requests/s for targets without a server "
                                f"process), and for a JVM its JIT compiler threads at most {JIT_QUIET:.0%} of its "
                                f"CPU in each of the last {settings.warmup_k}; at most the cap; each warm-up records "
                                f"its rule and outcome",
            "warmup_schedule": f"by the rule once per stack at c={settings.warmup_concurrency}, then one "
                               f"{settings.warmup_window} s window at each other concurrency",
            "primer_s": settings.primer,
            "repeats": settings.repeats,
            "rewarm_s": settings.rewarm,
            "order": "concurrencies and stacks interleaved round-robin: both orders rotate by one each repeat, "
                     "an unmeasured re-warm window at the run's concurrency before each run (recorded per run)",
            "wrk_threads": settings.wrk_threads,
            "open_loop": {"tool": "oha", "seconds": settings.open_loop_s, "latency": "from each request's intended "
                          "start (--latency-correction), all requests sent (-n); each run's percentiles exact "
                          "(oha's), each point's runs pooled from every request (--db-url records, 1 % buckets)",
                          "repeats": settings.open_loop_repeats,
                          "shared_fractions_of_slowest_max": list(settings.shared_fractions),
                          "own_fractions": list(settings.own_fractions),
                          "own_fraction_repeats": settings.open_loop_repeats, "gc_log": settings.gc_log,
                          "same_point_within": SAME_POINT_WITHIN,
                          "rewarm_s": {"after_the_closed_loop": settings.rewarm,
                                       "after_an_open_loop_run": settings.open_loop_rewarm},
                          "floor_points": "the shared rates only",
                          "capacity": {"p99_under_ms": CAPACITY_P99_MS, "bisection_steps": settings.capacity_steps,
                                       "runs_per_step": settings.capacity_runs},
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
