#!/usr/bin/env python3
"""Compares two benchmark result sets, stack by stack and metric by metric.

    python3 wrk/compare.py results/<A>-local results/<B>-local    # two folders written by make bench
    make compare A=results/... B=results/...

For every stack in both sets and every metric both have: the two values, B ÷ A,
and whether the difference is inside the run-to-run spread. The spread is the
one each set recorded for its repeats (requests/s and CPU per request: min–max
of the repeats; start-up: of the starts; own signing ceiling and OpenSSL: of
their runs), taken relative to the median; a difference is "inside" when
|B ÷ A − 1| is no larger than the larger of the two relative spreads.
Metrics measured once per set (open-loop percentiles, memory, fly's burst)
have no spread of their own: "single" says so, and the ratio stands alone.
Exit status: 0, or 2 when a set cannot be read.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Value:
    value: float
    low: float | None = None   # the repeats' min and max, when the set recorded them
    high: float | None = None

    @property
    def rel_spread(self) -> float | None:
        if self.low is None or self.high is None or not self.value:
            return None
        return (self.high - self.low) / abs(self.value)


def load(path: str | Path) -> dict:
    p = Path(path)
    if p.is_dir():
        p = p / "results.json"
    try:
        data = json.loads(p.read_text())
    except (OSError, ValueError) as e:
        raise SystemExit(f"compare: cannot read {p}: {e}") from e
    if not isinstance(data, dict) or "stacks" not in data:
        raise SystemExit(f"compare: {p} is not a bench results.json (no 'stacks')")
    return data


def _spread(d: dict | None) -> Value | None:
    if not d or d.get("median") is None:
        return None
    return Value(d["median"], d.get("min"), d.get("max"))


def _runs(values: list[float] | None, best: float | None) -> Value | None:
    if best is None:
        return None
    if values and len(values) > 1:
        return Value(best, min(values), max(values))
    return Value(best)


def metrics(stack: dict) -> dict[str, Value]:
    """The comparable metrics of one stack's result, by name."""
    out: dict[str, Value] = {}
    s = stack.get("summary") or {}
    for c, bc in sorted((s.get("by_concurrency") or {}).items(), key=lambda kv: int(kv[0])):
        if (v := _spread(bc.get("rps"))) is not None:
            out[f"rps c={c}"] = v
        cpu = bc.get("cpu_ms_per_request_spread")
        raw = [r["cpu_ms_per_request"] for r in (stack.get("runs") or {}).get(c, [])
               if r.get("cpu_ms_per_request") is not None]
        if cpu:
            out[f"CPU ms/request c={c}"] = _spread(cpu)
        elif bc.get("cpu_ms_per_request") is not None:  # sets from before the spread was summarised
            out[f"CPU ms/request c={c}"] = _runs(raw, bc["cpu_ms_per_request"]) or Value(bc["cpu_ms_per_request"])
        for key, label in (("wrk_cpu_ms_per_request", "wrk CPU ms/request"),
                           ("pg_cpu_ms_per_request", "PostgreSQL CPU ms/request")):
            if bc.get(key) is not None:
                out[f"{label} c={c}"] = Value(bc[key])
    if s.get("startup_s"):
        out["start-up s"] = _spread(s["startup_s"])
    elif stack.get("startup_samples_s"):
        xs = stack["startup_samples_s"]
        out["start-up s"] = Value(statistics.median(xs), min(xs), max(xs))
    for key, label in (("rss_steady_mib", "RSS steady MiB"), ("rss_steady_mb", "RSS steady MiB"),
                       ("anon_steady_mib", "anonymous RSS steady MiB"), ("cgroup_peak_mib", "cgroup peak MiB")):
        if s.get(key) is not None and label not in out:
            out[label] = Value(s[key])
    own = stack.get("own_ceiling")
    if own:
        out["own token pairs/s per core"] = _runs(own.get("runs_token_pairs_per_s_per_core"),
                                                  own.get("token_pairs_per_s_per_core"))
    ossl = stack.get("openssl_ceiling")
    if ossl:
        out["OpenSSL signatures/s per core"] = _runs(ossl.get("runs_signs_per_s_per_core"),
                                                     ossl.get("signs_per_s_per_core"))
    own_summary = s.get("open_loop_own")
    for o in s.get("open_loop") or []:
        p99 = (o.get("latency_ms") or {}).get("p99")
        if p99 is not None and (o.get("kind") == "shared" or own_summary is None):
            tag = f"{o['target_rps']:.0f}/s" if o.get("kind") == "shared" else f"{o['fraction']:.0%} of own max"
            out[f"open-loop p99 ms @ {tag}"] = Value(p99)
    for o in own_summary or []:   # repeated runs at each fraction: the median, weighed against the repeats' range
        sp = o["p99_spread"]
        out[f"open-loop p99 ms @ {o['fraction']:.0%} of own max"] = (
            Value(sp["median"], sp["min"], sp["max"]) if o["runs"] > 1 else Value(sp["median"]))
    fly = s.get("fly") or {}
    for key, label in (("sustained_rps", "fly sustained rps"), ("burst_s", "fly burst seconds"),
                       ("startup_empty_balance_s", "fly start-up from empty balance s")):
        if fly.get(key) is not None:
            out[label] = Value(fly[key])
    return {k: v for k, v in out.items() if v is not None}


def verdict(a: Value, b: Value) -> str:
    """'inside' / 'OUTSIDE' the larger relative spread of the two sets, or 'single' without one."""
    spreads = [x for x in (a.rel_spread, b.rel_spread) if x is not None]
    if not spreads or not a.value:
        return "single"
    return "inside" if abs(b.value / a.value - 1) <= max(spreads) else "OUTSIDE"


def compare(a: dict, b: dict) -> list[dict]:
    rows = []
    sa = {s["name"]: s for s in a["stacks"]}
    sb = {s["name"]: s for s in b["stacks"]}
    for name in [n for n in sa if n in sb]:
        if sa[name].get("failed") or sb[name].get("failed"):
            rows.append({"stack": name, "metric": "failed", "a": sa[name].get("failed"), "b": sb[name].get("failed")})
            continue
        ma, mb = metrics(sa[name]), metrics(sb[name])
        for metric in [m for m in ma if m in mb]:
            va, vb = ma[metric], mb[metric]
            spreads = [x for x in (va.rel_spread, vb.rel_spread) if x is not None]
            rows.append({"stack": name, "metric": metric, "a": va.value, "b": vb.value,
                         "ratio": round(vb.value / va.value, 3) if va.value else None,
                         "spread": round(max(spreads), 3) if spreads else None, "verdict": verdict(va, vb)})
    return rows


def render(rows: list[dict], a_name: str, b_name: str) -> str:
    lines = [f"A = {a_name}", f"B = {b_name}", "",
             "| stack | metric | A | B | B/A | run-to-run spread | difference |",
             "| --- | --- | ---: | ---: | ---: | ---: | --- |"]
    for r in rows:
        if r["metric"] == "failed":
            lines.append(f"| {r['stack']} | failed | {r['a'] or 'ok'} | {r['b'] or 'ok'} | | | |")
            continue
        ratio = "n/a" if r["ratio"] is None else f"{r['ratio']:.3f}"
        sp = "n/a" if r["spread"] is None else f"±{r['spread'] * 100:.1f} %"
        lines.append(f"| {r['stack']} | {r['metric']} | {r['a']:g} | {r['b']:g} | {ratio} | {sp} | {r['verdict']} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a", help="result folder (or its results.json): the baseline")
    ap.add_argument("b", help="result folder (or its results.json): compared with A")
    ap.add_argument("--json", action="store_true", help="rows as JSON instead of a Markdown table")
    args = ap.parse_args(argv)
    try:
        a, b = load(args.a), load(args.b)
    except SystemExit as e:
        print(e, file=sys.stderr)
        return 2
    rows = compare(a, b)
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        print(render(rows, args.a, args.b), end="")
        if not rows:
            print("(no stack in both sets)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
