#!/usr/bin/env python3
"""One stack alone at 64 connections (wrk, users.lua, key p-256, the benchmark's environment), in 10 s windows for
SECONDS: per window the logins/s, the server's CPU per login, and the shares of its CPU taken by its JIT compiler
threads and by its VM and GC threads (read per thread from /proc/<pid>/task).

    python3 wrk/experiments/20261128T1839Z-jit-warm-up/jitwatch.py spring 420
"""
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # wrk/
import stackctl  # noqa: E402
from stackctl import Stack  # noqa: E402
from harness.loadgen import run_wrk  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def threads(pid: int) -> dict[int, tuple[str, float]]:
    out = {}
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            comm = open(f"/proc/{pid}/task/{t}/comm").read().strip()
            f = open(f"/proc/{pid}/task/{t}/stat").read().rsplit(")", 1)[1].split()
            out[int(t)] = (comm, (int(f[11]) + int(f[12])) / TICK)
        except OSError:
            pass
    return out


def main(name: str, total: int) -> None:
    stack = Stack.load(name)
    with stackctl.database() as (url, _):
        port = stackctl.free_port()
        env = stack.contract_env(url, port, "p-256", **stackctl.BENCH_ENV)
        proc = subprocess.Popen(stack.command("run"), cwd=stack.dir, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.STDOUT, start_new_session=True)
        try:
            base = f"http://127.0.0.1:{port}"
            stackctl.wait_http(base + "/health", proc, 120)
            t0 = time.monotonic()
            while time.monotonic() - t0 < total:
                a = threads(proc.pid)
                r = run_wrk(base, 64, 10, 2, "users", 0.0)
                b = threads(proc.pid)
                cpu = sum(v[1] for v in b.values()) - sum(v[1] for v in a.values())

                def share(pred) -> float:
                    return 100 * sum(b[t][1] - a.get(t, ("", 0.0))[1] for t in b if pred(b[t][0])) / max(cpu, 1e-9)
                n = r["rps"] * 10
                print(f"{int(time.monotonic() - t0):4d}s rps {r['rps']:7.0f} cpu ms/req {1000 * cpu / n:.3f} "
                      f"compiler {share(lambda c: 'Compiler' in c):5.1f}% "
                      f"vm/gc {share(lambda c: 'GC' in c or 'VM Thread' in c):4.1f}%", flush=True)
        finally:
            stackctl.stop_process(proc)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
