"""Reports: results.md (the tables) and the charts (rps.png, latency.png, rss.png)."""
from __future__ import annotations

from pathlib import Path

from harness.keys import OPENSSL_SPEED, key_label, recorded_key_type
from harness.tables import floor_lines, open_loop_lines, per_login_lines


def describe_limits(limits: dict) -> str:
    parts = []
    if limits.get("cpus"):
        parts.append(f"{limits['cpus']:g} CPU")
    if limits.get("cpuset"):
        parts.append(f"CPU {limits['cpuset']} alone (cpuset; wrk and PostgreSQL on {limits.get('others_cpus', 'the rest')})")
    if limits.get("shared"):
        sh = limits["shared"]
        parts.append(f"fly shared vCPU: {sh['baseline_us'] / 1000:g} ms per {sh['period_us'] / 1000:g} ms period "
                     f"baseline, balance up to {sh['max_balance_s']:g} s, 100 % of one CPU while it lasts")
    by_stack = limits.get("memory_mb_by_stack") or {}
    if by_stack:
        # Each stack's own fly machine (its fly/STACK.toml); memory_mb for the rest (the floor).
        sizes: dict[int, list[str]] = {}
        for name, mb in sorted(by_stack.items()):
            sizes.setdefault(mb, []).append(name)
        each = "; ".join(f"{mb} MiB {', '.join(names)}" for mb, names in sorted(sizes.items()))
        rest = f"; {limits['memory_mb']} MiB the rest" if limits.get("memory_mb") else ""
        parts.append(f"memory as in fly/STACK.toml: {each}{rest}")
    elif limits.get("memory_mb"):
        parts.append(f"{limits['memory_mb']} MiB")
    return ", ".join(parts) or "none"


def fmt(v, spec: str = ".0f", na: str = "n/a") -> str:
    return na if v is None else format(v, spec)


def pct(v) -> str:
    return "n/a" if v is None else f"{v * 100:.0f}%"


def signature_name(ceiling: dict) -> str:
    """What an OpenSSL ceiling measured: "RSA-2048", "ECDSA P-256", "Ed25519" (sets before issue 22: RSA)."""
    if ceiling.get("signature"):
        return ceiling["signature"]
    kt = recorded_key_type(ceiling)
    return OPENSSL_SPEED[kt][2] if kt in OPENSSL_SPEED else "RSA"


def capacity_lines(caps: list[dict]) -> list[str]:
    """The capacity table: per stack the range of constant rates with p99 under the limit (schedule.capacity_range)
    and the runs behind its ends. Sets from before the repeated steps (one run per step) have no range: their
    figure is the one-run bisection's, and the table says so."""
    if not caps:
        return []
    c0 = caps[0]["summary"]["capacity"]
    if "range_rps" not in c0:
        lines = [f"The highest constant rate with p99 under {c0['p99_under_ms']:.0f} ms (bisection from the runs "
                 f"above, {c0['steps']} more single runs of {c0['seconds_per_step']} s; the answer lies between it "
                 "and the lowest rate that failed, and each step is one run's p99, so it is not in the Per login "
                 "table):", "",
                 "| stack | sustained/s | of closed-loop max | lowest failed/s |", "| --- | ---: | ---: | ---: |"]
        for r in caps:
            c = r["summary"]["capacity"]
            lines.append(f"| {r['name']} | {c['rps']:.0f} | {pct(c['of_closed_loop_max'])} | "
                         f"{c['next_failed_rps']:.0f} |")
        return lines + [""]
    lines = [f"Capacity, p99 under {c0['p99_under_ms']:.0f} ms, as a range (bisection from the runs above, "
             f"steps: {c0['steps']}, each up to {c0['runs_per_step']} runs of {c0['seconds_per_step']} s; {c0['rule']}). "
             "*Every run* is the highest rate that held in all its runs with no lower rate failing; *some run* the "
             "highest that held in at least one; *first failed* the lowest rate with a run that did not hold. "
             "Runs held/made at each end in brackets; a range, so not in the Per login table:", "",
             "| stack | every run/s | some run/s | first failed/s | every run ÷ closed-loop max |",
             "| --- | ---: | ---: | ---: | ---: |"]

    def cell(c: dict, rate: float | None) -> str:
        if rate is None:
            return "–"
        at = next((x for x in c.get("rates") or [] if x["target_rps"] == rate), None)
        return f"{rate:.0f}" + (f" ({at['held']}/{at['runs']})" if at else "")
    for r in caps:
        c = r["summary"]["capacity"]
        lo, high = c["range_rps"]
        lines.append(f"| {r['name']} | {cell(c, lo) if lo else '–'} | {cell(c, high) if high else '–'} | "
                     f"{cell(c, c.get('next_failed_rps'))} | {pct(c['of_closed_loop_max'])} |")
    return lines + [""]


def write_markdown(path: Path, env: dict, ceiling: dict | None, results: list[dict], order: list | None = None,
                   floor: dict | None = None) -> str:
    st = env["settings"]
    cpu = env.get("cpu") or {}
    flags = ", ".join(f for f, on in (cpu.get("crypto_flags") or {}).items() if on) or "n/a"
    key_type = recorded_key_type(st)
    lines = [
        f"# simple-auth benchmark — {st['profile']}, scenario `{st['scenario']}`, {key_label(key_type, st.get('alg'))}",
        "",
        f"{env['date_utc']} · {env['cpu_model']}"
        + (f" (family {cpu.get('family')} model {cpu.get('model')} stepping {cpu.get('stepping')})" if cpu else "")
        + f" · {env['cores']} cores · {env['memory_gib']} GiB · "
        f"Linux {env['kernel']} · commit `{(env['commit'] or '?')[:10]}`{' (dirty)' if env['dirty'] else ''}",
        "",
        f"Crypto-relevant CPU flags: {flags}.",
        "",
        f"Settings: concurrency {', '.join(map(str, st['concurrency']))}; {st['repeats']} × {st['duration_s']} s each, "
        f"concurrencies and stacks interleaved round-robin, each run after a {st.get('rewarm_s', 0)} s re-warm at its "
        f"concurrency, after a {st['primer_s']} s primer and a warm-up "
        + ("at the highest concurrency (one window at the others) " if st.get("warmup_schedule") else
           "at each concurrency ") + "until "
        + (f"{st['warmup_criterion'].split(', at most')[0]}, {st.get('warmup_window_s', '?')} s windows (at most "
           if "median" in st.get("warmup_criterion", "") else
           f"two {st.get('warmup_window_s', '?')} s windows agree on CPU per request within 3 % (at most ")
        + f"{st.get('warmup_cap_s', st.get('warmup_s'))} s); wrk {st['wrk_threads']} threads; "
        f"pool {st['db_pool_size']}; server limits: {describe_limits(st['limits'])}; wrong passwords {st['wrong_share']:.0%}. "
        "Throughput counts 200 answers only. Median of the repeats, [min–max] beside it.",
        "",
    ]
    if ceiling and ceiling.get("samples"):
        sp = ceiling["spread"]
        lines += [f"The run's ceiling ({ceiling['tool']}): {ceiling['signs_per_s_per_core']:.0f} "
                  f"{signature_name(ceiling)} signatures/s per core [{sp['min']:.0f}–{sp['max']:.0f}] = "
                  f"{ceiling['token_pairs_per_s_per_core']:.0f} token pairs/s per core, the median of "
                  f"{len(ceiling['samples'])} samples through the run (" + ", ".join(
                      f"{x['at']} {x['signs_per_s_per_core']:.0f}" for x in ceiling["samples"])
                  + "; each the best of its readings). Every crypto share and every own cost without a signbench "
                  "below divides by it, the same for every stack.", ""]
    elif ceiling:
        lines += [f"Ceiling at the start of the run ({ceiling['tool']}, best of "
                  f"{len(ceiling.get('runs_signs_per_s_per_core') or [1])}): {ceiling['signs_per_s_per_core']:.0f} "
                  f"{signature_name(ceiling)} signatures/s per core = {ceiling['token_pairs_per_s_per_core']:.0f} "
                  f"token pairs/s per core ({ceiling['token_pairs_per_s_all_cores']:.0f} on all {env['cores']} cores, "
                  "if nothing else ran)." + (f" At the end, every server stopped: {ceiling['end_of_run']['signs_per_s_per_core']:.0f}"
                                             f" ({ceiling['end_of_run']['ratio_to_start']:.0%} of the start): the "
                                             "machine's own drift during the run." if ceiling.get("end_of_run") else ""),
                  ""]
    owned = [r for r in results if r.get("openssl_ceiling") or r.get("own_ceiling") or r.get("own_ceiling_error")]
    if owned:
        lines += ["OpenSSL's sample right before each stack, and each stack's own ceiling (`signbench`: the service's "
                  "own signer, settings and key issue token pairs on one thread; per CPU second of that thread; the "
                  "median of its samples — before the stack, before each repeat of the sweep, before the open loop and at "
                  "the end of the run — each the fastest of its runs, "
                  "all of them in results.json). Own share and own cost divide by the stack's own ceiling, crypto "
                  "share by the run's:", "",
                  f"| stack | OpenSSL {OPENSSL_SPEED[key_type][2] + ' ' if key_type in OPENSSL_SPEED else ''}"
                  "signatures/s per core | own provider | own token pairs/s per core | own ms per pair "
                  "| own vs OpenSSL (2 signatures) |",
                  "| --- | ---: | --- | ---: | ---: | ---: |"]
        for r in owned:
            c = r.get("openssl_ceiling") or ceiling
            signs = fmt(c["signs_per_s_per_core"] if c else None)
            o = r.get("own_ceiling")
            if not o:
                why = f"failed: {r['own_ceiling_error'][:120]}" if r.get("own_ceiling_error") else "no signbench"
                lines.append(f"| {r['name']} | {signs} | {why} | n/a | n/a | n/a |")
                continue
            run_c = ceiling or c
            vs = f"{2 * run_c['sign_ms'] / o['pair_ms']:.0%}" if run_c else "n/a"
            lines.append(f"| {r['name']} | {signs} | {o['provider']} | {o['token_pairs_per_s_per_core']:.0f} | "
                         f"{o['pair_ms']:.3f} | {vs} |")
        lines.append("")
    ok = [r for r in results if not r.get("failed") and r.get("summary")]
    conc = sorted({int(c) for r in ok for c in r["summary"]["by_concurrency"]})
    lines += per_login_lines(ok, "refresh" if st["scenario"] == "refresh" else "login")
    lines += floor_lines(floor, ok)
    lines += ["## Throughput (closed loop, wrk: 200 answers/s)", "",
              "| stack | " + " | ".join(f"c={c}" for c in conc) + " | errors |",
              "| --- | " + " | ".join("---:" for _ in conc) + " | ---: |"]
    for r in ok:
        bc = r["summary"]["by_concurrency"]
        cells = []
        for c in conc:
            s = bc.get(str(c))
            cells.append(f"{s['rps']['median']:.0f} [{s['rps']['min']:.0f}–{s['rps']['max']:.0f}]" if s else "")
        lines.append(f"| {r['name']} | " + " | ".join(cells) + f" | {sum(s['errors'] for s in bc.values())} |")
    lines.append("")

    with_open = [r for r in ok if r["summary"].get("open_loop")]
    if with_open:
        lines += open_loop_lines(with_open)
        lines += capacity_lines([r for r in with_open if r["summary"].get("capacity")])

    lines += ["## Cost (at each stack's highest-throughput concurrency)", "",
              "| stack | c | server CPU ms/req | signing ms/pair | own cost ms/req | wrk CPU ms/req "
              "| PostgreSQL CPU ms/req | idle cores | steal cores | crypto share | own share | start-up s "
              "| artifact MiB | build s |",
              "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in ok:
        s = r["summary"]
        k = s["by_concurrency"][s["max_rps_at"]]
        m = k.get("machine") or {}
        lines.append(
            f"| {r['name']} | {s['max_rps_at']} | {fmt(k.get('cpu_ms_per_request'), '.3f')} | "
            f"{signing_cell(r, ceiling)} | {own_cost_cell(k)} | "
            f"{fmt(k.get('wrk_cpu_ms_per_request'), '.3f')} | {fmt(k.get('pg_cpu_ms_per_request'), '.3f')} | "
            f"{fmt(m.get('idle_cores'), '.2f')} | {fmt(m.get('steal_cores'), '.2f')} | {pct(k.get('crypto_share'))} | "
            f"{pct(k.get('own_share'))} | {fmt(r.get('startup_s'), '.2f')} | "
            f"{fmt(r['artifact_bytes'] / 2**20 if r.get('artifact_bytes') else None, '.1f')} | {fmt(r.get('build_s'), '.0f')} |")
    with_own = [r for r in ok if any(k.get("own_cost_ms_per_request") is not None
                                     for k in r["summary"]["by_concurrency"].values())]
    if with_own:
        lines += ["", f"## Own cost per request (ms CPU): server CPU per request minus its signing, "
                      f"{key_label(key_type, st.get('alg'))}", "",
                  "What each stack spends on a request apart from signing its token pair (signing ms/pair: the "
                  "service's own signer minting a pair, claims, `at_hash` and both signatures, on one thread, "
                  "`signbench`): HTTP, the request's JSON, the pool and PostgreSQL's client, the password check, the "
                  "answer. It hardly depends on the key type, and it is measured best where the signature is cheap "
                  "(P-256, Ed25519): there the signing is a small part of the CPU per request, and the difference of "
                  "two numbers of which one is most of the other no longer amplifies their errors. Each cell: "
                  "CPU per request → own cost [the repeats' range].", "",
                  "| stack | signing ms/pair | " + " | ".join(f"c={c}" for c in conc) + " |",
                  "| --- | ---: | " + " | ".join("---:" for _ in conc) + " |"]
        for r in with_own:
            bc = r["summary"]["by_concurrency"]
            cells = []
            for c in conc:
                k = bc.get(str(c)) or {}
                if k.get("own_cost_ms_per_request") is None:
                    cells.append("")
                    continue
                sp = k.get("own_cost_ms_per_request_spread")
                rng = f" [{sp['min']:.3f}–{sp['max']:.3f}]" if sp and sp["min"] != sp["max"] else ""
                cells.append(f"{k['cpu_ms_per_request']:.3f} → {own_cost_cell(k)}{rng}")
            lines.append(f"| {r['name']} | {signing_cell(r, ceiling)} | " + " | ".join(cells) + " |")
    lines += ["", "## Memory (MiB)", "",
              "| stack | RSS peak | RSS steady | anonymous peak | anonymous steady | cgroup peak |",
              "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for r in ok:
        s = r["summary"]
        lines.append(f"| {r['name']} | {fmt(s.get('rss_peak_mib'))} | {fmt(s.get('rss_steady_mib'))} | "
                     f"{fmt(s.get('anon_peak_mib'))} | {fmt(s.get('anon_steady_mib'))} | {fmt(s.get('cgroup_peak_mib'))} |")
    fly = [r for r in ok if r["summary"].get("fly")]
    if fly:
        lines += ["", "## fly.io shared vCPU (modelled)", "",
                  "Sustained = the sweep with the balance emptied before every run (the baseline only); burst = from a "
                  "full balance at the top concurrency; burst seconds = balance ÷ (CPU s/s used − baseline share), "
                  "the full balance not burned through.", "",
                  "| stack | start-up from empty balance s | sustained rps | at c | p99 ms (throttled) | throttled periods "
                  "| burst rps | burst CPU s/s | burst seconds |",
                  "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for r in fly:
            f = r["summary"]["fly"]
            thr = f.get("throttled") or {}
            lines.append(f"| {r['name']} | {fmt(f.get('startup_empty_balance_s'), '.2f')} | {fmt(f['sustained_rps'])} | "
                         f"{f['sustained_at']} | {fmt(f['sustained_p99_ms'], '.0f')} | "
                         f"{thr.get('nr_throttled', 'n/a')} of {thr.get('nr_periods', 'n/a')} | {fmt(f.get('burst_rps'))} | "
                         f"{fmt(f.get('burst_cpu_per_s'), '.2f')} | {fmt(f.get('burst_s'))} |")
    placed = [r for r in results if r.get("cpus_allowed") or (r.get("cgroup") or {}).get("cpuset")]
    if placed:
        lines += ["", "CPUs each server ran on (its cgroup's cpuset, else the CPUs its process was allowed): " +
                  "; ".join(f"{r['name']} {(r.get('cgroup') or {}).get('cpuset') or r.get('cpus_allowed')}"
                            + (f" (cgroup v{r['cgroup']['version']})" if (r.get("cgroup") or {}).get("version") else "")
                            for r in placed) + "."]
    warm = [r for r in ok if r.get("warmups")]
    if warm:
        lines += ["", "Warm-up per concurrency (seconds, * = stopped at the cap without meeting the rule; "
                  "\"1 window\" = one window after the warm-up by the rule at another concurrency): " +
                  "; ".join(f"{r['name']} " + ", ".join(
                      f"c={w['concurrency']} {w['seconds']:.0f}{'' if w['stable'] else '*'}"
                      + (" (1 window)" if (w.get("rule") or {}).get("after_concurrency") is not None else "")
                      for w in r["warmups"]) for r in warm) + "."]
    if order:
        firsts = [o for o in order if "repeat" in o]
        if firsts:
            lines += ["", "Order: " + "; ".join(f"c={o['concurrency']}#{o['repeat']} {' → '.join(o['order'])}"
                                               for o in firsts) + "."]
    failed = [r for r in results if r.get("failed")]
    if failed:
        lines += ["", "## No number", ""] + [f"- **{r['name']}**: {r['failed']}" for r in failed]
    basic = [r for r in results if (r.get("verification") or "").startswith("basic")]
    if basic:
        lines += ["", "Verified `basic` only (answers 200 with two JWTs, signatures not checked): "
                  + ", ".join(r["name"] for r in basic) + "."]
    lines += ["", "Crypto share = 2 × (one signature's CPU time, OpenSSL, the run's ceiling) ÷ the server's CPU "
              "time per request. Own share = the stack's own CPU time per token pair (signbench) ÷ its CPU time per "
              "request. Signing ms/pair = the stack's own CPU time per token pair (signbench; † = OpenSSL's two "
              "signatures, the stack has no signbench). Own cost = server CPU per request − signing ms/pair × the "
              "share of answers that issue tokens (all of them unless wrong passwords are sent). wrk and "
              "PostgreSQL CPU per request are theirs during the same runs; idle and steal are the machine's "
              "(/proc/stat), in cores.",
              "Start-up = exec → first token, median of the starts (`startup_samples_s` in results.json). "
              "Server-side figures (CPU, memory) are n/a for `--url` targets.", ""]
    text = "\n".join(lines)
    path.write_text(text)
    return text


def signing_cell(result: dict, ceiling: dict | None) -> str:
    """The stack's signing time per token pair: its own signbench's, else († ) OpenSSL's two signatures."""
    if result.get("own_ceiling"):
        return f"{result['own_ceiling']['pair_ms']:.3f}"
    if result.get("target") == "url":  # a service this runner did not start: its key is not known
        return "n/a"
    c = ceiling or result.get("openssl_ceiling")
    return f"{2 * c['sign_ms']:.3f}†" if c else "n/a"


def own_cost_cell(k: dict) -> str:
    v = k.get("own_cost_ms_per_request")
    return "n/a" if v is None else f"{v:.3f}" + ("†" if k.get("own_cost_basis") == "openssl" else "")


def latency_points(summary: dict) -> list[tuple[float, float, float, float]]:
    """The open-loop chart's points, one per offered rate in rising order: (rate, p99, lowest run's p99, highest
    run's p99). The p99 is that of every request of the point's runs pooled. A rate that is both a shared rate and
    one of the stack's own fractions is one point. Sets from before pooled points: the median run's p99."""
    points = {}
    for p in (summary.get("open_loop_shared") or []) + (summary.get("open_loop_own") or []):
        p99 = (p.get("pooled_latency_ms") or {}).get("p99")
        if p99:
            spread = p.get("p99_spread") or {}
            lo, hi = min(spread.get("min", p99), p99), max(spread.get("max", p99), p99)
            points[round(p["target_rps"], 1)] = (p99, lo, hi)
    if not points:  # the line follows the median run at each rate
        runs: dict[float, list[float]] = {}
        for o in summary.get("open_loop") or []:
            if o["latency_ms"].get("p99"):
                runs.setdefault(round(o["target_rps"], 1), []).append(o["latency_ms"]["p99"])
        points = {rate: (sorted(v)[len(v) // 2], min(v), max(v)) for rate, v in runs.items()}
    return [(rate, *points[rate]) for rate in sorted(points)]


def write_charts(out: Path, results: list[dict]) -> list[str]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ok = [r for r in results if not r.get("failed") and r.get("summary")]
    if not ok:
        return []
    files = []
    conc = sorted({int(c) for r in ok for c in r["summary"]["by_concurrency"]})
    width = 0.8 / len(ok)

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for i, r in enumerate(ok):
        bc = r["summary"]["by_concurrency"]
        med = [bc[str(c)]["rps"]["median"] if str(c) in bc else 0 for c in conc]
        lo = [m - bc[str(c)]["rps"]["min"] if str(c) in bc else 0 for m, c in zip(med, conc)]
        hi = [bc[str(c)]["rps"]["max"] - m if str(c) in bc else 0 for m, c in zip(med, conc)]
        ax.bar([x + i * width for x in range(len(conc))], med, width, yerr=[lo, hi], capsize=3, label=r["name"])
    ax.set_xticks([x + width * (len(ok) - 1) / 2 for x in range(len(conc))], [f"c={c}" for c in conc])
    ax.set_ylabel("200 answers/s (median, min–max)")
    ax.set_title("POST /token throughput (closed loop, wrk)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "rps.png", dpi=110)
    plt.close(fig)
    files.append("rps.png")

    with_open = [(r, pts) for r in ok if (pts := latency_points(r["summary"]))]
    if with_open:
        fig, ax = plt.subplots(figsize=(8, 4.5))
        for r, pts in with_open:
            ax.errorbar([p[0] for p in pts], [p[1] for p in pts],
                        yerr=[[p[1] - p[2] for p in pts], [p[3] - p[1] for p in pts]],
                        marker="o", capsize=3, label=r["name"])
        ax.set_yscale("log")
        ax.set_xlabel("offered requests/s (constant arrival rate)")
        ax.set_ylabel("p99 ms (log, from intended start): pooled, runs' range")
        ax.set_title("Open-loop latency vs rate (oha)")
        ax.legend()
        fig.tight_layout()
        fig.savefig(out / "latency.png", dpi=110)
        plt.close(fig)
        files.append("latency.png")

    with_samples = [r for r in ok if r.get("samples")]
    if with_samples:
        fig, ax = plt.subplots(figsize=(8, 4.5))
        for r in with_samples:
            ax.plot([s[0] for s in r["samples"]], [s[1] / 2**20 for s in r["samples"]], label=f"{r['name']} RSS")
        ax.set_xlabel("seconds since exec")
        ax.set_ylabel("MiB")
        ax.set_title("Server memory over the run")
        ax.legend()
        fig.tight_layout()
        fig.savefig(out / "rss.png", dpi=110)
        plt.close(fig)
        files.append("rss.png")
    return files
