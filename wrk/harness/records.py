"""The runner's typed records: the settings of a run, the limits a profile puts on the server, fly's
shared-CPU rule, the counters around a run and its CPU accounting (a run's measurement), an open-loop rate, a
warm-up, and a stack's result; and the constants the schedule and the reports share.

A stack's result is typed while the runner fills it; `to_json()` gives the dict results.json has always held
(the same keys; a field never set is left out, as before), and the statistics and the reports read that dict,
so they read older result sets as well."""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

STABLE_WITHIN = 0.03    # warm-up: the median of the last k windows' CPU per request within 3 % of the k before
WARMUP_K = 3            # ... k windows (1 in the smoke run), and at least 2k windows in all
JIT_QUIET = 0.02        # ... and, for a JVM, its JIT compiler threads under 2 % of its CPU in each of the last k
SHARED_FRACTIONS = (0.5, 0.75)            # open loop: of the slowest stack's closed-loop maximum, for every stack
OWN_FRACTIONS = (0.25, 0.5, 0.75, 0.9)     # open loop: of the stack's own closed-loop maximum
SAME_POINT_WITHIN = 0.03  # an own rate within 3 % of a shared rate is measured once, at the shared rate, under both
CAPACITY_P99_MS = 100.0   # "the highest constant rate each sustains with p99 under 100 ms"


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
    # Per-stack memory, where a stack's machine differs (each stack's fly/STACK.toml [[vm]] memory); memory_mb
    # for the rest (the floor, a stack without a fly config).
    memory_mb_by_stack: dict[str, int] | None = None

    def __bool__(self) -> bool:
        return any(v is not None for v in (self.cpus, self.memory_mb, self.cpuset, self.shared,
                                           self.memory_mb_by_stack))

    def for_stack(self, name: str) -> Limits:
        """The limits one server runs under: memory_mb_by_stack's memory for it, if it has one."""
        memory_mb = (self.memory_mb_by_stack or {}).get(name, self.memory_mb)
        return replace(self, memory_mb=memory_mb, memory_mb_by_stack=None)


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
    open_loop_s: int = 30
    warmup_window: int = 10
    rewarm: int = 5
    open_loop_repeats: int = 5
    gc_log: bool = False
    capacity_steps: int = 3
    floor: bool = True      # run the floor (wrk/floor/) beside the stacks as a calibration target
    capacity_runs: int = 3  # runs a capacity step's rate must hold in, every one (schedule.capacity_search)
    open_loop_rewarm: int = 2   # re-warm before an open-loop run when the process's previous run was one too
    estimate: bool = False      # print the schedule's estimate and exit (harness/estimate.py)

    @property
    def shed_ok(self) -> bool:
        """The argon2 profile measures the stacks as they ship, overload limit included: a 503 (shed) is counted,
        not a failure."""
        return self.profile.startswith("argon2")

    @property
    def smoke(self) -> bool:
        return "smoke" in self.profile

    @property
    def startup_probes(self) -> int:
        """Extra starts per stack for the start-up median (none in the smoke run, none under fly's shared rule:
        there every start is from an empty balance and takes tens of seconds)."""
        return 0 if self.smoke or self.limits.shared else 4

    @property
    def warmup_concurrency(self) -> int:
        """Where the warm-up rule runs (schedule.warm_up_once): the highest concurrency, the most requests per
        second; in the argon2 profile the one below it, since the highest is past the overload limit there and its
        503s (cheap answers, in a varying share) would move the CPU per request the rule watches."""
        c = sorted(self.concurrency)
        return c[-2] if self.shed_ok and len(c) > 1 else c[-1]

    @property
    def warmup_k(self) -> int:
        """Windows on each side of the warm-up's comparison (schedule.warmed_up)."""
        return 1 if self.smoke else WARMUP_K

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


def jsonable(value: Any) -> Any:
    """A record (anything with to_json), list or dict of them, as plain JSON values."""
    if hasattr(value, "to_json"):
        return value.to_json()
    if isinstance(value, list):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    return value


def _set_fields(record: Any, keep_empty: tuple[str, ...] = ()) -> dict:
    """The record's fields in declaration order, those never set (None, or an empty list or dict) left out."""
    out = {}
    for f in fields(record):
        v = getattr(record, f.name)
        if v is None or (isinstance(v, (list, dict)) and not v and f.name not in keep_empty):
            continue
        out[f.name] = jsonable(v)
    return out


@dataclass
class Snapshot:
    """The counters read right before and right after a run: the monotonic clock, the server's process CPU
    seconds, its cgroup's, PostgreSQL's (postmaster and backends), the cgroup's cpu.stat, and the machine's busy,
    idle and stolen CPU seconds (/proc/stat), and the scheduler switches of each of the server's threads. None where
    not readable (a --url target has no process)."""
    t: float
    server: float | None = None
    cgroup: float | None = None
    pg: float | None = None
    cpu_stat: dict[str, int] = field(default_factory=dict)
    busy: float | None = None
    idle: float | None = None
    steal: float | None = None
    switches: dict[int, tuple[int, int]] | None = None   # the server's threads: {tid: (voluntary, nonvoluntary)}
    jit: float | None = None         # CPU seconds of the server's JIT compiler threads (JVM stacks; probes.jit_cpu_seconds)


@dataclass
class MachineShare:
    """The machine's CPU during a run, in cores: busy, idle, stolen, and busy but none of server, load generator
    and PostgreSQL (the rest: the kernel's network work, the runner, idle stacks)."""
    busy_cores: float
    idle_cores: float
    steal_cores: float
    rest_cores: float

    def to_json(self) -> dict:
        return _set_fields(self)


@dataclass
class Measurement:
    """A run's measurement: where the machine's CPU went during it, per request and in cores. `wrk_cpu_*` is the
    load generator's (wrk's, or oha's in the open loop: the key predates oha). Merged into the run's own record
    (the load generator's counts) as these keys; a figure that could not be measured is left out."""
    wall_s: float
    server_cpu_s: float | None = None
    cpu_ms_per_request: float | None = None
    wrk_cpu_s: float | None = None
    wrk_cpu_ms_per_request: float | None = None
    pg_cpu_s: float | None = None
    pg_cpu_ms_per_request: float | None = None
    machine: MachineShare | None = None
    throttled: dict[str, int] | None = None
    cgroup_cpu_per_s: float | None = None
    switches: dict[str, int] | None = None        # probes.switches_between: the server's threads in the run
    switches_per_request: float | None = None     # hand-offs per request: (voluntary + nonvoluntary) / requests
    jit_cpu_s: float | None = None                # the server's JIT compiler threads (JVM stacks)
    jit_share: float | None = None                # their share of the server's CPU in the run: compiling, not serving

    def to_json(self) -> dict:
        return _set_fields(self, keep_empty=("throttled",))


@dataclass
class RateSpec:
    """One open-loop rate a stack is offered: `shared` (a fraction of the slowest stack's closed-loop maximum,
    the same absolute rate for every stack), `own` (a fraction of its own maximum, `repeat` 1..n) or `capacity`
    (a bisection step; `repeat` is the run within the step). A shared rate within SAME_POINT_WITHIN of one of the
    stack's own fractions stands for that own point too (`own_fraction`): one point measured, reported under both."""
    kind: str
    fraction: float
    of: str
    target_rps: float
    repeat: int | None = None
    own_fraction: float | None = None

    def to_json(self) -> dict:
        return _set_fields(self)


@dataclass
class WarmUp:
    """A warm-up at one concurrency: the windows until they met `criterion` (the rule, also as `rule`), or the cap
    (`stable` false)."""
    concurrency: int
    criterion: str
    cap_s: float
    seconds: float
    stable: bool
    windows: list[dict] = field(default_factory=list)
    rule: dict | None = None

    def to_json(self) -> dict:
        return _set_fields(self, keep_empty=("windows",))


@dataclass
class FlyResult:
    """What fly's shared-CPU model adds to a stack's result: the rule, the start from an empty balance, the burst."""
    rule: dict
    startup_empty_balance_s: float | None = None
    startup_cpu_s: float | None = None
    burst: dict | None = None

    def to_json(self) -> dict:
        return _set_fields(self)


@dataclass
class StackResult:
    """One stack's (or --url target's) result as the runner fills it; `to_json()` is its entry in results.json.
    `failed` holds the first reason it got no number (an OOM kill found at the end replaces it)."""
    name: str
    description: str | None = None
    target: str = "local"
    url: str | None = None
    build_s: float | None = None
    artifact_bytes: int | None = None
    image_build_s: float | None = None
    image_bytes: int | None = None
    openssl_ceiling: dict | None = None
    own_ceiling: dict | None = None
    own_ceiling_error: str | None = None
    fly: FlyResult | None = None
    cgroup: dict | None = None
    gc_log: str | None = None
    startup_samples_s: list[float] = field(default_factory=list)
    startup_s: float | None = None
    cpus_allowed: str | None = None
    verification: str | None = None
    failed: str | None = None
    unmeasured_errors: list[str] = field(default_factory=list)
    primer: dict | None = None
    burst_warmup: WarmUp | None = None
    warmups: list[WarmUp] = field(default_factory=list)
    rewarms: list[dict] = field(default_factory=list)
    runs: dict[str, list[dict]] = field(default_factory=dict)
    open_loop: list[dict] = field(default_factory=list)
    capacity: dict | None = None
    exit_code: int | None = None
    oom_killed: bool | None = None
    container: dict | None = None
    samples: list = field(default_factory=list)
    phases: list = field(default_factory=list)
    log_tail: str | None = None

    def fail(self, reason: str) -> None:
        """The first reason stands."""
        if not self.failed:
            self.failed = reason

    def to_json(self) -> dict:
        return _set_fields(self)
