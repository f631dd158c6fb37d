"""One stack alone at a constant arrival rate, with where its threads' time goes (issue 25).

    python3 wrk/experiments/20261124T2221Z-tail-threads/run.py STACK OUT_DIR [--fraction 0.75] [--runs 3] [-- EXTRA_JVM_FLAGS...]
    DIAG=1 WRK_DIR=<worktree with diag.patch applied>/wrk python3 .../run.py akka OUT_DIR   # akka's stage histograms

The stack starts as the benchmark starts it (bench environment, throw-away PostgreSQL), gets 40 s of wrk at
c=64 (users scenario), 10 s more of wrk whose rate is its closed-loop maximum here; then, per run, 5 s at the
constant rate unmeasured and 15 s measured with oha (latency from each request's intended start). Around each
measured run every thread's /proc/<pid>/task/<tid>/schedstat is read: CPU time and time spent runnable but
waiting for a core (run-queue delay), summed per thread group (JVM thread names from `jcmd Thread.print`).
A sampler counts the process's runnable threads every 50 ms during the run.
"""
import collections, json, os, re, subprocess, sys, threading, time
from pathlib import Path
# wrk/ (this file: wrk/experiments/<run>/run.py), or WRK_DIR's
sys.path.insert(0, os.environ.get("WRK_DIR", str(Path(__file__).resolve().parents[2])))
import stackctl, bench

args = sys.argv[1:]
extra = args[args.index("--") + 1:] if "--" in args else []
args = args[:args.index("--")] if "--" in args else args
stack, out = args[0], Path(args[1])
fraction = float(args[args.index("--fraction") + 1]) if "--fraction" in args else 0.75
runs = int(args[args.index("--runs") + 1]) if "--runs" in args else 3
out.mkdir(parents=True, exist_ok=True)

# Thread groups by name. "HTTP" serves the connections: akka's default dispatcher (akka-http's streams), actix's
# workers, Netty's event loops plus ZIO's fiber scheduler, Tomcat's poller plus the virtual-thread carriers.
# "CPU pool": where password checks and signing run (akka's hashing dispatcher, Spring's cpu-N, actix's blocking
# workers). zio runs that work and JDBC on its one blocking pool.
GROUPS = [("HTTP", r"default-dispatcher|akka\.io|internal-dispatcher|^actix-rt\|system|^actix-server|EventLoop|ZScheduler|^http-nio|ForkJoinPool-1-worker"),
          ("CPU pool", r"hashing-dispatcher|^cpu-\d|^tokio-rt-worker"),
          ("blocking pool", r"db-dispatcher|zio-default-blocking"),
          ("GC", r"^GC |VM Thread|Serial|G1 "), ("JIT", r"Compiler")]


def tids(pid):
    return [int(t) for t in os.listdir(f"/proc/{pid}/task")]


def names(pid, java):
    got = {}
    if java:
        txt = subprocess.run(["jcmd", str(pid), "Thread.print"], capture_output=True, text=True).stdout
        for m in re.finditer(r'^"(.*?)".*?(?:\[(\d+)\]|nid=(0x[0-9a-f]+|\d+))', txt, re.M):
            tid = int(m.group(2)) if m.group(2) else int(m.group(3), 0)
            got[tid] = m.group(1)
    for t in tids(pid):
        if t not in got:
            try:
                got[t] = open(f"/proc/{pid}/task/{t}/comm").read().strip()
            except OSError:
                pass
    return got


def group(name):
    for g, rx in GROUPS:
        if re.search(rx, name):
            return g
    return "other"


def schedstat(pid):
    res = {}
    for t in tids(pid):
        try:
            cpu, wait, slices = (int(x) for x in open(f"/proc/{pid}/task/{t}/schedstat").read().split())
            res[t] = (cpu, wait, slices)
        except (OSError, ValueError):
            pass
    return res


def route_histogram(url):
    """Cumulative counts of simpleauth_token_request_duration_seconds by bucket, summed over labels."""
    import urllib.request
    text = urllib.request.urlopen(url + "/metrics", timeout=5).read().decode()
    got = collections.Counter()
    for m in re.finditer(r'^simpleauth_token_request_duration_seconds_bucket\{[^}]*le="([^"]+)"[^}]*\} ([0-9.e+]+)', text, re.M):
        got[m.group(1)] += float(m.group(2))
    return got


def sampler(pid, stop, counts):
    while not stop.is_set():
        n = 0
        for t in tids(pid):
            try:
                st = open(f"/proc/{pid}/task/{t}/stat").read()
                if st[st.rindex(")") + 2] == "R":
                    n += 1
            except (OSError, ValueError):
                pass
        counts[n] += 1
        time.sleep(0.05)


st = stackctl.Stack.load(stack)
java = "{java}" in json.dumps(json.load(open(st.dir / "stack.json"))["run"])
with stackctl.ThrowawayPostgres() as pg:
    port = stackctl.free_port(); url = f"http://127.0.0.1:{port}"
    cmd = st.command("run")
    if java:
        cmd[1:1] = [f"-Xlog:gc:file={out}/gc.log:time,uptime", *extra]
    proc = subprocess.Popen(cmd, cwd=st.dir, env=st.contract_env(pg.url, port), stdout=open(out / "log", "w"),
                            stderr=subprocess.STDOUT, start_new_session=True)
    stackctl.wait_http(url + "/health", proc, 120)
    subprocess.run(stackctl.wrk_command(url, 64, 40), capture_output=True)
    w = subprocess.run(stackctl.wrk_command(url, 64, 10), capture_output=True, text=True)
    wj = stackctl.read_wrk_json(w.stdout)
    maximum = wj["requests"] / wj["duration_s"] if "duration_s" in wj else None
    if maximum is None:
        maximum = float(re.search(r"Requests/sec:\s+([\d.]+)", w.stdout).group(1))
    rate = fraction * maximum
    bodies = out / "bodies.txt"
    bodies.write_text("\n".join(bench.open_loop_bodies("users", 0)) + "\n")
    oha = bench.loadgen()
    summary = {"stack": stack, "extra": extra, "closed_loop_max": round(maximum, 1), "rate": round(rate, 1), "runs": []}
    for i in range(runs):
        bench.run_oha(url, rate, 5, 256, bodies, 0, oha)
        who = names(proc.pid, java)
        if os.environ.get("DIAG"): os.kill(proc.pid, 12); time.sleep(0.5)  # reset the stage histograms
        h0 = route_histogram(url)
        s0 = schedstat(proc.pid); stop = threading.Event(); counts = collections.Counter()
        th = threading.Thread(target=sampler, args=(proc.pid, stop, counts)); th.start()
        r = bench.run_oha(url, rate, 15, 256, bodies, 0, oha)
        stop.set(); th.join(); s1 = schedstat(proc.pid)
        h1 = route_histogram(url)
        if os.environ.get("DIAG"):  # stage histograms of this run (diag.patch), written by the service on SIGUSR2
            before = set(Path("/tmp").glob("diag-*.txt")); os.kill(proc.pid, 12); time.sleep(0.5)
            new = sorted(set(Path("/tmp").glob("diag-*.txt")) - before)
            if new: (out / f"stages-run{i + 1}.txt").write_text(new[-1].read_text())
        hd = {le: h1[le] - h0.get(le, 0) for le in h1}
        total_req = hd.get("+Inf", 0) or 1
        route_over = {f">{float(le)*1000:g}ms": round(1 - hd[le] / total_req, 5) for le in hd if le != "+Inf" and 0.0049 < float(le) < 0.26}
        who.update({t: n for t, n in names(proc.pid, java).items() if t not in who})
        n = r["achieved_rps"] * r["duration_s"]
        per = collections.defaultdict(lambda: [0, 0, 0, 0])
        for t, (c1, w1, x1) in s1.items():
            c0, w0, x0 = s0.get(t, (0, 0, 0))
            g = group(who.get(t, "?"))
            per[g][0] += c1 - c0; per[g][1] += w1 - w0; per[g][2] += x1 - x0
            if c1 - c0 > 0:
                per[g][3] += 1
        total = sum(counts.values())
        row = {"run": i + 1, "latency_ms": r["latency_ms"], "achieved_rps": r["achieved_rps"], "route_share_over": route_over,
               "runnable_threads": {k: round(v / total, 4) for k, v in sorted(counts.items())},
               "groups": {g: {"cpu_ms_per_req": round(v[0] / 1e6 / n, 4), "runqueue_wait_ms_per_req": round(v[1] / 1e6 / n, 4),
                              "slices_per_req": round(v[2] / n, 2), "threads_busy": v[3]} for g, v in sorted(per.items())}}
        tot = [sum(v[k] for v in per.values()) for k in range(4)]
        row["total"] = {"cpu_ms_per_req": round(tot[0] / 1e6 / n, 4), "runqueue_wait_ms_per_req": round(tot[1] / 1e6 / n, 4),
                        "slices_per_req": round(tot[2] / n, 2), "threads_ran": tot[3]}
        summary["runs"].append(row)
        print(json.dumps(row), flush=True)
    (out / "names.json").write_text(json.dumps({str(k): v for k, v in sorted(who.items())}, indent=1))
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    stackctl.stop_process(proc)
