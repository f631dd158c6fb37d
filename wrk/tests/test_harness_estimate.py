"""The schedule's estimate (harness/estimate.py, `bench.py --estimate`) and what the schedule runs to stay within it:
the warm-up rule once per stack, the short re-warm between open-loop runs, the own 25 % point, the floor at the
shared rates only. Synthetic settings; nothing is run."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import stackctl  # noqa: E402
from harness import cli, estimate, records, runner, schedule  # noqa: E402

STACKS = ",".join(stackctl.list_stacks())


def hours(args: list[str]) -> float:
    s = cli.parse_args(["--stacks", STACKS] + args)
    jvm = sum(stackctl.Stack.load(n).uses_java for n in s.stacks)
    return estimate.estimated_seconds(s, len(s.stacks), 0, s.floor, jvm) / 3600


def test_a_full_users_run_of_every_stack_and_the_floor_fits_under_three_hours():
    # The JVM stacks' warm-ups (their JIT compilers going quiet) take minutes each, and every stack's signbench is
    # sampled five times after its start: 2.8 h with three JVM stacks.
    for args in ([], ["--key-type", "p-256"], ["--profile", "fly-performance-1x"]):
        assert hours(args) <= 2.8, args
    # fly-shared-cpu-1x: the gate and the burst's warm-up at 1/16 of a core add about 25 minutes
    assert hours(["--profile", "fly-shared-cpu-1x"]) <= 3.2
    for args in (["--scenario", "refresh"], ["--profile", "argon2"]):   # no open loop
        assert hours(args) < 1.2, args
    # five runs of 30 s at every point (issue 40: at least five runs and 150 s), and the own 25 % (issue 39)
    s = cli.parse_args(["--stacks", STACKS])
    assert s.open_loop_repeats * s.open_loop_s >= 150 and s.open_loop_repeats >= 5
    assert s.own_fractions == (0.25, 0.5, 0.75, 0.9) and s.shared_fractions == (0.5, 0.75)


def test_the_estimate_counts_the_points_each_target_is_offered():
    s = cli.parse_args(["--stacks", STACKS])
    assert [estimate.open_points(s, k) for k in ("slowest", "stack", "floor")] == [4, 6, 2]
    kinds = estimate.targets(s, 5, 0, True)
    assert kinds == ["slowest", "stack", "stack", "stack", "stack", "floor"]
    # it agrees with the plan the schedule makes (the slowest's shared rates are its own 50 and 75 %)
    tops = {"a": 1000.0, "b": 1300.0, "c": 1700.0, "floor": 4000.0}
    plan = schedule.open_loop_rates(tops, s.shared_fractions, s.own_fractions, s.open_loop_repeats,
                                    frozenset({"floor"}))
    assert {n: len(v) // s.open_loop_repeats for n, v in plan.items()} == {"a": 4, "b": 6, "c": 6, "floor": 2}
    p = estimate.target_phases(s, "stack")
    run_s = s.open_loop_s + 1 + s.open_loop_rewarm + 1
    assert p["open loop"] == 6 * 5 * run_s + s.rewarm - s.open_loop_rewarm
    assert p["warm-up"] == 7 * s.warmup_window + 2 * s.warmup_window   # the rule once, one window at the others
    # a JVM stack's warm-up waits for its JIT compilers as well: minutes, within the cap
    jvm = estimate.target_phases(s, "stack", jvm=True)["warm-up"]
    assert jvm == estimate.JVM_WARMUP_S + 2 * s.warmup_window and estimate.JVM_WARMUP_S <= s.warmup
    # ... and each of its signbench samples through the run starts a JVM (2 s more a run than a native signbench)
    samples = (s.repeats + 2) * s.signbench_runs
    assert estimate.estimated_seconds(s, 5, 0, True, jvm=3) - estimate.estimated_seconds(s, 5, 0, True) == \
        3 * (estimate.JVM_WARMUP_S - 7 * s.warmup_window + samples * 2)
    assert "conformance gate" not in estimate.target_phases(s, "floor")


def test_the_fly_shared_estimate_counts_the_throttled_gate_and_warm_up():
    # Under the shared-CPU rule the gate and the warm-up before the burst run at 1/16 of a core once the balance is
    # spent: a JVM stack's take minutes longer than on two cores.
    shared = cli.parse_args(["--stacks", STACKS, "--profile", "fly-shared-cpu-1x"])
    local = cli.parse_args(["--stacks", STACKS])
    jvm, native = (estimate.target_phases(shared, "stack", jvm=j) for j in (True, False))
    assert jvm["conformance gate"] == estimate.SHARED_JVM_GATE_S > estimate.GATE_S
    assert native["conformance gate"] == estimate.SHARED_GATE_S
    assert estimate.target_phases(local, "stack", jvm=True)["conformance gate"] == estimate.GATE_S
    rule_s = (2 * shared.warmup_k + 1) * shared.warmup_window
    assert native["fly burst"] == min(shared.warmup, rule_s) + shared.duration + 20
    assert jvm["fly burst"] == min(shared.warmup, max(rule_s, estimate.SHARED_JVM_BURST_WARMUP_S)) + shared.duration + 20
    assert "fly burst" not in estimate.target_phases(local, "stack", jvm=True)


def test_smoke_stays_one_short_step():
    s = cli.parse_args(["--stacks", STACKS, "--smoke"])
    assert (s.concurrency, s.repeats, s.open_loop_repeats, s.capacity_steps, s.capacity_runs) == ([16], 1, 1, 1, 1)
    assert (s.shared_fractions, s.own_fractions) == ((0.5,), (0.9,))
    assert hours(["--smoke"]) < 0.2


def test_estimate_prints_the_schedule_and_exits_before_anything_runs(capsys, monkeypatch):
    monkeypatch.setattr(runner.shutil, "which", lambda tool: None)   # not even wrk is needed
    assert runner.main(["--stacks", STACKS, "--estimate"]) == 0
    out = capsys.readouterr().out
    assert "5 stack(s), the floor" in out and "1 x slowest (JVM), 4 open-loop points" in out
    assert "2 x stack (JVM), 6 open-loop points" in out and "2 x stack, 6 open-loop points" in out
    assert "1 x floor, 2 open-loop points" in out
    total = float(out.split("total: ")[1].split(" h")[0])
    assert total == round(hours([]), 2)


class Quiet:
    def say(self, *a):
        pass


def test_an_open_loop_run_after_another_gets_the_short_rewarm(monkeypatch, tmp_path):
    calls = []

    def fake_oha(url, rate, seconds, connections, bodies, wrong, oha):
        calls.append(seconds)
        return {"status": {"200": 10}, "errors": 0, "achieved_rps": rate, "target_rps": rate,
                "latency_ms": {"p50": 1, "p99": 2}, "requests": 10}
    monkeypatch.setattr(schedule, "run_oha", fake_oha)
    monkeypatch.setattr(schedule, "account", lambda before, after, n, cpu: records.Measurement(wall_s=0.0))
    live = schedule.Live("a", "http://127.0.0.1:9", records.StackResult("a"))
    settings = cli.parse_args(["--stacks", STACKS, "--rewarm", "5", "--open-loop-rewarm", "2"])
    spec = records.RateSpec("own", 0.25, "own", 100.0, 1)
    live.result.open_loop.append(schedule.open_run(live, spec, settings, Quiet(), tmp_path / "b", "oha", 30))
    schedule.open_run(live, spec, settings, Quiet(), tmp_path / "b", "oha", 30)
    assert calls == [5, 30, 2, 30]   # after the closed loop the full re-warm; after an open-loop run the short one


def test_the_warm_up_rule_runs_once_at_the_highest_concurrency_that_does_not_shed(monkeypatch):
    assert cli.parse_args(["--stacks", STACKS]).warmup_concurrency == 256
    assert cli.parse_args(["--stacks", STACKS, "--profile", "fly-shared-cpu-1x"]).warmup_concurrency == 16
    # argon2: 32 connections are past the overload limit (503s counted): the rule at 8, one window at 32 and 2
    argon2 = cli.parse_args(["--stacks", STACKS, "--profile", "argon2"])
    assert argon2.concurrency == [2, 8, 32] and argon2.warmup_concurrency == 8
    ruled, windows = [], []
    monkeypatch.setattr(schedule, "warm_up", lambda live, settings, c, progress:
                        ruled.append(c) or records.WarmUp(c, "x", 1, 1, False))
    monkeypatch.setattr(schedule, "load_run", lambda live, settings, c, secs, phase, measured=True:
                        windows.append((c, secs, measured)) or {"rps": 1.0, "errors": 0})
    live = schedule.Live("a", "http://127.0.0.1:9", records.StackResult("a"))
    schedule.warm_up_once([live], argon2, Quiet())
    assert ruled == [8] and windows == [(32, 10, False), (2, 10, False)]
    assert [(w.concurrency, w.stable) for w in live.result.warmups] == [(8, False), (32, False), (2, False)]
