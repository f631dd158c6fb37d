"""akka alone, open loop at 1333/s (75 % of its closed-loop max in results/20261124T154231Z-local), with JFR.

    python3 wrk/experiments/20261124T1615Z-akka-jit/run.py akka 1333 OUT_DIR
"""
import json, subprocess, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # wrk/ (this file: wrk/experiments/<run>/run.py)
import stackctl, bench
st = stackctl.Stack.load(sys.argv[1]); rate = float(sys.argv[2]); out = sys.argv[3]
with stackctl.ThrowawayPostgres() as pg:
    port = stackctl.free_port(); url = f"http://127.0.0.1:{port}"
    cmd = st.command("run")
    cmd[1:1] = [f"-XX:StartFlightRecording=filename={out}/rec.jfr,settings=profile,dumponexit=true",
                "-Xlog:async", f"-Xlog:gc:file={out}/gc.log:time,uptime"]
    proc = subprocess.Popen(cmd, cwd=st.dir, env=st.contract_env(pg.url, port), stdout=open(f"{out}/log", "w"),
                            stderr=subprocess.STDOUT, start_new_session=True)
    stackctl.wait_http(url + "/health", proc, 120)
    subprocess.run(stackctl.wrk_command(url, 64, 40), capture_output=True)
    bodies = f"{out}/bodies.txt"
    open(bodies, "w").write("\n".join(bench.open_loop_bodies("users", 0)) + "\n")
    oha = bench.loadgen()
    for i in range(3):
        w0 = time.time()
        r = bench.run_oha(url, rate, 15, 64, bench.Path(bodies), 0, oha)
        print(json.dumps({"run": i + 1, "wall": [w0, time.time()], "latency_ms": r["latency_ms"], "achieved": r["achieved_rps"]}), flush=True)
    stackctl.stop_process(proc)
