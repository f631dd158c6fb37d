"""The benchmark harness against a fake /token server: what users.lua sends
and counts, and how the runner parses, summarizes and reports it. No timing is
asserted anywhere; only counts, shapes and arithmetic."""
from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import tomllib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import stackctl  # noqa: E402
from harness import (ceilings, cgroups, cli, environment, governor, keys, loadgen, probes, records,  # noqa: E402
                     reports, runner, schedule, summary, verification)

ROOT = stackctl.ROOT

# Only the tests that run wrk itself need it; the rest of the runner is tested without.
needs_wrk = pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk not installed")


def _b64(obj) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()


FAKE_JWT = f"{_b64({'alg': 'RS256', 'typ': 'JWT'})}.{_b64({'sub': '1'})}.c2lnbmF0dXJl"


class FakeToken(BaseHTTPRequestHandler):
    """Answers like the contract: 200 for the documented passwords, 400 otherwise."""
    protocol_version = "HTTP/1.1"
    seen: list[dict] = []
    unavailable = False
    jwt_tokens = False

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        FakeToken.seen.append(body)
        user, pw = body["username"], body["password"]
        local = user.split("@")[0]
        ok = (user == "john@example.com" and pw == "TopSecret0!") or \
             (local.startswith("legacy") and pw == f"legacy-pass-{local[6:]}") or \
             (local.startswith("argon") and pw == f"argon-pass-{local[5:]}")
        tok = FAKE_JWT if FakeToken.jwt_tokens else None
        payload = (json.dumps({"access_token": tok or "a", "id_token": tok or "i", "token_type": "Bearer",
                               "expires_in": 600}).encode()) if ok else \
            b'{"error":"invalid_grant","error_description":"invalid username or password"}'
        status = 503 if FakeToken.unavailable else (200 if ok else 400)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def fake():
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeToken)
    server.handle_error = lambda *a: None  # wrk and oha drop their connections at the end of a run
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture(autouse=True)
def clear():
    FakeToken.seen.clear()


@needs_wrk
def test_users_scenario_walks_the_legacy_population(fake):
    run = loadgen.run_wrk(fake, 2, 1, 1, "users", 0.0)
    assert run["requests"] > 0
    assert run["status"] == {"200": run["requests"]}
    assert run["errors"] == 0
    users = [b["username"] for b in FakeToken.seen]
    assert all(u.startswith("legacy") and u.endswith("@example.com") for u in users)
    assert len(set(users)) > 1, "the script rotates through users"


@needs_wrk
def test_argon2_scenario_stays_in_its_population(fake):
    loadgen.run_wrk(fake, 2, 1, 1, "argon2", 0.0)
    nums = {int(b["username"][5:].split("@")[0]) for b in FakeToken.seen}
    assert nums and min(nums) >= 1 and max(nums) <= 100


@needs_wrk
def test_wrong_share_is_counted_as_expected_400s(fake):
    run = loadgen.run_wrk(fake, 1, 1, 1, "users", 0.25)
    ok, bad = run["status"].get("200", 0), run["status"].get("400", 0)
    assert ok + bad == run["requests"]
    # Deterministic: every fourth request is wrong (in flight at the end aside).
    assert abs(bad - run["requests"] / 4) <= 2
    assert run["errors"] == 0, "400s are expected when wrong passwords are sent on purpose"


@needs_wrk
def test_unexpected_status_is_an_error(fake):
    FakeToken.unavailable = True
    try:
        run = loadgen.run_wrk(fake, 1, 1, 1, "john", 0.0)
    finally:
        FakeToken.unavailable = False
    assert run["status"] == {"503": run["requests"]}
    assert run["unexpected_status"] == run["requests"] and run["errors"] >= run["requests"]


@needs_wrk
def test_wrong_passwords_only_is_not_an_error(fake):
    run = loadgen.run_wrk(fake, 1, 1, 1, "john", 1.0)
    assert run["status"] == {"400": run["requests"]}
    assert run["errors"] == 0


class _Running:
    returncode = None

    def poll(self):
        return None


class _Exited:
    returncode = 3

    def poll(self):
        return 3


def test_first_token_waits_through_unavailable_answers(fake):
    FakeToken.unavailable = True
    t0 = time.monotonic()  # before the timer starts: the first 200 cannot come sooner than 0.2 s after t0
    threading.Timer(0.2, lambda: setattr(FakeToken, "unavailable", False)).start()
    try:
        elapsed = probes.time_to_first_token(fake, _Running(), t0, timeout=10)
    finally:
        FakeToken.unavailable = False
    assert elapsed >= 0.2
    assert FakeToken.seen[-1] == {"username": "john@example.com", "password": "TopSecret0!"}
    assert len(FakeToken.seen) >= 2


def test_first_token_gives_up_on_a_dead_process_or_a_closed_port(fake):
    with pytest.raises(stackctl.ToolError, match="exited with 3"):
        probes.time_to_first_token(fake, _Exited(), time.monotonic())
    closed = f"http://127.0.0.1:{stackctl.free_port()}"
    with pytest.raises(stackctl.ToolError, match="no 200"):
        probes.time_to_first_token(closed, _Running(), time.monotonic(), timeout=0.3)


def test_summary_medians_spread_and_crypto_share():
    def run(rps, cpu):
        return {"rps": rps, "errors": 0, "requests": 1000, "cpu_ms_per_request": cpu,
                "latency_ms": {"p50": 1, "p90": 2, "p99": 3, "p99_9": 4, "max": 5}}
    result = {"runs": {"16": [run(100, 2.0), run(300, 1.0), run(200, 1.5)], "64": [run(400, 1.0)]},
              "samples": [(0.0, 50 * 2**20, 0.1), (5.0, 80 * 2**20, 1.0), (9.0, 60 * 2**20, 2.0)],
              "phases": [(1.0, "warmup"), (4.0, "c=16#1")]}
    s = summary.summarize(result, {"sign_ms": 0.5})
    c16 = s["by_concurrency"]["16"]
    assert c16["rps"] == {"median": 200, "min": 100, "max": 300}
    assert c16["cpu_ms_per_request"] == 1.5
    assert c16["crypto_share"] == round(2 * 0.5 / 1.5, 3)
    assert s["max_rps_at"] == "64" and s["max_rps"] == 400
    assert s["rss_peak_mib"] == 80.0 and s["rss_steady_mib"] == 70.0
    assert c16["cpu_ms_per_request_spread"] == {"median": 1.5, "min": 1.0, "max": 2.0}


def test_startup_probe_times_a_start_and_stops_the_process(tmp_path):
    port = stackctl.free_port()
    (tmp_path / "server.py").write_text(
        "import sys\nfrom http.server import BaseHTTPRequestHandler, HTTPServer\n"
        "class H(BaseHTTPRequestHandler):\n"
        "    def do_POST(self):\n"
        "        self.rfile.read(int(self.headers['Content-Length']))\n"
        "        self.send_response(200); self.send_header('Content-Length', '0'); self.end_headers()\n"
        "    def log_message(self, *a): pass\n"
        f"HTTPServer(('127.0.0.1', {port}), H).serve_forever()\n")
    t = probes.startup_probe([sys.executable, "server.py"], tmp_path, dict(os.environ), f"http://127.0.0.1:{port}")
    assert t > 0
    with pytest.raises(OSError):  # stopped: nothing listens any more
        socket.create_connection(("127.0.0.1", port), timeout=1).close()


def test_own_share_uses_the_stacks_own_pair_cost():
    run = {"rps": 100, "errors": 0, "requests": 1000, "cpu_ms_per_request": 0.8,
           "latency_ms": {"p50": 1, "p90": 2, "p99": 3, "p99_9": 4, "max": 5}}
    s = summary.summarize({"runs": {"16": [run]}, "own_ceiling": {"pair_ms": 0.6}}, {"sign_ms": 0.25})
    assert s["by_concurrency"]["16"]["own_share"] == 0.75
    assert s["by_concurrency"]["16"]["crypto_share"] == 0.625
    assert "own_share" not in summary.summarize({"runs": {"16": [run]}}, None)["by_concurrency"]["16"]


def _fake_stack(tmp_path: Path, script: str) -> stackctl.Stack:
    (tmp_path / "signbench.py").write_text(script)
    return stackctl.Stack("fake", tmp_path, {"run": ["true"], "signbench": [sys.executable, "signbench.py"]})


def test_own_ceiling_reads_the_last_json_line_and_passes_the_seconds(tmp_path):
    stack = _fake_stack(tmp_path, "import json, os, sys\n"
                        "print('warming up', file=sys.stderr)\n"
                        "print(json.dumps({'token_pairs': int(float(sys.argv[1]) * 1000), 'seconds': 2.0,"
                        " 'thread_cpu_seconds': 1.6, 'provider': os.environ['PROVIDER']}))\n")
    own = ceilings.own_ceiling(stack, {**os.environ, "PROVIDER": "ACCP 2.5"}, 2)
    assert own["provider"] == "ACCP 2.5" and own["token_pairs"] == 2000
    assert own["token_pairs_per_s_per_core"] == 1250 and own["pair_ms"] == 0.8


def test_own_ceiling_is_the_fastest_of_its_runs_and_keeps_them_all(tmp_path):
    # Each run reads and bumps a counter: the second of three is the fastest (1.0 CPU s for 2000 pairs).
    stack = _fake_stack(tmp_path, "import json, pathlib\n"
                        "f = pathlib.Path('n'); n = int(f.read_text()) if f.exists() else 0; f.write_text(str(n + 1))\n"
                        "cpu = [1.6, 1.0, 1.25][n]\n"
                        "print(json.dumps({'token_pairs': 2000, 'seconds': 2.0, 'thread_cpu_seconds': cpu,"
                        " 'provider': 'p'}))\n")
    own = ceilings.own_ceiling(stack, dict(os.environ), 2, runs=3)
    assert own["token_pairs_per_s_per_core"] == 2000 and own["pair_ms"] == 0.5
    assert own["thread_cpu_seconds"] == 1.0
    assert own["runs_token_pairs_per_s_per_core"] == [1250, 2000, 1600]


def test_own_ceiling_fails_when_any_run_fails(tmp_path):
    stack = _fake_stack(tmp_path, "import json, pathlib, sys\n"
                        "f = pathlib.Path('n'); n = int(f.read_text()) if f.exists() else 0; f.write_text(str(n + 1))\n"
                        "sys.exit(3) if n == 1 else print(json.dumps({'token_pairs': 10, 'seconds': 1,"
                        " 'thread_cpu_seconds': 1, 'provider': 'p'}))\n")
    with pytest.raises(stackctl.ToolError, match="exit 3"):
        ceilings.own_ceiling(stack, dict(os.environ), 1, runs=3)


def test_settings_run_signbench_three_times_except_in_the_smoke_run():
    assert cli.parse_args([]).signbench_runs == 3
    assert cli.parse_args(["--smoke"]).signbench_runs == 1


@pytest.mark.parametrize("script, message", [
    ("import sys; print('no key', file=sys.stderr); sys.exit(2)", "exit 2"),
    ("print('fast!')", "no valid result line"),
    ("print('{\"token_pairs\": 0, \"seconds\": 1, \"thread_cpu_seconds\": 1, \"provider\": \"x\"}')", "implausible"),
])
def test_own_ceiling_refuses_failures_and_nonsense(tmp_path, script, message):
    with pytest.raises(stackctl.ToolError, match=message):
        ceilings.own_ceiling(_fake_stack(tmp_path, script), dict(os.environ), 1)


def test_markdown_shows_own_ceilings_and_their_failures(tmp_path):
    env = {"date_utc": "2026-01-01T00:00:00+00:00", "cpu_model": "cpu", "cores": 2, "memory_gib": 24, "kernel": "6",
           "commit": "abc", "dirty": False,
           "settings": {"profile": "local", "scenario": "users", "key_bits": 2048, "concurrency": [16], "repeats": 1,
                        "duration_s": 1, "primer_s": 0, "warmup_s": 0, "wrk_threads": 1, "db_pool_size": 10,
                        "limits": {}, "wrong_share": 0.0}}
    ceiling = {"tool": "OpenSSL", "key_bits": 2048, "signs_per_s_per_core": 4000, "sign_ms": 0.25,
               "token_pairs_per_s_per_core": 2000, "token_pairs_per_s_all_cores": 4000}
    slower = {**ceiling, "signs_per_s_per_core": 3200, "sign_ms": 0.3125}
    results = [{"name": "good", "own_ceiling": {"provider": "ACCP", "token_pairs_per_s_per_core": 1600, "pair_ms": 0.625},
                "failed": "later failure", "summary": {}},
               {"name": "drifted", "openssl_ceiling": slower, "own_ceiling": {"provider": "ACCP",
                "token_pairs_per_s_per_core": 1600, "pair_ms": 0.625}, "failed": "x", "summary": {}},
               {"name": "bad", "own_ceiling_error": "signbench of bad failed (exit 2): no key", "failed": "x", "summary": {}},
               {"name": "plain", "openssl_ceiling": ceiling, "failed": "x", "summary": {}}]
    text = reports.write_markdown(tmp_path / "r.md", env, ceiling, results)
    assert "| good | 4000 | ACCP | 1600 | 0.625 | 80% |" in text
    assert "| drifted | 3200 | ACCP | 1600 | 0.625 | 80% |" in text   # its own sample shown; the run's ceiling used
    assert "| bad | 4000 | failed: signbench of bad failed (exit 2): no key |" in text
    assert "| plain | 4000 | no signbench |" in text


def test_crypto_share_uses_the_runs_one_ceiling_not_the_sample_before_the_stack():
    run = {"rps": 100, "errors": 0, "requests": 1000, "cpu_ms_per_request": 1.0,
           "latency_ms": {"p50": 1, "p90": 2, "p99": 3, "p99_9": 4, "max": 5}}
    s = summary.summarize({"runs": {"16": [run]}, "openssl_ceiling": {"sign_ms": 0.3}}, {"sign_ms": 0.25})
    assert s["by_concurrency"]["16"]["crypto_share"] == 0.5
    # A set without a run ceiling falls back on the stack's own reading.
    s = summary.summarize({"runs": {"16": [run]}, "openssl_ceiling": {"sign_ms": 0.3}}, None)
    assert s["by_concurrency"]["16"]["crypto_share"] == 0.6


def test_failed_stack_has_no_numbers(tmp_path):
    env = {"date_utc": "2026-01-01T00:00:00+00:00", "cpu_model": "cpu", "cores": 2, "memory_gib": 24, "kernel": "6",
           "commit": "abc", "dirty": False,
           "settings": {"profile": "local", "scenario": "users", "key_bits": 2048, "concurrency": [16], "repeats": 1,
                        "duration_s": 1, "primer_s": 0, "warmup_s": 0, "wrk_threads": 1, "db_pool_size": 10,
                        "limits": {}, "wrong_share": 0.0}}
    results = [{"name": "broken", "failed": "verification: login answered 500", "summary": {}}]
    text = reports.write_markdown(tmp_path / "r.md", env, None, results)
    assert "**broken**: verification: login answered 500" in text
    assert "| broken |" not in text


def test_cgroup_wrap_joins_before_exec():
    cg = object.__new__(cgroups.Cgroup)
    cg.paths = {"cpu": Path("/sys/fs/cgroup/cpu/x"), "memory": Path("/sys/fs/cgroup/memory/x")}
    cmd = cg.wrap(["java", "-jar", "app.jar"])
    assert cmd[:2] == ["sh", "-c"] and cmd[-3:] == ["java", "-jar", "app.jar"]
    assert "echo $$ > '/sys/fs/cgroup/cpu/x/cgroup.procs'" in cmd[2] and 'exec "$@"' in cmd[2]


def test_bad_arguments_are_refused(capsys):
    for argv in (["--concurrency", "x"], ["--wrong-share", "2"], ["--url", "nourl"], ["--stacks", "cobol"]):
        with pytest.raises(SystemExit) as e:
            cli.parse_args(argv)
        assert e.value.code == 2


# --------------------------------------------------------------------------- benchmark v2 (issue 19)


def test_throughput_counts_200s_only():
    line = ('WRK_JSON {"scenario":"users","wrong_share":0,"requests":1000,"duration_s":10.0,"rps":100.0,"bytes":1,'
            '"status":{"200":900,"503":100},"socket_errors":{"connect":0,"read":0,"write":0,"timeout":2},'
            '"non_2xx_3xx":100,"latency_ms":{"mean":1,"stdev":1,"p50":1,"p90":1,"p99":1,"p99_9":1,"max":1}}')
    run = loadgen.count_wrk_answers(stackctl.read_wrk_json(line), 0.0)
    assert run["rps"] == 90.0 and run["rps_all"] == 100.0 and run["requests_ok"] == 900
    assert run["unexpected_status"] == 100 and run["errors"] == 102
    reason = loadgen.run_failure(run, "c=16#1")
    assert reason.startswith("c=16#1: ") and '"503": 100' in reason and '"timeout": 2' in reason


def test_a_clean_run_and_expected_400s_do_not_fail():
    base = {"socket_errors": {"connect": 0, "read": 0, "write": 0, "timeout": 0}}
    assert loadgen.run_failure({**base, "status": {"200": 5}, "errors": 0, "unexpected_status": 0}, "x") is None
    line = ('WRK_JSON {"scenario":"users","wrong_share":0.5,"requests":10,"duration_s":1.0,"rps":10.0,"bytes":1,'
            '"status":{"200":5,"400":5},"socket_errors":{"connect":0,"read":0,"write":0,"timeout":0},'
            '"non_2xx_3xx":5,"latency_ms":{"mean":1,"stdev":1,"p50":1,"p90":1,"p99":1,"p99_9":1,"max":1}}')
    run = loadgen.count_wrk_answers(stackctl.read_wrk_json(line), 0.5)
    assert run["errors"] == 0 and run["rps"] == 5.0 and loadgen.run_failure(run, "x") is None


@needs_wrk
def test_an_unexpected_status_under_load_fails_the_stack(fake):
    live = schedule.Live("fake", fake, records.StackResult("fake"))
    settings = cli.parse_args(["--url", f"fake={fake}", "--smoke"])
    FakeToken.unavailable = True
    try:
        run = schedule.load_run(live, settings, 2, 1, "c=2#1")
    finally:
        FakeToken.unavailable = False
    assert run["rps"] == 0 and run["status"].get("503", 0) == run["requests"] > 0
    assert live.failed and live.result.failed.startswith("c=2#1: ") and "503" in live.result.failed
    schedule.sweep([live], settings, cli.Progress(1), [])
    assert not live.result.runs and "runs" not in live.result.to_json(), "a failed stack is not measured any further"


@needs_wrk
def test_a_wrk_failure_marks_the_stack_instead_of_aborting_the_run():
    live = schedule.Live("gone", f"http://127.0.0.1:{stackctl.free_port()}", records.StackResult("gone"))
    settings = cli.parse_args(["--url", f"gone={live.url}", "--smoke"])
    run = schedule.load_run(live, settings, 1, 1, "primer")
    assert live.failed and live.result.failed.startswith("primer: ")
    assert run is None or run["errors"] > 0


@needs_wrk
def test_main_exits_non_zero_when_a_stack_fails_and_zero_when_all_pass(fake, tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "write_charts", lambda out, results: [])
    FakeToken.unavailable = True
    try:
        code = runner.main(["--url", f"fake={fake}", "--verify", "basic", "--smoke", "--no-open-loop",
                           "--out", str(tmp_path)])
    finally:
        FakeToken.unavailable = False
    assert code == 1
    data = json.loads(next(tmp_path.glob("*/results.json")).read_text())
    assert data["stacks"][0]["failed"].startswith("verification: login of john@example.com answered 503")
    st = data["environment"]["settings"]
    assert (st["key_type"], st["alg"], st["kid"]) == ("rsa-2048", "RS256", keys.key_kid("rsa-2048"))
    assert "key_bits" not in st and data["ceiling"]["key_type"] == "rsa-2048"

    FakeToken.jwt_tokens = True
    try:
        code = runner.main(["--url", f"fake={fake}", "--verify", "basic", "--smoke", "--no-open-loop",
                           "--out", str(tmp_path / "ok")])
    finally:
        FakeToken.jwt_tokens = False
    assert code == 0
    r = json.loads(next((tmp_path / "ok").glob("*/results.json")).read_text())["stacks"][0]
    assert r["verification"].startswith("basic:") and r["summary"]["max_rps"] > 0
    assert r["warmups"][0]["criterion"].startswith("rps: median of the last 1 ") and r["warmups"][0]["windows"]
    assert r["warmups"][0]["rule"] == {"metric": "rps", "window_s": 2, "k": 1, "within": 0.03, "min_windows": 2,
                                       "cap_s": 6}
    assert "Verified `basic` only" in next((tmp_path / "ok").glob("*/results.md")).read_text()
    # The set the typed records wrote is one wrk/compare.py reads, beside itself.
    import compare
    ok_set = compare.load(next((tmp_path / "ok").glob("*/results.json")).parent)
    rows = compare.compare(ok_set, ok_set)
    assert any(row["stack"] == "fake" for row in rows) and compare.render(rows, "a", "b", ok_set, ok_set)


def test_bench_py_keeps_the_names_other_tools_import():
    import bench   # spec/faults/test_soak.py, wrk/tests/test_containers.py, wrk/experiments/ import these
    for name in ("main", "parse_args", "run_wrk", "run_oha", "loadgen", "open_loop_bodies", "cpu_model", "cmd_out",
                 "Sampler", "Path"):
        assert callable(getattr(bench, name)), name


def test_verify_basic_wants_two_jwts(fake):
    assert "is not a JWT" in verification.verify_basic(fake)
    FakeToken.jwt_tokens = True
    try:
        assert verification.verify_basic(fake) is None
    finally:
        FakeToken.jwt_tokens = False
    assert verification.looks_like_jwt(FAKE_JWT)
    assert not verification.looks_like_jwt("a.b.c") and not verification.looks_like_jwt(None)
    assert not verification.looks_like_jwt(f"{_b64({'typ': 'JWT'})}.{_b64({})}.x"), "a header without alg"


def test_verify_basic_is_only_for_url_targets():
    with pytest.raises(SystemExit):
        cli.parse_args(["--stacks", "actix", "--verify", "basic"])
    assert cli.parse_args(["--url", "o=http://h:1", "--verify", "basic"]).verify == "basic"


def test_profiles():
    shared = cli.parse_args(["--profile", "fly-shared-cpu-1x"]).limits
    assert shared.memory_mb == 256 and shared.cpus is None and shared.cpuset == "last", "fly's 1x has one vCPU"
    assert (shared.shared.period_us, shared.shared.baseline_us, shared.shared.max_balance_s) == (80000, 5000, 500)
    perf = cli.parse_args(["--profile", "fly-performance-1x"]).limits
    assert perf.memory_mb == 2048 and perf.cpuset == "last" and perf.shared is None
    whole = cli.parse_args(["--profile", "cpu1-256m"]).limits
    assert whole.cpus == 1.0 and whole.memory_mb == 256
    old = cli.parse_args(["--profile", "fly-shared-1x"])
    assert old.profile == "cpu1-256m" and old.limits.cpus == 1.0
    assert cgroups.resolve_cpuset("last", 2) == "1" and cgroups.resolve_cpuset("0-1", 4) == "0-1"
    with pytest.raises(SystemExit):
        cli.parse_args(["--profile", "fly-shared-cpu-1x", "--url", "x=http://h:1"])


def test_fly_shared_gives_each_stack_its_fly_machines_memory():
    """Each stack runs in the memory its fly/STACK.toml asks for (the machine it is deployed on); the floor, which
    has no fly config, in the size's default 256 MiB; --memory overrides both."""
    s = cli.parse_args(["--profile", "fly-shared-cpu-1x", "--stacks", "actix,spring,zio"])
    for name in ("actix", "spring", "zio"):
        toml = tomllib.loads((ROOT / "fly" / f"{name}.toml").read_text())
        assert s.limits.memory_mb_by_stack[name] == int(toml["vm"][0]["memory"].removesuffix("mb"))
        assert s.limits.for_stack(name).memory_mb == s.limits.memory_mb_by_stack[name]
        assert s.limits.for_stack(name).memory_mb_by_stack is None and s.limits.for_stack(name).shared
    assert s.limits.for_stack("floor").memory_mb == 256 and s.limits.for_stack("floor").cpuset == "last"
    assert set(s.limits.memory_mb_by_stack) == {"actix", "spring", "zio"}
    custom = cli.parse_args(["--profile", "fly-shared-cpu-1x", "--stacks", "spring", "--memory", "300"])
    assert custom.limits.for_stack("spring").memory_mb == 300 and custom.limits.memory_mb_by_stack is None
    perf = cli.parse_args(["--profile", "fly-performance-1x", "--stacks", "spring"]).limits
    assert perf.for_stack("spring").memory_mb == 2048 and perf.memory_mb_by_stack is None


@pytest.mark.parametrize("memory,mib", [('"512mb"', 512), ('"1gb"', 1024), ("2048", 2048), ('"256MB"', 256)])
def test_fly_memory_reads_the_vm_size(tmp_path, monkeypatch, memory, mib):
    (tmp_path / "fly").mkdir()
    (tmp_path / "fly" / "x.toml").write_text(f'app = "x"\n[[vm]]\n  size = "shared-cpu-1x"\n  memory = {memory}\n')
    monkeypatch.setattr(cli, "ROOT", tmp_path)
    assert cli.fly_memory_mb("x") == mib
    assert cli.fly_memory_mb("nope") is None


def test_fly_memory_refuses_what_it_cannot_read(tmp_path, monkeypatch):
    (tmp_path / "fly").mkdir()
    (tmp_path / "fly" / "x.toml").write_text('[[vm]]\n  memory = "lots"\n')
    monkeypatch.setattr(cli, "ROOT", tmp_path)
    with pytest.raises(ValueError, match="lots"):
        cli.fly_memory_mb("x")


def test_limits_name_each_stacks_memory():
    by_stack = {"limits": {"memory_mb": 256, "memory_mb_by_stack": {"actix": 256, "spring": 512, "akka": 512}}}
    assert reports.describe_limits(by_stack["limits"]) == (
        "memory as in fly/STACK.toml: 256 MiB actix; 512 MiB akka, spring; 256 MiB the rest")
    assert reports.describe_limits({"memory_mb": 256}) == "256 MiB"


def test_governor_arithmetic():
    rule = records.FlyShared()
    g = governor.ShareGovernor(rule)
    assert g.quota_us() == 5000, "an empty balance gets the baseline"
    assert g.step(0.08, 0.005) == 5000 and g.balance_s == 0.0, "using the baseline keeps the balance empty"
    for _ in range(16):  # idle: each 80 ms period adds 5 ms
        g.step(0.08, 0.0)
    assert g.balance_s == pytest.approx(0.08)
    assert g.quota_us() == 80000, "a balance of a period's worth or more: 100 % of one CPU"
    g.step(0.08, 0.08)  # a full period used: the balance loses 75 ms
    assert g.balance_s == pytest.approx(0.005) and g.quota_us() == 10000
    g.set_balance(0)
    g.step(0.08, 0.008)  # the kernel let 8 ms through a 5 ms quota: charged as a debt, the next quota shrinks
    assert g.balance_s == 0.0 and abs(g.quota_us() - 2000) <= 1
    g.step(0.08, 0.002)  # 3 ms under the baseline repays it
    assert abs(g.quota_us() - 5000) <= 1
    g.step(0.08, 0.5)    # far more: the debt stops at one period, the quota at the kernel's 1 ms minimum
    assert g.balance_s == 0.0 and g.quota_us() == 1000
    g.step(0.16, 0.0)    # two idle periods repay 10 ms of the 80 ms debt
    assert g.quota_us() == 1000
    g.step(1.12, 0.0)    # 14 more repay the rest
    assert abs(g.quota_us() - 5000) <= 1
    g.step(10_000.0, 0.0)
    assert g.balance_s == 500.0, "capped at 500 s"
    assert g.set_balance(-1) == 5000 and g.set_balance(1e9) == 80000 and g.balance_s == 500.0
    tiny = governor.ShareGovernor(records.FlyShared(period_us=100000, baseline_us=100))
    assert tiny.quota_us() == 1000, "never below the kernel's 1 ms minimum quota"


def test_burst_seconds():
    assert governor.burst_seconds(500, 1.0, 0.0625) == pytest.approx(533.33, abs=0.01)
    assert governor.burst_seconds(500, 0.05, 0.0625) is None, "under the baseline the balance never runs out"


class FakeCgroup:
    def __init__(self, usage):
        self.usage, self.writes = usage, []

    def set_cfs(self, quota_us, period_us):
        self.writes.append((quota_us, period_us))

    def cpu_usage_s(self):
        return self.usage()


def test_governor_thread_accrues_an_idle_balance_on_a_fake_clock():
    ticks = iter(range(10**6))
    clock = lambda: next(ticks) * 0.04  # noqa: E731 - two reads a period: each tick is 80 ms of fake time
    cg = FakeCgroup(lambda: 1.0)        # the server uses nothing
    gt = governor.GovernorThread(cg, governor.ShareGovernor(records.FlyShared()), clock=clock)
    assert cg.writes == [(5000, 80000)]
    gt.start()
    deadline = time.monotonic() + 10
    while gt.ticks < 40 and time.monotonic() < deadline:
        time.sleep(0.01)
    gt.stop()
    assert gt.ticks >= 40
    quotas = [q for q, p in cg.writes]
    assert all(p == 80000 for _, p in cg.writes)
    assert quotas == sorted(quotas) and quotas[-1] == 80000, "quota grows with the balance up to the period"
    gt.set_balance(0)
    assert cg.writes[-1] == (5000, 80000) and gt.balance_s == 0


def test_governor_thread_charges_the_cgroups_cpu_time():
    ticks = iter(range(10**6))
    used = iter(i * 0.08 for i in range(10**6))  # one CPU's worth every period
    cg = FakeCgroup(lambda: next(used))
    gt = governor.GovernorThread(cg, governor.ShareGovernor(records.FlyShared(), balance_s=10.0),
                              clock=lambda: next(ticks) * 0.04)
    gt.start()
    while gt.ticks < 20:
        time.sleep(0.01)
    gt.stop()
    # Per tick: +5 ms baseline − 80 ms used (the clock advances 80 ms a tick).
    assert gt.balance_s == pytest.approx(10.0 - gt.ticks * 0.075, abs=1e-6)


def test_account_splits_the_machines_cpu():
    before = {"t": 100.0, "server": 10.0, "pg": 2.0, "busy": 50.0, "idle": 30.0, "steal": 1.0, "cgroup": 5.0,
              "cpu_stat": {"nr_periods": 10, "nr_throttled": 1, "throttled_us": 100}}
    after = {"t": 110.0, "server": 18.0, "pg": 4.0, "busy": 66.0, "idle": 33.0, "steal": 1.5, "cgroup": 13.0,
             "cpu_stat": {"nr_periods": 135, "nr_throttled": 101, "throttled_us": 9100}}
    m = probes.account(records.Snapshot(**before), records.Snapshot(**after), 10000, 3.0)
    assert isinstance(m.machine, records.MachineShare) and m.machine.rest_cores == 0.3
    a = m.to_json()
    assert a["cpu_ms_per_request"] == 0.8 and a["wrk_cpu_ms_per_request"] == 0.3 and a["pg_cpu_ms_per_request"] == 0.2
    assert a["machine"] == {"busy_cores": 1.6, "idle_cores": 0.3, "steal_cores": 0.05, "rest_cores": 0.3}
    assert a["throttled"] == {"nr_periods": 125, "nr_throttled": 100, "throttled_us": 9000}
    assert a["cgroup_cpu_per_s"] == 0.8
    url_target = probes.account(records.Snapshot(t=0.0, busy=1.0, idle=1.0, steal=0.0),
                                records.Snapshot(t=1.0, busy=2.0, idle=1.0, steal=0.0), 10, 0.1).to_json()
    assert "cpu_ms_per_request" not in url_target and "pg_cpu_s" not in url_target


def test_system_cpu_and_process_memory_are_readable():
    s = probes.system_cpu()
    assert s["busy"] > 0 and s["idle"] >= 0 and s["steal"] >= 0
    assert 0 < probes.proc_anon_bytes(os.getpid()) <= probes.proc_rss_bytes(os.getpid())
    assert probes.tree_cpu_seconds(None) is None


def test_tree_cpu_keeps_the_time_of_a_child_that_exited():
    """A pool that retires a connection ends a PostgreSQL backend: its CPU must stay in the tree's total (it moves
    to the parent's cutime/cstime once reaped), or a run's PostgreSQL CPU comes out negative."""
    import subprocess
    child = ("import sys, time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass\n"
             "print('burnt', flush=True)\ntime.sleep(0.5)")
    parent = subprocess.Popen([sys.executable, "-c", f"import subprocess, sys, time\n"
                               f"subprocess.Popen([sys.executable, '-c', {child!r}]).wait()\n"
                               f"print('reaped', flush=True)\ntime.sleep(30)"], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout.readline().strip() == "burnt"
        while_alive = probes.tree_cpu_seconds(parent.pid)
        assert parent.stdout.readline().strip() == "reaped"
        after_exit = probes.tree_cpu_seconds(parent.pid)
    finally:
        parent.kill()
        parent.wait()
    assert while_alive >= 0.3
    assert after_exit >= while_alive


def test_oha_summary_parsing():
    text = json.dumps({
        "summary": {"successRate": 1.0, "total": 10.0, "slowest": 0.25, "fastest": 0.001, "average": 0.01,
                    "requestsPerSec": 100.0},
        "latencyPercentiles": {"p10": 0.001, "p25": 0.002, "p50": 0.003, "p75": 0.004, "p90": 0.005, "p95": 0.006,
                               "p99": 0.0125, "p99.9": 0.1, "p99.99": 0.2},
        "statusCodeDistribution": {"200": 985, "503": 5, "500": 5},
        "errorDistribution": {"connection closed before message completed": 5},
    })
    r = loadgen.parse_oha("oha banner\n" + text, 100.0, 0.0)
    assert r["target_rps"] == 100.0 and r["achieved_rps"] == 98.5
    assert r["latency_ms"] == {"p50": 3.0, "p90": 5.0, "p99": 12.5, "p99_9": 100.0, "max": 250.0}
    # 503s are the service shedding (counted); a 500 and a closed connection are errors.
    assert r["shed"] == 5 and r["errors"] == 10 and r["unexpected_status"] == 5 and r["requests"] == 1000
    reason = loadgen.run_failure(r, "open loop")
    assert '"500": 5' in reason and "503" not in reason and "connection closed" in reason


def test_an_open_loop_run_that_only_sheds_is_no_failure_but_does_not_hold():
    from harness.schedule import run_held
    text = json.dumps({
        "summary": {"total": 10.0, "slowest": 1.2},
        "latencyPercentiles": {"p50": 0.003, "p90": 0.005, "p99": 0.0125, "p99.9": 1.1},
        "statusCodeDistribution": {"200": 996, "503": 4},
    })
    r = loadgen.parse_oha(text, 100.0, 0.0)
    assert r["shed"] == 4 and r["errors"] == 0 and loadgen.run_failure(r, "open loop") is None
    assert not run_held(r)
    assert run_held({**r, "shed": 0, "achieved_rps": 100.0})
    with pytest.raises(stackctl.ToolError, match="no valid JSON"):
        loadgen.parse_oha("panicked", 1.0, 0.0)


def test_open_loop_rates_are_shared_absolute_and_own_relative():
    plan = schedule.open_loop_rates({"fast": 3000.0, "slow": 2000.0}, (0.5, 0.9), (0.5,))
    assert [r.target_rps for r in plan["fast"]] == [1000.0, 1800.0, 1500.0]   # one round
    assert [r.kind for r in plan["fast"]] == ["shared", "shared", "own"]
    assert plan["fast"][2].to_json() == {"kind": "own", "fraction": 0.5, "of": "own", "target_rps": 1500.0, "repeat": 1}
    # The slowest stack's own 50 % IS the shared 50 %: measured once, standing for both points.
    assert [r.target_rps for r in plan["slow"]] == [1000.0, 1800.0]
    assert plan["slow"][0].to_json() == {"kind": "shared", "fraction": 0.5, "of": "slowest", "target_rps": 1000.0,
                                         "repeat": 1, "own_fraction": 0.5}
    assert "own_fraction" not in plan["slow"][1].to_json()
    assert schedule.open_loop_rates({}, (0.5,), (0.5,)) == {}


def test_an_own_rate_within_three_per_cent_of_a_shared_one_is_measured_once():
    # The shared rates: 1000 and 1500 (50 and 75 % of the slowest, 2000).
    plan = schedule.open_loop_rates({"slow": 2000.0, "near": 2040.0, "far": 2100.0}, (0.5, 0.75), (0.25, 0.5, 0.75))
    near = {(r.kind, r.fraction): r for r in plan["near"]}
    # near's own 50 % (1020) is 2.0 % from the shared 50 % (1000), its own 75 % (1530) 2.0 % from the shared 1500.
    assert set(near) == {("shared", 0.5), ("shared", 0.75), ("own", 0.25)}
    assert near[("shared", 0.5)].own_fraction == 0.5 and near[("shared", 0.75)].own_fraction == 0.75
    assert near[("shared", 0.5)].target_rps == 1000.0   # the shared rate, the same for every stack
    far = {(r.kind, r.fraction): r for r in plan["far"]}   # 1050 vs 1000 and 1575 vs 1500: 5 % apart
    assert set(far) == {("shared", 0.5), ("shared", 0.75), ("own", 0.25), ("own", 0.5), ("own", 0.75)}
    assert all(r.own_fraction is None for r in plan["far"])
    assert len(plan["slow"]) == 3   # the slowest: its own 25 %, and the shared rates that are its 50 and 75 %


def test_the_summary_reports_a_point_measured_once_under_both_names():
    lat = {"p50": 1.0, "p90": 2.0, "p99": 3.0, "p99_9": 4.0, "max": 5.0}
    runs = [{"kind": "shared", "fraction": 0.5, "own_fraction": 0.5, "repeat": k, "target_rps": 1000.0,
             "achieved_rps": 1000.0, "errors": 0, "latency_ms": lat, "cpu_ms_per_request": 1.0} for k in (1, 2)]
    runs += [{"kind": "own", "fraction": 0.25, "repeat": 1, "target_rps": 500.0, "achieved_rps": 500.0, "errors": 0,
              "latency_ms": lat}, {"kind": "capacity", "fraction": 1.0, "target_rps": 2000.0, "achieved_rps": 2000.0,
                                   "errors": 0, "latency_ms": lat}]
    own = summary.open_loop_own_summary(runs)
    assert [(o["fraction"], o["runs"], o["target_rps"]) for o in own] == [(0.25, 1, 500.0), (0.5, 2, 1000.0)]
    assert own[1]["shared_fraction"] == 0.5 and "shared_fraction" not in own[0]
    shared = summary.open_loop_own_summary(runs, kind="shared")
    assert [(o["fraction"], o["runs"]) for o in shared] == [(0.5, 2)] and "shared_fraction" not in shared[0]


def test_a_points_shed_answers_are_summed_over_its_runs_and_shown_in_the_table():
    from harness.tables import open_loop_lines
    lat = {"p50": 1.0, "p90": 2.0, "p99": 3.0, "p99_9": 4.0, "max": 5.0}
    runs = [{"kind": "own", "fraction": 0.9, "repeat": k, "target_rps": 36.0, "achieved_rps": 35.0, "errors": 0,
             "shed": shed, "requests": 1080, "latency_ms": lat, "duration_s": 30.0} for k, shed in ((1, 0), (2, 27))]
    runs.append({"kind": "own", "fraction": 0.5, "repeat": 1, "target_rps": 20.0, "achieved_rps": 20.0, "errors": 0,
                 "shed": 0, "requests": 600, "latency_ms": lat, "duration_s": 30.0})
    own = summary.open_loop_own_summary(runs)
    assert [(o["fraction"], o["shed"], o["shed_share"]) for o in own] == [(0.5, 0, 0.0), (0.9, 27, 0.0125)]
    rows = [ln for ln in open_loop_lines([{"name": "spring", "summary": {"open_loop_own": own}}])
            if ln.startswith("| spring |")]
    assert rows[0].endswith("| 0 | 0 |") and rows[1].endswith("| 27 (1.2%) | 0 |")


def test_open_loop_steps_spread_every_targets_runs_over_the_rounds():
    plan = schedule.open_loop_rates({"a": 1000.0, "b": 3000.0, "floor": 5000.0}, (0.5,), (0.25, 0.5), repeats=2,
                                    calibration=frozenset({"floor"}))
    steps = schedule.open_loop_steps(["a", "b", "floor"], plan)
    # a (the slowest): 2 points a round; b: 3; the floor: the shared rate only, 1 a round.
    assert [len(plan[n]) for n in ("a", "b", "floor")] == [4, 6, 2]
    assert len(steps) == 6                       # 3 steps a round (b's points), 2 rounds
    assert [[n for n, _ in st] for st in steps] == [["a", "b", "floor"], ["b", "a"], ["b"],
                                                    ["b", "floor", "a"], ["a", "b"], ["b"]]
    assert [spec.repeat for st in steps[:3] for _, spec in st] == [1] * 6
    assert [spec.repeat for st in steps[3:] for _, spec in st] == [2] * 6
    made = {n: [spec for st in steps for m, spec in st if m == n] for n in plan}
    assert all(sorted(made[n], key=str) == sorted(plan[n], key=str) for n in plan)   # each spec once


def test_open_loop_repeats_every_point_in_rotated_order():
    plan = schedule.open_loop_rates({"a": 1000.0, "slow": 100.0}, (0.25, 0.5), (0.5, 0.75, 0.9), repeats=3)["a"]
    own = [(r.fraction, r.repeat) for r in plan if r.kind == "own"]
    assert own == [(0.5, 1), (0.75, 1), (0.9, 1), (0.75, 2), (0.9, 2), (0.5, 2), (0.9, 3), (0.5, 3), (0.75, 3)]
    shared = [(r.fraction, r.repeat) for r in plan if r.kind == "shared"]
    assert shared == [(0.25, 1), (0.5, 1), (0.5, 2), (0.25, 2), (0.25, 3), (0.5, 3)]   # the shared rates too
    assert [r.kind for r in plan[:5]] == ["shared", "shared", "own", "own", "own"]


def test_gc_pauses_are_parsed_and_attributed_to_the_runs_they_fell_in(tmp_path):
    log = tmp_path / "gc.log"
    log.write_text(  # the JDK's -Xlog:gc:file=...:time,uptime format
        "[2026-11-24T16:00:00.100+0000][0.010s] Using Serial\n"
        "[2026-11-24T16:00:05.000+0000][5.000s] GC(0) Pause Young (Allocation Failure) 26M->6M(92M) 3.000ms\n"
        "[2026-11-24T16:00:06.000+0000][6.000s] GC(1) Pause Young (Allocation Failure) 26M->7M(92M) 5.500ms\n"
        "[2026-11-24T16:00:07.000+0000][7.000s] GC(2) Pause Full (System.gc()) 30M->8M(92M) 41.250ms\n"
        "[2026-11-24T16:00:20.000+0000][20.000s] GC(3) Pause Young (Allocation Failure) 26M->7M(92M) 2.000ms\n")
    pauses = probes.gc_pauses(log)
    assert [(round(d, 3), k) for _, d, k in pauses] == [(3.0, "Pause Young"), (5.5, "Pause Young"),
                                                          (41.25, "Pause Full"), (2.0, "Pause Young")]
    t0 = pauses[0][0] - 1
    result = {"open_loop": [{"wall": [t0, t0 + 10]}, {"wall": [t0 + 10, t0 + 20]}, {"kind": "shared"}]}
    probes.attribute_gc_pauses(result["open_loop"], pauses)
    first, second, third = result["open_loop"]
    assert first["gc"] == {"pauses": 3, "kinds": ["Pause Full", "Pause Young"], "sum_ms": 49.8, "p50_ms": 5.5,
                           "max_ms": 41.25, "paused_share": 0.005}
    assert second["gc"]["pauses"] == 1 and second["gc"]["max_ms"] == 2.0 and "gc" not in third
    assert probes.gc_pauses(tmp_path / "missing.log") == []


def test_capacity_search_bisects_from_the_runs_already_made():
    def run(rate, p99, achieved=None):
        return {"target_rps": rate, "achieved_rps": achieved if achieved is not None else rate,
                "latency_ms": {"p99": p99}}
    # 500 held; 750 held twice and failed once: failed (every run must hold); 800 kept p99 low but fell behind.
    runs = [run(500, 5), run(750, 20), run(750, 150), run(750, 30), run(900, 300), run(800, 10, achieved=700)]
    assert schedule.capacity_bounds(runs, 1000.0) == (500, 750)
    assert schedule.capacity_bounds([r for r in runs if r["latency_ms"]["p99"] != 150], 1000.0) == (750, 800)
    assert schedule.capacity_bounds([run(500, 5)], 1000.0) == (500, 1100.0)
    assert schedule.capacity_bounds([], 1000.0) == (0.0, 1100.0)

    class FakeLive:
        def __init__(self, name):
            self.name, self.failed = name, False
            self.result = records.StackResult(name, open_loop=[run(500, 5), run(900, 300)])
    lives = [FakeLive("a")]
    truth = 770.0   # the stack holds p99 < 100 ms up to here
    asked = []

    def fake_open_run(live, spec, settings, progress, bodies, oha, seconds):
        asked.append(spec.target_rps)
        return run(spec.target_rps, 50 if spec.target_rps <= truth else 200)
    orig = schedule.open_run
    schedule.open_run = fake_open_run
    try:
        settings = cli.parse_args(["--stacks", stackctl.list_stacks()[0], "--capacity-runs", "1",
                                   "--capacity-steps", "3"])
        schedule.capacity_search(lives, {"a": 1000.0}, settings, None, [], Path("/dev/null"), "oha")
    finally:
        schedule.open_run = orig
    assert asked == [700.0, 800.0, 750.0]
    cap = lives[0].result.capacity
    assert (cap["rps"], cap["next_failed_rps"], cap["p99_under_ms"]) == (750.0, 800.0, 100.0)
    assert cap["range_rps"] == [750.0, 750.0] and cap["runs_per_step"] == 1
    assert [r["target_rps"] for r in lives[0].result.open_loop][-3:] == [700.0, 800.0, 750.0]


def test_open_loop_bodies_follow_the_scenario():
    users = loadgen.open_loop_bodies("users", 0.0)
    assert len(users) == len(set(users)) == 10000
    assert json.loads(users[41]) == {"username": "legacy42@example.com", "password": "legacy-pass-42"}
    assert loadgen.open_loop_bodies("john", 0.0) == ['{"username":"john@example.com","password":"TopSecret0!"}']
    mixed = loadgen.open_loop_bodies("mixed", 0.0)
    assert sum("argon" in b for b in mixed) / len(mixed) == 0.2
    wrong = loadgen.open_loop_bodies("users", 0.2)
    assert sum(b.endswith('-wrong"}') for b in wrong) / len(wrong) == pytest.approx(0.2, abs=1e-3)
    assert all(b.endswith('-wrong"}') for b in loadgen.open_loop_bodies("argon2", 1.0))


@pytest.mark.skipif(loadgen.loadgen() is None, reason="oha not installed (bash wrk/install-loadgen.sh)")
def test_oha_open_loop_against_the_fake(fake, tmp_path):
    bodies = tmp_path / "b.txt"
    bodies.write_text("\n".join(loadgen.open_loop_bodies("users", 0.0)[:50]) + "\n")
    r = loadgen.run_oha(fake, 50, 1, 4, bodies, 0.0, loadgen.loadgen())
    assert r["status"] == {"200": 50} and r["errors"] == 0 and r["requests"] == 50
    assert r["latency_ms"]["p50"] > 0 and r["latency_ms"]["max"] >= r["latency_ms"]["p99"]
    # every answered request's latency, from oha's per-request records: the same requests as its percentiles
    assert r["latency_hist"]["count"] == 50 and r["latency_hist"]["max_ms"] == pytest.approx(r["latency_ms"]["max"], abs=0.01)
    sent = {b["username"] for b in FakeToken.seen}
    assert len(sent) > 1 and all(u.startswith("legacy") for u in sent), "a spread of users, as wrk sends"


def test_each_open_loop_run_follows_an_unmeasured_run_at_its_rate(monkeypatch, tmp_path):
    calls = []

    def fake_oha(url, rate, seconds, connections, bodies, wrong, oha):
        calls.append((rate, seconds))
        return {"status": {"200": int(rate * seconds)}, "errors": 0, "achieved_rps": rate, "target_rps": rate,
                "latency_ms": {"p50": 1, "p99": 2}, "loadgen_cpu_s": 0.1, "requests": int(rate * seconds)}
    monkeypatch.setattr(schedule, "run_oha", fake_oha)

    class FakeLive:
        name, url, governor, failed = "a", "http://127.0.0.1:9", None, False
        result: dict = {}

        def mark(self, phase):
            pass

        def snapshot(self):
            return records.Snapshot(t=0.0)

        def fail(self, reason):
            self.failed = reason
    monkeypatch.setattr(schedule, "account", lambda before, after, n, cpu: records.Measurement(wall_s=0.0))
    settings = cli.parse_args(["--stacks", stackctl.list_stacks()[0], "--rewarm", "4"])

    class Quiet:
        def say(self, *a):
            pass
    run = schedule.open_run(FakeLive(), records.RateSpec("own", 0.75, "own", 100.0, 2), settings, Quiet(),
                            tmp_path / "b.txt", "oha", 15)
    assert calls == [(100.0, 4), (100.0, 15)]   # the re-warm at the same rate, then the measured run
    assert run["repeat"] == 2 and run["kind"] == "own" and len(run["wall"]) == 2
    calls.clear()
    smoke = cli.parse_args(["--stacks", stackctl.list_stacks()[0], "--smoke"])
    schedule.open_run(FakeLive(), records.RateSpec("own", 0.9, "own", 50.0), smoke, Quiet(), tmp_path / "b.txt", "oha",
                      2)
    assert calls == [(50.0, 2)]   # the smoke run keeps its phases short


def test_round_robin_order():
    assert schedule.rotated(["a", "b", "c"], 0) == ["a", "b", "c"]
    assert schedule.rotated(["a", "b", "c"], 1) == ["b", "c", "a"]
    assert schedule.rotated(["a", "b", "c"], 5) == ["c", "a", "b"]
    assert schedule.rotated([], 3) == []
    assert schedule.agree(1.0, 1.029) and not schedule.agree(1.0, 1.031) and not schedule.agree(0, 0)


def test_jvm_stacks_must_sign_with_accp(tmp_path):
    jvm = stackctl.Stack("j", tmp_path, {"run": ["{java}", "-jar", "x.jar"]})
    native = stackctl.Stack("n", tmp_path, {"run": ["./server"]})
    assert ceilings.provider_problem(jvm, {"provider": "AmazonCorrettoCryptoProvider 2.5.0"}, None) is None
    assert "not AmazonCorrettoCryptoProvider" in ceilings.provider_problem(jvm, {"provider": "SunRsaSign 25"}, None)
    assert "signing provider unknown" in ceilings.provider_problem(jvm, None, "signbench of j failed (exit 1)")
    assert ceilings.provider_problem(native, None, None) is None


def test_cpu_identity_names_family_model_and_crypto_flags():
    cpuinfo = ("processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\n"
               "model name\t: AMD EPYC\nstepping\t: 1\nflags\t\t: fpu avx2 adx sha_ni vaes avx512ifma\n\nprocessor\t: 1\n")
    lscpu = "Model name:  AMD EPYC\nThread(s) per core:  1\nCore(s) per socket:  2\nFlags: x\n"
    c = environment.cpu_identity(cpuinfo, lscpu)
    assert (c["family"], c["model"], c["stepping"]) == ("25", "17", "1")
    assert c["crypto_flags"]["avx512ifma"] and c["crypto_flags"]["sha_ni"] and not c["crypto_flags"]["avx512f"]
    assert c["lscpu"] == {"Model name": "AMD EPYC", "Thread(s) per core": "1", "Core(s) per socket": "2"}


def test_summary_of_memory_open_loop_and_fly():
    run = {"rps": 80, "errors": 0, "requests": 1200, "cpu_ms_per_request": 0.75, "wrk_cpu_ms_per_request": 0.1,
           "pg_cpu_ms_per_request": 0.05, "latency_ms": {"p50": 1, "p90": 2, "p99": 300, "p99_9": 4, "max": 5},
           "machine": {"busy_cores": 0.3, "idle_cores": 1.7, "steal_cores": 0.0, "rest_cores": 0.1},
           "throttled": {"nr_periods": 180, "nr_throttled": 170, "throttled_us": 1000}}
    result = {"runs": {"16": [run, run]},
              "samples": [(0.0, 100 * 2**20, 0.1, 60 * 2**20), (5.0, 200 * 2**20, 1.0, 150 * 2**20)],
              "phases": [(4.0, "c=16#1")], "cgroup": {"memory_peak_bytes": 210 * 2**20},
              "open_loop": [{"kind": "shared", "fraction": 0.5, "target_rps": 40.0, "achieved_rps": 40.0, "errors": 0,
                             "latency_ms": {"p50": 1, "p90": 2, "p99": 3, "p99_9": 4, "max": 5}, "status": {}}],
              "fly": {"startup_empty_balance_s": 21.5, "burst": {"rps": 1300, "cpu_per_s": 1.0, "burst_s": 533.3}}}
    s = summary.summarize(result, None)
    assert s["anon_peak_mib"] == 150.0 and s["anon_steady_mib"] == 150.0 and s["cgroup_peak_mib"] == 210.0
    c16 = s["by_concurrency"]["16"]
    assert c16["wrk_cpu_ms_per_request"] == 0.1 and c16["machine"]["idle_cores"] == 1.7
    assert c16["throttled"] == {"nr_periods": 360, "nr_throttled": 340, "throttled_us": 2000}
    assert s["open_loop"][0]["target_rps"] == 40.0 and "status" not in s["open_loop"][0]
    assert s["fly"] == {"sustained_rps": 80, "sustained_at": "16", "sustained_p99_ms": 300,
                        "throttled": c16["throttled"], "startup_empty_balance_s": 21.5, "burst_rps": 1300,
                        "burst_cpu_per_s": 1.0, "burst_s": 533.3}


def test_markdown_has_open_loop_memory_and_fly_tables(tmp_path):
    env = {"date_utc": "2026-01-01T00:00:00+00:00", "cpu_model": "cpu", "cores": 2, "memory_gib": 24, "kernel": "6",
           "commit": "abc", "dirty": False,
           "cpu": {"family": "25", "model": "17", "stepping": "1", "crypto_flags": {"vaes": True, "avx2": False}},
           "settings": {"profile": "fly-shared-cpu-1x", "scenario": "users", "key_bits": 2048, "concurrency": [16],
                        "repeats": 1, "duration_s": 1, "primer_s": 0, "warmup_cap_s": 6, "warmup_window_s": 2,
                        "wrk_threads": 1, "db_pool_size": 10, "wrong_share": 0.0,
                        "limits": {"memory_mb": 256, "shared": {"period_us": 80000, "baseline_us": 5000,
                                                                "max_balance_s": 500}}}}
    run = {"rps": 80, "errors": 0, "requests": 1200, "cpu_ms_per_request": 0.75,
           "latency_ms": {"p50": 1, "p90": 2, "p99": 300, "p99_9": 4, "max": 5},
           "throttled": {"nr_periods": 180, "nr_throttled": 170, "throttled_us": 1000}}
    r = {"name": "zio", "runs": {"16": [run]}, "warmups": [{"concurrency": 16, "seconds": 6.0, "stable": False}],
         "open_loop": [{"kind": "shared", "fraction": 0.5, "target_rps": 40.0, "achieved_rps": 39.6, "errors": 0,
                        "latency_ms": {"p50": 1, "p90": 2, "p99": 3.25, "p99_9": 4, "max": 5}},
                       {"kind": "own", "fraction": 0.9, "repeat": 1, "target_rps": 72.0, "achieved_rps": 71.0,
                        "errors": 0, "latency_ms": {"p50": 1, "p90": 2, "p99": 30, "p99_9": 40, "max": 50},
                        "machine": {"busy_cores": 1.6}, "wall": [100.0, 110.0],
                        "gc": {"pauses": 40, "kinds": ["Pause Young"], "sum_ms": 80.0, "p50_ms": 2.0, "max_ms": 9.0,
                               "paused_share": 0.008}},
                       {"kind": "own", "fraction": 0.9, "repeat": 2, "target_rps": 72.0, "achieved_rps": 72.0,
                        "errors": 0, "latency_ms": {"p50": 1, "p90": 2, "p99": 50, "p99_9": 60, "max": 70},
                        "machine": {"busy_cores": 1.8}, "wall": [200.0, 210.0],
                        "gc": {"pauses": 20, "kinds": ["Pause Young"], "sum_ms": 40.0, "p50_ms": 2.0, "max_ms": 12.0,
                               "paused_share": 0.004}}],
         "fly": {"startup_empty_balance_s": 21.5, "burst": {"rps": 1300, "cpu_per_s": 1.0, "burst_s": 533.3}},
         "capacity": {"p99_under_ms": 100.0, "rps": 61.0, "next_failed_rps": 66.5, "of_closed_loop_max": 0.7625,
                      "steps": 3, "seconds_per_step": 15}}
    r["summary"] = summary.summarize(r, None)
    text = reports.write_markdown(tmp_path / "r.md", env, None, [r],
                                [{"concurrency": 16, "repeat": 1, "order": ["zio"]}])
    assert "family 25 model 17 stepping 1" in text and "Crypto-relevant CPU flags: vaes." in text
    assert "5 ms per 80 ms period baseline, balance up to 500 s" in text
    assert "| zio | 3.2 [40] |" in text
    # Two repeats at 90 %: medians of the percentiles, the p99's range, the machine's busy share, the pauses.
    cores = os.cpu_count() or 1
    assert ("| zio | 90% | 72 | 72 | 2 | 1.0 | 40.0 | 50.0 | 30.0–50.0 | 40.0–60.0 | 40.0 | "
            f"{1.7 / cores * 100:.0f}% [{1.6 / cores * 100:.0f}–{1.8 / cores * 100:.0f}%] | 3.0/s, ≤12 ms | 0 |") in text
    assert "p50, p99 and p99.9 of the median of the runs' percentiles" in text   # a set without pooled latencies
    assert "| zio | 61 | 76% | 66 |" in text   # the highest rate with p99 under 100 ms
    assert "| zio | 21.50 | 80 | 16 | 300 | 170 of 180 | 1300 | 1.00 | 533 |" in text
    assert "zio c=16 6*" in text and "Order: c=16#1 zio." in text
    assert "knee" not in text.lower()


def test_governor_thread_does_not_rewrite_an_unchanged_quota():
    # Each write refills the kernel's runtime for the period: at the baseline nothing may be rewritten.
    ticks = iter(range(10**6))
    used = iter(i * 0.005 for i in range(10**6))  # exactly the baseline every 80 ms
    cg = FakeCgroup(lambda: next(used))
    gt = governor.GovernorThread(cg, governor.ShareGovernor(records.FlyShared()), clock=lambda: next(ticks) * 0.04)
    gt.start()
    while gt.ticks < 20:
        time.sleep(0.01)
    gt.stop()
    assert cg.writes == [(5000, 80000)] and gt.balance_s == pytest.approx(0.0, abs=1e-9)


@needs_wrk
def test_warm_up_errors_are_recorded_but_only_measured_runs_fail(fake):
    live = schedule.Live("fake", fake, records.StackResult("fake"))
    settings = cli.parse_args(["--url", f"fake={fake}", "--smoke"])
    FakeToken.unavailable = True
    try:
        w = schedule.warm_up(live, settings, 2, cli.Progress(1), window=1, cap=1)
    finally:
        FakeToken.unavailable = False
    assert not live.failed and w.windows and w.cap_s == 1 and w.to_json()["cap_s"] == 1
    assert live.result.unmeasured_errors[0].startswith("warm-up c=2: ")


def test_fly_shared_sweeps_few_connections_by_default():
    assert cli.parse_args(["--profile", "fly-shared-cpu-1x"]).concurrency == [4, 16]
    assert cli.parse_args(["--profile", "fly-shared-cpu-1x", "--concurrency", "8"]).concurrency == [8]
    assert cli.parse_args([]).concurrency == [16, 64, 256]


def test_sweep_interleaves_concurrencies_and_stacks_with_a_rewarm_before_each_run(monkeypatch):
    calls = []

    def fake_load_run(live, settings, c, secs, phase, measured=True):
        calls.append((live.name, c, secs, phase, measured))
        return {"rps": 1.0, "errors": 0, "cpu_ms_per_request": 1.0}

    monkeypatch.setattr(schedule, "load_run", fake_load_run)
    monkeypatch.setattr(schedule, "warm_up", lambda live, settings, c, progress: records.WarmUp(c, "x", 1, 1, True))
    settings = cli.parse_args(["--url", "a=http://127.0.0.1:1", "--url", "b=http://127.0.0.1:2",
                                 "--concurrency", "16,64,256", "--repeats", "3", "--duration", "7", "--rewarm", "2"])
    lives = [schedule.Live("a", "http://127.0.0.1:1", records.StackResult("a")),
             schedule.Live("b", "http://127.0.0.1:2", records.StackResult("b"))]
    order: list = []
    schedule.sweep(lives, settings, cli.Progress(1), order)
    assert [(o["repeat"], o["concurrency"], o["order"]) for o in order] == [
        (1, 16, ["a", "b"]), (1, 64, ["a", "b"]), (1, 256, ["a", "b"]),
        (2, 64, ["b", "a"]), (2, 256, ["b", "a"]), (2, 16, ["b", "a"]),
        (3, 256, ["a", "b"]), (3, 16, ["a", "b"]), (3, 64, ["a", "b"])]
    # the warm-up by the rule at 256 (warm_up, faked here), then one window at 64 and at 16 for each stack
    assert calls[:4] == [("a", 64, 10, "warm-up c=64", False), ("b", 64, 10, "warm-up c=64", False),
                         ("a", 16, 10, "warm-up c=16", False), ("b", 16, 10, "warm-up c=16", False)]
    calls = calls[4:]
    # every measured run directly follows an unmeasured re-warm of the same stack at the same concurrency
    assert len(calls) == 2 * 3 * 3 * 2
    for pre, run in zip(calls[::2], calls[1::2]):
        assert pre[0] == run[0] and pre[1] == run[1]
        assert pre[2] == 2 and not pre[4] and pre[3].startswith("re-warm c=")
        assert run[2] == 7 and run[4] and run[3] == f"c={run[1]}#{pre[3].split('#')[1]}"
    for live in lives:
        assert {c: len(v) for c, v in live.result.runs.items()} == {"16": 3, "64": 3, "256": 3}
        assert len(live.result.rewarms) == 9 and len(live.result.warmups) == 3
        ruled, *short = live.result.warmups
        assert ruled.concurrency == 256 and [w.concurrency for w in short] == [64, 16]
        assert all(w.rule == {"after_concurrency": 256, "window_s": 10} and len(w.windows) == 1 and w.stable
                   for w in short)


def test_rewarm_must_be_positive(capsys):
    with pytest.raises(SystemExit):
        cli.parse_args(["--rewarm", "0"])
    assert "--rewarm" in capsys.readouterr().err


# --------------------------------------------------------------------------- key types (issue 22)

# `openssl speed -seconds 1 ALG` as OpenSSL 3.0.19 prints it on the project's machine (stdout; the compiler and
# CPUINFO lines shortened), and an RSA line as OpenSSL 3.2+ prints it (encrypt and decrypt columns added).
OPENSSL_OUT = {
    "rsa-2048": "version: 3.0.19\nbuilt on: ...\noptions: bn(64,64)\nCPUINFO: OPENSSL_ia32cap=0xfffa3203078bffff\n"
                "                  sign    verify    sign/s verify/s\n"
                "rsa 2048 bits 0.000295s 0.000017s   3390.0  59647.5\n",
    "rsa-4096": "                  sign    verify    sign/s verify/s\n"
                "rsa 4096 bits 0.002500s 0.000040s    400.0  25000.0\n",
    "p-256": "CPUINFO: OPENSSL_ia32cap=0xfffa3203078bffff:0x405fc6f1bf07ab\n"
             "                              sign    verify    sign/s verify/s\n"
             " 256 bits ecdsa (nistp256)   0.0000s   0.0001s  50309.1  15860.2\n",
    "ed25519": "CPUINFO: OPENSSL_ia32cap=0xfffa3203078bffff:0x405fc6f1bf07ab\n"
               "                              sign    verify    sign/s verify/s\n"
               " 253 bits EdDSA (Ed25519)   0.0000s   0.0001s  24434.0   9451.0\n",
}
OPENSSL_32_RSA = ("                   sign    verify    encrypt   decrypt   sign/s verify/s  encr./s  decr./s\n"
                  "rsa  2048 bits 0.000496s 0.000015s 0.000016s 0.000497s   2016.1  66537.4  62897.6   2012.4\n")


def test_key_type_flag_replaces_key_bits(capsys):
    assert cli.parse_args([]).key_type == "rsa-2048" == keys.DEFAULT_KEY_TYPE
    for kt in ("rsa-2048", "rsa-4096", "p-256", "ed25519"):
        assert cli.parse_args(["--key-type", kt]).key_type == kt
    for argv in (["--key-type", "p-384"], ["--key-bits", "4096"]):
        with pytest.raises(SystemExit):
            cli.parse_args(argv)
    assert "--key-type" in capsys.readouterr().err


def test_every_dev_key_type_has_an_algorithm_a_name_and_an_openssl_measurement():
    assert list(stackctl.KEYS) == ["rsa-2048", "rsa-4096", "p-256", "ed25519"]
    assert {kt: keys.key_alg(kt) for kt in stackctl.KEYS} == {
        "rsa-2048": "RS256", "rsa-4096": "RS256", "p-256": "ES256", "ed25519": "EdDSA"}
    assert set(keys.OPENSSL_SPEED) == set(keys.KEY_TYPE_NAMES) == set(stackctl.KEYS)
    assert {kt: keys.OPENSSL_SPEED[kt][0] for kt in stackctl.KEYS} == {
        "rsa-2048": "rsa2048", "rsa-4096": "rsa4096", "p-256": "ecdsap256", "ed25519": "ed25519"}
    assert [keys.key_label(kt) for kt in stackctl.KEYS] == [
        "RSA-2048 (RS256)", "RSA-4096 (RS256)", "P-256 (ES256)", "Ed25519 (EdDSA)"]


def test_old_result_sets_record_key_bits_and_are_read_as_rsa():
    assert keys.recorded_key_type({"key_bits": 4096}) == "rsa-4096"
    assert keys.recorded_key_type({"key_type": "ed25519", "alg": "EdDSA"}) == "ed25519"
    assert keys.recorded_key_type({}) is None and keys.key_label(None) == "key type unknown"
    assert reports.signature_name({"key_bits": 2048}) == "RSA-2048"
    assert reports.signature_name({"key_type": "p-256", "signature": "ECDSA P-256"}) == "ECDSA P-256"


@pytest.mark.parametrize("key_type, signs", [("rsa-2048", 3390.0), ("rsa-4096", 400.0), ("p-256", 50309.1),
                                             ("ed25519", 24434.0)])
def test_openssl_speed_sign_column_per_key_type(key_type, signs):
    assert ceilings.parse_openssl_speed(OPENSSL_OUT[key_type], key_type) == signs
    others = [kt for kt in OPENSSL_OUT if kt != key_type]
    assert all(ceilings.parse_openssl_speed(OPENSSL_OUT[o], key_type) is None for o in others), "another key's line"


def test_openssl_speed_finds_the_sign_column_by_its_header():
    assert ceilings.parse_openssl_speed(OPENSSL_32_RSA, "rsa-2048") == 2016.1
    assert ceilings.parse_openssl_speed("rsa 2048 bits 0.000295s 0.000017s   3390.0  59647.5\n", "rsa-2048") is None
    assert ceilings.parse_openssl_speed("", "ed25519") is None


def test_openssl_ceiling_runs_the_key_types_algorithm(monkeypatch):
    calls = []

    def fake_run(cmd, **kw):
        calls.append(cmd)
        out = "OpenSSL 3.0.19" if cmd == ["openssl", "version"] else OPENSSL_OUT["p-256"]
        return subprocess.CompletedProcess(cmd, 0, stdout=out, stderr="")
    monkeypatch.setattr(subprocess, "run", fake_run)
    c = ceilings.openssl_ceiling("p-256", 2, runs=2)
    assert calls.count(["openssl", "speed", "-seconds", "2", "ecdsap256"]) == 2
    assert (c["key_type"], c["alg"], c["signature"], c["openssl_speed"]) == ("p-256", "ES256", "ECDSA P-256", "ecdsap256")
    assert c["signs_per_s_per_core"] == 50309.1 and c["sign_ms"] == pytest.approx(1000 / 50309.1)
    assert c["runs_signs_per_s_per_core"] == [50309.1, 50309.1] and "key_bits" not in c


def test_openssl_ceiling_fails_clearly_without_its_line(monkeypatch):
    monkeypatch.setattr(subprocess, "run", lambda cmd, **kw: subprocess.CompletedProcess(
        cmd, 0, stdout=OPENSSL_OUT["rsa-2048"], stderr=""))
    with pytest.raises(stackctl.ToolError, match="openssl speed ed25519 failed"):
        ceilings.openssl_ceiling("ed25519", 1)


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl not installed")
def test_openssl_speed_on_this_machine_for_ed25519():
    # One real second of signing (and one of verifying): the parser matches the installed OpenSSL's output.
    c = ceilings.openssl_ceiling("ed25519", 1)
    assert c["signs_per_s_per_core"] > 100 and c["alg"] == "EdDSA"


class FakeIssuer(BaseHTTPRequestHandler):
    """A token service that signs with a dev key of any type (spec/keys/) and serves a JWKS of chosen dev keys."""
    protocol_version = "HTTP/1.1"
    signing = "rsa-2048"
    published = ["rsa-2048"]
    issuer = "http://localhost:9999"
    id_aud = "public"   # spec §2: the ID token is for the client (DEFAULT_CLIENT_ID when the login names none)

    def _send(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        jwks = [k["jwk"] for t in FakeIssuer.published for k in keys.VECTORS["keys"] if k["type"] == t]
        self._send(200, {"keys": jwks})

    def do_POST(self):
        import time as _time

        import jwt
        from cryptography.hazmat.primitives import serialization
        creds = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        key = serialization.load_pem_private_key(stackctl.KEYS[FakeIssuer.signing].read_bytes(), None)
        alg, kid = keys.key_alg(FakeIssuer.signing), keys.key_kid(FakeIssuer.signing)
        now = int(_time.time())
        claims = {"iss": FakeIssuer.issuer, "aud": "channel-api", "sub": "u", "iat": now, "exp": now + 600}
        access = jwt.encode({**claims, "client_id": "public"}, key, algorithm=alg,
                            headers={"kid": kid, "typ": "at+jwt"})
        ident = jwt.encode({**claims, "aud": FakeIssuer.id_aud, "email": creds["username"]}, key, algorithm=alg,
                           headers={"kid": kid})
        self._send(200, {"access_token": access, "id_token": ident, "token_type": "Bearer", "expires_in": 600})

    def log_message(self, *args):
        pass


@pytest.fixture
def issuer():
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeIssuer)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    FakeIssuer.signing, FakeIssuer.published, FakeIssuer.id_aud = "rsa-2048", ["rsa-2048"], "public"


@pytest.mark.parametrize("key_type", ["rsa-2048", "rsa-4096", "p-256", "ed25519"])
def test_verify_service_checks_the_chosen_dev_key_and_its_algorithm(issuer, key_type):
    FakeIssuer.signing, FakeIssuer.published = key_type, [key_type]
    assert verification.verify_service(issuer, FakeIssuer.issuer, key_type) is None
    assert verification.verify_service(issuer, None, None) is None, "a --url target: any allowed algorithm in its JWKS"
    assert "InvalidIssuerError" in verification.verify_service(issuer, "https://elsewhere.test", key_type)


def test_verify_service_wants_the_id_token_for_the_client_and_the_access_token_for_the_resource(issuer):
    FakeIssuer.id_aud = "channel-api"   # a release from before spec §2 gave the ID token the resource's audience
    assert "InvalidAudienceError" in verification.verify_service(issuer, FakeIssuer.issuer, "rsa-2048")
    assert verification.verify_service(issuer, None, None) is None, "a --url target may run such a release"


def test_verify_service_refuses_another_key_type(issuer):
    FakeIssuer.signing, FakeIssuer.published = "p-256", ["p-256"]
    reason = verification.verify_service(issuer, None, "ed25519")
    assert reason == f"JWKS does not serve the Ed25519 (EdDSA) dev key (kid {keys.key_kid('ed25519')})"
    # The wanted key published (as during a rotation), but the tokens signed with another one.
    FakeIssuer.published = ["p-256", "ed25519"]
    reason = verification.verify_service(issuer, None, "ed25519")
    assert reason.startswith("access_token is signed with kid") and "not the Ed25519 (EdDSA) dev key" in reason


def _runs(*cpu, ok=1000, total=1000, rps=100):
    return [{"rps": rps, "errors": 0, "requests": total, "requests_ok": ok, "cpu_ms_per_request": c,
             "latency_ms": {"p50": 1, "p90": 2, "p99": 3, "p99_9": 4, "max": 5}} for c in cpu]


def test_own_cost_is_cpu_per_request_minus_the_stacks_signing():
    s = summary.summarize({"runs": {"16": _runs(0.30, 0.32, 0.34)}, "own_ceiling": {"pair_ms": 0.1}},
                        {"sign_ms": 0.04})
    c16 = s["by_concurrency"]["16"]
    assert c16["own_cost_ms_per_request"] == pytest.approx(0.22) and c16["own_cost_basis"] == "signbench"
    assert c16["own_cost_ms_per_request_spread"] == pytest.approx({"median": 0.22, "min": 0.20, "max": 0.24})
    assert "signed_share" not in c16
    # Without a signbench, OpenSSL's two signatures stand in (and the report marks it).
    c16 = summary.summarize({"runs": {"16": _runs(0.30)}}, {"sign_ms": 0.04})["by_concurrency"]["16"]
    assert c16["own_cost_ms_per_request"] == pytest.approx(0.22) and c16["own_cost_basis"] == "openssl"
    assert reports.own_cost_cell(c16) == "0.220†"
    # No ceiling at all (or no CPU, a --url target): no own cost.
    assert "own_cost_ms_per_request" not in summary.summarize({"runs": {"16": _runs(0.3)}}, None)["by_concurrency"]["16"]


def test_own_cost_weighs_the_signing_by_the_answers_that_sign():
    # A quarter of the logins use a wrong password: answered 400, nothing signed.
    s = summary.summarize({"runs": {"16": _runs(0.30, ok=750, total=1000)}, "own_ceiling": {"pair_ms": 0.2}}, None)
    c16 = s["by_concurrency"]["16"]
    assert c16["own_cost_ms_per_request"] == pytest.approx(0.30 - 0.2 * 0.75) and c16["signed_share"] == 0.75
    assert summary.signed_share([{"requests": 10}]) == 1.0, "runs without requests_ok (older sets): all signed"


def _env(settings: dict) -> dict:
    return {"date_utc": "2026-01-01T00:00:00+00:00", "cpu_model": "cpu", "cores": 2, "memory_gib": 24, "kernel": "6",
            "commit": "abc", "dirty": False,
            "settings": {"profile": "local", "scenario": "users", "concurrency": [16, 64], "repeats": 1,
                         "duration_s": 1, "primer_s": 0, "warmup_s": 0, "wrk_threads": 1, "db_pool_size": 10,
                         "limits": {}, "wrong_share": 0.0, **settings}}


def test_markdown_names_the_key_type_and_shows_each_stacks_own_cost(tmp_path):
    ceiling = {"tool": "OpenSSL", "key_type": "ed25519", "alg": "EdDSA", "signature": "Ed25519",
               "signs_per_s_per_core": 25000, "sign_ms": 0.04, "token_pairs_per_s_per_core": 12500,
               "token_pairs_per_s_all_cores": 25000}
    fast = {"name": "fast", "openssl_ceiling": ceiling, "own_ceiling": {"provider": "aws-lc-rs",
            "token_pairs_per_s_per_core": 10000, "pair_ms": 0.1},
            "runs": {"16": _runs(0.20, 0.21, 0.22), "64": _runs(0.25, rps=200)}}
    plain = {"name": "plain", "openssl_ceiling": ceiling, "runs": {"16": _runs(0.50)}}
    for r in (fast, plain):
        r["summary"] = summary.summarize(r, ceiling)
    text = reports.write_markdown(tmp_path / "r.md", _env({"key_type": "ed25519", "alg": "EdDSA"}), ceiling,
                                [fast, plain])
    assert text.startswith("# simple-auth benchmark — local, scenario `users`, Ed25519 (EdDSA)")
    assert "25000 Ed25519 signatures/s per core = 12500 token pairs/s per core" in text
    assert "| stack | OpenSSL Ed25519 signatures/s per core |" in text
    assert "| server CPU ms/req | signing ms/pair | own cost ms/req |" in text
    assert "| fast | 64 | 0.250 | 0.100 | 0.150 |" in text     # at its highest-throughput concurrency
    assert "| plain | 16 | 0.500 | 0.080† | 0.420† |" in text
    assert "## Own cost per request (ms CPU): server CPU per request minus its signing, Ed25519 (EdDSA)" in text
    assert "| fast | 0.100 | 0.210 → 0.110 [0.100–0.120] | 0.250 → 0.150 |" in text
    assert "| plain | 0.080† | 0.500 → 0.420† |  |" in text
    assert "RSA" not in text


def test_markdown_of_an_old_set_with_key_bits(tmp_path):
    ceiling = {"tool": "OpenSSL", "key_bits": 4096, "signs_per_s_per_core": 400, "sign_ms": 2.5,
               "token_pairs_per_s_per_core": 200, "token_pairs_per_s_all_cores": 400}
    r = {"name": "old", "own_ceiling": {"provider": "p", "token_pairs_per_s_per_core": 190, "pair_ms": 5.2},
         "runs": {"16": _runs(6.0)}}
    r["summary"] = summary.summarize(r, ceiling)
    text = reports.write_markdown(tmp_path / "r.md", _env({"key_bits": 4096}), ceiling, [r])
    assert text.startswith("# simple-auth benchmark — local, scenario `users`, RSA-4096 (RS256)")
    assert "400 RSA-4096 signatures/s per core" in text
    assert "| old | 16 | 6.000 | 5.200 | 0.800 |" in text


def test_a_failed_conformance_gate_names_the_test_and_its_assertion_and_keeps_the_output(tmp_path, monkeypatch):
    output = ("....F\n"
              "E       AssertionError: answers other than 200 during the rotation:\n"
              "E         Statuses: 200: 10, 503: 2\n"
              "FAILED spec/conformance/test_issuer.py::test_rotation_under_load_drops_no_request\n"
              "1 failed, 4 passed in 9.1s\n")
    monkeypatch.setattr(subprocess, "run",
                        lambda *a, **kw: subprocess.CompletedProcess(a[0], 1, output, "stderr line\n"))
    log = tmp_path / "akka-conformance.log"
    reason = verification.conformance_gate("akka", "rsa-2048", log)
    assert reason == ("conformance suite failed: FAILED spec/conformance/test_issuer.py::"
                      "test_rotation_under_load_drops_no_request (AssertionError: answers other than 200 during the "
                      "rotation:); output: akka-conformance.log")
    assert log.read_text() == output + "stderr line\n"
    monkeypatch.setattr(subprocess, "run",
                        lambda *a, **kw: subprocess.CompletedProcess(a[0], 0, "5 passed\n", ""))
    assert verification.conformance_gate("akka", "rsa-2048", tmp_path / "other.log") is None
    assert not (tmp_path / "other.log").exists()


class _BuildRecorder:
    """A stack for prepare_stack that records how it was asked to build, then stops the preparation at its
    environment (what follows the build needs a real stack)."""
    name = "fake"
    manifest: dict = {}

    class Stop(Exception):
        pass

    def __init__(self, artifact: Path):
        self.artifact = artifact
        self.calls: list[str] = []

    def build(self) -> float:
        self.calls.append("build")
        return 12.0

    def ensure_built(self) -> None:
        self.calls.append("ensure_built")

    def contract_env(self, *args, **kw):
        raise self.Stop()


@pytest.mark.parametrize("argv, calls", [
    ([], ["build"]),                    # a real run times a full build: the build column
    (["--smoke"], ["ensure_built"]),    # the smoke run builds only what is missing or stale
    (["--no-build"], []),
    (["--smoke", "--no-build"], []),
])
def test_the_smoke_run_builds_only_what_is_stale_and_a_real_run_times_its_build(tmp_path, argv, calls):
    artifact = tmp_path / "artifact"
    artifact.write_bytes(b"x" * 10)
    stack = _BuildRecorder(artifact)
    settings = cli.parse_args(["--stacks", "actix", "--skip-conformance", *argv])
    with pytest.raises(_BuildRecorder.Stop):
        runner.prepare_stack(stack, settings, "postgres://unused", None, cli.Progress(60), tmp_path)
    assert stack.calls == calls


def test_no_harness_module_is_over_800_lines():
    """The harness stays modules by job (docs/benchmark.md, "Where the runner's code lives"): wrk/'s own Python and
    wrk/harness/, the tests and the experiments' one-off scripts aside."""
    wrk = Path(stackctl.__file__).resolve().parent
    files = sorted([*wrk.glob("*.py"), *(wrk / "harness").glob("*.py")])
    assert len(files) > 20, files
    long = {f.relative_to(wrk).as_posix(): n for f in files if (n := len(f.read_text().splitlines())) > 800}
    assert not long, f"split these by job: {long}"
