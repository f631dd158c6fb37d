"""The runner's typed records: the settings of a run, the limits a profile puts on the server, fly's
shared-CPU rule, and the constants the schedule and the reports share."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

STABLE_WITHIN = 0.03    # warm-up: two consecutive windows' CPU per request within 3 %
SHARED_FRACTIONS = (0.25, 0.5, 0.75, 0.9)  # open loop: of the slowest stack's closed-loop maximum, for every stack
OWN_FRACTIONS = (0.5, 0.75, 0.9)           # open loop: of the stack's own closed-loop maximum
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

    def __bool__(self) -> bool:
        return any(v is not None for v in (self.cpus, self.memory_mb, self.cpuset, self.shared))


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
