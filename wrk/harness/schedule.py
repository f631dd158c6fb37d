"""The schedule: a service under load (Live), one measured run, the warm-up, the interleaved closed-loop sweep,
the open-loop rates and runs, the capacity bisection on repeated runs and fly's burst."""
from __future__ import annotations

import contextlib
import statistics
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from stackctl import Stack, ToolError

from harness.cgroups import Cgroup
from harness.cli import Progress
from harness.governor import GovernorThread, burst_seconds
from harness.latency import pooled
from harness.loadgen import loadgen, open_loop_bodies, open_loop_connections, run_failure, run_oha, run_wrk
from harness.probes import (Sampler, account, jit_cpu_seconds, proc_cpu_seconds, system_cpu, thread_switches,
                            tree_cpu_seconds)
from harness.records import (CAPACITY_P99_MS, JIT_QUIET, SAME_POINT_WITHIN, STABLE_WITHIN, FlyResult, RateSpec, Settings,
                             Snapshot, StackResult, WarmUp)


def build_for_run(stack: Stack, settings: Settings, progress: Progress, result: StackResult) -> None:
    """The run's build of a stack. A real run times a full build (the build column). The smoke run proves the
    pipeline, not the build time: it builds only what is missing or stale (CI has just built the same commit) and
    leaves the column empty. With --no-build, nothing."""
    if not settings.build:
        return
    if settings.smoke:
        progress.say(stack.name, "build if stale")
        stack.ensure_built()
    else:
        progress.say(stack.name, "release build")
        result.build_s = round(stack.build(), 1)


def open_loop_rates(max_rps: dict[str, float], shared: tuple[float, ...], own: tuple[float, ...],
                    repeats: int = 1, calibration: frozenset[str] = frozenset(),
                    within: float = SAME_POINT_WITHIN) -> dict[str, list[RateSpec]]:
    """Per stack, the rates it is offered, `repeats` rounds of: the same absolute rates for all (fractions of the
    slowest stack's closed-loop maximum), then fractions of its own maximum; each round both in a rotated order,
    so no rate always follows the same one, and every point gets `repeats` runs to pool. An own rate within
    `within` of a shared rate is not run again: the shared rate's runs stand for that own point too (its
    `own_fraction`) — the slowest stack's shared rates ARE its own fractions. The slowest is one of the stacks: a
    calibration target (the floor) is offered the shared rates only (what its ratios are taken at) and does not
    set them."""
    if not max_rps:
        return {}
    slowest = min((v for k, v in max_rps.items() if k not in calibration), default=min(max_rps.values()))
    out = {}
    for name, top in max_rps.items():
        shared_at = {f: round(slowest * f, 1) for f in shared}
        own_at = {} if name in calibration else {f: round(top * f, 1) for f in own}
        stands_for: dict[float, float] = {}   # shared fraction -> the own fraction it is measured for as well
        for fo, ro in own_at.items():
            near = sorted((abs(rs - ro) / ro, fs) for fs, rs in shared_at.items()
                          if ro > 0 and abs(rs - ro) <= within * ro and fs not in stands_for)
            if near:
                stands_for[near[0][1]] = fo
        rates = []
        for k in range(repeats):
            rates += [RateSpec("shared", f, "slowest", shared_at[f], k + 1, stands_for.get(f))
                      for f in rotated(list(shared), k)]
            rates += [RateSpec("own", f, "own", own_at[f], k + 1) for f in rotated(list(own_at), k)
                      if f not in stands_for.values()]
        out[name] = [r for r in rates if r.target_rps >= 1]
    return out


def open_loop_steps(names: list[str], plan: dict[str, list[RateSpec]]) -> list[list[tuple[str, RateSpec]]]:
    """The open loop's steps, round by round: in round k, step j runs every stack's j-th point of that round (a
    stack with fewer points, the slowest or the floor, sits the later steps out), the stacks in an order rotated
    by one each step (and one more each round). So every target's runs spread over all the rounds alike, whatever
    its number of points."""
    steps: list[list[tuple[str, RateSpec]]] = []
    for i, k in enumerate(sorted({s.repeat for specs in plan.values() for s in specs})):
        per = {n: [s for s in plan.get(n, []) if s.repeat == k] for n in names}
        for j in range(max((len(v) for v in per.values()), default=0)):
            # rotated by the step and the round: a round's first step does not always start with the same stack
            steps.append([(n, per[n][j]) for n in rotated(names, len(steps) + i) if j < len(per[n])])
    return steps


@dataclass
class Live:
    """A service under load: one of ours (process, cgroup, sampler, maybe a governor) or a --url target."""
    name: str
    url: str
    result: StackResult
    proc: subprocess.Popen | None = None
    sampler: Sampler | None = None
    cgroup: Cgroup | None = None
    governor: GovernorThread | None = None
    pg_pid: int | None = None
    log_path: Path | None = None
    stopped: bool = False
    stack: Any = None            # the stackctl.Stack it runs (its signbench is measured again through the run)
    calibration: bool = False    # the floor: through every phase, but never what the shared rates are set by
    env: dict | None = None      # the environment it runs with
    own_first: dict | None = None   # its signbench before its start, while later samples are added (runner)
    own_later: list = field(default_factory=list)   # (when, reading) of each later signbench sample

    @property
    def pid(self) -> int | None:
        return self.sampler.pid if self.sampler else None

    def mark(self, phase: str) -> None:
        if self.sampler:
            self.sampler.mark(phase)

    def fail(self, reason: str) -> None:
        self.result.fail(reason)

    @property
    def failed(self) -> bool:
        return bool(self.result.failed)

    def snapshot(self) -> Snapshot:
        return Snapshot(t=time.monotonic(), server=proc_cpu_seconds(self.pid) if self.pid else None,
                        cgroup=self.cgroup.cpu_usage_s() if self.cgroup else None, pg=tree_cpu_seconds(self.pg_pid),
                        cpu_stat=self.cgroup.cpu_stat() if self.cgroup else {},
                        switches=thread_switches(self.pid) if self.pid else None,
                        jit=jit_cpu_seconds(self.pid) if self.pid else None, **system_cpu())


def load_run(live: Live, settings: Settings, c: int, secs: int, phase: str, measured: bool = True) -> dict | None:
    """One wrk run against a live service, with the CPU accounting around it. A measured run with any unexpected
    status or socket error marks the service failed (the run is returned); in a primer or warm-up window the
    errors are recorded (`unmeasured_errors`) and the measured runs decide. When wrk itself fails: failed, None."""
    live.mark(phase)
    before = live.snapshot()
    try:
        run = run_wrk(live.url, c, secs, settings.wrk_threads, settings.scenario, settings.wrong_share,
                      settings.shed_ok)
    except (ToolError, subprocess.TimeoutExpired) as e:
        live.fail(f"{phase}: {e}")
        return None
    after = live.snapshot()
    run.update(account(before, after, run["requests"], run.get("wrk_cpu_s")).to_json())
    if live.governor:
        run["balance_s_after"] = round(live.governor.balance_s, 3)
    if live.proc is not None and live.proc.poll() is not None:
        live.fail(f"{phase}: the server exited with {live.proc.returncode} during the run")
    reason = run_failure(run, phase)
    if reason and measured:
        live.fail(reason)
    elif reason:
        live.result.unmeasured_errors.append(reason)
    return run


def agree(a: float, b: float, within: float = STABLE_WITHIN) -> bool:
    return a > 0 and b > 0 and abs(a - b) / min(a, b) <= within


def warmed_up(values: list[float | None], k: int, within: float = STABLE_WITHIN,
              jit_shares: list[float | None] | None = None, jit_quiet: float = JIT_QUIET) -> bool:
    """The warm-up rule: at least 2k windows, and the median of the last k within `within` of the median of the k
    before them. A median of k, not one window against the next: on this machine a single window moves by several
    per cent either way, so two neighbours agree by chance while the figure still trends (the old rule stopped
    Spring while its CPU per request was still falling).

    For a JVM (`jit_shares`: each window's share of the server's CPU spent by its JIT compiler threads) also: in
    each of the last k windows the compilers took at most `jit_quiet` of it. A flat CPU per request alone is not a
    steady state there: on two busy cores C2 compiled at a steady tenth of Spring's CPU for minutes while the
    figure looked flat within its noise, and whatever is still queued is compiled at the next load, where it is a
    larger share (half of Spring's CPU at 400 logins/s after 150 s at 64 connections)."""
    if len(values) < 2 * k or any(v is None or v <= 0 for v in values[-2 * k:]):
        return False
    if jit_shares is not None and any(j is not None and j > jit_quiet for j in jit_shares[-k:]):
        return False
    return agree(statistics.median(values[-k:]), statistics.median(values[-2 * k:-k]), within)


def _jit_shares(windows: list[dict]) -> list[float | None] | None:
    """Each window's JIT share, or None when the server has no JIT compiler threads (not a JVM)."""
    return [w.get("jit_share") for w in windows] if any("jit_share" in w for w in windows) else None


def warm_up(live: Live, settings: Settings, c: int, progress: Progress, window: int | None = None,
            cap: int | None = None, phase: str | None = None) -> WarmUp:
    """wrk at `c` in windows until the server's CPU per request (requests/s where the server's CPU cannot be read)
    meets the rule (warmed_up: the median of the last k windows within 3 % of the k before), or the cap is
    reached. The rule and its outcome (`stable`, `seconds`, the windows) are the WarmUp's."""
    window = window or settings.warmup_window
    cap = settings.warmup if cap is None else cap
    k = settings.warmup_k
    key = "cpu_ms_per_request" if live.pid else "rps"
    windows: list[dict] = []
    t0 = time.monotonic()
    stable = False
    while not live.failed and (time.monotonic() - t0) < cap:
        progress.say(live.name, f"warm-up c={c} window {len(windows) + 1}", window)
        run = load_run(live, settings, c, window, phase or f"warm-up c={c}", measured=False)
        if run is None:
            break
        windows.append({"rps": run["rps"], key: run.get(key), "errors": run["errors"]}
                       | ({"jit_share": run["jit_share"]} if "jit_share" in run else {}))
        if warmed_up([w[key] for w in windows], k, jit_shares=_jit_shares(windows)):
            stable = True
            break
    jvm = _jit_shares(windows) is not None
    rule = {"metric": key, "window_s": window, "k": k, "within": STABLE_WITHIN, "min_windows": 2 * k, "cap_s": cap}
    if jvm:
        rule["jit_quiet"] = JIT_QUIET
    return WarmUp(concurrency=c, criterion=f"{key}: median of the last {k} {window} s windows within "
                                           f"{STABLE_WITHIN:.0%} of the median of the {k} before (at least {2 * k} "
                                           f"windows, at most {cap} s)"
                                           + (f"; the JIT compiler threads at most {JIT_QUIET:.0%} of the server's "
                                              f"CPU in each of the last {k}" if jvm else ""),
                  cap_s=cap, seconds=round(time.monotonic() - t0, 1), stable=stable, windows=windows, rule=rule)


def rotated(items: list, k: int) -> list:
    """Round-robin order for repeat k: the list rotated by k (each stack takes every position in turn)."""
    if not items:
        return []
    k %= len(items)
    return items[k:] + items[:k]


def warm_up_once(lives: list[Live], settings: Settings, progress: Progress) -> None:
    """The warm-up rule once per stack, at the highest concurrency (the most requests per second: the JITs reach
    their thresholds soonest; Settings.warmup_concurrency); then, the process warm, one window at each other
    concurrency (its connections and threads) instead of the rule again, from the highest down. Each is a WarmUp
    in the stack's `warmups`; the short ones have `rule` {"after_concurrency", "window_s"} and the rule's outcome
    as `stable`."""
    top = settings.warmup_concurrency
    for live in lives:
        if live.failed:
            continue
        if live.governor:
            live.governor.set_balance(0.0)
        live.result.warmups.append(warm_up(live, settings, top, progress))
    for c in [c for c in sorted(settings.concurrency, reverse=True) if c != top]:
        for live in lives:
            if live.failed:
                continue
            if live.governor:
                live.governor.set_balance(0.0)
            window = settings.warmup_window
            progress.say(live.name, f"warm-up c={c} (one window after c={top})", window)
            t0 = time.monotonic()
            run = load_run(live, settings, c, window, f"warm-up c={c}", measured=False)
            ruled = next((w for w in live.result.warmups if w.concurrency == top), None)
            live.result.warmups.append(WarmUp(
                concurrency=c, criterion=f"one {window} s window after the warm-up by the rule at c={top}",
                cap_s=window, seconds=round(time.monotonic() - t0, 1), stable=bool(ruled and ruled.stable),
                windows=[{"rps": run["rps"], "cpu_ms_per_request": run.get("cpu_ms_per_request"),
                          "errors": run["errors"]}] if run else [],
                rule={"after_concurrency": top, "window_s": window}))


def sweep(lives: list[Live], settings: Settings, progress: Progress, order_log: list,
          before_repeat: Callable[[int], Any] | None = None) -> None:
    """The closed-loop sweep, every stack up at once. First each stack warmed up (warm_up_once: by the rule at the
    highest concurrency, one window at the others). Then the repeats: in repeat k both the concurrencies and the
    stacks in an order rotated by k (16, 64, 256 / 64, 256, 16 / 256, 16, 64), and before every measured run one unmeasured window at its concurrency (the
    stack may have just run another one). So no concurrency always runs last: the VM's drift within a run (10-20 %
    here) spreads over every cell instead of landing on the highest concurrency. Under fly's shared rule the
    balance is emptied before every run (the sustained state)."""
    warm_up_once(lives, settings, progress)
    for rep in range(settings.repeats):
        if before_repeat:
            before_repeat(rep)   # the run's ceiling sampled between the repeats (CeilingLog)
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
                    live.result.rewarms.append(
                        {"concurrency": c, "repeat": rep + 1, "rps": pre["rps"],
                         "cpu_ms_per_request": pre.get("cpu_ms_per_request"), "errors": pre["errors"]})
                if live.failed:
                    continue
                if live.governor:
                    live.governor.set_balance(0.0)
                progress.say(live.name, f"measure c={c} run {rep + 1}/{settings.repeats}", settings.duration)
                run = load_run(live, settings, c, settings.duration, f"c={c}#{rep + 1}")
                if run is not None:
                    live.result.runs.setdefault(str(c), []).append(run)


def closed_loop_max(result: StackResult) -> float | None:
    """The highest median requests/s (200s) over the concurrency sweep."""
    meds = [statistics.median(r["rps"] for r in runs) for runs in result.runs.values() if runs]
    return max(meds) if meds else None


def open_loop(lives: list[Live], settings: Settings, progress: Progress, order_log: list) -> None:
    """oha at constant arrival rates: the shared absolute rates, then each stack's own fractions, the stacks
    interleaved at every rate; then, per stack, the range of constant rates it serves with p99 under
    CAPACITY_P99_MS (capacity_search)."""
    oha = loadgen()
    ok = [lv for lv in lives if not lv.failed]
    tops = {lv.name: closed_loop_max(lv.result) for lv in ok}
    plan = open_loop_rates({k: v for k, v in tops.items() if v}, settings.shared_fractions, settings.own_fractions,
                           settings.open_loop_repeats, frozenset(lv.name for lv in ok if lv.calibration))
    with tempfile.NamedTemporaryFile("w", prefix="bench-bodies-", suffix=".txt", delete=False) as f:
        f.write("\n".join(open_loop_bodies(settings.scenario, settings.wrong_share)) + "\n")
        bodies = Path(f.name)
    try:
        by_name = {lv.name: lv for lv in ok}
        for i, step in enumerate(open_loop_steps([lv.name for lv in ok], plan)):
            step = [(by_name[n], spec) for n, spec in step if not by_name[n].failed]
            order_log.append({"open_loop_step": i + 1, "order": [lv.name for lv, _ in step]})
            for live, spec in step:
                if live.failed:
                    continue
                run = open_run(live, spec, settings, progress, bodies, oha, settings.open_loop_s)
                if run is not None:
                    live.result.open_loop.append(run)
        if settings.capacity_steps:
            capacity_search([lv for lv in ok if not lv.failed and tops.get(lv.name)], tops, settings, progress,
                            order_log, bodies, oha)
    finally:
        bodies.unlink(missing_ok=True)


def open_run(live: Live, spec: RateSpec, settings: Settings, progress: Progress, bodies: Path, oha: str,
             seconds: int) -> dict | None:
    """One oha run at spec's rate against a live stack, with the server's, oha's and PostgreSQL's CPU and the wall
    clock (for the GC log). None, and the stack marked failed, when it does not hold."""
    if live.governor:
        live.governor.set_balance(0.0)
    # Unmeasured, at the same rate: a change of load (another rate, or the closed loop before) makes the JITs
    # deoptimize and recompile (akka: 144 deoptimizations and 1.3 s of C2 compilation in the first 15 s of a
    # constant rate after wrk), which is the change's cost, not the steady state's tail. The full --rewarm after
    # the closed loop (wrk's load is another shape); after an open-loop run of the same process (the same requests
    # at another rate) the shorter --open-loop-rewarm.
    rewarm = settings.open_loop_rewarm if getattr(live.result, "open_loop", None) else settings.rewarm
    if rewarm and not settings.smoke:
        progress.say(live.name, f"open-loop re-warm {spec.target_rps:.0f}/s", rewarm)
        with contextlib.suppress(ToolError, subprocess.TimeoutExpired):
            run_oha(live.url, spec.target_rps, rewarm, open_loop_connections(spec.target_rps, settings),
                    bodies, settings.wrong_share, oha)
        if live.governor:
            live.governor.set_balance(0.0)
    progress.say(live.name, f"open loop {spec.target_rps:.0f}/s ({spec.kind} {spec.fraction:.0%})", seconds)
    live.mark(f"open {spec.target_rps:.0f}/s")
    before = live.snapshot()
    wall0 = time.time()
    try:
        run = run_oha(live.url, spec.target_rps, seconds, open_loop_connections(spec.target_rps, settings),
                      bodies, settings.wrong_share, oha)
    except (ToolError, subprocess.TimeoutExpired) as e:
        live.fail(f"open loop at {spec.target_rps:.0f}/s: {e}")
        return None
    after = live.snapshot()
    run["wall"] = [round(wall0, 3), round(time.time(), 3)]
    run.update({k: v for k, v in spec.to_json().items() if k != "target_rps"})   # oha's record has the rate
    run.update(account(before, after, run["status"].get("200", 0), run.get("loadgen_cpu_s")).to_json())
    reason = run_failure(run, f"open loop at {spec.target_rps:.0f}/s")
    if reason:
        live.fail(reason)
    return run


def run_held(run: dict) -> bool:
    """One run at a constant rate held: it kept up (98 % of the offered rate answered), had no error, shed no
    request (503) and its p99 was under CAPACITY_P99_MS. (A measured run with an error fails the stack anyway; here
    it only fails the run.)"""
    return (run["achieved_rps"] >= 0.98 * run["target_rps"] and not run.get("errors") and not run.get("shed")
            and run["latency_ms"]["p99"] < CAPACITY_P99_MS)


def capacity_verdicts(runs: list[dict], min_runs: int) -> dict[float, str]:
    """Each rate tried (the open-loop points and the capacity steps alike): "held" when every one of its runs held
    and there are at least `min_runs` of them, "failed" when any run did not (a rate that held once and failed
    once failed), "open" when every run held but there are fewer than `min_runs`."""
    by_rate: dict[float, list[bool]] = {}
    for r in runs:
        by_rate.setdefault(r["target_rps"], []).append(run_held(r))
    return {t: "failed" if not all(h) else "held" if len(h) >= min_runs else "open" for t, h in by_rate.items()}


def capacity_bounds(runs: list[dict], top: float, min_runs: int = 1) -> tuple[float, float]:
    """Where the capacity lies, from every run made so far: the lowest rate that failed any run (1.1 x the
    closed-loop maximum when none did), and the highest rate below it that held in all of at least `min_runs`
    runs (0 when none did)."""
    verdicts = capacity_verdicts(runs, min_runs)
    hi = min((t for t, v in verdicts.items() if v == "failed"), default=round(1.1 * top, 1))
    lo = max((t for t, v in verdicts.items() if v == "held" and t < hi), default=0.0)
    return lo, hi


def capacity_range(runs: list[dict], top: float, min_runs: int) -> dict:
    """The capacity as a range, with the runs behind it: `rps`, the highest rate that held in every one of its
    (at least `min_runs`) runs with no lower rate failing any; `highest_held_rps`, the highest rate that held in
    at least one run (where single runs stop holding; the top of `range_rps`); `next_failed_rps`, the lowest rate
    that failed a run (None when none did); and per rate from `rps` up, its runs, how many held, their p99s and
    the pooled p99 of their requests."""
    lo, hi = capacity_bounds(runs, top, min_runs)
    failed = any(v == "failed" for v in capacity_verdicts(runs, min_runs).values())
    highest = max((r["target_rps"] for r in runs if run_held(r)), default=0.0)
    rates = []
    for t in sorted({r["target_rps"] for r in runs if r["target_rps"] >= lo}):
        at = [r for r in runs if r["target_rps"] == t]
        pool = pooled([r.get("latency_hist") for r in at])
        rates.append({"target_rps": t, "runs": len(at), "held": sum(map(run_held, at)),
                      "p99_ms": [r["latency_ms"]["p99"] for r in at],
                      "achieved_rps": [r["achieved_rps"] for r in at],
                      "pooled_p99_ms": pool["p99"] if pool else None,
                      "kinds": sorted({r.get("kind", "own") for r in at})})
    return {"rps": lo, "highest_held_rps": max(highest, lo), "range_rps": [lo, max(highest, lo)],
            "next_failed_rps": hi if failed else None, "of_closed_loop_max": round(lo / top, 3), "rates": rates}


def capacity_search(lives: list[Live], tops: dict[str, float], settings: Settings, progress: Progress,
                    order_log: list, bodies: Path, oha: str) -> None:
    """Bisection between capacity_bounds, the stacks interleaved at each step. A step decides on repeated runs:
    up to `capacity_runs` runs of open_loop_s at its rate, in rounds (every stack's run k before any stack's run
    k+1); the rate held only if every run held (run_held), so a stack's step ends at its first run that does not.
    The bounds are read again from all the runs after every step (the open-loop points' runs count as well);
    the result is capacity_range."""
    runs_per_step = max(1, settings.capacity_runs)
    bounds = {lv.name: capacity_bounds(lv.result.open_loop, tops[lv.name], runs_per_step) for lv in lives}
    for step in range(settings.capacity_steps):
        mids = {lv.name: round(sum(bounds[lv.name]) / 2, 1) for lv in lives}
        going = {lv.name for lv in lives}
        for k in range(runs_per_step):
            order = [lv for lv in rotated(lives, step + k) if not lv.failed and lv.name in going]
            if not order:
                break
            order_log.append({"capacity_step": step + 1, "run": k + 1, "order": [lv.name for lv in order]})
            for live in order:
                mid = mids[live.name]
                spec = RateSpec("capacity", mid / tops[live.name], "own", mid, k + 1)
                run = open_run(live, spec, settings, progress, bodies, oha, settings.open_loop_s)
                if run is None:
                    going.discard(live.name)
                    continue
                run["capacity_step"] = step + 1
                live.result.open_loop.append(run)
                if not run_held(run):
                    going.discard(live.name)
        for live in lives:
            bounds[live.name] = capacity_bounds(live.result.open_loop, tops[live.name], runs_per_step)
    for live in lives:
        live.result.capacity = {"p99_under_ms": CAPACITY_P99_MS,
                                **capacity_range(live.result.open_loop, tops[live.name], runs_per_step),
                                "steps": settings.capacity_steps, "runs_per_step": runs_per_step,
                                "seconds_per_step": settings.open_loop_s,
                                "rule": CAPACITY_RULE.format(p99=CAPACITY_P99_MS, n=runs_per_step)}


CAPACITY_RULE = ("a rate holds when every one of its runs (at least {n}) answered 98 % of the offered rate, with no "
                 "error and p99 under {p99:.0f} ms; one run that does not fails the rate")


def fly_burst(live: Live, settings: Settings, progress: Progress) -> None:
    """fly-shared-cpu-1x from a full balance: primer and warm-up at 100 % of one CPU, then one run at the top
    concurrency measures the top rate and the CPU it uses per second, and so how many seconds of such a burst a
    full balance buys. The 500 s balance is not burned through: burst = balance ÷ (CPU/s − baseline)."""
    rule = live.governor.gov.rule
    top = max(settings.concurrency)
    live.governor.set_balance(rule.max_balance_s)
    if settings.primer:
        progress.say(live.name, "primer c=8 (full balance)", settings.primer)
        live.result.primer = load_run(live, settings, 8, settings.primer, "primer", measured=False)
    live.result.burst_warmup = warm_up(live, settings, top, progress, phase=f"burst warm-up c={top}")
    if live.failed:
        return
    live.governor.set_balance(rule.max_balance_s)
    progress.say(live.name, f"burst c={top} (full balance)", settings.duration)
    run = load_run(live, settings, top, settings.duration, f"burst c={top}")
    if run is None:
        return
    cpu_per_s = run.get("cgroup_cpu_per_s")
    if live.result.fly is None:
        live.result.fly = FlyResult(rule=asdict(rule))
    live.result.fly.burst = {
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
