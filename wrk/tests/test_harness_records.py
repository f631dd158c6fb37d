"""The runner's typed records: a stack's result, a run's measurement, an open-loop rate, a warm-up. Typed while
the runner fills them, they must turn into exactly the dicts results.json has always held: every committed result
set's stacks rebuild into a StackResult and come back unchanged, which is what keeps wrk/compare.py, the
statistics and the reports reading old and new sets alike."""
from __future__ import annotations

import json
import sys
from dataclasses import fields
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from harness import records  # noqa: E402
from harness.records import FlyResult, MachineShare, Measurement, RateSpec, StackResult, WarmUp  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SETS = sorted(ROOT.glob("results/*/results.json"))


def _set_only(entry: dict) -> dict:
    """An entry as to_json writes it: without the summary (added afterwards) and without unset values."""
    return {k: v for k, v in entry.items() if k != "summary" and v is not None and v != [] and v != {}}


@pytest.mark.skipif(not SETS, reason="no committed result sets")
@pytest.mark.parametrize("path", SETS, ids=lambda p: p.parent.name)
def test_every_committed_sets_stacks_rebuild_into_the_record_and_back(path):
    data = json.loads(path.read_text())
    for entry in data["stacks"]:
        result = StackResult(**{k: v for k, v in entry.items() if k != "summary"})
        assert result.to_json() == _set_only(entry), entry["name"]
        for w in entry.get("warmups") or []:
            assert WarmUp(**w).to_json() == w
        if entry.get("fly"):
            assert FlyResult(**entry["fly"]).to_json() == _set_only(entry["fly"])
        measured = {f.name for f in fields(Measurement)}
        for runs in (entry.get("runs") or {}).values():
            for run in runs:
                cost = {k: run[k] for k in measured if k in run}
                machine = cost.pop("machine", None)
                m = Measurement(**cost, machine=MachineShare(**machine) if machine else None)
                assert m.to_json() == {k: run[k] for k in measured if k in run and run[k] is not None}


def test_a_stack_result_writes_only_what_was_set_with_its_records_as_dicts():
    r = StackResult("actix", "Rust, actix-web 4")
    assert r.to_json() == {"name": "actix", "description": "Rust, actix-web 4", "target": "local"}
    r.fail("conformance suite failed: x")
    r.fail("a later reason")
    assert r.failed == "conformance suite failed: x", "the first reason stands"
    r.warmups.append(WarmUp(16, "cpu_ms_per_request within 3% in two consecutive 10 s windows", 120, 20.1, True,
                            [{"rps": 1.0, "cpu_ms_per_request": 0.5, "errors": 0}]))
    r.fly = FlyResult(rule={"period_us": 80000}, startup_empty_balance_s=9.5)
    r.runs.setdefault("16", []).append({"rps": 1.0})
    r.exit_code = 0
    out = r.to_json()
    assert out["warmups"] == [{"concurrency": 16, "criterion": "cpu_ms_per_request within 3% in two consecutive 10 s "
                                                               "windows", "cap_s": 120, "seconds": 20.1, "stable": True,
                               "windows": [{"rps": 1.0, "cpu_ms_per_request": 0.5, "errors": 0}]}]
    assert out["fly"] == {"rule": {"period_us": 80000}, "startup_empty_balance_s": 9.5}
    assert out["runs"] == {"16": [{"rps": 1.0}]} and out["exit_code"] == 0, "a zero is a value, not unset"
    assert "primer" not in out and "samples" not in out and "unmeasured_errors" not in out
    json.dumps(out)   # plain JSON all the way down


def test_a_warm_up_without_windows_still_records_them():
    assert WarmUp(64, "rps within 3%", 6, 0.0, False).to_json()["windows"] == []


def test_a_runs_measurement_leaves_out_what_could_not_be_measured():
    m = Measurement(wall_s=15.0, wrk_cpu_s=1.2, wrk_cpu_ms_per_request=0.04,
                    machine=MachineShare(busy_cores=1.9, idle_cores=0.1, steal_cores=0.0, rest_cores=0.2))
    assert list(m.to_json()) == ["wall_s", "wrk_cpu_s", "wrk_cpu_ms_per_request", "machine"]
    assert m.to_json()["machine"] == {"busy_cores": 1.9, "idle_cores": 0.1, "steal_cores": 0.0, "rest_cores": 0.2}


def test_an_open_loop_rate_names_its_kind_and_repeat_only_when_it_has_one():
    assert RateSpec("shared", 0.25, "slowest", 250.0).to_json() == {
        "kind": "shared", "fraction": 0.25, "of": "slowest", "target_rps": 250.0}
    assert RateSpec("own", 0.9, "own", 900.0, 3).to_json()["repeat"] == 3


def test_jsonable_walks_lists_and_dicts_of_records():
    assert records.jsonable({"a": [RateSpec("own", 0.5, "own", 5.0, 1)], "b": 1}) == {
        "a": [{"kind": "own", "fraction": 0.5, "of": "own", "target_rps": 5.0, "repeat": 1}], "b": 1}
