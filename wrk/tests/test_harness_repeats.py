"""Repeats that decide (issue 40 item 2): every open-loop point (shared rates and own fractions) run five times for
30 s by default, every request's latency kept as a 1 % histogram and pooled across the point's runs, the range across
runs and the machine's busy share beside each point, and a warm-up rule that holds under noise (the median of the
last k windows against the k before, at least 2k windows), its rule and outcome recorded."""
from __future__ import annotations

import math
import random
import sqlite3
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from harness import cli, latency, records, reports, schedule, summary  # noqa: E402


def exact(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[max(0, math.ceil(len(s) * p / 100) - 1)]


def test_pooled_percentiles_are_within_one_per_cent_of_the_exact_ones():
    rng = random.Random(7)
    runs = [[rng.lognormvariate(0, 0.6) for _ in range(5000)] + [rng.uniform(50, 400) for _ in range(20)]
            for _ in range(5)]
    pool = latency.pooled([latency.histogram(r) for r in runs])
    every = [v for r in runs for v in r]
    assert pool["requests"] == len(every) and pool["runs"] == 5
    for name, p in (("p50", 50), ("p90", 90), ("p99", 99), ("p99_9", 99.9)):
        assert pool[name] == pytest.approx(exact(every, p), rel=0.011), name
    assert pool["max"] == round(max(every), 3)
    # The pool is not the median of the runs' p99s: a stall in one run weighs by its requests.
    assert latency.merge([latency.histogram(r) for r in runs])["count"] == len(every)
    assert latency.pooled([None, {"count": 0, "buckets": {}}]) is None


def test_oha_per_request_records_are_read_from_its_sqlite_file(tmp_path):
    db = tmp_path / "requests.sqlite"
    with sqlite3.connect(db) as conn:   # the table oha 1.15's --db-url writes (src/db.rs)
        conn.execute("CREATE TABLE oha (url TEXT NOT NULL, start REAL NOT NULL, start_latency_correction REAL, "
                     "end REAL NOT NULL, duration REAL NOT NULL, status INTEGER NOT NULL, len_bytes INTEGER NOT NULL, "
                     "run INTEGER NOT NULL)")
        conn.executemany("INSERT INTO oha VALUES ('u', 0, 0, 1, ?, 200, 10, 1)", [(0.0012,), (0.0503,)])
    assert latency.read_oha_db(db) == pytest.approx([1.2, 50.3])
    assert latency.read_oha_db(tmp_path / "none.sqlite") is None


def test_the_warm_up_rule_waits_out_a_trend_and_stops_on_a_noisy_plateau():
    trend = [2.0, 1.9, 1.8, 1.7, 1.6, 1.5]   # still falling: neighbours differ by ~6 %
    assert not schedule.warmed_up(trend, 3)
    plateau = [1.52, 1.47, 1.50, 1.49, 1.53, 1.48]   # ±3 % noise, medians 1.50 and 1.49
    assert schedule.warmed_up(plateau, 3)
    assert not schedule.warmed_up(plateau[:5], 3)             # at least 2k windows
    assert not schedule.warmed_up([1.5, None, 1.5, 1.5, 1.5, 1.5], 3)
    # Two neighbouring windows agreeing by chance no longer ends it (the old rule would stop at the 2nd window).
    assert not schedule.warmed_up([2.0, 2.01, 1.7, 1.6, 1.55, 1.5], 3)


def test_the_warm_up_rule_waits_for_the_jit_to_go_quiet():
    plateau = [1.52, 1.47, 1.50, 1.49, 1.53, 1.48]
    # C2 still compiling at a tenth of the CPU while the CPU per request looks flat: not warm yet.
    assert not schedule.warmed_up(plateau, 3, jit_shares=[0.2, 0.15, 0.12, 0.11, 0.10, 0.10])
    assert not schedule.warmed_up(plateau, 3, jit_shares=[0.2, 0.15, 0.12, 0.01, 0.10, 0.01])   # each of the last k
    assert schedule.warmed_up(plateau, 3, jit_shares=[0.2, 0.15, 0.12, 0.01, 0.02, 0.005])
    # Quiet compilers do not end a warm-up whose CPU per request still falls.
    assert not schedule.warmed_up([2.0, 1.9, 1.8, 1.7, 1.6, 1.5], 3, jit_shares=[0.0] * 6)


def test_warm_up_of_a_jvm_records_the_jit_condition(monkeypatch):
    runs = iter([(1.5, 0.12), (1.5, 0.11), (1.5, 0.10), (1.5, 0.10), (1.5, 0.01), (1.5, 0.01), (1.5, 0.01),
                 (1.5, 0.01)])
    monkeypatch.setattr(schedule, "load_run", lambda live, settings, c, secs, phase, measured=True:
                        dict(zip(("cpu_ms_per_request", "jit_share"), next(runs)), rps=100.0, errors=0))
    settings = cli.parse_args(["--stacks", cli.stackctl.list_stacks()[0], "--warmup-window", "1", "--warmup", "60"])
    live = schedule.Live("x", "http://127.0.0.1:1", records.StackResult("x"))
    monkeypatch.setattr(schedule.Live, "pid", property(lambda self: 1))
    w = schedule.warm_up(live, settings, 64, cli.Progress(1))
    assert w.stable and len(w.windows) == 7   # flat from the start; compilers quiet in windows 5, 6, 7
    assert w.rule["jit_quiet"] == records.JIT_QUIET and "JIT compiler threads" in w.criterion
    assert [x["jit_share"] for x in w.windows][:2] == [0.12, 0.11]


def test_warm_up_records_its_rule_and_outcome(monkeypatch):
    cpu = iter([2.0, 1.8, 1.6, 1.5, 1.5, 1.49, 1.51, 1.5, 1.5, 1.5])
    monkeypatch.setattr(schedule, "load_run", lambda live, settings, c, secs, phase, measured=True:
                        {"rps": 100.0, "errors": 0, "cpu_ms_per_request": next(cpu)})
    settings = cli.parse_args(["--stacks", cli.stackctl.list_stacks()[0], "--warmup-window", "1", "--warmup", "60"])
    live = schedule.Live("x", "http://127.0.0.1:1", records.StackResult("x"))
    monkeypatch.setattr(schedule.Live, "pid", property(lambda self: 1))
    w = schedule.warm_up(live, settings, 64, cli.Progress(1))
    assert w.stable and len(w.windows) == 8   # 1.6 1.5 1.5 | 1.49 1.51 1.5: medians 1.5 and 1.5 (at 7: 1.6, 1.5)
    assert w.rule == {"metric": "cpu_ms_per_request", "window_s": 1, "k": 3, "within": 0.03, "min_windows": 6,
                      "cap_s": 60}
    assert w.to_json()["rule"]["k"] == 3


def test_full_profile_runs_every_point_five_times_for_thirty_seconds_and_smoke_stays_short():
    stack = cli.stackctl.list_stacks()[0]
    full = cli.parse_args(["--stacks", stack])
    assert (full.open_loop_s, full.open_loop_repeats, full.warmup_k) == (30, 5, 3)
    smoke = cli.parse_args(["--stacks", stack, "--smoke"])
    assert (smoke.open_loop_s, smoke.open_loop_repeats, smoke.warmup_k) == (2, 1, 1)


def _olr(kind, f, rate, p99, busy, values):
    return {"kind": kind, "fraction": f, "target_rps": rate, "achieved_rps": rate, "errors": 0, "duration_s": 30.0,
            "latency_ms": {"p50": 1.0, "p90": 2.0, "p99": p99, "p99_9": p99 * 2, "max": p99 * 3},
            "machine": {"busy_cores": busy}, "latency_hist": latency.histogram(values)}


def test_the_summary_pools_each_points_runs_and_gives_the_ranges_and_the_busy_share():
    quiet = [1.0] * 990 + [10.0] * 10
    stalled = [1.0] * 900 + [200.0] * 100   # one run with a stall: 10 % of its requests
    run = {"rps": 100, "errors": 0, "requests": 1000, "latency_ms": {"p50": 1, "p90": 2, "p99": 3, "p99_9": 4,
                                                                       "max": 5}}
    result = {"runs": {"64": [run]}, "cores": 2,
              "open_loop": [_olr("own", 0.75, 750.0, 10.0, 1.6, quiet), _olr("own", 0.75, 750.0, 200.0, 1.8, stalled),
                            _olr("shared", 0.5, 500.0, 9.0, 1.2, quiet), _olr("shared", 0.5, 500.0, 9.5, 1.4, quiet)]}
    s = summary.summarize(result, None)
    own = s["open_loop_own"][0]
    assert own["runs"] == 2 and own["seconds"] == 60.0
    assert own["pooled_latency_ms"]["requests"] == 2000
    assert own["pooled_latency_ms"]["p99"] == pytest.approx(200.0, rel=0.01)   # 110 of 2000 over 10 ms
    assert own["p99_spread"] == {"median": 105.0, "min": 10.0, "max": 200.0}
    assert own["p99_9_spread"]["max"] == 400.0
    assert own["machine_busy_share"] == 0.85 and own["machine_busy_share_spread"] == {"median": 0.85, "min": 0.8,
                                                                                     "max": 0.9}
    shared = s["open_loop_shared"][0]
    assert shared["target_rps"] == 500.0 and shared["runs"] == 2
    assert shared["pooled_latency_ms"]["p99"] == pytest.approx(1.0, rel=0.01)   # 20 of 2000 over: exactly 1 %
    assert shared["pooled_latency_ms"]["p99_9"] == pytest.approx(10.0, rel=0.01)
    assert "latency_hist" not in s["open_loop"][0]   # the histograms stay in the runs, not in the summary


def test_the_latency_chart_has_one_point_per_rate_in_rising_order():
    # The chart drew every run in sorted order, so a line zigzagged between the runs of one rate. Now one point per
    # offered rate: the pooled p99 with the runs' range, a rate that is a shared rate and an own fraction once.
    point = {"target_rps": 398.4, "pooled_latency_ms": {"p99": 57.1},
             "p99_spread": {"median": 29.6, "min": 10.1, "max": 137.6}}
    s = {"open_loop_shared": [point, {"target_rps": 597.6, "pooled_latency_ms": {"p99": 5127.4},
                                      "p99_spread": {"min": 85.1, "max": 5327.4}}],
         "open_loop_own": [{"target_rps": 203.8, "pooled_latency_ms": {"p99": 7.7},
                            "p99_spread": {"min": 6.3, "max": 9.9}}, dict(point)],
         "open_loop": [{"target_rps": 398.4, "latency_ms": {"p99": 137.6}}]}
    assert reports.latency_points(s) == [(203.8, 7.7, 6.3, 9.9), (398.4, 57.1, 10.1, 137.6),
                                         (597.6, 5127.4, 85.1, 5327.4)]
    # A set from before pooled points: the median run's p99 at each rate, with the runs' range.
    old = {"open_loop": [{"target_rps": r, "latency_ms": {"p99": p}}
                         for r, p in [(600.0, 9.0), (300.0, 2.0), (600.0, 4.0), (600.0, 30.0), (300.0, None)]]}
    assert reports.latency_points(old) == [(300.0, 2.0, 2.0, 2.0), (600.0, 9.0, 4.0, 30.0)]
    assert reports.latency_points({"open_loop": []}) == []
