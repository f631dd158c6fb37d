"""Memory: a 5-minute soak; RSS after warm-up stays flat (make soak)."""
from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "wrk"))
import bench  # noqa: E402

from probe import Wrk

SOAK_S = int(os.environ.get("SOAK_SECONDS", "300"))


@pytest.mark.long
def test_rss_is_flat_under_sustained_load(pg, launch, figure):
    svc = launch(pg)
    Wrk(svc.base_url, connections=64, seconds=30).result()  # warm-up
    sampler = bench.Sampler(svc.proc.pid, time.monotonic(), interval=1.0)
    sampler.start()
    result = Wrk(svc.base_url, connections=64, seconds=SOAK_S).result()
    sampler.stop()
    rss = [s[1] / 2**20 for s in sampler.samples]
    assert len(rss) > 10
    first, last = statistics.median(rss[: len(rss) // 5]), statistics.median(rss[-len(rss) // 5:])
    drift = last / first - 1
    figure("RSS MiB first/last fifth", f"{first:.0f}/{last:.0f}")
    figure("RSS drift", f"{drift:+.1%}")
    by_minute: dict[int, list[float]] = {}
    for t, mib in zip((s[0] - sampler.samples[0][0] for s in sampler.samples), rss):
        by_minute.setdefault(int(t // 60), []).append(mib)
    figure("RSS MiB, median by minute", " ".join(f"{statistics.median(v):.0f}" for _, v in sorted(by_minute.items())))
    figure("requests", result["requests"])
    assert set(map(int, result["status"])) == {200}, result["status"]
    assert abs(drift) <= 0.10, f"RSS moved {drift:+.1%} over {SOAK_S}s"
