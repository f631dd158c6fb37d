"""wrk/compare.py on two hand-made result sets: values, ratios and the spread verdict."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import compare  # noqa: E402


def _set(rps: dict, cpu: dict, startup: list[float], p99: float, failed: str | None = None) -> dict:
    stack = {"name": "actix", "startup_samples_s": startup,
             "own_ceiling": {"token_pairs_per_s_per_core": 2000.0, "runs_token_pairs_per_s_per_core": [1980.0, 2000.0]},
             "summary": {"by_concurrency": {"16": {"rps": rps, "cpu_ms_per_request": cpu["median"],
                                                   "cpu_ms_per_request_spread": cpu}},
                         "rss_steady_mib": 17.0,
                         "open_loop": [{"kind": "shared", "fraction": 0.5, "target_rps": 1000.0, "achieved_rps": 1000.0,
                                        "errors": 0, "latency_ms": {"p99": p99}}]}}
    if failed:
        stack["failed"] = failed
    return {"environment": {}, "stacks": [stack, {"name": "only-in-a", "summary": {}}]}


A = _set({"median": 3000, "min": 2900, "max": 3100}, {"median": 0.5, "min": 0.49, "max": 0.51}, [0.04, 0.05, 0.06], 10.0)
B = _set({"median": 3090, "min": 3000, "max": 3150}, {"median": 0.6, "min": 0.6, "max": 0.61}, [0.05, 0.05, 0.05], 20.0)


def rows_by_metric(rows):
    return {r["metric"]: r for r in rows if r["stack"] == "actix"}


def test_ratio_and_spread_verdicts():
    rows = rows_by_metric(compare.compare(A, B))
    rps = rows["rps c=16"]
    assert (rps["a"], rps["b"], rps["ratio"]) == (3000, 3090, 1.03)
    assert rps["spread"] == round(200 / 3000, 3) and rps["verdict"] == "inside"     # 3 % within ±6.7 %
    cpu = rows["CPU ms/request c=16"]
    assert cpu["ratio"] == 1.2 and cpu["verdict"] == "OUTSIDE"                     # 20 % beyond ±4 %
    assert rows["start-up s"]["a"] == 0.05 and rows["start-up s"]["verdict"] == "inside"
    assert rows["own token pairs/s per core"]["verdict"] == "inside"
    p99 = rows["open-loop p99 ms @ 1000/s"]
    assert p99["ratio"] == 2.0 and p99["verdict"] == "single", "measured once: no spread to weigh it against"
    assert rows["RSS steady MiB"]["ratio"] == 1.0
    assert not any(r["stack"] == "only-in-a" for r in compare.compare(A, B) if r["metric"] != "failed")


def test_failed_stacks_are_listed_not_compared():
    broken = _set({"median": 1, "min": 1, "max": 1}, {"median": 1, "min": 1, "max": 1}, [1.0], 1.0, failed="c=16#1: 503")
    rows = [r for r in compare.compare(A, broken) if r["stack"] == "actix"]
    assert rows == [{"stack": "actix", "metric": "failed", "a": None, "b": "c=16#1: 503"}]


def test_old_result_sets_without_summarised_spreads():
    old = {"stacks": [{"name": "x", "runs": {"16": [{"cpu_ms_per_request": 0.5}, {"cpu_ms_per_request": 0.55}]},
                       "summary": {"by_concurrency": {"16": {"rps": {"median": 10, "min": 9, "max": 11},
                                                             "cpu_ms_per_request": 0.52}}, "rss_steady_mb": 20.0}}]}
    m = compare.metrics(old["stacks"][0])
    assert (m["CPU ms/request c=16"].low, m["CPU ms/request c=16"].high) == (0.5, 0.55)
    assert m["RSS steady MiB"].value == 20.0


def test_cli(tmp_path, capsys):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "results.json").write_text(json.dumps(A))
    (tmp_path / "b.json").write_text(json.dumps(B))
    assert compare.main([str(tmp_path / "a"), str(tmp_path / "b.json")]) == 0
    out = capsys.readouterr().out
    assert "| actix | rps c=16 | 3000 | 3090 | 1.030 | ±6.7 % | inside |" in out
    assert "| actix | CPU ms/request c=16 | 0.5 | 0.6 | 1.200 | ±4.0 % | OUTSIDE |" in out
    assert compare.main([str(tmp_path / "a"), str(tmp_path / "b.json"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["stack"] == "actix"
    assert compare.main([str(tmp_path / "missing"), str(tmp_path / "b.json")]) == 2
    assert "cannot read" in capsys.readouterr().err


# --------------------------------------------------------------------------- key types (issue 22)


def _keyed(key: dict, cpu: float, pair_ms: float, own_in_summary: bool = True) -> dict:
    bc = {"rps": {"median": 1000, "min": 990, "max": 1010}, "cpu_ms_per_request": cpu,
          "cpu_ms_per_request_spread": {"median": cpu, "min": cpu - 0.01, "max": cpu + 0.01}}
    if own_in_summary:
        bc["own_cost_ms_per_request"] = round(cpu - pair_ms, 4)
        bc["own_cost_ms_per_request_spread"] = {"median": round(cpu - pair_ms, 4), "min": round(cpu - pair_ms - 0.01, 4),
                                                "max": round(cpu - pair_ms + 0.01, 4)}
    return {"environment": {"settings": key},
            "stacks": [{"name": "actix", "own_ceiling": {"token_pairs_per_s_per_core": 1000 / pair_ms,
                                                         "pair_ms": pair_ms},
                        "summary": {"by_concurrency": {"16": bc}}}]}


RSA_OLD = _keyed({"key_bits": 2048}, 0.60, 0.50, own_in_summary=False)   # a set from before --key-type
ED = _keyed({"key_type": "ed25519", "alg": "EdDSA"}, 0.18, 0.08)
P256 = _keyed({"key_type": "p-256", "alg": "ES256"}, 0.16, 0.05)


def test_key_type_of_new_and_old_sets():
    assert compare.key_type(RSA_OLD) == "rsa-2048" and compare.key_label(RSA_OLD) == "rsa-2048 (RS256)"
    assert compare.key_type(ED) == "ed25519" and compare.key_label(ED) == "ed25519 (EdDSA)"
    assert compare.key_label({"stacks": []}) == "key type unknown"


def test_own_cost_is_compared_across_key_types():
    rows = rows_by_metric(compare.compare(RSA_OLD, ED))
    own = rows["own cost ms/request c=16"]
    assert (own["a"], own["b"]) == (0.1, 0.1) and own["verdict"] == "inside"   # old set: CPU − its signbench
    assert rows["CPU ms/request c=16"]["verdict"] == "OUTSIDE"
    assert rows["own signing ms/pair"]["a"] == 0.5
    text = compare.render(compare.compare(RSA_OLD, ED), "a", "b", RSA_OLD, ED)
    assert text.startswith("A = a, rsa-2048 (RS256)\nB = b, ed25519 (EdDSA)\n")
    assert "different key types" in text
    assert "different key types" not in compare.render([], "a", "b", ED, ED)


def test_own_cost_side_by_side_cli(tmp_path, capsys):
    paths = []
    for name, data in (("rsa", RSA_OLD), ("p256", P256), ("ed", ED)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "results.json").write_text(json.dumps(data))
        paths.append(str(tmp_path / name))
    assert compare.main(["--own-cost", *paths]) == 0
    out = capsys.readouterr().out
    assert "| stack | | rsa-2048 (RS256) | p-256 (ES256) | ed25519 (EdDSA) |" in out
    assert "| actix | signing ms/pair | 0.500 | 0.050 | 0.080 |" in out
    assert "| actix | own ms/req c=16 | 0.100 [0.090–0.110] | 0.110 [0.100–0.120] | 0.100 [0.090–0.110] |" in out
    assert compare.main(["--own-cost", "--json", *paths]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["key_types"] == ["rsa-2048", "p-256", "ed25519"] and rows[0]["own_cost"][1]["value"] == 0.11
    with pytest.raises(SystemExit):
        compare.main(paths)   # without --own-cost: exactly two sets


def test_hand_offs_pooled_points_and_the_floor_are_compared():
    def stack(name, hand, pooled_p99):
        point = {"fraction": 0.5, "target_rps": 800.0, "runs": 5, "p99_spread": {"median": 9.0, "min": 8.0, "max": 12.0},
                 "pooled_latency_ms": {"p99": pooled_p99}, "own_cost_ms_per_request": 0.3, "switches_per_request": hand}
        return {"name": name, "summary": {
            "by_concurrency": {"64": {"rps": {"median": 1000, "min": 990, "max": 1010},
                                      "switches_per_request_spread": {"median": hand, "min": hand - 1, "max": hand + 1}}},
            "open_loop_shared": [point], "open_loop_own": [point]}}
    a = {"environment": {}, "stacks": [stack("akka", 16.0, 10.0)], "floor": stack("floor", 1.0, 2.0)}
    b = {"environment": {}, "stacks": [stack("akka", 8.0, 11.0)], "floor": stack("floor", 1.0, 2.0)}
    rows = {(r["stack"], r["metric"]): r for r in compare.compare(a, b)}
    assert rows[("akka", "hand-offs/request c=64")]["ratio"] == 0.5
    assert rows[("akka", "hand-offs/request c=64")]["verdict"] == "OUTSIDE"
    p99 = rows[("akka", "open-loop p99 ms @ 800/s")]
    assert (p99["a"], p99["b"]) == (10.0, 11.0) and p99["verdict"] == "inside"   # pooled, weighed by the runs' range
    assert rows[("akka", "hand-offs/request @ 50% of own max")]["b"] == 8.0
    assert rows[("floor (calibration)", "rps c=64")]["ratio"] == 1.0


def test_capacity_is_compared_with_its_range():
    new = {"name": "x", "summary": {"capacity": {"p99_under_ms": 100.0, "rps": 1100.0, "range_rps": [1100.0, 1350.0],
                                                 "next_failed_rps": 1195.0}}}
    old = {"name": "x", "summary": {"capacity": {"p99_under_ms": 100.0, "rps": 1300.0, "next_failed_rps": 1400.0}}}
    v = compare.metrics(new)["capacity rps (p99 < 100 ms)"]
    assert (v.value, v.low, v.high) == (1100.0, 1100.0, 1350.0)
    one_run = compare.metrics(old)["capacity rps (p99 < 100 ms)"]
    assert (one_run.value, one_run.low, one_run.high) == (1300.0, None, None)
    # 1300 vs 1100 is 18 % more, inside the newer set's own range (1100..1350: 23 %); 1400 would be outside it.
    assert compare.verdict(v, one_run) == "inside"
    assert compare.verdict(v, compare.Value(1400.0)) == "OUTSIDE"
