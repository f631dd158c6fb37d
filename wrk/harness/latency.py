"""Latencies pooled across runs: each open-loop run's every request (oha's per-request records, `--db-url`) kept as
a log-bucketed histogram (each bucket 1 % wide, HDR-style), the histograms of a point's runs merged, and the
percentiles read from the merged one. A pooled p99 of five 30 s runs is decided by hundreds of requests, not by
the stall that happened to fall in one run."""
from __future__ import annotations

import contextlib
import math
import sqlite3
from pathlib import Path

PRECISION = 0.01   # each bucket spans 1 % of its value: a percentile read from it is within 1 % of the exact one
_LOG = math.log1p(PRECISION)


def bucket(ms: float) -> int:
    """The bucket of a latency in ms: floor(log(ms) / log(1.01)); everything under 1 µs goes to 1 µs's."""
    return math.floor(math.log(max(ms, 0.001)) / _LOG)


def bucket_value(b: int) -> float:
    """A bucket's representative latency (ms): its geometric middle."""
    return math.exp((b + 0.5) * _LOG)


def histogram(latencies_ms: list[float]) -> dict:
    """{"precision": 0.01, "count": n, "max_ms": exact max, "buckets": {bucket: count}} (JSON keys as strings)."""
    counts: dict[str, int] = {}
    for ms in latencies_ms:
        k = str(bucket(ms))
        counts[k] = counts.get(k, 0) + 1
    return {"precision": PRECISION, "count": len(latencies_ms),
            "max_ms": round(max(latencies_ms), 3) if latencies_ms else None, "buckets": counts}


def merge(hists: list[dict]) -> dict:
    """The histograms of several runs as one (the pool of their requests)."""
    counts: dict[str, int] = {}
    for h in hists:
        for k, n in h["buckets"].items():
            counts[k] = counts.get(k, 0) + n
    maxes = [h["max_ms"] for h in hists if h.get("max_ms") is not None]
    return {"precision": PRECISION, "count": sum(h["count"] for h in hists), "max_ms": max(maxes, default=None),
            "buckets": counts}


def percentile(hist: dict, p: float) -> float | None:
    """The latency (ms) under which `p` % of the pooled requests fell (nearest rank), from the histogram."""
    n = hist["count"]
    if not n:
        return None
    rank = max(1, math.ceil(p / 100 * n))
    seen = 0
    for k in sorted(hist["buckets"], key=int):
        seen += hist["buckets"][k]
        if seen >= rank:
            return round(min(bucket_value(int(k)), hist["max_ms"] or math.inf), 3)
    return hist["max_ms"]


def pooled(hists: list[dict]) -> dict | None:
    """p50, p90, p99, p99.9 and max of the pooled requests of the runs, and how many there were; None when no run
    has a histogram (sets made before the pooling, or an oha that stored none)."""
    hs = [h for h in hists if h and h.get("count")]
    if not hs:
        return None
    m = merge(hs)
    return {"requests": m["count"], "runs": len(hs),
            **{name: percentile(m, p) for name, p in (("p50", 50), ("p90", 90), ("p99", 99), ("p99_9", 99.9))},
            "max": m["max_ms"]}


def read_oha_db(path: Path) -> list[float] | None:
    """Every answered request's latency (ms, from its intended start: oha's `duration` with --latency-correction)
    from the SQLite file `oha --db-url` wrote; None when there is none."""
    if not path.exists():
        return None
    with contextlib.closing(sqlite3.connect(path)) as db:
        with contextlib.suppress(sqlite3.Error):
            return [d * 1000 for (d,) in db.execute("SELECT duration FROM oha")]
    return None
