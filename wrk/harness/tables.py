"""The per-login tables of results.md: the headline table (the one the README's results come from: throughput,
CPU, own cost and hand-offs per login) and own cost and hand-offs at every load the run measured (saturation,
each shared absolute rate, each fraction of the stack's own maximum)."""
from __future__ import annotations


def _fmt(v, spec: str) -> str:
    return "n/a" if v is None else format(v, spec)


def _own(e: dict) -> str:
    v = e.get("own_cost_ms_per_request")
    return "n/a" if v is None else f"{v:.3f}" + ("†" if e.get("own_cost_basis") == "openssl" else "")


def _handoffs(e: dict) -> str:
    v = e.get("switches_per_request")
    return "n/a" if v is None else f"{v:.1f}" + ("*" if e.get("threads_gone") else "")


def _warm(result: dict, c: str) -> str:
    """How long the stack needed to reach its steady cost at concurrency c (* = the cap, the rule not met). Where
    c had only one window after the warm-up by the rule at another concurrency, that warm-up's seconds."""
    ws = result.get("warmups") or []
    w = next((w for w in ws if str(w.get("concurrency")) == str(c)), None)
    after = ((w or {}).get("rule") or {}).get("after_concurrency")
    if after is not None:
        w = next((x for x in ws if x.get("concurrency") == after), w)
    return "n/a" if w is None else f"{w['seconds']:.0f}" + ("" if w.get("stable") else "*")


def shared_points(summary: dict) -> dict[float, dict]:
    """The shared absolute rates, one entry per rate (summary.open_loop_own_summary of kind "shared")."""
    return {o["target_rps"]: o for o in summary.get("open_loop_shared") or []}


def per_login_lines(ok: list[dict], noun: str = "login") -> list[str]:
    """The headline table and the own cost and hand-offs at every load; [] when nothing was measured. `noun` is
    what a request is (a refresh in the refresh scenario, else a login)."""
    plural = "refreshes" if noun == "refresh" else f"{noun}s"
    if not ok:
        return []
    fractions = sorted({o["fraction"] for r in ok for o in r["summary"].get("open_loop_own") or []})
    lines = [f"## Per {noun}", "",
             "The README's table. At saturation = at the concurrency of the stack's closed-loop maximum. *own "
             f"ms/{noun}* = the server's CPU per {noun} less its signing per token pair (`signing ms/pair` below; "
             f"† = OpenSSL's two signatures, the stack has no signbench); *hand-offs/{noun}* = scheduler switches of the "
             f"server's threads (voluntary + nonvoluntary, `/proc/<pid>/task/*/status`) per {noun}, each a thread "
             "parked or preempted (* = threads exited during the runs and their switches are not counted: a lower "
             "bound); *warm-up s* = the warm-up until the rule held (* = stopped at the cap), at that concurrency or, "
             "where it had one window after it, at the highest; "
             f"*CPU ÷ floor* = CPU ms/{noun} ÷ the floor's at the same concurrency (below)."
             + (" The open-loop columns are at those fractions of the stack's own maximum (medians of the runs)."
                if fractions else ""), "",
             f"| stack | {plural}/s [range] | at c | warm-up s | CPU ms/{noun} | own ms/{noun} | hand-offs/{noun} "
             "| CPU ÷ floor |" + "".join(f" own ms/{noun} {f:.0%} | hand-offs/{noun} {f:.0%} |" for f in fractions),
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |" + " ---: | ---: |" * len(fractions)]
    for r in ok:
        s = r["summary"]
        k = s["by_concurrency"][s["max_rps_at"]]
        own = {o["fraction"]: o for o in s.get("open_loop_own") or []}
        cells = []
        for f in fractions:
            e = own.get(f, {})
            cells += [_own(e), _handoffs(e)]
        lines.append(f"| {r['name']} | {k['rps']['median']:.0f} [{k['rps']['min']:.0f}–{k['rps']['max']:.0f}] | "
                     f"{s['max_rps_at']} | {_warm(r, s['max_rps_at'])} | {_fmt(k.get('cpu_ms_per_request'), '.3f')} | "
                     f"{_own(k)} | {_handoffs(k)} | "
                     f"{_x(((s.get('floor_ratio') or {}).get('by_concurrency', {}).get(s['max_rps_at']) or {}).get('cpu_ms_per_request'))} |"
                     + "".join(f" {c} |" for c in cells))
    shared = sorted({rate for r in ok for rate in shared_points(r["summary"])})
    if shared or fractions:
        lines += ["", f"Own ms/{noun} · hand-offs/{noun} at every load: saturation (closed loop), the same absolute "
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


def _ms(v) -> str:
    return "n/a" if v is None else f"{v:.1f}"


def _range(sp: dict | None, runs: int) -> str:
    return f"{sp['min']:.1f}–{sp['max']:.1f}" if sp and runs > 1 else ""


def _pct(v) -> str:
    return "n/a" if v is None else f"{v * 100:.0f}%"


def point_row(name: str, label: str, o: dict) -> str:
    """One open-loop point: its runs' requests pooled (p50, p99, p99.9; the medians of the runs' own percentiles
    in sets without pooled latencies), the range across runs of p99 and p99.9, the machine's busy share (median
    and range) and the collections."""
    lat = o.get("pooled_latency_ms") or o["latency_ms"]
    busy = o.get("machine_busy_share_spread")
    busy_cell = _pct(o.get("machine_busy_share")) + (f" [{busy['min'] * 100:.0f}–{busy['max'] * 100:.0f}%]"
                                                     if busy and o["runs"] > 1 else "")
    gc = o.get("gc")
    gcs = f"{gc['pauses_per_s']:.1f}/s, ≤{_fmt(gc['max_ms'], '.0f')} ms" if gc else ""
    runs = f"{o['runs']} × {o['seconds'] / o['runs']:.0f} s" if o.get("seconds") else str(o["runs"])
    return (f"| {name} | {label} | {o['target_rps']:.0f} | {o['achieved_rps']:.0f} | {runs} | "
            f"{_ms(lat.get('p50'))} | {_ms(lat.get('p99'))} | "
            f"{_ms(lat.get('p99_9'))} | {_range(o.get('p99_spread'), o['runs'])} | "
            f"{_range(o.get('p99_9_spread'), o['runs'])} | {_fmt(o.get('p99_over_p50'), '.1f')} | {busy_cell} | "
            f"{gcs} | {_shed(o)} | {o['errors']} |")


def _shed(o: dict) -> str:
    """503s answered at an open-loop point (the service shedding load) and their share of its requests."""
    n = o.get("shed") or 0
    return f"{n} ({o['shed_share'] * 100:.1f}%)" if n else "0"


def open_loop_lines(with_open: list[dict]) -> list[str]:
    """The open-loop tables: p99 at the shared absolute rates, stack by stack, then every point in detail."""
    shared = sorted({o["target_rps"] for r in with_open for o in r["summary"].get("open_loop_shared") or []})
    pooled = any(o.get("pooled_latency_ms") for r in with_open
                 for o in (r["summary"].get("open_loop_own") or []) + (r["summary"].get("open_loop_shared") or []))
    how = ("every request of the point's runs pooled" if pooled else "the median of the runs' percentiles")
    lines = ["## Open-loop latency (oha, constant arrival rate, from each request's intended start)", ""]
    if shared:
        lines += [f"The same absolute rates for every stack (fractions of the slowest stack's closed-loop maximum): "
                  f"p99 in ms ({how}), the range across runs and the achieved rate in brackets.", "",
                  "| stack | " + " | ".join(f"{t:.0f}/s" for t in shared) + " |",
                  "| --- | " + " | ".join("---:" for _ in shared) + " |"]
        for r in with_open:
            by = {o["target_rps"]: o for o in r["summary"].get("open_loop_shared") or []}
            cells = []
            for t in shared:
                o = by.get(t)
                if o is None:
                    cells.append("")
                    continue
                rng = _range(o.get("p99_spread"), o["runs"])
                cells.append(f"{_ms((o.get('pooled_latency_ms') or o['latency_ms']).get('p99'))}"
                             + (f" ({rng})" if rng else "") + f" [{o['achieved_rps']:.0f}]"
                             + (f" shed {_shed(o)}" if o.get("shed") else ""))
            lines.append(f"| {r['name']} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += [f"Every point (ms; p50, p99 and p99.9 of {how}; the p99's and p99.9's range across the runs beside "
              "them). `busy` is the machine's CPU in use during the runs, median [range] (server, oha and PostgreSQL "
              "on the same cores): open loop costs more CPU per request than wrk's closed loop, so a fraction of the "
              "closed-loop maximum is a higher share of the machine, and a queue at 90 %+ has a long tail whatever "
              "the server does. `GC` (with --gc-log): collections per second, and the longest pause. `shed`: answers "
              "503 (the service's pool wait or overload limit ran out: the contract's answer to more than it can take, "
              "counted here, not an error; a point that sheds did not hold its rate), and their share of the "
              "requests; `errors`: any other status or a socket error, which fails the stack.", "",
              "| stack | point | target/s | achieved/s | runs | p50 | p99 | p99.9 | p99 range | p99.9 range | p99/p50 "
              "| busy | GC | shed | errors |",
              "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in with_open:
        for o in r["summary"].get("open_loop_shared") or []:
            lines.append(point_row(r["name"], f"shared {o['target_rps']:.0f}/s", o))
        for o in r["summary"].get("open_loop_own") or []:
            same = f" (= shared {o['target_rps']:.0f}/s)" if o.get("shared_fraction") is not None else ""
            lines.append(point_row(r["name"], f"{o['fraction']:.0%}{same}", o))
    return lines + [""]


def _x(v) -> str:
    return "n/a" if v is None else f"{v:.2f}×"


def floor_lines(floor: dict | None, ok: list[dict]) -> list[str]:
    """The floor's own figures (a calibration target, not a stack) and every stack's as a ratio to them at the same
    load: per concurrency and per shared absolute rate."""
    if not floor:
        return []
    if floor.get("failed") or not floor.get("summary"):
        return ["## The floor", "", f"The floor got no number: {floor.get('failed') or 'not measured'}.", ""]
    fs = floor["summary"]
    conc = sorted(fs["by_concurrency"], key=int)
    shared = [o for o in fs.get("open_loop_shared") or []]
    lines = ["## The floor: what this machine and this harness allow", "",
             "`wrk/floor/`: axum and tokio answering `POST /token` by signing the same two tokens with rust-core's "
             "TokenSigner (same key, claims and signer), and nothing else — no database, no password, no session. It "
             "runs through the same phases as the stacks, interleaved with them; it is not one of them. Its own cost "
             "is HTTP and the request's JSON.", "",
             "| load | logins/s | CPU ms/login | own ms/login | hand-offs/login | p50 ms | p99 ms |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for c in conc:
        k = fs["by_concurrency"][c]
        lines.append(f"| c={c} | {k['rps']['median']:.0f} | {_fmt(k.get('cpu_ms_per_request'), '.3f')} | {_own(k)} | "
                     f"{_handoffs(k)} | {_ms(k['latency_ms'].get('p50'))} | {_ms(k['latency_ms'].get('p99'))} |")
    for o in shared:
        lat = o.get("pooled_latency_ms") or o["latency_ms"]
        lines.append(f"| {o['target_rps']:.0f}/s | {o['achieved_rps']:.0f} | {_fmt(o.get('cpu_ms_per_request'), '.3f')} | "
                     f"{_own(o)} | {_handoffs(o)} | {_ms(lat.get('p50'))} | {_ms(lat.get('p99'))} |")
    rated = [r for r in ok if (r["summary"].get("floor_ratio") or {}).get("by_concurrency")]
    if rated:
        rates = [o["target_rps"] for o in shared]
        lines += ["", "Each stack ÷ the floor at the same load: at each concurrency logins/s ÷ and CPU ms/login ÷; at "
                  "each shared rate p99 ÷ (pooled).", "",
                  "| stack | " + " | ".join(f"c={c} logins/s · CPU" for c in conc)
                  + "".join(f" | {t:.0f}/s p99" for t in rates) + " |",
                  "| --- |" + " ---: |" * (len(conc) + len(rates))]
        for r in rated:
            fr = r["summary"]["floor_ratio"]
            cells = [f"{_x((fr['by_concurrency'].get(c) or {}).get('rps'))} · "
                     f"{_x((fr['by_concurrency'].get(c) or {}).get('cpu_ms_per_request'))}" for c in conc]
            by_rate = {round(e["target_rps"], 1): e for e in fr.get("shared") or []}
            cells += [_x((by_rate.get(round(t, 1)) or {}).get("p99")) for t in rates]
            lines.append(f"| {r['name']} | " + " | ".join(cells) + " |")
    return lines + [""]
