#!/usr/bin/env python3
"""Compares two benchmark result sets, stack by stack and metric by metric.

    python3 wrk/compare.py results/<A>-local results/<B>-local    # two folders written by make bench
    make compare A=results/... B=results/...
    python3 wrk/compare.py --own-cost results/<rsa-2048> results/<p-256> results/<ed25519> ...   # by key type

For every stack in both sets and every metric both have: the two values, B ÷ A,
and whether the difference is inside the run-to-run spread. The spread is the
one each set recorded for its repeats (requests/s and CPU per request: min–max
of the repeats; start-up: of the starts; own signing ceiling and OpenSSL: of
their runs), taken relative to the median; a difference is "inside" when
|B ÷ A − 1| is no larger than the larger of the two relative spreads.
Metrics measured once per set (open-loop percentiles, memory, fly's burst)
have no spread of their own: "single" says so, and the ratio stands alone.

Each set names the key type its stacks signed with (`--key-type`; sets from
before it record `key_bits`, RSA). Between sets of different key types, CPU
per request, requests/s and the signing ceilings differ by design; the
stack's own cost per request (CPU per request minus its signing per token
pair) is what should agree. `--own-cost` puts that one metric of any number
of sets side by side, stack by stack and concurrency by concurrency.
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


def key_type(data: dict) -> str | None:
    """The key type a set's stacks signed with: `key_type` in its settings, or `rsa-<key_bits>` in older sets."""
    st = (data.get("environment") or {}).get("settings") or {}
    if st.get("key_type"):
        return st["key_type"]
    if st.get("key_bits"):
        return f"rsa-{st['key_bits']}"
    return None


def key_label(data: dict) -> str:
    """"p-256 (ES256)", "rsa-2048 (RS256)" (older sets: always RS256), or "key type unknown"."""
    kt = key_type(data)
    if kt is None:
        return "key type unknown"
    alg = ((data.get("environment") or {}).get("settings") or {}).get("alg") or ("RS256" if kt.startswith("rsa-") else None)
    return f"{kt} ({alg})" if alg else kt


def own_costs(stack: dict) -> dict[str, Value]:
    """Per concurrency, the stack's own cost per request (ms CPU): as the set summarised it, or, in sets from
    before it did, its CPU per request minus its own signing time per token pair (signbench), the repeats' range
    shifted alike."""
    out: dict[str, Value] = {}
    s = stack.get("summary") or {}
    pair_ms = (stack.get("own_ceiling") or {}).get("pair_ms")
    for c, bc in (s.get("by_concurrency") or {}).items():
        if bc.get("own_cost_ms_per_request") is not None:
            sp = bc.get("own_cost_ms_per_request_spread") or {}
            out[c] = Value(bc["own_cost_ms_per_request"], sp.get("min"), sp.get("max"))
        elif pair_ms is not None and bc.get("cpu_ms_per_request") is not None:
            sp = bc.get("cpu_ms_per_request_spread") or {}
            lo, hi = sp.get("min"), sp.get("max")
            out[c] = Value(round(bc["cpu_ms_per_request"] - pair_ms, 4), None if lo is None else round(lo - pair_ms, 4),
                           None if hi is None else round(hi - pair_ms, 4))
    return out


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
        if (own := own_costs(stack).get(c)) is not None:
            out[f"own cost ms/request c={c}"] = own
        if (hand := _spread(bc.get("switches_per_request_spread"))) is not None:
            out[f"hand-offs/request c={c}"] = hand
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
        if own.get("pair_ms") is not None:
            out["own signing ms/pair"] = Value(own["pair_ms"])
    ossl = stack.get("openssl_ceiling")
    if ossl:
        out["OpenSSL signatures/s per core"] = _runs(ossl.get("runs_signs_per_s_per_core"),
                                                     ossl.get("signs_per_s_per_core"))
    own_summary = s.get("open_loop_own")
    shared_summary = s.get("open_loop_shared")
    for o in s.get("open_loop") or []:
        p99 = (o.get("latency_ms") or {}).get("p99")
        if p99 is not None and ((o.get("kind") == "shared" and shared_summary is None) or
                                (o.get("kind") != "shared" and own_summary is None)):
            tag = f"{o['target_rps']:.0f}/s" if o.get("kind") == "shared" else f"{o['fraction']:.0%} of own max"
            out[f"open-loop p99 ms @ {tag}"] = Value(p99)
    # Repeated runs at each point: the pooled p99 where the set pooled its runs' requests, else the runs' median,
    # weighed against the runs' range; own cost and hand-offs per request at the point.
    points = [(f"{o['target_rps']:.0f}/s", o) for o in shared_summary or []]
    points += [(f"{o['fraction']:.0%} of own max", o) for o in own_summary or []]
    for tag, o in points:
        sp = o["p99_spread"]
        p99 = (o.get("pooled_latency_ms") or {}).get("p99", sp["median"])
        out[f"open-loop p99 ms @ {tag}"] = Value(p99, sp["min"], sp["max"]) if o["runs"] > 1 else Value(p99)
        for key, label in (("own_cost_ms_per_request", "own cost ms/request"),
                           ("switches_per_request", "hand-offs/request")):
            if o.get(key) is not None:
                out[f"{label} @ {tag}"] = Value(o[key])
    cap = s.get("capacity") or {}
    if cap.get("rps"):
        # A range from repeated steps (every run held .. some run held); a one-run bisection has no range.
        lo, high = cap.get("range_rps") or (None, None)
        out[f"capacity rps (p99 < {cap.get('p99_under_ms', 100):.0f} ms)"] = Value(cap["rps"], lo, high)
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
    if a.get("floor") and b.get("floor"):   # the calibration target, compared like a stack under its own name
        sa["floor (calibration)"], sb["floor (calibration)"] = a["floor"], b["floor"]
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


def render(rows: list[dict], a_name: str, b_name: str, a: dict | None = None, b: dict | None = None) -> str:
    la, lb = (key_label(a), key_label(b)) if a is not None and b is not None else (None, None)
    lines = [f"A = {a_name}" + (f", {la}" if la else ""), f"B = {b_name}" + (f", {lb}" if lb else ""), ""]
    if la and key_type(a) != key_type(b):
        lines += ["The two sets signed with different key types: CPU per request, requests/s and the signing "
                  "figures differ by design; the own cost per request (CPU per request minus the stack's signing) "
                  "is the comparable one.", ""]
    lines += [
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


def own_cost_rows(sets: list[dict]) -> list[dict]:
    """Every stack of any set, at every concurrency of any set: its own cost per request in each set (None where
    the set has none)."""
    names = list(dict.fromkeys(s["name"] for d in sets for s in d["stacks"]))
    rows = []
    for name in names:
        per_set = [next((s for s in d["stacks"] if s["name"] == name and not s.get("failed")), None) for d in sets]
        costs = [own_costs(s) if s else {} for s in per_set]
        pair = [(s.get("own_ceiling") or {}).get("pair_ms") if s else None for s in per_set]
        for c in sorted({c for x in costs for c in x}, key=int):
            rows.append({"stack": name, "concurrency": int(c), "signing_ms_per_pair": pair,
                         "own_cost": [x.get(c) for x in costs]})
    return rows


def render_own_cost(rows: list[dict], names: list[str], sets: list[dict]) -> str:
    lines = ["Own cost per request (ms CPU) = server CPU per request − the stack's own signing per token pair "
             "(signbench), by key type, at each concurrency; [the repeats' range]. The first row of each stack is "
             "that signing time per pair.", ""]
    lines += [f"- set {i + 1}: {n}, {key_label(d)}" for i, (n, d) in enumerate(zip(names, sets))] + [""]
    lines += ["| stack | | " + " | ".join(key_label(d) for d in sets) + " |",
              "| --- | --- | " + " | ".join("---:" for _ in sets) + " |"]
    seen = set()
    for r in rows:
        if r["stack"] not in seen:
            seen.add(r["stack"])
            sig = " | ".join("" if p is None else f"{p:.3f}" for p in r["signing_ms_per_pair"])
            lines.append(f"| {r['stack']} | signing ms/pair | {sig} |")
        cells = []
        for v in r["own_cost"]:
            if v is None:
                cells.append("")
            else:
                rng = f" [{v.low:.3f}–{v.high:.3f}]" if v.low is not None and v.high is not None and v.low != v.high else ""
                cells.append(f"{v.value:.3f}{rng}")
        lines.append(f"| {r['stack']} | own ms/req c={r['concurrency']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sets", nargs="+", metavar="SET",
                    help="result folders (or their results.json): A, the baseline, and B, compared with A; with "
                         "--own-cost, any number")
    ap.add_argument("--json", action="store_true", help="rows as JSON instead of a Markdown table")
    ap.add_argument("--own-cost", action="store_true",
                    help="each stack's own cost per request (CPU per request minus its signing) in every set, side "
                         "by side: the sets of one commit run with different --key-type")
    args = ap.parse_args(argv)
    if not args.own_cost and len(args.sets) != 2:
        ap.error("two sets to compare (A and B); any number with --own-cost")
    try:
        sets = [load(p) for p in args.sets]
    except SystemExit as e:
        print(e, file=sys.stderr)
        return 2
    if args.own_cost:
        rows = own_cost_rows(sets)
        if args.json:
            print(json.dumps([{**r, "own_cost": [None if v is None else v.__dict__ for v in r["own_cost"]],
                               "key_types": [key_type(d) for d in sets]} for r in rows], indent=1))
        else:
            print(render_own_cost(rows, args.sets, sets), end="")
        return 0
    a, b = sets
    rows = compare(a, b)
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        print(render(rows, args.sets[0], args.sets[1], a, b), end="")
        if not rows:
            print("(no stack in both sets)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
