#!/usr/bin/env python3
"""Thread switches per login of each stack, by thread pool, at a fixed rate of logins.

    .venv/bin/python wrk/experiments/20261128T2231Z-handoffs-by-thread/threads.py actix,akka,zio 400 20 240 [key-type]

Per stack: start it as the benchmark does (stackctl.BENCH_ENV, a throw-away PostgreSQL), wrk `users.lua` at c=64
for the warm-up (seconds; 30 s for a native stack), 10 s of oha at the rate to settle, then the measured seconds at
the rate. Each thread's voluntary and nonvoluntary switches (/proc/<pid>/task/<tid>/status) are read before and
after the measured run and summed by pool: the thread's name with its numbers replaced by N (a JVM's full thread
names from `jcmd Thread.print`, /proc keeping only 15 characters). Printed per login, with the process's CPU per
login over the same run.
"""
import re
import subprocess
import sys
from pathlib import Path

WRK = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(WRK))
import stackctl  # noqa: E402
from stackctl import Stack  # noqa: E402
from harness import probes  # noqa: E402
from harness.loadgen import loadgen, open_loop_bodies, run_oha, run_wrk  # noqa: E402


def java_thread_names(pid: int) -> dict[int, str]:
    jcmd = stackctl.find_java_home() / "bin" / "jcmd"
    text = subprocess.run([str(jcmd), str(pid), "Thread.print"], capture_output=True, text=True, timeout=60).stdout
    return {int(m.group(2), 16): m.group(1) for m in re.finditer(r'^"([^"]+)".*?nid=0x([0-9a-f]+)', text, re.M)}


def comm_names(pid: int) -> dict[int, str]:
    out = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            out[int(task.name)] = (task / "comm").read_text().strip()
        except OSError:
            pass
    return out


def measure(stack: Stack, db: str, rate: float, seconds: int, warmup: int, key: str, oha: str, bodies: Path) -> None:
    port = stackctl.free_port()
    env = stack.contract_env(db, port, key, **stackctl.BENCH_ENV)
    url = f"http://127.0.0.1:{port}"
    with open(f"/tmp/{stack.name}-threads.log", "wb") as log:
        proc = subprocess.Popen(stack.command("run"), cwd=stack.dir, env=env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        stackctl.wait_http(url + "/health", proc, 120)
        run_wrk(url, 64, warmup if stack.uses_java else 30, 2, "users", 0.0)
        run_oha(url, rate, 10, 64, bodies, 0.0, oha)
        names = comm_names(proc.pid)
        if stack.uses_java:
            names.update(java_thread_names(proc.pid))
        before, cpu0 = probes.thread_switches(proc.pid), probes.proc_cpu_seconds(proc.pid)
        run = run_oha(url, rate, seconds, 64, bodies, 0.0, oha)
        after, cpu1 = probes.thread_switches(proc.pid), probes.proc_cpu_seconds(proc.pid)
        names.update({t: n for t, n in comm_names(proc.pid).items() if t not in names})
        logins = run["achieved_rps"] * seconds
        pool_of = {tid: re.sub(r"\d+", "N", names.get(tid, "?")) for tid in set(before) | set(after)}
        pools = {}
        for pool in set(pool_of.values()):
            counts = probes.switches_between({t: c for t, c in before.items() if pool_of[t] == pool},
                                             {t: c for t, c in after.items() if pool_of[t] == pool})
            pools[pool] = (counts["voluntary"], counts["nonvoluntary"], counts["threads_end"])
        total = sum(v + n for v, n, _ in pools.values())
        print(f"== {stack.name}: {run['achieved_rps']:.0f} logins/s, {run['errors']} errors, "
              f"CPU {(cpu1 - cpu0) * 1000 / logins:.3f} ms/login, switches/login {total / logins:.2f}")
        for pool, (vol, non, threads) in sorted(pools.items(), key=lambda kv: -(kv[1][0] + kv[1][1])):
            if vol + non:
                print(f"   {pool:48s} x{threads:<3d} voluntary {vol / logins:6.2f}  nonvoluntary {non / logins:6.2f}")
        sys.stdout.flush()
    finally:
        stackctl.stop_process(proc)


def main() -> None:
    stacks, rate, seconds, warmup = sys.argv[1].split(","), float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    key = sys.argv[5] if len(sys.argv) > 5 else "p-256"
    oha = loadgen()
    bodies = Path("/tmp/threads-bodies.txt")
    bodies.write_text("\n".join(open_loop_bodies("users", 0.0)) + "\n")
    with stackctl.database() as (db, _pg):
        for name in stacks:
            measure(Stack.load(name), db, rate, seconds, warmup, key, oha, bodies)


if __name__ == "__main__":
    main()
