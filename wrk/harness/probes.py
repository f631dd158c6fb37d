"""Probes: what /proc tells about the server, PostgreSQL, the load generator and the machine (CPU time, memory),
the sampler thread, the CPU accounting of one run, JVM collection pauses, and the start-up probe."""
from __future__ import annotations

import contextlib
import datetime as dt
import re
import resource
import statistics
import subprocess
import threading
import time
import os
from pathlib import Path

import stackctl

from harness.records import MachineShare, Measurement, Snapshot

CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


def _stat_fields(path: Path) -> list[str]:
    """The fields of a /proc stat file after the command name (proc(5)'s field 3 on): the name is in parentheses
    and may hold spaces and ')' itself, so it is cut at the last ')'. utime and stime are [11] and [12]."""
    return path.read_text().rsplit(")", 1)[1].split()


def _task_ids(pid: int, proc: Path) -> list[str] | None:
    """The process's thread ids now (/proc/<pid>/task); None when it is gone."""
    try:
        return [d.name for d in (proc / str(pid) / "task").iterdir() if d.name.isdigit()]
    except OSError:
        return None


def proc_cpu_seconds(pid: int, reaped_children: bool = False) -> float | None:
    """utime + stime of all the process's threads; with reaped_children, also the CPU of the children it has
    waited for (cutime + cstime), which is where an exited child's CPU time goes."""
    try:
        fields = _stat_fields(Path(f"/proc/{pid}/stat"))
    except OSError:
        return None
    ticks = int(fields[11]) + int(fields[12])
    if reaped_children:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / CLK_TCK


def proc_rss_bytes(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
    except OSError:
        return None


def proc_anon_bytes(pid: int) -> int | None:
    """RssAnon: the process's anonymous resident memory (heap, stacks, JIT code: not mapped files)."""
    with contextlib.suppress(OSError, AttributeError):
        m = re.search(r"^RssAnon:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text(), re.M)
        return int(m.group(1)) * 1024
    return None


def proc_cpus_allowed(pid: int) -> str | None:
    """The CPUs a process may run on (Cpus_allowed_list of /proc/<pid>/status: its affinity within its cpuset),
    e.g. "1" or "0-1"; None when it is gone."""
    with contextlib.suppress(OSError, AttributeError):
        m = re.search(r"^Cpus_allowed_list:\s+(\S+)", Path(f"/proc/{pid}/status").read_text(), re.M)
        return m.group(1)
    return None


def thread_switches(pid: int, proc: Path = Path("/proc")) -> dict[int, tuple[int, int]] | None:
    """Each live thread's scheduler switches, {tid: (voluntary, nonvoluntary)}, from
    /proc/<pid>/task/<tid>/status. Per thread because Linux gives nothing better to another process:
    /proc/<pid>/status counts the main thread only, and an exited thread's switches go to the process's own
    getrusage(RUSAGE_SELF) (or the parent's after the whole process is reaped), which the runner cannot read while
    the server runs. None when the process is gone; a thread that exits between the listing and its read is
    skipped."""
    out: dict[int, tuple[int, int]] = {}
    tids = _task_ids(pid, proc)
    if tids is None:
        return None
    for tid in tids:
        with contextlib.suppress(OSError, AttributeError, ValueError):
            text = (proc / str(pid) / "task" / tid / "status").read_text()
            vol = re.search(r"^voluntary_ctxt_switches:\s+(\d+)", text, re.M)
            non = re.search(r"^nonvoluntary_ctxt_switches:\s+(\d+)", text, re.M)
            out[int(tid)] = (int(vol.group(1)), int(non.group(1)))
    return out


# HotSpot's JIT compiler threads by name (/proc/<pid>/task/<tid>/comm keeps 15 characters: "C2 CompilerThre").
JIT_THREAD_PREFIXES = ("C1 CompilerThre", "C2 CompilerThre", "JVMCI CompilerT")


def jit_cpu_seconds(pid: int, proc: Path = Path("/proc")) -> float | None:
    """CPU seconds (user + system) of the process's JIT compiler threads now alive; None when it has none (not a
    JVM) or is gone. HotSpot starts and stops compiler threads as its queue grows and shrinks, so a thread that
    exited between two readings takes its time with it: the difference is a lower bound while compilers come and
    go, and exact once the queue is quiet, which is what the warm-up rule asks."""
    tids = _task_ids(pid, proc)
    if tids is None:
        return None
    ticks, found = 0, False
    for tid in tids:
        with contextlib.suppress(OSError, IndexError, ValueError):
            task = proc / str(pid) / "task" / tid
            if not (task / "comm").read_text().startswith(JIT_THREAD_PREFIXES):
                continue
            fields = _stat_fields(task / "stat")
            ticks += int(fields[11]) + int(fields[12])
            found = True
    return ticks / CLK_TCK if found else None


def switches_between(before: dict[int, tuple[int, int]], after: dict[int, tuple[int, int]]) -> dict:
    """The server's thread hand-offs during a run, from the per-thread counters at both ends: a thread alive at
    both ends counts its difference; one that appeared during the run counts all of its switches (it was born in
    the run); one that was gone by the end counts nothing, its switches in the run being lost (threads_gone says
    how many there were: the figure is a lower bound when it is not 0)."""
    vol = non = 0
    for tid, (v1, n1) in after.items():
        v0, n0 = before.get(tid, (0, 0))
        if v1 < v0 or n1 < n0:   # a tid reused by a new thread: count the new one from its birth
            v0, n0 = 0, 0
        vol, non = vol + v1 - v0, non + n1 - n0
    return {"voluntary": vol, "nonvoluntary": non, "threads_start": len(before), "threads_end": len(after),
            "threads_new": len(set(after) - set(before)), "threads_gone": len(set(before) - set(after))}


def children_of(pid: int) -> list[int]:
    kids = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                if int((d / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    kids.append(int(d.name))
    return kids


def postgres_pid(pg) -> int | None:
    """The throw-away cluster's postmaster (its backends are its children); None for a DATABASE_URL database."""
    with contextlib.suppress(AttributeError, OSError, ValueError, AssertionError, TypeError):
        return int((pg.datadir / "postmaster.pid").read_text().split()[0])
    return None


def tree_cpu_seconds(pid: int | None) -> float | None:
    """A process and its children (PostgreSQL: the postmaster and its backends), the exited ones included: a pool
    that retires a connection ends a backend, and counting only the live ones made PostgreSQL's CPU over a run
    come out negative."""
    if pid is None:
        return None
    total = proc_cpu_seconds(pid, reaped_children=True)
    if total is None:
        return None
    return total + sum(proc_cpu_seconds(k) or 0.0 for k in children_of(pid))


def system_cpu() -> dict[str, float]:
    """The machine's CPU seconds from /proc/stat: busy (user, nice, system, irq, softirq), idle (with
    iowait) and steal (time the hypervisor gave to someone else)."""
    f = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    f += [0] * (8 - len(f))
    user, nice, system, idle, iowait, irq, softirq, steal = f[:8]
    return {"busy": (user + nice + system + irq + softirq) / CLK_TCK, "idle": (idle + iowait) / CLK_TCK,
            "steal": steal / CLK_TCK}


def children_cpu_seconds() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


class Sampler(threading.Thread):
    """Samples the server's RSS, anonymous RSS and CPU time every `interval` seconds."""

    def __init__(self, pid: int, t0: float, interval: float = 0.5):
        super().__init__(daemon=True)
        self.pid, self.t0, self.interval = pid, t0, interval
        self.samples: list[tuple[float, int, float, int]] = []  # (s since start, rss bytes, cpu s, anon bytes)
        self.phase = "start"
        self.phases: list[tuple[float, str]] = []
        self._halt = threading.Event()

    def mark(self, phase: str) -> None:
        self.phase = phase
        self.phases.append((round(time.monotonic() - self.t0, 2), phase))

    def run(self) -> None:
        while not self._halt.is_set():
            rss, cpu, anon = proc_rss_bytes(self.pid), proc_cpu_seconds(self.pid), proc_anon_bytes(self.pid)
            if rss is None or cpu is None:
                break
            self.samples.append((round(time.monotonic() - self.t0, 2), rss, round(cpu, 3), anon or 0))
            self._halt.wait(self.interval)

    def stop(self) -> None:
        self._halt.set()
        self.join(2)


GC_PAUSE = re.compile(r"^\[(?P<time>\d{4}-\d\d-\d\dT[\d:.]+[+-]\d{4})\].*GC\(\d+\) (?P<what>Pause [^(]*?)\s*\(.*?"
                      r"(?P<ms>\d+(?:\.\d+)?)ms\s*$")


def gc_pauses(path: Path) -> list[tuple[float, float, str]]:
    """(wall-clock end, milliseconds, kind) of every stop-the-world pause in a JDK `-Xlog:gc:...:time` log."""
    out = []
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return out
    for line in lines:
        m = GC_PAUSE.match(line)
        if m:
            ts = dt.datetime.strptime(m["time"], "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()
            out.append((ts, float(m["ms"]), m["what"].strip()))
    return out


def attribute_gc_pauses(open_loop: list[dict], pauses: list[tuple[float, float, str]]) -> None:
    """Each open-loop run gets the collections that ended inside it: how many, how long (p50, max, sum), and the
    share of the run's wall time the application stood still. A pause of d ms at r requests/s delays about r*d/1000
    requests by up to d ms each: when that is over 1 % of them, the pauses alone set the p99."""
    for run in open_loop:
        w0, w1 = (run.get("wall") or (None, None))
        if w0 is None:
            continue
        ms = sorted(d for t, d, _ in pauses if w0 <= t <= w1)
        kinds = sorted({k for t, _, k in pauses if w0 <= t <= w1})
        run["gc"] = {"pauses": len(ms), "kinds": kinds, "sum_ms": round(sum(ms), 1),
                     "p50_ms": round(statistics.median(ms), 2) if ms else None, "max_ms": round(ms[-1], 2) if ms else None,
                     "paused_share": round(sum(ms) / 1000 / max(w1 - w0, 1e-9), 4)}


def time_to_first_token(url: str, proc: subprocess.Popen, t0: float, timeout: float = 120) -> float:
    """Seconds from `t0` (just before exec) to the first 200 on /token for John (stackctl's poller)."""
    return stackctl.first_token(url, t0, proc, timeout)


def startup_probe(cmd: list[str], cwd: Path, env: dict, url: str) -> float:
    """One extra start just for its start-up time: exec, first token, stop."""
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        return time_to_first_token(url, proc, t0)
    finally:
        stackctl.stop_process(proc)


def account(before: Snapshot, after: Snapshot, requests: int, client_cpu_s: float | None) -> Measurement:
    """Where the machine's CPU went during one run, per request and in cores: the server (its process), the load
    generator (its rusage), PostgreSQL (postmaster and backends), the rest (the kernel's network work, the
    runner, idle stacks), idle and stolen time; and the server's thread hand-offs (scheduler switches of its
    threads, voluntary + nonvoluntary) per request. None where not measurable (a --url target)."""
    wall = after.t - before.t
    out = Measurement(wall_s=round(wall, 3))

    def delta(k):
        a, b = getattr(before, k), getattr(after, k)
        return None if a is None or b is None else b - a
    server, pg = delta("server"), delta("pg")
    busy, idle, steal = delta("busy"), delta("idle"), delta("steal")
    if server is not None:
        out.server_cpu_s = round(server, 3)
        if requests:
            out.cpu_ms_per_request = round(server * 1000 / requests, 4)
    if client_cpu_s is not None:
        out.wrk_cpu_s = round(client_cpu_s, 3)
        if requests:
            out.wrk_cpu_ms_per_request = round(client_cpu_s * 1000 / requests, 4)
    if pg is not None:
        out.pg_cpu_s = round(pg, 3)
        if requests:
            out.pg_cpu_ms_per_request = round(pg * 1000 / requests, 4)
    if wall > 0 and busy is not None:
        known = sum(v for v in (server, client_cpu_s, pg) if v is not None)
        out.machine = MachineShare(busy_cores=round(busy / wall, 3), idle_cores=round(idle / wall, 3),
                                   steal_cores=round(steal / wall, 3), rest_cores=round(max(0.0, busy - known) / wall, 3))
    jit = delta("jit")
    if jit is not None and server:
        out.jit_cpu_s = round(max(jit, 0.0), 3)
        out.jit_share = round(max(jit, 0.0) / server, 4)
    if before.switches is not None and after.switches is not None:
        out.switches = switches_between(before.switches, after.switches)
        if requests:
            total = out.switches["voluntary"] + out.switches["nonvoluntary"]
            out.switches_per_request = round(total / requests, 3)
    cs0, cs1 = before.cpu_stat, after.cpu_stat
    if cs0 and cs1:
        out.throttled = {k: cs1.get(k, 0) - cs0.get(k, 0) for k in ("nr_periods", "nr_throttled", "throttled_us")}
    cg = delta("cgroup")
    if cg is not None and wall > 0:
        out.cgroup_cpu_per_s = round(cg / wall, 4)
    return out
