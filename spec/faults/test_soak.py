"""Memory: a 5-minute soak; RSS after warm-up stays flat, and in the JVM stacks the heap in use after a full
collection does too (make soak). RSS alone cannot see a JVM heap leak: AlwaysPreTouch makes the whole heap
resident at start, so RSS is flat by design whatever the heap holds."""
from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "wrk"))
import bench  # noqa: E402
import stackctl  # noqa: E402

from probe import Wrk

SOAK_S = int(os.environ.get("SOAK_SECONDS", "300"))


# One line per generation in GC.heap_info: the serial collector's (DefNew/Tenured on JDK 25, "def new generation"/
# "tenured generation" before), the parallel one's, or G1's single heap line.
GENERATION = re.compile(r"^\s*(?:def new generation|DefNew|tenured generation|Tenured|PSYoungGen|ParOldGen|PSOldGen"
                        r"|garbage-first heap)\s+total \d+K, used (\d+)K", re.IGNORECASE | re.MULTILINE)


def heap_used_mib(heap_info: str) -> float:
    """The heap in use, summed over the generations GC.heap_info lists."""
    used = [int(kib) for kib in GENERATION.findall(heap_info)]
    assert used, f"no generation in GC.heap_info: {heap_info[:500]}"
    return sum(used) / 1024


def live_heap_after_full_gc_mib(stack, pid: int) -> float | None:
    """The JVM's heap in use right after a full collection (jcmd GC.run, GC.heap_info): the live set. Every
    generation counts: once the old generation is full, what survives a full collection stays in the young one
    (a leak measured in the old generation alone stopped growing at its 64 MiB). None for a stack that is not a
    JVM."""
    if not stack.uses_java:
        return None
    jcmd = str(stackctl.find_java_home() / "bin" / "jcmd")
    # The first attach creates the JVM's attach and diagnostic-command objects on the heap (~2 MiB): an attach
    # that measures nothing comes first, so the first measurement already holds them.
    subprocess.run([jcmd, str(pid), "VM.uptime"], check=True, capture_output=True, timeout=60)
    subprocess.run([jcmd, str(pid), "GC.run"], check=True, capture_output=True, timeout=60)
    info = subprocess.run([jcmd, str(pid), "GC.heap_info"], check=True, capture_output=True, text=True, timeout=60)
    return heap_used_mib(info.stdout)


def test_heap_in_use_is_read_from_heap_info():
    serial = (" def new generation   total 29504K, used 1843K [0x...)\n"
              "  eden space 26240K,   7% used [0x...)\n"
              " tenured generation   total 65536K, used 21504K [0x...)\n")
    assert heap_used_mib(serial) == (1843 + 21504) / 1024
    jdk25 = (" DefNew     total 29504K, used 2K [0x00000000fa000000, 0x00000000fc000000, 0x00000000fc000000)\n"
             "  eden space 26240K,   0% used [0x00000000fa000000, 0x00000000fa000a58, 0x00000000fb9a0000)\n"
             "  from space 3264K,   0% used [0x00000000fb9a0000, 0x00000000fb9a0000, 0x00000000fbcd0000)\n"
             " Tenured    total 65536K, used 14436K [0x00000000fc000000, 0x0000000100000000, 0x0000000100000000)\n"
             "   the space 65536K,  22% used [0x00000000fc000000, 0x00000000fce19148, 0x00000000fce19200)\n")
    assert heap_used_mib(jdk25) == (2 + 14436) / 1024
    # A full old generation: the survivors of the full collection are in the young one, and they count.
    full = (" DefNew     total 29504K, used 9120K [0x...)\n"
            " Tenured    total 65536K, used 65530K [0x...)\n")
    assert heap_used_mib(full) == (9120 + 65530) / 1024
    parallel = (" PSYoungGen      total 29696K, used 1024K [0x...)\n"
                " ParOldGen       total 68608K, used 4096K [0x...)\n")
    assert heap_used_mib(parallel) == 5
    assert heap_used_mib(" garbage-first heap   total 98304K, used 20480K [0x...)\n") == 20


@pytest.mark.long
def test_rss_is_flat_under_sustained_load(pg, launch, figure, stack):
    svc = launch(pg)
    Wrk(svc.base_url, connections=64, seconds=30).result()  # warm-up
    sampler = bench.Sampler(svc.proc.pid, time.monotonic(), interval=1.0)
    sampler.start()
    # The live set is compared between the middle and the end of the soak: a leak grows it in the second half
    # as in the first, while what is still settling after the 30 s warm-up (pools, caches) does not count.
    first_half = Wrk(svc.base_url, connections=64, seconds=SOAK_S // 2).result()
    heap_before = live_heap_after_full_gc_mib(stack, svc.proc.pid)
    second_half = Wrk(svc.base_url, connections=64, seconds=SOAK_S - SOAK_S // 2).result()
    sampler.stop()
    requests = first_half["requests"] + second_half["requests"]
    statuses = Counter(first_half["status"]) + Counter(second_half["status"])
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
    figure("requests", requests)
    assert set(map(int, statuses)) == {200}, dict(statuses)
    assert abs(drift) <= 0.10, f"RSS moved {drift:+.1%} over {SOAK_S}s"
    heap_after = live_heap_after_full_gc_mib(stack, svc.proc.pid)
    if heap_before is not None:
        figure("heap in use after full GC MiB, middle/end", f"{heap_before:.1f}/{heap_after:.1f}")
        # A live set that grew by more than 10 % (and 2 MiB) under a steady load of the same requests is a leak.
        assert heap_after <= max(heap_before * 1.10, heap_before + 2), \
            f"heap in use after a full GC grew from {heap_before:.1f} to {heap_after:.1f} MiB in the soak's second half"
