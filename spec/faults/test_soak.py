"""Memory: a 5-minute soak; RSS after warm-up stays flat, and in the JVM stacks the old generation after a full
collection does too (make soak). RSS alone cannot see a JVM heap leak: AlwaysPreTouch makes the whole heap
resident at start, so RSS is flat by design whatever the heap holds."""
from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "wrk"))
import bench  # noqa: E402
import stackctl  # noqa: E402

from probe import Wrk

SOAK_S = int(os.environ.get("SOAK_SECONDS", "300"))


OLD_GEN = re.compile(r"(?:tenured(?: generation)?|PSOldGen|ParOldGen|old gen)\s+total \d+K, used (\d+)K", re.IGNORECASE)


def old_gen_after_full_gc_mib(stack, pid: int) -> float | None:
    """The JVM's old generation in use right after a full collection (jcmd GC.run, GC.heap_info): the live set
    that survived. None for a stack that is not a JVM."""
    if not stack.uses_java:
        return None
    jcmd = str(stackctl.find_java_home() / "bin" / "jcmd")
    # The first attach creates the JVM's attach and diagnostic-command objects on the heap (~2 MiB): an attach
    # that measures nothing comes first, so the first measurement already holds them.
    subprocess.run([jcmd, str(pid), "VM.uptime"], check=True, capture_output=True, timeout=60)
    subprocess.run([jcmd, str(pid), "GC.run"], check=True, capture_output=True, timeout=60)
    info = subprocess.run([jcmd, str(pid), "GC.heap_info"], check=True, capture_output=True, text=True, timeout=60)
    m = OLD_GEN.search(info.stdout)
    assert m, f"no old generation in GC.heap_info: {info.stdout[:500]}"
    return int(m.group(1)) / 1024


def test_old_gen_is_read_from_heap_info():
    serial = (" def new generation   total 29504K, used 1843K [0x...)\n"
              " tenured generation   total 65536K, used 21504K [0x...)\n")
    assert int(OLD_GEN.search(serial).group(1)) == 21504
    jdk25 = (" DefNew     total 29504K, used 2K [0x00000000fa000000, 0x00000000fc000000, 0x00000000fc000000)\n"
             "  eden space 26240K,   0% used [0x00000000fa000000, 0x00000000fa000a58, 0x00000000fb9a0000)\n"
             " Tenured    total 65536K, used 14436K [0x00000000fc000000, 0x0000000100000000, 0x0000000100000000)\n")
    assert int(OLD_GEN.search(jdk25).group(1)) == 14436
    assert int(OLD_GEN.search(" ParOldGen       total 68608K, used 4096K [0x...)").group(1)) == 4096


@pytest.mark.long
def test_rss_is_flat_under_sustained_load(pg, launch, figure, stack):
    svc = launch(pg)
    Wrk(svc.base_url, connections=64, seconds=30).result()  # warm-up
    sampler = bench.Sampler(svc.proc.pid, time.monotonic(), interval=1.0)
    sampler.start()
    # The live set is compared between the middle and the end of the soak: a leak grows it in the second half
    # as in the first, while what is still settling after the 30 s warm-up (pools, caches) does not count.
    first_half = Wrk(svc.base_url, connections=64, seconds=SOAK_S // 2).result()
    heap_before = old_gen_after_full_gc_mib(stack, svc.proc.pid)
    second_half = Wrk(svc.base_url, connections=64, seconds=SOAK_S - SOAK_S // 2).result()
    sampler.stop()
    result = {"requests": first_half["requests"] + second_half["requests"],
              "status": {k: first_half["status"].get(k, 0) + second_half["status"].get(k, 0)
                         for k in {*first_half["status"], *second_half["status"]}}}
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
    heap_after = old_gen_after_full_gc_mib(stack, svc.proc.pid)
    if heap_before is not None:
        figure("old gen after full GC MiB, middle/end", f"{heap_before:.1f}/{heap_after:.1f}")
        # A live set that grew by more than 10 % (and 2 MiB) under a steady load of the same requests is a leak.
        assert heap_after <= max(heap_before * 1.10, heap_before + 2), \
            f"old generation after a full GC grew from {heap_before:.1f} to {heap_after:.1f} MiB in the soak's second half"
