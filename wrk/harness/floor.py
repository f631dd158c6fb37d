"""The floor (issue 40 item 3): wrk/floor/, the smallest HTTP server that does what every stack must do per login —
read the request, sign the same two tokens with rust-core's TokenSigner (same key, claims and signer) — and nothing
else. The runner starts it like a stack (same cgroup, same phases, interleaved with the stacks) as a calibration
target: its figures are what this machine and this harness allow, it is not in the stacks' tables, and every
stack's figures are also given as a ratio to the floor's at the same load."""
from __future__ import annotations

from stackctl import ROOT, Stack

NAME = "floor"


def floor_stack() -> Stack:
    """The floor as the runner's stacks are described (stack.json's keys), so it goes through the same phases. Its
    signbench is rust-core's: it signs with the same TokenSigner, so its own cost is HTTP and the request's JSON."""
    return Stack(NAME, ROOT / "wrk" / "floor", {
        "name": NAME,
        "description": "the floor: axum + tokio, POST /token signs the two tokens with simple-auth-core's "
                       "TokenSigner; no database, no password, no session",
        "build": ["cargo", "build", "--release", "--locked", "-p", "simple-auth-floor", "-p", "simple-auth-core"],
        "run": ["../../target/release/simple-auth-floor"],
        "signbench": ["../../target/release/signbench"],
        "artifact": "../../target/release/simple-auth-floor",
        "sources": ["src", "Cargo.toml", "../../rust-core", "../../Cargo.toml", "../../Cargo.lock"],
    })


def _ratio(a, b, nd: int = 2):
    return round(a / b, nd) if a is not None and b else None


def floor_ratios(summary: dict, floor: dict) -> dict:
    """A stack's figures ÷ the floor's at the same load: per concurrency (requests/s, CPU and own cost per login,
    hand-offs per login, p99) and per shared absolute rate (pooled p50 and p99, CPU per login). {} without a floor."""
    if not summary or not floor:
        return {}
    out: dict = {"by_concurrency": {}, "shared": []}
    for c, s in summary.get("by_concurrency", {}).items():
        f = floor.get("by_concurrency", {}).get(c)
        if not f:
            continue
        out["by_concurrency"][c] = {
            "rps": _ratio(s["rps"]["median"], f["rps"]["median"]),
            "cpu_ms_per_request": _ratio(s.get("cpu_ms_per_request"), f.get("cpu_ms_per_request")),
            "own_cost_ms_per_request": _ratio(s.get("own_cost_ms_per_request"), f.get("own_cost_ms_per_request")),
            "switches_per_request": _ratio(s.get("switches_per_request"), f.get("switches_per_request")),
            "p99": _ratio(s["latency_ms"].get("p99"), f["latency_ms"].get("p99")),
        }
    floor_shared = {round(o["target_rps"], 1): o for o in floor.get("open_loop_shared") or []}
    for o in summary.get("open_loop_shared") or []:
        f = floor_shared.get(round(o["target_rps"], 1))
        if not f:
            continue
        lat, flat = o.get("pooled_latency_ms") or o["latency_ms"], f.get("pooled_latency_ms") or f["latency_ms"]
        out["shared"].append({"target_rps": o["target_rps"], "p50": _ratio(lat.get("p50"), flat.get("p50")),
                              "p99": _ratio(lat.get("p99"), flat.get("p99")),
                              "cpu_ms_per_request": _ratio(o.get("cpu_ms_per_request"), f.get("cpu_ms_per_request"))})
    return out
