"""The schedule's time estimate: per target (a stack, the slowest stack, the floor, a --url target) the seconds of
each phase, as the schedule runs them (warm-up by the rule once, the closed-loop repeats, the open-loop points and
the capacity steps), and their sum. The progress lines count down from it; `bench.py --estimate` prints it."""
from __future__ import annotations

from harness.records import Settings

GATE_S = 90          # the conformance gate (the suite against the stack)
START_S = 30 + 5     # start, first token, verification
PROBE_S = 3          # each extra start for the start-up median
JVM_WARMUP_S = 360   # a JVM stack's warm-up by the rule: its JIT compilers go quiet after 4-6 minutes on two cores
# Under fly's shared-CPU rule the stack gets 1/16 of a core once its balance is spent: the conformance gate runs under
# it (the JVM stacks' start, JIT and GC threads included: 5-6 minutes; the Rust stacks about one), and the warm-up
# before the burst, from a full balance, runs by the rule (the JVM stacks 2-4 minutes).
SHARED_GATE_S = 60
SHARED_JVM_GATE_S = 360
SHARED_JVM_BURST_WARMUP_S = 240


def open_points(settings: Settings, kind: str) -> int:
    """Open-loop points a target is offered (schedule.open_loop_rates): the floor the shared rates only; the slowest
    stack its own fractions, which its shared rates are; any other stack both (an own rate within 3 % of a shared
    one is measured once, which the estimate cannot foresee)."""
    shared, own = set(settings.shared_fractions), set(settings.own_fractions)
    return len(shared) if kind == "floor" else len(own | shared) if kind == "slowest" else len(own) + len(shared)


def open_run_s(settings: Settings) -> float:
    """One open-loop run: oha's seconds, its start, and (not in the smoke run) the short re-warm before it."""
    return settings.open_loop_s + 1 + (0 if settings.smoke else settings.open_loop_rewarm + 1)


def target_phases(settings: Settings, kind: str, jvm: bool = False) -> dict[str, float]:
    """Seconds per phase for one target of `kind`: "stack", "slowest", "floor" or "url"; `jvm`: a JVM stack, whose
    warm-up waits for its JIT compilers too (schedule.warmed_up)."""
    p: dict[str, float] = {}
    if settings.conformance and kind in ("stack", "slowest"):
        p["conformance gate"] = (SHARED_JVM_GATE_S if jvm else SHARED_GATE_S) if settings.limits.shared else GATE_S
    p["start, verification, start-up probes"] = START_S + PROBE_S * settings.startup_probes
    p["ceilings (openssl, signbench)"] = settings.signbench_runs * (2 * settings.signbench_s + 3)
    if kind != "url":
        # Its signbench again before each repeat of the sweep, before the open loop and at the end (a JVM's start each).
        later = settings.repeats + settings.open_loop + 1
        p["signbench through the run"] = later * settings.signbench_runs * (settings.signbench_s + (3 if jvm else 1))
    p["primer"] = settings.primer
    rule_s = (2 * settings.warmup_k + 1) * settings.warmup_window
    p["warm-up"] = (min(settings.warmup, max(rule_s, JVM_WARMUP_S) if jvm and not settings.smoke else rule_s)
                    + (len(settings.concurrency) - 1) * settings.warmup_window)
    p["closed loop"] = len(settings.concurrency) * settings.repeats * (settings.duration + settings.rewarm)
    if settings.limits.shared:
        burst_warmup = max(rule_s, SHARED_JVM_BURST_WARMUP_S) if jvm and not settings.smoke else rule_s
        p["fly burst"] = min(settings.warmup, burst_warmup) + settings.duration + 20
    if settings.open_loop:
        first = 0 if settings.smoke else settings.rewarm - settings.open_loop_rewarm   # the full re-warm, once
        p["open loop"] = open_points(settings, kind) * settings.open_loop_repeats * open_run_s(settings) + first
        # A capacity step that holds takes all its runs, one that fails usually ends at its first: half of each.
        p["capacity"] = settings.capacity_steps * (settings.capacity_runs + 1) / 2 * open_run_s(settings)
    return p


def targets(settings: Settings, stacks: int, urls: int = 0, floor: bool = False) -> list[str]:
    """The kinds of the targets of a run: one of the stacks (or --url targets) is the slowest."""
    kinds = ["stack"] * stacks + ["url"] * urls
    if kinds:
        kinds[0] = "slowest"
    return kinds + (["floor"] if floor and stacks else [])


def _jvm_flags(kinds: list[str], jvm: int) -> list[bool]:
    """Which targets are JVM stacks: `jvm` of the stacks (the slowest first: the JVM stacks are)."""
    flags, left = [], jvm
    for k in kinds:
        flags.append(k in ("slowest", "stack") and left > 0)
        left -= flags[-1]
    return flags


def estimated_seconds(settings: Settings, stacks: int, urls: int = 0, floor: bool = False, jvm: int = 0) -> float:
    kinds = targets(settings, stacks, urls, floor)
    return sum(sum(target_phases(settings, k, j).values()) for k, j in zip(kinds, _jvm_flags(kinds, jvm)))


def estimate_lines(settings: Settings, stacks: int, urls: int = 0, floor: bool = False, jvm: int = 0) -> list[str]:
    """What `bench.py --estimate` prints: the settings that decide the time, each kind of target's phases, the
    total. `jvm`: how many of the stacks are JVM stacks."""
    kinds = targets(settings, stacks, urls, floor)
    total = estimated_seconds(settings, stacks, urls, floor, jvm)
    lines = [f"estimate: profile {settings.profile}, scenario {settings.scenario}, key {settings.key_type}; "
             f"{stacks} stack(s)" + (f", {urls} --url target(s)" if urls else "") + (", the floor" if "floor" in kinds
                                                                                      else ""),
             f"  closed loop: concurrency {','.join(map(str, settings.concurrency))}, {settings.repeats} x "
             f"{settings.duration} s (+{settings.rewarm} s re-warm) each; warm-up by the rule once (cap "
             f"{settings.warmup} s, {settings.warmup_window} s windows), one window at each other concurrency"]
    if settings.open_loop:
        lines.append(f"  open loop: shared {', '.join(f'{f:.0%}' for f in settings.shared_fractions)} of the slowest, "
                     f"own {', '.join(f'{f:.0%}' for f in settings.own_fractions)}; {settings.open_loop_repeats} x "
                     f"{settings.open_loop_s} s per point"
                     + ("" if settings.smoke else f" (+{settings.open_loop_rewarm} s re-warm)") + "; capacity "
                     f"{settings.capacity_steps} steps of up to {settings.capacity_runs} runs")
    flagged = list(zip(kinds, _jvm_flags(kinds, jvm)))
    for kind, j in dict.fromkeys(flagged):
        phases = target_phases(settings, kind, j)
        n = flagged.count((kind, j))
        pts = f", {open_points(settings, kind)} open-loop points" if settings.open_loop else ""
        lines.append(f"  {n} x {kind}{' (JVM)' if j else ''}{pts}: {sum(phases.values()) / 60:.1f} min each ("
                     + ", ".join(f"{k} {v:.0f} s" for k, v in phases.items()) + ")")
    lines.append(f"  total: {total / 3600:.2f} h ({total / 60:.0f} min)")
    return lines
