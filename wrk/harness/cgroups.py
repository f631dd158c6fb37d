"""cgroups: the server's own cgroup (v1 or v2) with its CPU quota, cpuset and memory limit, and what it reads back."""
from __future__ import annotations

import contextlib
import os
import re
import time
from pathlib import Path

from stackctl import ToolError

from harness.records import Limits


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
