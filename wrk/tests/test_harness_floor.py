"""The floor (issue 40 item 3): wrk/floor/, a workspace member built from crates already in Cargo.lock, answering
POST /token with the two tokens signed by rust-core's TokenSigner and nothing else; the runner takes it through
the same phases as a calibration target (never setting the shared rates, never in the stacks' tables) and gives
every stack's figures as a ratio to the floor's at the same load."""
from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import time
import tomllib
import urllib.request
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import stackctl  # noqa: E402
from harness import floor, keys, reports, schedule, summary, verification  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BINARY = ROOT / "target" / "release" / "simple-auth-floor"


def test_the_floor_is_a_workspace_member_built_from_the_workspaces_own_crates():
    root = tomllib.loads((ROOT / "Cargo.toml").read_text())
    assert "wrk/floor" in root["workspace"]["members"]
    crate = tomllib.loads((ROOT / "wrk" / "floor" / "Cargo.toml").read_text())
    deps = crate["dependencies"]
    assert all(isinstance(v, dict) and v.get("workspace") for v in deps.values()), "only the workspace's dependencies"
    assert set(deps) <= set(root["workspace"]["dependencies"])
    assert "deadpool-postgres" not in deps and "tokio-postgres" not in deps and "argon2" not in deps


def test_the_floor_runs_as_a_stack_would_from_the_shared_target_dir():
    s = floor.floor_stack()
    assert s.artifact.resolve() == BINARY
    assert (s.dir / s.manifest["run"][0]).resolve() == BINARY
    assert (s.dir / s.manifest["signbench"][0]).resolve() == ROOT / "target" / "release" / "signbench"
    assert "simple-auth-floor" in s.manifest["build"] and not s.uses_java
    assert floor.NAME not in stackctl.list_stacks()   # not a stack


def _claims(jwt: str) -> tuple[dict, dict]:
    def part(p):
        return json.loads(base64.urlsafe_b64decode(p + "=" * (-len(p) % 4)))
    head, body, _ = jwt.split(".")
    return part(head), part(body)


@pytest.fixture(scope="module")
def built_floor() -> Path:
    """The floor's binary, built by its own build command (the runner's) when it is missing or older than its
    sources: `make tools-test` on a clean clone runs before any build, and a skip here would leave the floor
    untested."""
    stack = floor.floor_stack()
    if stack.needs_build():
        if shutil.which(stack.manifest["build"][0]) is None:
            pytest.skip("cargo not found: the floor cannot be built")
        subprocess.run(stack.manifest["build"], cwd=stack.dir, check=True, stdout=subprocess.DEVNULL)
    return BINARY


@pytest.mark.parametrize("key_type", ["rsa-2048", "ed25519"])
def test_the_built_floor_signs_the_two_tokens_with_the_dev_key(built_floor, key_type, tmp_path):
    port = stackctl.free_port()
    env = {**os.environ, "PORT": str(port), "HOST": "127.0.0.1", "JWT_PRIVATE_KEY_FILE": str(stackctl.KEYS[key_type]),
           "JWT_ISSUER": f"http://localhost:{port}", "JWT_AUDIENCE": "channel-api"}
    proc = subprocess.Popen([str(built_floor)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}"
        stackctl.first_token(url, time.monotonic(), proc, 30)
        assert verification.verify_basic(url) is None
        req = urllib.request.Request(url + "/token", data=stackctl.JOHN_LOGIN,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            body = r.read()
        answer = json.loads(body)
        ah, ac = _claims(answer["access_token"])
        ih, ic = _claims(answer["id_token"])
        assert ah["kid"] == ih["kid"] == keys.key_kid(key_type) and ah["alg"] == keys.key_alg(key_type)
        assert ah["typ"] == "at+jwt" and ac["aud"] == "channel-api" and ic["aud"] == "public"
        assert ic["at_hash"] and ac["sid"] == ic["sid"] and ac["jti"] != ic["jti"]
    finally:
        stackctl.stop_process(proc)


def test_the_floor_does_not_set_the_shared_rates():
    plan = schedule.open_loop_rates({"akka": 1000.0, "floor": 5000.0}, (0.5,), (0.5, 0.9), 1, frozenset({"floor"}))
    assert [r.target_rps for r in plan["floor"]] == [500.0]   # the stacks' shared rate only: what its ratios are at
    assert [(r.kind, r.target_rps, r.own_fraction) for r in plan["akka"]] == [("shared", 500.0, 0.5),
                                                                              ("own", 900.0, None)]


LAT = {"p50": 1.0, "p90": 2.0, "p99": 4.0, "p99_9": 5.0, "max": 6.0}


def _result(name, rps, cpu, p99_shared):
    run = {"rps": rps, "errors": 0, "requests": rps * 30, "cpu_ms_per_request": cpu, "latency_ms": LAT,
           "switches_per_request": 2.0}
    olr = {"kind": "shared", "fraction": 0.5, "target_rps": 400.0, "achieved_rps": 400.0, "errors": 0,
           "cpu_ms_per_request": cpu * 1.5, "latency_ms": {**LAT, "p99": p99_shared}}
    return {"name": name, "runs": {"64": [run]}, "open_loop": [olr],
            "own_ceiling": {"pair_ms": 0.1, "provider": "aws-lc-rs", "token_pairs_per_s_per_core": 10000.0}}


def test_every_stack_is_a_ratio_of_the_floor_at_the_same_load_and_the_floor_is_no_stack(tmp_path):
    f = _result("floor", 4000, 0.25, 2.0)
    f["target"] = "floor"
    f["summary"] = summary.summarize(f, None)
    s = _result("zio", 1000, 1.0, 9.0)
    s["summary"] = summary.summarize(s, None)
    ratio = floor.floor_ratios(s["summary"], f["summary"])
    assert ratio["by_concurrency"]["64"] == {"rps": 0.25, "cpu_ms_per_request": 4.0, "own_cost_ms_per_request": 6.0,
                                             "switches_per_request": 1.0, "p99": 1.0}
    assert ratio["shared"] == [{"target_rps": 400.0, "p50": 1.0, "p99": 4.5, "cpu_ms_per_request": 4.0}]
    assert floor.floor_ratios(s["summary"], {}) == {}
    s["summary"]["floor_ratio"] = ratio
    env = {"date_utc": "2026-01-01", "cpu_model": "cpu", "cores": 2, "memory_gib": 24, "kernel": "6",
           "commit": "abc", "dirty": False,
           "settings": {"profile": "local", "scenario": "users", "key_type": "p-256", "concurrency": [64],
                        "repeats": 3, "duration_s": 30, "primer_s": 5, "warmup_cap_s": 180, "warmup_window_s": 10,
                        "wrk_threads": 2, "db_pool_size": 10, "wrong_share": 0.0, "limits": {}}}
    text = reports.write_markdown(tmp_path / "r.md", env, None, [s], None, f)
    assert "## The floor: what this machine and this harness allow" in text
    assert "| c=64 | 4000 | 0.250 | 0.150 | 2.0 | 1.0 | 4.0 |" in text
    assert "| zio | 0.25× · 4.00× | 4.50× |" in text
    assert "| zio | 1000 [1000–1000] | 64 | n/a | 1.000 | 0.900 | 2.0 | 4.00× |" in text
    assert "| floor |" not in text   # the floor is no row of the stacks' tables
    failed = reports.write_markdown(tmp_path / "f.md", env, None, [s], None, {"name": "floor", "failed": "build"})
    assert "The floor got no number: build." in failed
