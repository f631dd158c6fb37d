"""One ceiling per run (issue 40 item 1): OpenSSL's ceiling sampled through the run (start, before each stack,
before each sweep repeat, before the open loop, end), every share and own cost divided by the median of the
samples, the same for every stack, with its spread; each stack's signbench measured before it, before each sweep
repeat, before the open loop and at the end, its pair cost the median of those."""
from __future__ import annotations

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import stackctl  # noqa: E402
from harness import ceilings, cli, records, reports, schedule, summary  # noqa: E402


def _reading(signs: float) -> dict:
    return {"tool": "OpenSSL 3.0", "key_type": "p-256", "alg": "ES256", "signature": "ECDSA P-256",
            "openssl_speed": "ecdsap256", "signs_per_s_per_core": signs, "sign_ms": 1000 / signs,
            "token_pairs_per_s_per_core": signs / 2, "token_pairs_per_s_all_cores": signs,
            "runs_signs_per_s_per_core": [signs - 10, signs]}


def test_the_runs_ceiling_is_the_median_of_its_samples_with_their_spread(monkeypatch):
    readings = iter([40000.0, 50000.0, stackctl.ToolError("openssl speed ecdsap256 failed"), 44000.0])

    def fake(key_type, seconds, runs=1):
        r = next(readings)
        if isinstance(r, Exception):
            raise r
        return _reading(r)
    monkeypatch.setattr(ceilings, "openssl_ceiling", fake)
    log = ceilings.CeilingLog("p-256", 5, 3)
    assert log.ceiling() is None
    for at in ("start of the run", "before actix", "before axum", "end of the run"):
        log.sample(at)
    c = log.ceiling()
    assert [s["at"] for s in c["samples"]] == ["start of the run", "before actix", "end of the run"]  # failure left out
    assert c["signs_per_s_per_core"] == 44000.0 and c["sign_ms"] == 1000 / 44000
    assert c["spread"] == {"min": 40000.0, "median": 44000.0, "max": 50000.0}
    assert c["token_pairs_per_s_per_core"] == 22000.0 and c["key_type"] == "p-256" and c["alg"] == "ES256"
    assert c["samples"][0]["runs_signs_per_s_per_core"] == [39990.0, 40000.0]


def test_every_stacks_shares_use_the_same_ceiling_whatever_its_own_sample():
    run = {"rps": 100, "errors": 0, "requests": 1000, "cpu_ms_per_request": 0.2,
           "latency_ms": {"p50": 1, "p90": 2, "p99": 3, "p99_9": 4, "max": 5}}
    run_ceiling = ceilings.run_ceiling(_reading(40000.0), [{"at": "a", "signs_per_s_per_core": 40000.0},
                                                           {"at": "b", "signs_per_s_per_core": 50000.0}])
    fast = summary.summarize({"runs": {"64": [run]}, "openssl_ceiling": _reading(60000.0)}, run_ceiling)
    slow = summary.summarize({"runs": {"64": [run]}, "openssl_ceiling": _reading(30000.0)}, run_ceiling)
    assert fast["by_concurrency"]["64"]["crypto_share"] == slow["by_concurrency"]["64"]["crypto_share"] == 0.222
    assert fast["by_concurrency"]["64"]["own_cost_ms_per_request"] == round(0.2 - 2000 / 45000, 4)


def test_a_stacks_own_ceiling_through_the_run_is_the_median_of_its_samples():
    first = {"tool": "akka signbench", "provider": "AmazonCorrettoCryptoProvider", "token_pairs": 1000,
             "pair_ms": 0.5, "token_pairs_per_s_per_core": 2000.0, "runs_token_pairs_per_s_per_core": [1900.0, 2000.0]}
    again = {**first, "pair_ms": 0.4, "token_pairs_per_s_per_core": 2500.0}
    third = {**first, "pair_ms": 0.7, "token_pairs_per_s_per_core": 1428.6}
    o = ceilings.own_ceiling_through_run(first, "before akka", [("middle", third), ("end of the run", again)])
    assert o["pair_ms"] == 0.5 and o["token_pairs_per_s_per_core"] == 2000.0
    assert o["pair_ms_spread"] == {"min": 0.4, "median": 0.5, "max": 0.7}
    assert [s["at"] for s in o["samples"]] == ["before akka", "middle", "end of the run"]
    assert o["provider"] == "AmazonCorrettoCryptoProvider"


def test_the_sweep_samples_the_ceiling_before_each_repeat(monkeypatch):
    events = []
    monkeypatch.setattr(schedule, "load_run", lambda live, settings, c, secs, phase, measured=True:
                        events.append(phase) or {"rps": 1.0, "errors": 0})
    monkeypatch.setattr(schedule, "warm_up", lambda live, settings, c, progress: records.WarmUp(c, "x", 1, 1, True))
    settings = cli.parse_args(["--url", "a=http://127.0.0.1:1", "--concurrency", "16,64", "--repeats", "3"])
    lives = [schedule.Live("a", "http://127.0.0.1:1", records.StackResult("a"))]
    schedule.sweep(lives, settings, cli.Progress(1), [], before_repeat=lambda rep: events.append(f"ceiling {rep}"))
    marks = [i for i, e in enumerate(events) if e.startswith("ceiling")]
    assert [events[i] for i in marks] == ["ceiling 0", "ceiling 1", "ceiling 2"]
    assert events[0] == "warm-up c=16"   # one window at 16 after the warm-up by the rule at 64 (faked)
    assert marks == [1, 6, 11]   # each before its repeat's 2 concurrencies × (re-warm + run)


def test_the_report_gives_the_runs_ceiling_its_spread_and_its_samples(tmp_path):
    env = {"date_utc": "2026-01-01", "cpu_model": "cpu", "cores": 2, "memory_gib": 24, "kernel": "6",
           "commit": "abc", "dirty": False,
           "settings": {"profile": "local", "scenario": "users", "key_type": "p-256", "concurrency": [64],
                        "repeats": 3, "duration_s": 30, "primer_s": 5, "warmup_cap_s": 120, "warmup_window_s": 10,
                        "wrk_threads": 2, "db_pool_size": 10, "wrong_share": 0.0, "limits": {}}}
    c = ceilings.run_ceiling(_reading(40000.0), [{"at": "start of the run", "signs_per_s_per_core": 40000.0},
                                                 {"at": "before actix", "signs_per_s_per_core": 48000.0},
                                                 {"at": "end of the run", "signs_per_s_per_core": 44000.0}])
    text = reports.write_markdown(tmp_path / "r.md", env, c, [])
    assert ("The run's ceiling (OpenSSL 3.0): 44000 ECDSA P-256 signatures/s per core [40000–48000] = 22000 token "
            "pairs/s per core, the median of 3 samples through the run (start of the run 40000, before actix 48000, "
            "end of the run 44000;") in text


def test_each_stacks_signbench_is_sampled_through_the_run_and_its_pair_cost_is_the_median(monkeypatch):
    from harness import runner

    class FakeStack:
        manifest = {"signbench": ["sb"]}

    def reading(pair_ms):
        return {"tool": "akka signbench", "provider": "ACCP", "token_pairs": 1000, "pair_ms": pair_ms,
                "token_pairs_per_s_per_core": 1000 / pair_ms, "runs_token_pairs_per_s_per_core": [1000 / pair_ms]}
    readings = iter([reading(1.8), stackctl.ToolError("signbench of akka failed"), reading(1.4), reading(1.5)])
    calls = []

    def fake(stack, env, seconds, runs=1):
        calls.append(stack)
        r = next(readings)
        if isinstance(r, Exception):
            raise r
        return r
    monkeypatch.setattr(runner, "own_ceiling", fake)
    settings = cli.parse_args(["--smoke"])
    akka = schedule.Live("akka", "http://127.0.0.1:1", records.StackResult("akka"), stack=FakeStack())
    akka.result.own_ceiling = reading(1.6)                                   # before its start
    url = schedule.Live("url", "http://127.0.0.1:2", records.StackResult("url"))   # no signbench: never sampled
    gone = schedule.Live("gone", "http://127.0.0.1:3", records.StackResult("gone"), stack=FakeStack())
    gone.result.own_ceiling = reading(9.0)
    gone.fail("conformance")                                                 # failed: never sampled again
    for at in ("before sweep repeat 1", "before sweep repeat 2", "before sweep repeat 3", "before the open loop"):
        runner.sample_own_ceilings([akka, url, gone], settings, cli.Progress(1), at)
    assert len(calls) == 4 and all(isinstance(c, FakeStack) for c in calls)
    o = akka.result.own_ceiling
    assert [s["at"] for s in o["samples"]] == ["before akka", "before sweep repeat 1", "before sweep repeat 3",
                                               "before the open loop"]   # the failed reading left out
    assert o["pair_ms"] == statistics.median([1.6, 1.8, 1.4, 1.5]) and o["pair_ms_spread"]["max"] == 1.8
    assert gone.result.own_ceiling["pair_ms"] == 9.0 and "samples" not in gone.result.own_ceiling


def test_the_estimate_counts_the_signbench_samples_through_the_run():
    from harness import estimate
    settings = cli.parse_args([])
    stack = estimate.target_phases(settings, "stack", jvm=True)
    url = estimate.target_phases(settings, "url")
    samples = settings.repeats + 1 + 1   # before each repeat, before the open loop, at the end
    assert stack["signbench through the run"] == samples * settings.signbench_runs * (settings.signbench_s + 3)
    assert "signbench through the run" not in url
