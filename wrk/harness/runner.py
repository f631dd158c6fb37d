"""The run: each stack built, gated, measured for its ceilings, started in its cgroup and verified; then every
stack through the schedule at once; then results.json, results.md and the charts (main)."""
from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

import stackctl
from stackctl import ROOT, Stack, ToolError

from harness.argon2 import KEYCLOAK, KEYCLOAK_PER_VCPU, argon2_ceiling, argon2_lines, argon2_summary
from harness.ceilings import CeilingLog, own_ceiling, own_ceiling_through_run, provider_problem
from harness.cgroups import Cgroup, resolve_cpuset
from harness.cli import Progress, parse_args
from harness.dockerbench import bench_docker
from harness.environment import environment
from harness.estimate import estimate_lines, estimated_seconds
from harness.floor import floor_ratios, floor_stack
from harness.governor import GovernorThread, ShareGovernor
from harness.keys import OPENSSL_SPEED
from harness.loadgen import loadgen
from harness.probes import (Sampler, attribute_gc_pauses, gc_pauses, postgres_pid, proc_cpus_allowed, startup_probe,
                            system_cpu, time_to_first_token)
from harness.records import FlyResult, Settings, StackResult
from harness.reports import write_charts, write_markdown
from harness.schedule import Live, build_for_run, fly_burst, load_run, open_loop, sweep
from harness.summary import summarize
from harness.verification import conformance_gate, verify_basic, verify_service


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
        memory_mb = settings.limits.for_stack(live.name).memory_mb
        if oom or (died == -signal.SIGKILL and memory_mb):
            result.failed = f"OOM-killed (memory limit {memory_mb} MiB; oom_kill={oom})"
            result.oom_killed = True
        result.exit_code = code
    if live.cgroup:
        peak = live.cgroup.memory_peak_bytes()
        result.cgroup = {**(result.cgroup or {}), "memory_peak_bytes": peak, "cpu_stat": live.cgroup.cpu_stat(),
                         "paths": {k: str(v) for k, v in live.cgroup.paths.items()}}
        live.cgroup.destroy()
    if live.sampler:
        result.samples = live.sampler.samples
        result.phases = live.sampler.phases
    if live.log_path and live.log_path.exists():
        result.log_tail = live.log_path.read_text(errors="replace")[-2000:]
    if result.gc_log:
        attribute_gc_pauses(result.open_loop, gc_pauses(Path(result.gc_log)))


def prepare_stack(stack: Stack, settings: Settings, db_url: str, pg, progress: Progress, workdir: Path,
                  ceilings: CeilingLog | None = None, calibration: bool = False) -> Live | None:
    """Build, gate, ceilings, start-up probes, start (kept running), verification. Returns the live server, or
    None with the reason in the result (appended to `results` by the caller through live/none). A calibration
    target (the floor) has no conformance gate and no JWKS: its answer is checked for two JWTs."""
    result = StackResult(stack.name, stack.manifest.get("description", ""), "floor" if calibration else "local")
    live = Live(stack.name, "", result, stack=stack, calibration=calibration)
    try:
        build_for_run(stack, settings, progress, result)
        if not settings.build and not stack.artifact.exists():
            raise ToolError(f"{stack.artifact} does not exist (run without --no-build)")
        result.artifact_bytes = stack.artifact.stat().st_size
        if settings.conformance and not calibration:
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
    live.env = env
    # The machine's speed drifts by several per cent over minutes (a shared VM): OpenSSL's ceiling is sampled
    # through the run, here before each stack too (kept as the stack's `openssl_ceiling`), and every share uses
    # the run's one ceiling, the median of the samples (CeilingLog).
    if ceilings:
        progress.say(stack.name, f"openssl speed {OPENSSL_SPEED[settings.key_type][0]} (best of {settings.signbench_runs})")
        result.openssl_ceiling = ceilings.sample(f"before {stack.name}")
    own_error = None
    if "signbench" in stack.manifest:
        progress.say(stack.name, f"own signing ceiling (signbench, best of {settings.signbench_runs})")
        try:
            result.own_ceiling = own_ceiling(stack, env, settings.signbench_s, settings.signbench_runs)
        except ToolError as e:
            own_error = result.own_ceiling_error = str(e)
            print(f"bench: {e}", file=sys.stderr)
    problem = provider_problem(stack, result.own_ceiling, own_error)
    if problem:
        live.fail(problem)
        return live

    cgroup = None
    try:
        cgroup = Cgroup(f"simple-auth-bench-{stack.name}-{os.getpid()}", settings.limits.for_stack(stack.name))
    except (OSError, ToolError) as e:
        if settings.limits:
            live.fail(f"cannot confine the server: {e}")
            return live
        print(f"bench: no cgroup for {stack.name} ({e}); no cgroup memory peak", file=sys.stderr)
    governor = None
    if cgroup and settings.limits.shared:
        governor = GovernorThread(cgroup, ShareGovernor(settings.limits.shared, balance_s=0.0))
        governor.start()
        result.fly = FlyResult(rule=asdict(settings.limits.shared))
    if cgroup:
        # As set up, read back from the cgroup's files (the cpuset is the one the server runs on).
        result.cgroup = cgroup.describe()
    cmd = stack.command("run")
    if settings.gc_log and stack.uses_java:
        # Asynchronous, so a slow disk never stalls a safepoint; the last start (the measured one) overwrites it.
        result.gc_log = str(workdir / f"{stack.name}-gc.log")
        cmd[1:1] = ["-Xlog:async", f"-Xlog:gc:file={result.gc_log}:time,uptime"]
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
        result.startup_samples_s = probes + [round(time_to_first_token(url, live.proc, t0, timeout=300), 3)]
        result.startup_s = round(statistics.median(result.startup_samples_s), 3)
        result.cpus_allowed = proc_cpus_allowed(live.proc.pid)  # what the kernel lets the server run on
        if governor:
            result.fly.startup_empty_balance_s = result.startup_samples_s[-1]
            result.fly.startup_cpu_s = round(cgroup.cpu_usage_s() or 0.0, 3)
        if calibration:
            reason = verify_basic(url)
            result.verification = "basic: /token answered 200 with two JWTs (the floor serves no JWKS)"
        else:
            reason = verify_service(url, env["JWT_ISSUER"], settings.key_type)
            result.verification = "jwks: two logins, both tokens verified against the served JWKS"
        if reason:
            live.fail(f"verification: {reason}")
    except (ToolError, subprocess.TimeoutExpired) as e:
        live.fail(str(e))
    return live


def prepare_url(name: str, url: str, settings: Settings, progress: Progress) -> Live:
    result = StackResult(name, url, "url", url)
    live = Live(name, url, result)
    progress.say(name, f"verify {url} ({settings.verify})")
    if settings.verify == "basic":
        result.verification = "basic: /token answered 200 with two JWTs; signatures NOT checked (no JWKS)"
        reason = verify_basic(url)
    else:
        result.verification = "jwks: two logins, both tokens verified against the served JWKS"
        reason = verify_service(url, None, None)
    if reason:
        live.fail(f"verification: {reason}")
    return live


def sample_own_ceilings(lives: list[Live], settings: Settings, progress: Progress, at: str) -> None:
    """Each stack's signbench once more, `at` says when (before each repeat of the sweep, before the open loop, at the
    end; no stack under load meanwhile): its own ceiling becomes the median of its samples so far
    (own_ceiling_through_run). A sample's runs spread by a fifth within seconds on a shared VM, and the signing it
    gives is subtracted from the CPU per request of every run: sampled through the same stretches of the run as the
    runs it is subtracted from, not only before the stack's start and at the end."""
    for live in lives:
        if live.failed or live.stack is None or "signbench" not in live.stack.manifest:
            continue
        if live.own_first is None:
            if not live.result.own_ceiling:
                continue
            live.own_first = live.result.own_ceiling
        progress.say(live.name, f"own signing ceiling {at} (signbench, best of {settings.signbench_runs})")
        try:
            again = own_ceiling(live.stack, live.env, settings.signbench_s, settings.signbench_runs)
        except ToolError as e:
            print(f"bench: {e}", file=sys.stderr)
            continue
        live.own_later.append((at, again))
        live.result.own_ceiling = own_ceiling_through_run(live.own_first, f"before {live.name}", live.own_later)


def bench_local(stacks: list[Stack], urls: dict[str, str], settings: Settings, db_url: str | None, pg,
                progress: Progress, workdir: Path, order_log: list,
                ceilings: CeilingLog | None = None) -> list[StackResult]:
    lives: list[Live] = []
    algo = OPENSSL_SPEED[settings.key_type][0]

    def between(at: str, up: list[Live]):
        if ceilings:
            progress.say("ceiling", f"openssl speed {algo} ({at})")
            ceilings.sample(at)
        sample_own_ceilings(up, settings, progress, at)
    try:
        for stack in stacks:
            lives.append(prepare_stack(stack, settings, db_url, pg, progress, workdir, ceilings))
            if lives[-1].failed:
                stop_live(lives[-1], settings)
        if stacks and settings.floor:
            lives.append(prepare_stack(floor_stack(), settings, db_url, pg, progress, workdir, ceilings,
                                       calibration=True))
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
                live.result.primer = load_run(live, settings, 8, settings.primer, "primer", measured=False)
        sweep([lv for lv in up if not lv.failed], settings, progress, order_log,
              before_repeat=lambda rep: between(f"before sweep repeat {rep + 1}", up))
        if settings.open_loop:
            between("before the open loop", up)
            open_loop([lv for lv in up if not lv.failed], settings, progress, order_log)
        sample_own_ceilings(up, settings, progress, "end of the run")
    except KeyboardInterrupt:
        print("bench: interrupted; writing what was measured", file=sys.stderr)
        for live in lives:
            live.fail(live.result.failed or "interrupted")
    finally:
        for live in lives:
            live.mark("end")
            if live.proc is not None or live.cgroup is not None:
                stop_live(live, settings)
    return [lv.result for lv in lives]


def bench_url(name: str, url: str, settings: Settings, progress: Progress) -> StackResult:
    """One --url target on its own (kept for callers that measure a single service)."""
    order: list = []
    return bench_local([], {name: url}, settings, None, None, progress, settings.out, order)[0]


def main(argv: list[str] | None = None) -> int:
    settings = parse_args(argv)
    with_floor = bool(settings.stacks) and settings.floor and settings.target == "local"
    stacks = [Stack.load(s) for s in settings.stacks]
    jvm = sum(st.uses_java for st in stacks)
    if settings.estimate:
        print("\n".join(estimate_lines(settings, len(stacks), len(settings.urls), with_floor, jvm)))
        return 0
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
    progress = Progress(estimated_seconds(settings, len(stacks), len(settings.urls), with_floor, jvm))
    env = environment(settings, stacks)

    progress.say("ceiling", f"openssl speed {OPENSSL_SPEED[settings.key_type][0]}")
    ceilings = CeilingLog(settings.key_type, round(settings.signbench_s), settings.signbench_runs)
    ceilings.sample("start of the run")

    measured: list[StackResult] = []
    order: list = []
    steal0 = system_cpu()
    t0 = time.monotonic()
    try:
        if stacks and settings.target == "docker":
            measured.extend(bench_docker(stacks, settings, progress, out))
            for name, url in settings.urls.items():
                measured.append(bench_url(name, url, settings, progress))
        elif stacks:
            with stackctl.database() as (db_url, pg):
                measured.extend(bench_local(stacks, settings.urls, settings, db_url, pg, progress, out, order,
                                            ceilings))
        else:
            measured.extend(bench_local([], settings.urls, settings, None, None, progress, out, order, ceilings))
    except KeyboardInterrupt:
        print("bench: interrupted; writing what was measured", file=sys.stderr)
    except ToolError as e:
        print(f"bench: {e}", file=sys.stderr)
        return 2
    steal1 = system_cpu()
    wall = time.monotonic() - t0
    results = [r.to_json() for r in measured if r.target != "floor"]   # results.json's schema, read by the reports
    floor = next((r.to_json() for r in measured if r.target == "floor"), None)
    if ceilings.samples and results:
        # Once more with every server stopped.
        progress.say("ceiling", f"openssl speed {OPENSSL_SPEED[settings.key_type][0]} again (end of the run)")
        ceilings.sample("end of the run")
    ceiling = ceilings.ceiling()   # the run's one ceiling: the median of its samples, the same for every stack
    env["steal_cores_whole_run"] = round((steal1["steal"] - steal0["steal"]) / wall, 4) if wall > 0 else None
    for r in results + ([floor] if floor else []):
        r["summary"] = summarize(r, ceiling)
    argon2 = None
    if settings.shed_ok and results:
        progress.say("ceiling", f"argon2id, one process per core ({settings.signbench_s:g} s)")
        try:
            argon2 = argon2_ceiling(settings.signbench_s)
        except (ToolError, OSError, ValueError) as e:
            print(f"bench: {e}", file=sys.stderr)
        for r in results:
            if r["summary"]:
                r["summary"]["argon2"] = argon2_summary(r, argon2)
    if floor:
        for r in results:
            if r["summary"]:
                r["summary"]["floor_ratio"] = floor_ratios(r["summary"], floor["summary"])

    (out / "results.json").write_text(json.dumps({"environment": env, "ceiling": ceiling, "order": order,
                                                  "stacks": results, "floor": floor,
                                                  **({"argon2": {"ceiling": argon2, "keycloak_per_vcpu": KEYCLOAK_PER_VCPU,
                                                                 "keycloak_source": KEYCLOAK}}
                                                     if settings.shed_ok else {})}, indent=1))
    table = write_markdown(out / "results.md", env, ceiling, results, order, floor)
    if settings.shed_ok:
        table += "\n" + "\n".join(argon2_lines(results, argon2))
        (out / "results.md").write_text(table)
    charts = write_charts(out, results)
    print(table)
    print(f"results: {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out} "
          f"(results.json, results.md{', ' + ', '.join(charts) if charts else ''})")
    failed = [r["name"] for r in results + ([floor] if floor else []) if r.get("failed")]
    if failed:
        print(f"bench: FAILED: {', '.join(failed)} (reasons in results.md, 'No number')", file=sys.stderr)
    return 1 if failed or not results else 0
