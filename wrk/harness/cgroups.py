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


CGROUP_ROOT = Path("/sys/fs/cgroup")
SELF_CGROUP = Path("/proc/self/cgroup")
V2_CONTROLLERS = ("cpu", "cpuset", "memory")  # what the server's cgroup needs delegated on cgroup v2


def cgroup_version(root: Path = CGROUP_ROOT) -> int:
    """2 when `root` is the unified hierarchy (it has cgroup.controllers), else 1 (one mount per controller
    under it: cpu, cpuacct, cpuset, memory; a hybrid layout's `unified` mount holds no controllers)."""
    return 2 if (root / "cgroup.controllers").exists() else 1


def own_cgroups(text: str) -> dict[str, str]:
    """/proc/self/cgroup → controller → this process's cgroup path ("" is the unified hierarchy's, line `0::/...`)."""
    out = {}
    for line in text.splitlines():
        _, ctrls, path = line.split(":", 2)
        for c in ctrls.split(","):
            out[c] = path
    return out


class Cgroup:
    """Confines one process tree: CPU quota, fly's shared rule (through a governor), a cpuset and a memory limit.
    Every server gets one, limits or not: its memory peak and CPU time come from it.

    cgroup v1 (one hierarchy per controller): a directory `<root>/<controller>/<our path>/<name>` for cpu, cpuacct
    and memory, and cpuset when the limits pin CPUs; cpu.cfs_quota_us + cpu.cfs_period_us, cpuset.cpus (after
    cpuset.mems, which v1 wants set before a task may join), memory.limit_in_bytes; CPU time from cpuacct.usage,
    throttling from cpu.stat (throttled_time in ns). cgroup v2 (one unified hierarchy): one directory
    `<root>/<our parent's path>/<name>`, beside this process's own cgroup, after `+cpu +cpuset +memory` are
    delegated through cgroup.subtree_control of every ancestor from the root down; cpu.max ("quota period"), cpuset.cpus, memory.max; CPU time and throttling from
    cpu.stat (usage_usec, nr_throttled, throttled_usec). Either way a process joins by writing its pid to
    cgroup.procs. `root` and `self_cgroup` are parameters so that a fake hierarchy can stand in for the kernel's."""

    def __init__(self, name: str, limits: Limits, root: Path = CGROUP_ROOT, self_cgroup: Path = SELF_CGROUP,
                 cpus: int | None = None):
        self.limits = limits
        self.root = root
        self.paths: dict[str, Path] = {}
        self.version = cgroup_version(root)
        self.cpuset = resolve_cpuset(limits.cpuset, cpus) if limits.cpuset else None
        own = own_cgroups(self_cgroup.read_text())
        if self.v2:
            # Beside this process's own cgroup, not in it: below the root a cgroup that holds processes (this
            # runner) cannot hand controllers to children ("no internal processes"); its parent holds none.
            here = root / own.get("", "/").lstrip("/")
            parent = here.parent if here != root else root
            self._delegate(parent)
            path = parent / name
            path.mkdir(exist_ok=True)
            self.paths = {c: path for c in ("cpu", "cpuacct", "memory", "cpuset")}
            if limits.cpus:
                (path / "cpu.max").write_text(f"{int(limits.cpus * 100000)} 100000")
            if self.cpuset:
                (path / "cpuset.cpus").write_text(self.cpuset)
            if limits.memory_mb:
                (path / "memory.max").write_text(str(limits.memory_mb * 2**20))
                with contextlib.suppress(OSError):
                    (path / "memory.swap.max").write_text("0")
        else:
            for ctrl in ("cpu", "cpuacct", "memory") + (("cpuset",) if self.cpuset else ()):
                base = root / ctrl
                if not base.exists():
                    raise ToolError(f"cgroup v1 controller '{ctrl}' is not mounted: cannot confine the server")
                path = base / own.get(ctrl, "/").lstrip("/") / name
                path.mkdir(exist_ok=True)
                self.paths[ctrl] = path
            if limits.cpus:
                (self.paths["cpu"] / "cpu.cfs_period_us").write_text("100000")
                (self.paths["cpu"] / "cpu.cfs_quota_us").write_text(str(int(limits.cpus * 100000)))
            if self.cpuset:  # v1: cpus and mems must be set before a task may join
                cs = self.paths["cpuset"]
                (cs / "cpuset.mems").write_text((cs.parent / "cpuset.mems").read_text().strip() or "0")
                (cs / "cpuset.cpus").write_text(self.cpuset)
            if limits.memory_mb:
                (self.paths["memory"] / "memory.limit_in_bytes").write_text(str(limits.memory_mb * 2**20))
                with contextlib.suppress(OSError):
                    (self.paths["memory"] / "memory.memsw.limit_in_bytes").write_text(str(limits.memory_mb * 2**20))
                with contextlib.suppress(OSError):
                    (self.paths["memory"] / "memory.swappiness").write_text("0")

    @property
    def v2(self) -> bool:
        return self.version == 2

    def _delegate(self, parent: Path) -> None:
        """cgroup v2: a child gets a controller only when its parent lists it in cgroup.subtree_control, and the
        parent only when its own parent does: from the root down to `parent`, each missing one of +cpu +cpuset
        +memory is enabled. Writing there takes root (or those cgroups delegated to the user running the
        benchmark); the kernel also refuses it (EBUSY) below the root for a cgroup that holds processes itself."""
        available = set((self.root / "cgroup.controllers").read_text().split())
        missing = [c for c in V2_CONTROLLERS if c not in available]
        if missing:
            raise ToolError(f"cgroup v2 controller(s) {', '.join(missing)} not available at {self.root}: cannot "
                            "confine the server")
        chain = [self.root] + [self.root / Path(*parent.relative_to(self.root).parts[:i + 1])
                               for i in range(len(parent.relative_to(self.root).parts))]
        for d in chain:
            control = d / "cgroup.subtree_control"
            enabled: set[str] = set()
            with contextlib.suppress(OSError):
                enabled = set(control.read_text().split())
            want = [c for c in V2_CONTROLLERS if c not in enabled]
            if not want:
                continue
            try:
                control.write_text(" ".join(f"+{c}" for c in want))
            except OSError as e:
                raise ToolError(f"cannot delegate {' '.join('+' + c for c in want)} through {control} ({e}): the "
                                f"server's cgroup goes under {parent}, beside the runner's; run the benchmark as root, "
                                "from a cgroup whose parent holds no processes") from e

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

    def cfs(self) -> tuple[int | None, int] | None:
        """The quota and period in force, read back (quota None: no limit); None when unreadable."""
        with contextlib.suppress(OSError, ValueError):
            if self.v2:
                quota, period = (self.paths["cpu"] / "cpu.max").read_text().split()
                return (None if quota == "max" else int(quota)), int(period)
            cpu = self.paths["cpu"]
            quota = int((cpu / "cpu.cfs_quota_us").read_text())
            return (None if quota < 0 else quota), int((cpu / "cpu.cfs_period_us").read_text())
        return None

    def cpuset_cpus(self) -> str | None:
        """The CPUs the cgroup's tasks may run on, read back: the effective list where the kernel keeps one
        (v2 cpuset.cpus.effective, v1 cpuset.effective_cpus), else cpuset.cpus; None without a cpuset."""
        cs = self.paths.get("cpuset")
        if cs is None or not self.cpuset:
            return None
        for f in (("cpuset.cpus.effective",) if self.v2 else ("cpuset.effective_cpus",)) + ("cpuset.cpus",):
            with contextlib.suppress(OSError):
                value = (cs / f).read_text().strip()
                if value:
                    return value
        return None

    def memory_limit_bytes(self) -> int | None:
        """The memory limit in force, read back (None: no limit, or unreadable)."""
        f = self.paths["memory"] / ("memory.max" if self.v2 else "memory.limit_in_bytes")
        with contextlib.suppress(OSError, ValueError):
            text = f.read_text().strip()
            if text != "max" and int(text) < 2**62:  # v1 reports "no limit" as a page-rounded 2**63 - 1
                return int(text)
        return None

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

    def describe(self) -> dict:
        """What results.json records of the cgroup: its version, the cpuset, quota and memory limit read back."""
        cfs = self.cfs()
        return {"version": self.version, "cpuset": self.cpuset_cpus(),
                "cpu_quota_us": cfs[0] if cfs else None, "cpu_period_us": cfs[1] if cfs else None,
                "memory_limit_bytes": self.memory_limit_bytes()}

    def destroy(self) -> None:
        for p in dict.fromkeys(self.paths.values()):
            for _ in range(50):
                try:
                    p.rmdir()
                    break
                except FileNotFoundError:
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
