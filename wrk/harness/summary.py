"""Statistics: each stack's runs summarised per concurrency (medians and the repeats' spread), its shares of
the signing ceilings, its own cost per request, memory, the open-loop fractions and fly's figures."""
from __future__ import annotations

import os
import statistics

from harness.latency import pooled


def spread(values: list[float]) -> dict:
    return {"median": round(statistics.median(values), 3), "min": round(min(values), 3), "max": round(max(values), 3)}


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def _median_of(runs: list[dict], key: str, nd: int = 4):
    vals = [r[key] for r in runs if r.get(key) is not None]
    return round(statistics.median(vals), nd) if vals else None


def signed_share(runs: list[dict]) -> float:
    """The share of the answers that issued tokens (200s; a wrong password is answered 400 unsigned), over the
    runs: what the signing cost per token pair is weighed by in the CPU per answer. 1.0 when not recorded."""
    ok, total = sum(r.get("requests_ok", 0) for r in runs), sum(r.get("requests", 0) for r in runs)
    if not total or any("requests_ok" not in r for r in runs):
        return 1.0
    return ok / total


def signing_per_pair(result: dict, ceiling: dict | None) -> tuple[float, str] | None:
    """What one token pair costs the stack to sign, in ms of CPU: its own signbench's (the service's signer: claims,
    `at_hash`, both signatures), else OpenSSL's two signatures. (ms, basis) or None."""
    if result.get("own_ceiling"):
        return result["own_ceiling"]["pair_ms"], "signbench"
    if ceiling:
        return 2 * ceiling["sign_ms"], "openssl"
    return None


def own_cost(cpu_ms: float, result: dict, ceiling: dict | None, share: float = 1.0) -> tuple[float, str] | None:
    """The stack's own cost per request: its CPU per request minus its signing per token pair (its own signbench
    for the key type in use; OpenSSL's two signatures when it has none), times the share of answers that sign.
    What is left is the framework, HTTP, JSON, the pool and the password check: the same for every key type, and
    measured most precisely when the signature is cheap (P-256, Ed25519). (ms, basis) or None."""
    pair = signing_per_pair(result, ceiling)
    if pair is None:
        return None
    return round(cpu_ms - pair[0] * share, 4), pair[1]


def summarize(result: dict, ceiling: dict | None) -> dict:
    """Medians per concurrency with the repeats' spread (what wrk/compare.py weighs a difference against).
    Crypto share divides by the run's one OpenSSL ceiling (the median of its samples), the same for every stack; the
    stack's own cost per request subtracts its signing (own_cost) from the median CPU per request."""
    if result.get("failed") or not result.get("runs"):
        return {}
    ceiling = ceiling or result.get("openssl_ceiling")   # the run's one ceiling; a stack's own reading if none
    summary: dict = {"by_concurrency": {}}
    for c, runs in result["runs"].items():
        s = {
            "rps": spread([r["rps"] for r in runs]),
            "errors": sum(r["errors"] for r in runs),
            "requests": sum(r["requests"] for r in runs),
            "latency_ms": {p: round(statistics.median(r["latency_ms"][p] for r in runs), 3)
                           for p in ("p50", "p90", "p99", "p99_9", "max")},
        }
        cpu = [r["cpu_ms_per_request"] for r in runs if "cpu_ms_per_request" in r]
        if cpu:
            s["cpu_ms_per_request"] = round(statistics.median(cpu), 4)
            s["cpu_ms_per_request_spread"] = spread(cpu)
            if ceiling:
                s["crypto_share"] = round(2 * ceiling["sign_ms"] / s["cpu_ms_per_request"], 3)
            if result.get("own_ceiling"):
                s["own_share"] = round(result["own_ceiling"]["pair_ms"] / s["cpu_ms_per_request"], 3)
            share = signed_share(runs)
            own = own_cost(s["cpu_ms_per_request"], result, ceiling, share)
            if own:
                s["own_cost_ms_per_request"], s["own_cost_basis"] = own
                s["own_cost_ms_per_request_spread"] = {k: round(v - (s["cpu_ms_per_request"] - own[0]), 4)
                                                       for k, v in s["cpu_ms_per_request_spread"].items()}
                if share != 1.0:
                    s["signed_share"] = round(share, 4)
        for key in ("wrk_cpu_ms_per_request", "pg_cpu_ms_per_request"):
            v = _median_of(runs, key)
            if v is not None:
                s[key] = v
        s.update(handoffs(runs))
        if any(r.get("shed_ok") for r in runs):   # the argon2 profile: 503s counted, not failures
            s["shed"] = sum(r.get("shed", 0) for r in runs)
            s["shed_share"] = round(s["shed"] / s["requests"], 4) if s["requests"] else 0.0
        machines = [r["machine"] for r in runs if r.get("machine")]
        if machines:
            s["machine"] = {k: round(statistics.median(m[k] for m in machines), 3)
                            for k in ("busy_cores", "idle_cores", "steal_cores", "rest_cores")}
        thr = [r["throttled"] for r in runs if r.get("throttled")]
        if thr:
            s["throttled"] = {k: sum(t[k] for t in thr) for k in ("nr_periods", "nr_throttled", "throttled_us")}
        summary["by_concurrency"][c] = s
    best = max(summary["by_concurrency"], key=lambda c: summary["by_concurrency"][c]["rps"]["median"])
    summary["max_rps"] = summary["by_concurrency"][best]["rps"]["median"]
    summary["max_rps_at"] = best
    if result.get("startup_samples_s"):
        summary["startup_s"] = spread(result["startup_samples_s"])
    samples = result.get("samples") or []
    if samples:
        measured_from = next((t for t, p in result.get("phases", []) if p.startswith("c=")), None)
        steady = [s for s in samples if measured_from is not None and s[0] >= measured_from]
        summary["rss_peak_mib"] = round(max(s[1] for s in samples) / 2**20, 1)
        if steady:
            summary["rss_steady_mib"] = round(statistics.median(s[1] for s in steady) / 2**20, 1)
        anon = [s for s in samples if len(s) > 3 and s[3]]
        if anon:
            summary["anon_peak_mib"] = round(max(s[3] for s in anon) / 2**20, 1)
            steady_anon = [s[3] for s in anon if measured_from is not None and s[0] >= measured_from]
            if steady_anon:
                summary["anon_steady_mib"] = round(statistics.median(steady_anon) / 2**20, 1)
    peak = (result.get("cgroup") or {}).get("memory_peak_bytes")
    if peak:
        summary["cgroup_peak_mib"] = round(peak / 2**20, 1)
    if result.get("open_loop"):
        pair = signing_per_pair(result, ceiling)
        summary["open_loop"] = [{**{k: r[k] for k in ("kind", "fraction", "own_fraction", "repeat", "target_rps",
                                                      "achieved_rps",
                                                      "errors", "latency_ms", "gc", "cpu_ms_per_request",
                                                      "switches_per_request") if k in r},
                                 **({"own_cost_ms_per_request": round(r["cpu_ms_per_request"] - pair[0], 4),
                                     "own_cost_basis": pair[1]}
                                    if pair and r.get("cpu_ms_per_request") is not None else {})}
                                for r in result["open_loop"]]
        summary["open_loop_own"] = open_loop_own_summary(summary["open_loop"], result["open_loop"], result.get("cores"))
        summary["open_loop_shared"] = open_loop_own_summary(summary["open_loop"], result["open_loop"],
                                                            result.get("cores"), kind="shared")
    if result.get("capacity"):
        summary["capacity"] = result["capacity"]
    if result.get("fly"):
        top = summary["by_concurrency"][best]
        summary["fly"] = {
            "sustained_rps": summary["max_rps"],
            "sustained_at": best,
            "sustained_p99_ms": top["latency_ms"]["p99"],
            "throttled": top.get("throttled"),
            "startup_empty_balance_s": result["fly"].get("startup_empty_balance_s"),
            "burst_rps": (result["fly"].get("burst") or {}).get("rps"),
            "burst_cpu_per_s": (result["fly"].get("burst") or {}).get("cpu_per_s"),
            "burst_s": (result["fly"].get("burst") or {}).get("burst_s"),
        }
    return summary


def handoffs(runs: list[dict]) -> dict:
    """The server's thread hand-offs per request over the runs (scheduler switches of its threads, voluntary +
    nonvoluntary, per request): the median and the runs' range, and how many threads exited during the runs (their
    switches in a run are lost, so the figure is a lower bound when threads_gone is not 0). {} when not measured."""
    per = [r["switches_per_request"] for r in runs if r.get("switches_per_request") is not None]
    if not per:
        return {}
    return {"switches_per_request": round(statistics.median(per), 3), "switches_per_request_spread": spread(per),
            "threads_gone": sum((r.get("switches") or {}).get("threads_gone", 0) for r in runs)}


def point_fraction(run: dict, kind: str) -> float | None:
    """The fraction of the point of `kind` a run belongs to: its own for a run of that kind; for "own", also the
    `own_fraction` a shared run stands for (open_loop_rates: an own rate within 3 % of a shared one is measured
    once, at the shared rate). None when the run is no point of that kind (a capacity step, the other kind)."""
    if run.get("kind") == kind:
        return run["fraction"]
    return run.get("own_fraction") if kind == "own" and run.get("kind") == "shared" else None


def open_loop_own_summary(runs: list[dict], raw: list[dict] | None = None, cores: int | None = None,
                          kind: str = "own") -> list[dict]:
    """The runs at fractions of the stack's own maximum (kind "own"; "shared": the same absolute rates for every
    stack; a shared run that stands for an own point counts for it as well, `shared_fraction` says so), one entry
    per fraction: the percentiles of every request of its runs pooled (`pooled_latency_ms`, from
    the runs' histograms, harness/latency.py), the medians of the runs' own percentiles, the range across runs of
    p50, p99 and p99.9, the machine's busy share (server, load generator and PostgreSQL together: what
    "75 % of the closed-loop maximum" is as load on the machine), the server's CPU, own cost and hand-offs per
    login, and the collections' pauses where logged. `runs` are the summary's per-run entries, `raw` the runs as
    measured (with the machine's share); the same order."""
    cores = cores or os.cpu_count() or 1
    raw = raw or runs
    out = []
    for f in sorted({p for r in runs if (p := point_fraction(r, kind)) is not None}):
        picked = [(r, m) for r, m in zip(runs, raw) if point_fraction(r, kind) == f]
        rs = [{**m, **r} for r, m in picked]
        lat = {p: round(statistics.median(r["latency_ms"][p] for r in rs if r["latency_ms"].get(p) is not None), 3)
               for p in ("p50", "p90", "p99", "p99_9", "max")}
        shed = sum(r.get("shed", 0) for r in rs)
        e = {"fraction": f, "runs": len(rs), "target_rps": rs[0]["target_rps"],
             "achieved_rps": round(statistics.median(r["achieved_rps"] for r in rs), 1),
             "errors": sum(r["errors"] for r in rs), "latency_ms": lat,
             "shed": shed, "shed_share": _share(shed, sum(r.get("requests", 0) for r in rs)),
             "p99_spread": spread([r["latency_ms"]["p99"] for r in rs]),
             "p99_over_p50": round(lat["p99"] / lat["p50"], 1) if lat["p50"] else None,
             "seconds": round(sum(r.get("duration_s") or 0 for r in rs), 1)}
        if kind == "own" and rs[0].get("kind") == "shared":
            e["shared_fraction"] = rs[0]["fraction"]   # measured once, at that shared rate (within 3 % of this one)
        for p in ("p50", "p99_9"):
            vals = [r["latency_ms"][p] for r in rs if r["latency_ms"].get(p) is not None]
            if vals:
                e[f"{p}_spread"] = spread(vals)
        pool = pooled([m.get("latency_hist") for _, m in picked])
        if pool:
            e["pooled_latency_ms"] = pool
            if pool["p50"]:
                e["p99_over_p50"] = round(pool["p99"] / pool["p50"], 1)
        for key in ("cpu_ms_per_request", "own_cost_ms_per_request"):
            v = _median_of(rs, key)
            if v is not None:
                e[key] = v
        if rs[0].get("own_cost_basis"):
            e["own_cost_basis"] = rs[0]["own_cost_basis"]
        e.update(handoffs(rs))
        busy = [r["machine"]["busy_cores"] for r in rs if r.get("machine")]
        if busy:
            e["machine_busy_share"] = round(statistics.median(busy) / cores, 3)
            e["machine_busy_share_spread"] = {k: round(v / cores, 3) for k, v in spread(busy).items()}
        gcs = [r["gc"] for r in rs if r.get("gc")]
        if gcs:
            e["gc"] = {"pauses_per_s": round(statistics.median(g["pauses"] / max(r["wall"][1] - r["wall"][0], 1e-9)
                                                               for g, r in zip(gcs, [r for r in rs if r.get("gc")])), 1),
                       "p50_ms": statistics.median([g["p50_ms"] for g in gcs if g["p50_ms"] is not None] or [0]),
                       "max_ms": max((g["max_ms"] for g in gcs if g["max_ms"] is not None), default=None),
                       "paused_share": round(statistics.median(g["paused_share"] for g in gcs), 4)}
        out.append(e)
    return out
