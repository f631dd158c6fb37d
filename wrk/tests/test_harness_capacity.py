"""Capacity as a range from repeated steps (issue 40 item 2): a rate holds only when every one of its runs (at
least --capacity-runs, 3 by default) kept up with no error and p99 under 100 ms; the bisection's steps run up to
that many runs and end at the first that does not hold; results.json and the table give the range (every run /
some run / first failed) with the runs behind it. Synthetic run records throughout, no load generator."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import stackctl  # noqa: E402
from harness import cli, estimate, latency, records, reports, schedule  # noqa: E402

STACK = stackctl.list_stacks()[0]


def run(rate, p99, achieved=None, errors=0, kind="own", hist=None):
    r = {"kind": kind, "target_rps": rate, "achieved_rps": rate if achieved is None else achieved, "errors": errors,
         "latency_ms": {"p50": 1.0, "p99": p99}}
    if hist is not None:
        r["latency_hist"] = latency.histogram(hist)
    return r


def test_a_run_holds_only_when_it_kept_up_without_errors_under_the_p99_limit():
    assert schedule.run_held(run(100, 99.9))
    assert not schedule.run_held(run(100, 100.0))                  # the limit itself is over
    assert not schedule.run_held(run(100, 5, achieved=97.9))       # fell behind the offered rate
    assert schedule.run_held(run(100, 5, achieved=98.0))
    assert not schedule.run_held(run(100, 5, errors=1))


def test_a_rate_that_passes_once_and_fails_once_fails():
    runs = [run(800, 40), run(800, 140)]
    assert schedule.capacity_verdicts(runs, 1) == {800: "failed"}
    assert schedule.capacity_verdicts(list(reversed(runs)), 1) == {800: "failed"}   # in either order
    assert schedule.capacity_bounds(runs + [run(500, 5)] * 3, 1000.0, 3) == (500, 800)
    # Fewer runs than the rule asks for decide nothing either way until one fails.
    assert schedule.capacity_verdicts([run(600, 5), run(600, 6)], 3) == {600: "open"}
    assert schedule.capacity_verdicts([run(600, 5), run(600, 6), run(600, 7)], 3) == {600: "held"}
    assert schedule.capacity_bounds([run(600, 5), run(600, 6)], 1000.0, 3) == (0.0, 1100.0)


def test_the_range_from_noisy_runs_is_every_run_some_run_and_first_failed():
    # The axum case of issue 40: a lower rate failed once while a higher one held in its only run. One-run
    # bisection credited the higher rate; the range shows both ends and the failure between them.
    quick = [0.5] * 990 + [20.0] * 10
    runs = ([run(1100.0, 30, hist=quick) for _ in range(3)]
            + [run(1195.0, 40), run(1195.0, 180), run(1195.0, 45)]
            + [run(1350.0, 60)]
            + [run(1500.0, 400), run(900.0, 10, kind="shared")] * 1 + [run(900.0, 12, kind="shared")] * 4)
    cap = schedule.capacity_range(runs, 1400.0, 3)
    assert cap["rps"] == 1100.0 and cap["highest_held_rps"] == 1350.0 and cap["range_rps"] == [1100.0, 1350.0]
    assert cap["next_failed_rps"] == 1195.0 and cap["of_closed_loop_max"] == round(1100 / 1400, 3)
    by_rate = {x["target_rps"]: x for x in cap["rates"]}
    assert sorted(by_rate) == [1100.0, 1195.0, 1350.0, 1500.0]       # from the low end up: the runs behind it
    assert (by_rate[1100.0]["runs"], by_rate[1100.0]["held"]) == (3, 3)
    assert by_rate[1100.0]["pooled_p99_ms"] == latency.pooled([latency.histogram(quick)] * 3)["p99"]
    assert (by_rate[1195.0]["runs"], by_rate[1195.0]["held"], by_rate[1195.0]["p99_ms"]) == (3, 2, [40, 180, 45])
    assert by_rate[1350.0]["pooled_p99_ms"] is None                  # no histogram in that record
    # Nothing failed: no first failure, and the bisection's upper bound is 1.1 x the closed-loop maximum.
    calm = schedule.capacity_range([run(500.0, 5)] * 3, 1000.0, 3)
    assert calm["next_failed_rps"] is None and calm["range_rps"] == [500.0, 500.0]
    assert schedule.capacity_bounds([run(500.0, 5)] * 3, 1000.0, 3) == (500.0, 1100.0)
    # Nothing held in every run: the low end is 0, the some-run end what did hold.
    assert schedule.capacity_range([run(500.0, 5), run(500.0, 500)], 1000.0, 3)["range_rps"] == [0.0, 500.0]


class FakeLive:
    def __init__(self, name, open_loop):
        self.name, self.failed = name, False
        self.result = records.StackResult(name, open_loop=open_loop)


def search(lives, tops, args, answer):
    asked = []

    def fake_open_run(live, spec, settings, progress, bodies, oha, seconds):
        asked.append((live.name, spec.target_rps, spec.repeat))
        return answer(live.name, spec.target_rps, sum(1 for a in asked if a[:2] == (live.name, spec.target_rps)))
    orig = schedule.open_run
    schedule.open_run = fake_open_run
    order_log = []
    try:
        settings = cli.parse_args(["--stacks", STACK] + args)
        schedule.capacity_search(lives, tops, settings, None, order_log, Path("/dev/null"), "oha")
    finally:
        schedule.open_run = orig
    return asked, order_log


def test_each_step_decides_on_repeated_runs_and_ends_at_the_first_that_fails():
    # Prior open-loop points: 500/s held in all five runs, 900/s failed. The stack holds up to 770/s, except that
    # 700/s fails its second run (a stall): that step fails, and its third run is not made.
    prior = [run(500.0, 5)] * 5 + [run(900.0, 300)] * 5
    lives = [FakeLive("a", list(prior))]

    def answer(name, rate, nth):
        return run(rate, 200 if rate > 770 or (rate == 700.0 and nth == 2) else 50)
    asked, order_log = search(lives, {"a": 1000.0}, ["--capacity-steps", "3"], answer)
    assert asked == [("a", 700.0, 1), ("a", 700.0, 2),              # step 1: held, then failed -> 700 is the top
                     ("a", 600.0, 1), ("a", 600.0, 2), ("a", 600.0, 3),   # step 2: three held
                     ("a", 650.0, 1), ("a", 650.0, 2), ("a", 650.0, 3)]   # step 3: three held
    cap = lives[0].result.capacity
    assert (cap["rps"], cap["highest_held_rps"], cap["next_failed_rps"]) == (650.0, 700.0, 700.0)
    assert (cap["steps"], cap["runs_per_step"], cap["p99_under_ms"]) == (3, 3, 100.0) and "every one" in cap["rule"]
    made = lives[0].result.open_loop[len(prior):]
    assert [(r["target_rps"], r["capacity_step"]) for r in made] == [
        (700.0, 1), (700.0, 1), (600.0, 2), (600.0, 2), (600.0, 2), (650.0, 3), (650.0, 3), (650.0, 3)]
    assert [e["run"] for e in order_log if e["capacity_step"] == 2] == [1, 2, 3]


def test_the_stacks_are_interleaved_within_each_round_and_a_failed_stack_drops_out_of_the_step():
    prior = [run(500.0, 5)] * 5 + [run(900.0, 300)] * 5
    lives = [FakeLive("a", list(prior)), FakeLive("b", list(prior))]

    def answer(name, rate, nth):
        return run(rate, 50 if name == "a" else 200)                 # b fails every rate above 500
    asked, order_log = search(lives, {"a": 1000.0, "b": 1000.0}, ["--capacity-steps", "1"], answer)
    assert asked == [("a", 700.0, 1), ("b", 700.0, 1), ("a", 700.0, 2), ("a", 700.0, 3)]
    assert [e["order"] for e in order_log] == [["a", "b"], ["a"], ["a"]]
    assert lives[0].result.capacity["range_rps"] == [700.0, 700.0]
    assert lives[1].result.capacity["range_rps"] == [500.0, 500.0]
    assert lives[1].result.capacity["next_failed_rps"] == 700.0


def test_smoke_keeps_one_step_of_one_run_and_the_estimate_counts_the_repeats():
    full = cli.parse_args(["--stacks", STACK])
    assert (full.capacity_steps, full.capacity_runs) == (2, 3)
    smoke = cli.parse_args(["--stacks", STACK, "--smoke"])
    assert (smoke.capacity_steps, smoke.capacity_runs) == (1, 1)
    one = cli.parse_args(["--stacks", STACK, "--capacity-runs", "1"])
    per_run = full.open_loop_s + 1 + full.open_loop_rewarm + 1
    assert estimate.estimated_seconds(full, 1) - estimate.estimated_seconds(one, 1) == full.capacity_steps * per_run


def test_the_table_gives_the_range_with_the_runs_behind_each_end():
    runs = ([run(1100.0, 30)] * 3 + [run(1195.0, 40), run(1195.0, 180)] + [run(1350.0, 60)])
    cap = {"p99_under_ms": 100.0, **schedule.capacity_range(runs, 1400.0, 3), "steps": 3, "runs_per_step": 3,
           "seconds_per_step": 30, "rule": schedule.CAPACITY_RULE.format(p99=100.0, n=3)}
    text = "\n".join(reports.capacity_lines([{"name": "axum", "summary": {"capacity": cap}}]))
    assert "| axum | 1100 (3/3) | 1350 (1/1) | 1195 (1/2) | 79% |" in text
    assert "steps: 3, each up to 3 runs of 30 s" in text
    # A set from before the repeated steps keeps its one-run table.
    old = {"p99_under_ms": 100.0, "rps": 61.0, "next_failed_rps": 66.5, "of_closed_loop_max": 0.7625, "steps": 3,
           "seconds_per_step": 15}
    text = "\n".join(reports.capacity_lines([{"name": "zio", "summary": {"capacity": old}}]))
    assert f"| zio | 61 | {reports.pct(0.7625)} | 66 |" in text
