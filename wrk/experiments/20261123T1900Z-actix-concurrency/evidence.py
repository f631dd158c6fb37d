#!/usr/bin/env python3
"""actix at c=16 and c=256: throughput, server CPU, per-thread CPU and the pool's waiters (sampled from /metrics
every 0.25 s) for one binary. Usage: evidence.py BINARY LABEL OUT.json  (DATABASE_URL in the environment)."""
import json, os, re, subprocess, sys, threading, time, urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]  # the repository (wrk/experiments/<run>/evidence.py)
binary, label, out = sys.argv[1], sys.argv[2], Path(sys.argv[3])
port = 18080
env = dict(os.environ, PORT=str(port), HOST="127.0.0.1", DB_POOL_SIZE="10", DB_ACQUIRE_TIMEOUT_MS="1000",
           JWT_PRIVATE_KEY_FILE=str(ROOT / "spec/keys/dev-rsa-2048.pem"), JWT_ISSUER=f"http://localhost:{port}",
           JWT_AUDIENCE="channel-api", TOKEN_TTL_SECONDS="600", LOG_LEVEL="warn")
proc = subprocess.Popen([binary], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
TICK = os.sysconf("SC_CLK_TCK")


def threads() -> dict[str, float]:
    """CPU seconds per thread name (summed over threads of the same name)."""
    cpu: dict[str, float] = {}
    for t in Path(f"/proc/{proc.pid}/task").iterdir():
        try:
            stat = (t / "stat").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        name = re.sub(r"\d+$", "N", name) if name.startswith("actix-rt|system") is False else name
        f = stat.rsplit(")", 1)[1].split()
        cpu[name] = cpu.get(name, 0.0) + (int(f[11]) + int(f[12])) / TICK
    return cpu


def metric(text: str, name: str) -> float:
    m = re.search(rf"^{re.escape(name)} (\S+)$", text, re.M)
    return float(m.group(1)) if m else float("nan")


def wrk(c: int, seconds: int) -> dict:
    r = subprocess.run(["wrk", "-t2", f"-c{c}", f"-d{seconds}s", "-s", str(ROOT / "wrk/users.lua"),
                        f"http://127.0.0.1:{port}/token", "--", "users", "0"], capture_output=True, text=True, check=True)
    return json.loads(r.stdout.split("WRK_JSON", 1)[1].strip().splitlines()[0])


try:
    for _ in range(100):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health/live", timeout=1)
            break
        except OSError:
            time.sleep(0.05)
    wrk(64, 20)  # warm-up
    runs = []
    for c in (16, 256, 16, 256):
        samples, stop = [], threading.Event()

        def sample():
            while not stop.wait(0.25):
                text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2).read().decode()
                samples.append({"pending": metric(text, "simpleauth_db_pool_pending"),
                                "active": metric(text, 'simpleauth_db_pool_connections{state="active"}'),
                                "idle": metric(text, 'simpleauth_db_pool_connections{state="idle"}')})
        t0, cpu0 = time.monotonic(), threads()
        th = threading.Thread(target=sample); th.start()
        res = wrk(c, 15)
        stop.set(); th.join()
        wall, cpu1 = time.monotonic() - t0, threads()
        per_thread = {k: round((cpu1.get(k, 0) - cpu0.get(k, 0)) / wall, 3) for k in cpu1}
        pend = sorted(s["pending"] for s in samples)
        run = {"label": label, "c": c, "rps": res["rps"], "status": res["status"], "p50_ms": res["latency_ms"]["p50"],
               "p99_ms": res["latency_ms"]["p99"], "server_cores": round(sum(per_thread.values()), 3),
               "cores_per_thread_name": per_thread, "pool_pending_median": pend[len(pend) // 2],
               "pool_pending_max": pend[-1], "pool_active_median": sorted(s["active"] for s in samples)[len(samples) // 2],
               "samples": len(samples)}
        print(json.dumps({k: v for k, v in run.items() if k != "cores_per_thread_name"}), flush=True)
        print("   per thread:", per_thread, flush=True)
        runs.append(run)
    out.write_text(json.dumps(runs, indent=1) + "\n")
finally:
    proc.terminate(); proc.wait()
