"""fly.io's shared-CPU rule as a governor: the balance arithmetic and the thread that rewrites the server
cgroup's CFS quota every period."""
from __future__ import annotations

import contextlib
import threading
import time

from harness.cgroups import Cgroup
from harness.records import FlyShared


class ShareGovernor:
    """fly's shared-CPU rule as arithmetic, no clock and no cgroup of its own (GovernorThread drives it).

    Each step is told the seconds that passed and the CPU seconds the server used in them: the balance gains
    the baseline share of the elapsed time and loses what was used, up to max_balance_s. The quota for the
    next period is the baseline plus the balance, at most the whole period (100 % of one CPU), at least the
    kernel's 1 ms minimum.

    The kernel enforces a CFS quota only at its scheduler ticks, so a 5 ms quota lets somewhat more than 5 ms
    per period through. The balance may therefore go below zero, down to one period's worth (`max_debt_s`):
    overuse is charged and the next quotas shrink until the average is the baseline. What is reported as the
    balance is never below zero. (The profile pins the server to one CPU by cpuset: fly's 1x has one vCPU, and
    with two CPUs the server's threads would run on both at once.)"""

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
