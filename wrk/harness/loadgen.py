"""Load generators: wrk (closed loop, users.lua) and oha (open loop, constant arrival rate), their output
read into one run's counts, and what makes a run fail a stack."""
from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import stackctl
from stackctl import ROOT, ToolError

from harness.latency import histogram, read_oha_db
from harness.probes import children_cpu_seconds
from harness.records import Settings

OHA_VERSION = "1.15.0"  # wrk/install-loadgen.sh installs this one


def run_wrk(url: str, connections: int, seconds: int, threads: int, scenario: str, wrong: float,
            shed_ok: bool = False) -> dict:
    """One wrk run with users.lua. Throughput counts 200s only (`rps`; `rps_all` counts every answer); every
    other status (400s aside when wrong passwords are sent on purpose) and every socket error is an error.
    `wrk_cpu_s` is wrk's own CPU time (user + system), from the rusage of the reaped child."""
    cmd = stackctl.wrk_command(url, connections, seconds, threads, scenario, wrong)
    cpu0 = children_cpu_seconds()
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 60)
    wrk_cpu = children_cpu_seconds() - cpu0
    raw = stackctl.read_wrk_json(res.stdout)
    if res.returncode != 0 or raw is None:
        raise ToolError(f"wrk failed (exit {res.returncode}): {(res.stderr or res.stdout).strip()[-400:]}")
    data = count_wrk_answers(raw, wrong, shed_ok)
    data["connections"] = connections
    data["wrk_cpu_s"] = round(wrk_cpu, 3)
    return data


def count_wrk_answers(data: dict, wrong: float, shed_ok: bool = False) -> dict:
    """users.lua's counts → throughput of 200s (`rps`; `rps_all` every answer) and the errors: every other status
    (400s aside when wrong passwords are sent on purpose; 503s aside where shedding is what is measured, the argon2
    profile: counted as `shed`) and every socket error."""
    expected = {200} | ({400} if wrong > 0 else set()) | ({503} if shed_ok else set())
    if shed_ok:
        data["shed"] = data["status"].get("503", 0)
        data["shed_ok"] = True
    data["unexpected_status"] = sum(n for s, n in data["status"].items() if int(s) not in expected)
    data["errors"] = data["unexpected_status"] + sum(data["socket_errors"].values())
    ok = data["status"].get("200", 0)
    data["requests_ok"] = ok
    data["rps_all"] = data["rps"]
    data["rps"] = round(ok / data["duration_s"], 2) if data["duration_s"] else 0.0
    return data


def run_failure(run: dict, phase: str) -> str | None:
    """Why a load run disqualifies the stack (any unexpected status or socket error), or None."""
    if not run.get("errors"):
        return None
    parts = []
    if run.get("unexpected_status"):
        bad = {s: n for s, n in run["status"].items() if s != "200" and not (s == "400" and run.get("wrong_share"))
               and not (s == "503" and "shed" in run)}   # counted as shed (open loop; wrk in the argon2 profile)
        parts.append(f"{run['unexpected_status']} unexpected answers {json.dumps(bad, sort_keys=True)}")
    sock = {k: v for k, v in (run.get("socket_errors") or {}).items() if v}
    if sock:
        parts.append(f"socket errors {json.dumps(sock, sort_keys=True)}")
    other = run.get("error_kinds")
    if other:
        parts.append(f"client errors {json.dumps(other, sort_keys=True)[:300]}")
    return f"{phase}: " + "; ".join(parts or [f"{run['errors']} errors"])




def loadgen() -> str | None:
    """oha, as wrk/install-loadgen.sh installs it (.cache/oha/bin), else from PATH."""
    local = ROOT / ".cache" / "oha" / "bin" / "oha"
    if local.exists():
        return str(local)
    return shutil.which("oha")


def open_loop_bodies(scenario: str, wrong_share: float) -> list[str]:
    """The request bodies of a scenario, one per line for `oha -Z` (which sends a random line per request): the
    populations and mix users.lua walks, wrong passwords (answered 400) in the same share."""
    legacy = [(f"legacy{n}@example.com", f"legacy-pass-{n}") for n in range(1, 10001)]
    argon = [(f"argon{n}@example.com", f"argon-pass-{n}") for n in range(1, 101)]
    creds = {"users": legacy, "argon2": argon, "john": [("john@example.com", "TopSecret0!")],
             "mixed": legacy + argon * 25}[scenario]  # mixed: 10,000 legacy + 2,500 argon2id lines = 80/20

    def body(user: str, pw: str) -> str:
        return json.dumps({"username": user, "password": pw}, separators=(",", ":"))
    if wrong_share >= 1:
        return [body(u, p + "-wrong") for u, p in creds]
    right = [body(u, p) for u, p in creds]
    want = round(len(right) * wrong_share / (1 - wrong_share))
    return right + [body(creds[i * len(creds) // want][0], creds[i * len(creds) // want][1] + "-wrong")
                    for i in range(want)]


def open_loop_connections(rate: float, settings: Settings) -> int:
    """Enough connections that oha never has to queue at a healthy latency: the top concurrency."""
    return max(settings.concurrency)


def run_oha(url: str, rate: float, seconds: int, connections: int, bodies: Path, wrong: float, oha: str) -> dict:
    """Open loop: `rate × seconds` requests at a constant arrival rate, latency from each one's intended start
    (--latency-correction), every request sent (-n, not -z: none is dropped at a deadline)."""
    n = max(1, round(rate * seconds))
    # Every answered request's latency as well (oha stores them after the run, from the same records as its
    # percentiles), so that a point's runs can be pooled (harness/latency.py).
    db = Path(tempfile.mkdtemp(prefix="bench-oha-")) / "requests.sqlite"
    cmd = [oha, "-n", str(n), "-q", f"{rate:.3f}", "--latency-correction", "-c", str(connections), "--no-tui",
           "--output-format", "json", "-m", "POST", "-T", "application/json", "-Z", str(bodies),
           "-t", "10s", "--db-url", str(db), url + "/token"]
    cpu0 = children_cpu_seconds()
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds * 3 + 120)
        cpu = children_cpu_seconds() - cpu0
        if res.returncode != 0:
            raise ToolError(f"oha failed (exit {res.returncode}): {(res.stderr or res.stdout).strip()[-400:]}")
        out = parse_oha(res.stdout, rate, wrong)
        latencies = read_oha_db(db)
    finally:
        shutil.rmtree(db.parent, ignore_errors=True)
    if latencies is not None:
        out["latency_hist"] = histogram(latencies)
    out["loadgen_cpu_s"] = round(cpu, 3)
    out["connections"] = connections
    return out


def parse_oha(text: str, target_rps: float, wrong: float) -> dict:
    """oha's JSON summary → {target_rps, achieved_rps, shed, errors, latency_ms: {p50, p90, p99, p99_9, max}}.
    Achieved = 200s per second of the run; shed = 503s, the contract's answer of a service past what it can take
    at that rate (spec/README §8: its pool's wait or its overload limit ran out), counted and reported, not an
    error; errors = every other status (400s aside when wrong passwords are sent on purpose) plus client-side
    errors (connection refused, timeouts...)."""
    try:
        d = json.loads(text[text.index("{"):])
        total_s = float(d["summary"]["total"])
        statuses = {str(k): int(v) for k, v in d.get("statusCodeDistribution", {}).items()}
        kinds = {str(k): int(v) for k, v in d.get("errorDistribution", {}).items()}
        pct = d["latencyPercentiles"]
    except (ValueError, KeyError, TypeError) as e:
        raise ToolError(f"oha printed no valid JSON summary: {text.strip()[:200]!r}") from e
    expected = {"200", "503"} | ({"400"} if wrong > 0 else set())
    unexpected = sum(n for s, n in statuses.items() if s not in expected)
    shed = statuses.get("503", 0)

    def ms(v) -> float | None:
        return None if v is None or v != v else round(float(v) * 1000, 3)
    ok = statuses.get("200", 0)
    return {
        "target_rps": round(target_rps, 1),
        "achieved_rps": round(ok / total_s, 1) if total_s else 0.0,
        "errors": unexpected + sum(kinds.values()),
        "shed": shed,
        "requests": sum(statuses.values()) + sum(kinds.values()),
        "status": statuses,
        "error_kinds": kinds,
        "unexpected_status": unexpected,
        "wrong_share": wrong,
        "duration_s": round(total_s, 3),
        "latency_ms": {"p50": ms(pct.get("p50")), "p90": ms(pct.get("p90")), "p99": ms(pct.get("p99")),
                       "p99_9": ms(pct.get("p99.9")), "max": ms(d["summary"].get("slowest"))},
    }
