"""The argon2 profile (issue 40 item 6): the contract's argon2id logins per second per core, beside this machine's
argon2id ceiling and Keycloak's published 15 logins/s per vCPU; the stacks run as they ship, so the overload
limit's 503s are counted as shed, not failures."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import stackctl  # noqa: E402
from harness import argon2, cli, loadgen, summary  # noqa: E402


def test_the_argon2_profile_runs_the_argon_population_at_sustained_and_shedding_concurrencies(capsys):
    stack = stackctl.list_stacks()[0]
    s = cli.parse_args(["--stacks", stack, "--profile", "argon2"])
    assert s.scenario == "argon2" and s.concurrency == [2, 8, 32] and not s.open_loop and s.shed_ok
    assert not s.limits   # the stacks as they ship, no cgroup limits
    assert not cli.parse_args(["--stacks", stack]).shed_ok
    with pytest.raises(SystemExit):
        cli.parse_args(["--stacks", stack, "--profile", "argon2", "--wrong-share", "0.1"])
    assert "right passwords" in capsys.readouterr().err


def _wrk(status: dict) -> dict:
    return {"status": status, "socket_errors": {"connect": 0, "read": 0, "write": 0, "timeout": 0},
            "rps": 10.0, "duration_s": 10.0, "requests": sum(status.values())}


def test_503s_are_shed_in_the_argon2_profile_and_errors_elsewhere():
    shed = loadgen.count_wrk_answers(_wrk({"200": 100, "503": 40}), 0.0, shed_ok=True)
    assert shed["errors"] == 0 and shed["shed"] == 40 and shed["rps"] == 10.0
    assert loadgen.run_failure(shed, "c=32#1") is None
    strict = loadgen.count_wrk_answers(_wrk({"200": 100, "503": 40}), 0.0)
    assert strict["errors"] == 40 and "503" in loadgen.run_failure(strict, "c=32#1")
    other = loadgen.count_wrk_answers(_wrk({"200": 100, "500": 1, "503": 4}), 0.0, shed_ok=True)
    assert other["errors"] == 1 and '{"500": 1}' in loadgen.run_failure(other, "c=32#1")


def test_the_argon2id_ceiling_hashes_with_the_contracts_parameters():
    c = argon2.argon2_ceiling(0.5, processes=1)
    assert c["params"] == {"memory_cost_kib": 19456, "time_cost": 2, "parallelism": 1, "hash_len": 32}
    assert c["processes"] == 1 and c["runs"][0]["hashes"] >= 1
    assert c["hashes_per_s_per_core"] > 0 and c["tool"].startswith("argon2-cffi")


@pytest.mark.parametrize("text, n", [("0-1", 2), ("1", 1), ("0,2-3", 3)])
def test_the_cores_a_server_could_use(text, n):
    assert argon2.cpu_count_of({"cpus_allowed": text}) == n
    assert argon2.cpu_count_of({"cgroup": {"cpuset": text}, "cpus_allowed": "0-7"}) == n


def test_logins_per_core_beside_the_ceiling_and_keycloak():
    def run(rps, shed, total):
        return {"rps": rps, "errors": 0, "requests": total, "shed": shed, "shed_ok": True, "cpu_ms_per_request": 40.0,
                "latency_ms": {"p50": 1, "p90": 2, "p99": 3, "p99_9": 4, "max": 5}}
    r = {"name": "actix", "cpus_allowed": "0-1",
         "runs": {"2": [run(60.0, 0, 600)], "8": [run(64.0, 0, 640)], "32": [run(62.0, 380, 1000)]}}
    r["summary"] = summary.summarize(r, None)
    assert r["summary"]["by_concurrency"]["32"]["shed_share"] == 0.38
    a = argon2.argon2_summary(r, {"hashes_per_s_per_core": 40.0})
    assert a["logins_per_s"] == 64.0 and a["at_concurrency"] == "8" and a["cores"] == 2
    assert a["logins_per_s_per_core"] == 32.0 and a["of_argon2id_ceiling_per_core"] == 0.8
    assert a["vs_keycloak_per_vcpu"] == round(32 / 15, 2)
    assert a["by_concurrency"]["32"] == {"logins_per_s": 62.0, "shed": 380, "shed_share": 0.38, "p99_ms": 3}
    r["summary"]["argon2"] = a
    text = "\n".join(argon2.argon2_lines([r], {"tool": "argon2-cffi", "processes": 2, "hashes_per_s_per_core": 40.0,
                                               "hashes_per_s_all_cores": 70.0}))
    assert "Concepts for sizing CPU and memory resources" in text and "15 password logins/s per vCPU" in text
    assert "| actix | 64.0 | 8 | 32.0 | 80% | 2.13× | 40.0 | 60.0 · 0% | 64.0 · 0% | 62.0 · 38% |" in text


def test_cpu_per_login_counts_the_cpu_of_the_shed_answers_against_the_logins_served():
    def run(cpu, total, shed):
        return {"rps": 1.0, "errors": 0, "requests": total, "shed": shed, "shed_ok": True, "cpu_ms_per_request": cpu,
                "latency_ms": {"p50": 1, "p90": 2, "p99": 3, "p99_9": 4, "max": 5}}
    # 1,000 answers for 40 ms of CPU each, 380 of them shed: 40 s of CPU for 620 logins.
    assert argon2.cpu_ms_per_login([run(40.0, 1000, 380)]) == round(40.0 * 1000 / 620, 4)
    assert argon2.cpu_ms_per_login([run(40.0, 600, 0), run(30.0, 1000, 500), run(50.0, 100, 0)]) == 50.0
    assert argon2.cpu_ms_per_login([run(40.0, 100, 100)]) is None     # every answer shed: no login to divide by
    r = {"name": "actix", "cpus_allowed": "0-1", "runs": {"8": [run(27.9, 1009, 348), run(28.3, 1013, 352)]}}
    r["summary"] = summary.summarize(r, None)
    a = argon2.argon2_summary(r, {"hashes_per_s_per_core": 24.6})
    assert a["cpu_ms_per_login"] == round((27.9 * 1009 / 661 + 28.3 * 1013 / 661) / 2, 4)
