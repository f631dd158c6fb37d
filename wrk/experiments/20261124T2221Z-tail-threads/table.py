"""Tables for README.md from the runs' summary.json (and stages-run*.txt)."""
import json, re, sys
from pathlib import Path
d = Path(sys.argv[1])
print("| stack | rate (75 % of max) | p50 / p99 / p99.9 ms, runs 1-3 | p99 ÷ p50 | route > 10 ms | CPU ms/req | run-queue wait ms/req | scheduling periods/req | threads that ran |")
print("| --- | ---: | --- | --- | --- | ---: | ---: | ---: | ---: |")
for s in ("actix", "akka", "spring", "zio"):
    j = json.loads((d / s / "summary.json").read_text())
    rs = j["runs"]
    lat = "; ".join(f'{r["latency_ms"]["p50"]:.1f} / {r["latency_ms"]["p99"]:.1f} / {r["latency_ms"]["p99_9"]:.1f}' for r in rs)
    ratio = ", ".join(f'{r["latency_ms"]["p99"] / r["latency_ms"]["p50"]:.1f}' for r in rs)
    over = ", ".join(f'{100 * r["route_share_over"][">10ms"]:.1f} %' for r in rs)
    t = [r["total"] for r in rs[1:]]
    f = lambda k, p=2: "–".join(sorted({f"{x[k]:.{p}f}" for x in t}))
    print(f'| {s} | {j["rate"]:,.0f}/s of {j["closed_loop_max"]:,.0f} | {lat} | {ratio} | {over} | {f("cpu_ms_per_req")} | {f("runqueue_wait_ms_per_req")} | {f("slices_per_req", 1)} | {f("threads_ran", 0)} |')
print()
for s in ("akka",):
    j = json.loads((d / s / "summary.json").read_text())
    print(f"{s} per group (runs 2-3):")
    for g in j["runs"][1]["groups"]:
        vals = [r["groups"][g] for r in j["runs"][1:] if g in r["groups"]]
        print(" ", g, [(v["cpu_ms_per_req"], v["runqueue_wait_ms_per_req"], v["slices_per_req"], v["threads_busy"]) for v in vals])
for v in ("akka-stages", "akka-stages-hashing4", "akka-stages-fj2"):
    p = d / v
    if not p.exists(): continue
    j = json.loads((p / "summary.json").read_text())
    print(f"\n{v}: rate {j['rate']}, extra {j['extra']}")
    for i, r in enumerate(j["runs"], 1):
        print(f"  run {i}: p50 {r['latency_ms']['p50']:.1f} p99 {r['latency_ms']['p99']:.1f} p99.9 {r['latency_ms']['p99_9']:.1f}")
        st = p / f"stages-run{i}.txt"
        if st.exists():
            for line in st.read_text().splitlines():
                if re.match(r"(hashQueue|route|lookup |lookupQueue|hash |back)", line): print("     ", line)
