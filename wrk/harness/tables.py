"""The per-login tables of results.md: the headline table (the one the README's results come from: throughput,
CPU, own cost and hand-offs per login) and own cost and hand-offs at every load the run measured (saturation,
each shared absolute rate, each fraction of the stack's own maximum)."""
from __future__ import annotations

import statistics


def _fmt(v, spec: str) -> str:
    return "n/a" if v is None else format(v, spec)


def _own(e: dict) -> str:
    v = e.get("own_cost_ms_per_request")
    return "n/a" if v is None else f"{v:.3f}" + ("†" if e.get("own_cost_basis") == "openssl" else "")


def _handoffs(e: dict) -> str:
    v = e.get("switches_per_request")
    return "n/a" if v is None else f"{v:.1f}" + ("*" if e.get("threads_gone") else "")


def shared_points(summary: dict) -> dict[float, dict]:
    """The shared absolute rates, one entry per rate: the medians of its runs' CPU, own cost and hand-offs."""
    by: dict[float, list[dict]] = {}
    for o in summary.get("open_loop") or []:
        if o.get("kind") == "shared":
            by.setdefault(o["target_rps"], []).append(o)
    out = {}
    for rate, rs in by.items():
        e = {}
        for key in ("cpu_ms_per_request", "own_cost_ms_per_request", "switches_per_request"):
            vals = [r[key] for r in rs if r.get(key) is not None]
            if vals:
                e[key] = round(statistics.median(vals), 4)
        out[rate] = e
    return out


def per_login_lines(ok: list[dict]) -> list[str]:
    """The headline table and the own cost and hand-offs at every load; [] when nothing was measured."""
    if not ok:
        return []
    fractions = sorted({o["fraction"] for r in ok for o in r["summary"].get("open_loop_own") or []})
    lines = ["## Per login", "",
             "The README's table. At saturation = at the concurrency of the stack's closed-loop maximum. *own "
             "ms/login* = the server's CPU per login less its signing per token pair (`signing ms/pair` below; † = "
             "OpenSSL's two signatures, the stack has no signbench); *hand-offs/login* = scheduler switches of the "
             "server's threads (voluntary + nonvoluntary, `/proc/<pid>/task/*/status`) per login, each a thread "
             "parked or preempted (* = threads exited during the runs and their switches are not counted: a lower "
             "bound)." + (" The open-loop columns are at those fractions of the stack's own maximum (medians of "
                          "the runs)." if fractions else ""), "",
             "| stack | logins/s [range] | at c | CPU ms/login | own ms/login | hand-offs/login | "
             + " | ".join(f"own ms/login {f:.0%} | hand-offs/login {f:.0%}" for f in fractions) + (" |" if fractions else "|"),
             "| --- | ---: | ---: | ---: | ---: | ---: |" + " ---: | ---: |" * len(fractions)]
    for r in ok:
        s = r["summary"]
        k = s["by_concurrency"][s["max_rps_at"]]
        own = {o["fraction"]: o for o in s.get("open_loop_own") or []}
        cells = []
        for f in fractions:
            e = own.get(f, {})
            cells += [_own(e), _handoffs(e)]
        lines.append(f"| {r['name']} | {k['rps']['median']:.0f} [{k['rps']['min']:.0f}–{k['rps']['max']:.0f}] | "
                     f"{s['max_rps_at']} | {_fmt(k.get('cpu_ms_per_request'), '.3f')} | {_own(k)} | {_handoffs(k)} |"
                     + "".join(f" {c} |" for c in cells))
    shared = sorted({rate for r in ok for rate in shared_points(r["summary"])})
    if shared or fractions:
        lines += ["", "Own ms/login · hand-offs/login at every load: saturation (closed loop), the same absolute "
                  "rates for every stack, and the fractions of each stack's own maximum (open loop: each request "
                  "arrives on its own, so a wake-up and its hand-offs per request instead of batches).", "",
                  "| stack | saturation | " + " | ".join(f"{t:.0f}/s" for t in shared)
                  + "".join(f" | {f:.0%}" for f in fractions) + " |",
                  "| --- | ---: |" + " ---: |" * (len(shared) + len(fractions))]
        for r in ok:
            s = r["summary"]
            k = s["by_concurrency"][s["max_rps_at"]]
            sp = shared_points(s)
            own = {o["fraction"]: o for o in s.get("open_loop_own") or []}
            cells = [f"{_own(sp[t])} · {_handoffs(sp[t])}" if t in sp else "" for t in shared]
            cells += [f"{_own(own[f])} · {_handoffs(own[f])}" if f in own else "" for f in fractions]
            lines.append(f"| {r['name']} | {_own(k)} · {_handoffs(k)} |" + "".join(f" {c} |" for c in cells))
    return lines + [""]
