"""The argon2 profile (issue 40 item 6): the real login — logins per second per core with the contract's argon2id
(spec §3: m=19456 KiB, t=2, p=1, the argon population of sql/seed.sql), beside the argon2id ceiling of the same
machine (argon2-cffi's libargon2 hashing with those parameters, one process per core at once) and Keycloak's
published sizing figure; 503s (the overload limit shedding) are counted, not failures."""
from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
from importlib.metadata import version

from stackctl import ToolError

PARAMS = {"memory_cost_kib": 19456, "time_cost": 2, "parallelism": 1, "hash_len": 32}   # spec §3 (OWASP's floor)
KEYCLOAK_PER_VCPU = 15.0
KEYCLOAK = ("Keycloak, \"Concepts for sizing CPU and memory resources\" "
            "(https://www.keycloak.org/high-availability/concepts-memory-and-cpu-sizing): \"For each 15 "
            "password-based user logins per second, allocate 1 vCPU to the cluster\"")

# One process hashing on its one thread for SECONDS (after one untimed hash): hashes, its thread's CPU, wall.
WORKER = """
import json, sys, time
from argon2.low_level import Type, hash_secret_raw
m, t, p, n = %(memory_cost_kib)d, %(time_cost)d, %(parallelism)d, %(hash_len)d
hash_secret_raw(b"argon-pass-1", b"0123456789abcdef", t, m, p, n, Type.ID)
secs, count = float(sys.argv[1]), 0
w0, c0 = time.monotonic(), time.thread_time()
while time.monotonic() - w0 < secs:
    hash_secret_raw(b"argon-pass-1", b"0123456789abcdef", t, m, p, n, Type.ID)
    count += 1
print(json.dumps({"hashes": count, "cpu_s": time.thread_time() - c0, "wall_s": time.monotonic() - w0}))
""" % PARAMS


def argon2_ceiling(seconds: float, processes: int | None = None) -> dict:
    """The machine's argon2id speed with the contract's parameters: `processes` (default: one per core) hashing at
    once, each on its own thread. Per core = hashes per CPU second of a hashing thread; all cores = hashes per
    second of wall time of them all together."""
    processes = processes or os.cpu_count() or 1
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, f"{seconds:g}"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(processes)]
    runs = []
    for p in procs:
        out, err = p.communicate(timeout=seconds + 120)
        if p.returncode != 0:
            raise ToolError(f"argon2id ceiling failed (exit {p.returncode}): {err.strip()[-300:]}")
        runs.append(json.loads(out.strip().splitlines()[-1]))
    hashes, cpu = sum(r["hashes"] for r in runs), sum(r["cpu_s"] for r in runs)
    wall = max(r["wall_s"] for r in runs)
    return {"tool": f"argon2-cffi {version('argon2-cffi')} (libargon2), argon2id", "params": PARAMS,
            "processes": processes, "hashes_per_s_per_core": round(hashes / cpu, 2) if cpu else None,
            "hashes_per_s_all_cores": round(hashes / wall, 2) if wall else None, "runs": runs}


def cpu_count_of(result: dict) -> int:
    """The CPUs the server could run on: its cgroup's cpuset or its Cpus_allowed_list ("0-1", "1", "0,2-3"), else
    the machine's."""
    text = (result.get("cgroup") or {}).get("cpuset") or result.get("cpus_allowed")
    if not text:
        return os.cpu_count() or 1
    n = 0
    for part in str(text).split(","):
        m = re.fullmatch(r"\s*(\d+)(?:-(\d+))?\s*", part)
        if m:
            n += int(m.group(2) or m.group(1)) - int(m.group(1)) + 1
    return n or (os.cpu_count() or 1)


def argon2_summary(result: dict, ceiling: dict | None) -> dict:
    """A stack's argon2id logins: the sustained rate (the highest median 200s/s over the concurrencies), per core
    (÷ the CPUs it could use), as a share of the machine's argon2id ceiling per core and as a multiple of Keycloak's
    15 per vCPU; and per concurrency the rate, the 503s (shed) and their share of the answers."""
    s = result.get("summary") or {}
    if not s.get("by_concurrency"):
        return {}
    cores = cpu_count_of(result)
    per_core = s["max_rps"] / cores
    ceiling_core = (ceiling or {}).get("hashes_per_s_per_core")
    return {"logins_per_s": s["max_rps"], "at_concurrency": s["max_rps_at"], "cores": cores,
            "logins_per_s_per_core": round(per_core, 2),
            "of_argon2id_ceiling_per_core": round(per_core / ceiling_core, 3) if ceiling_core else None,
            "vs_keycloak_per_vcpu": round(per_core / KEYCLOAK_PER_VCPU, 2),
            "cpu_ms_per_login": cpu_ms_per_login((result.get("runs") or {}).get(s["max_rps_at"]) or []),
            "by_concurrency": {c: {"logins_per_s": k["rps"]["median"], "shed": k.get("shed", 0),
                                   "shed_share": k.get("shed_share", 0.0), "p99_ms": k["latency_ms"]["p99"]}
                               for c, k in s["by_concurrency"].items()}}


def cpu_ms_per_login(runs: list[dict]) -> float | None:
    """The server's CPU per login served (200 answer) at one concurrency, the median over its runs: each run's CPU
    per answer × answers ÷ logins, so the CPU spent shedding 503s counts against the logins that were served (CPU
    per answer alone would count a shed answer as a cheap login)."""
    per = [r["cpu_ms_per_request"] * r["requests"] / (r["requests"] - r.get("shed", 0)) for r in runs
           if r.get("cpu_ms_per_request") is not None and r.get("requests") and r["requests"] > r.get("shed", 0)]
    return round(statistics.median(per), 4) if per else None


def argon2_lines(results: list[dict], ceiling: dict | None) -> list[str]:
    """results.md's argon2id section."""
    rows = [r for r in results if (r.get("summary") or {}).get("argon2")]
    if not rows:
        return []
    conc = sorted({c for r in rows for c in r["summary"]["argon2"]["by_concurrency"]}, key=int)
    lines = ["## argon2id logins (the real login)", ""]
    if ceiling:
        lines += [f"argon2id ceiling of this machine ({ceiling['tool']}, m={PARAMS['memory_cost_kib']} KiB, "
                  f"t={PARAMS['time_cost']}, p={PARAMS['parallelism']}, {ceiling['processes']} processes at once, one "
                  f"per core): {ceiling['hashes_per_s_per_core']:.1f} hashes/s per core, "
                  f"{ceiling['hashes_per_s_all_cores']:.1f} on all cores together. Keycloak's published sizing: "
                  f"{KEYCLOAK_PER_VCPU:.0f} password logins/s per vCPU — {KEYCLOAK}.", ""]
    lines += ["Logins/s = 200 answers per second, the highest median over the concurrencies; per core = ÷ the CPUs "
              "the server could use. 503 = answers shed by the overload limit (MAX_PASSWORD_CHECKS at its default), "
              "counted, not failures: the stacks run as they ship. CPU ms/login = the server's CPU per login served "
              "(the CPU of the 503s included), at the concurrency of the highest rate.", "",
              "| stack | logins/s | at c | per core | of ceiling per core | × Keycloak per vCPU | CPU ms/login | "
              + " | ".join(f"c={c} logins/s · 503 share" for c in conc) + " |",
              "| --- | ---: | ---: | ---: | ---: | ---: | ---: |" + " ---: |" * len(conc)]
    for r in rows:
        a = r["summary"]["argon2"]
        of = a.get("of_argon2id_ceiling_per_core")
        cells = []
        for c in conc:
            k = a["by_concurrency"].get(c)
            cells.append(f"{k['logins_per_s']:.1f} · {k['shed_share'] * 100:.0f}%" if k else "")
        lines.append(f"| {r['name']} | {a['logins_per_s']:.1f} | {a['at_concurrency']} | {a['logins_per_s_per_core']:.1f} "
                     f"| {'n/a' if of is None else f'{of * 100:.0f}%'} | {a['vs_keycloak_per_vcpu']:.2f}× | "
                     f"{'n/a' if a.get('cpu_ms_per_login') is None else format(a['cpu_ms_per_login'], '.1f')} | "
                     + " | ".join(cells) + " |")
    return lines + [""]
