"""The benchmark harness against a fake /token server: what users.lua sends
and counts, and how the runner parses, summarizes and reports it. No timing is
asserted anywhere; only counts, shapes and arithmetic."""
from __future__ import annotations

import json
import shutil
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import bench  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("wrk") is None, reason="wrk not installed")


class FakeToken(BaseHTTPRequestHandler):
    """Answers like the contract: 200 for the documented passwords, 400 otherwise."""
    protocol_version = "HTTP/1.1"
    seen: list[dict] = []
    unavailable = False

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        FakeToken.seen.append(body)
        user, pw = body["username"], body["password"]
        local = user.split("@")[0]
        ok = (user == "john@example.com" and pw == "TopSecret0!") or \
             (local.startswith("legacy") and pw == f"legacy-pass-{local[6:]}") or \
             (local.startswith("argon") and pw == f"argon-pass-{local[5:]}")
        payload = b'{"access_token":"a","id_token":"i","token_type":"Bearer","expires_in":600}' if ok else \
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
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture(autouse=True)
def clear():
    FakeToken.seen.clear()


def test_users_scenario_walks_the_legacy_population(fake):
    run = bench.run_wrk(fake, 2, 1, 1, "users", 0.0)
    assert run["requests"] > 0
    assert run["status"] == {"200": run["requests"]}
    assert run["errors"] == 0
    users = [b["username"] for b in FakeToken.seen]
    assert all(u.startswith("legacy") and u.endswith("@example.com") for u in users)
    assert len(set(users)) > 1, "the script rotates through users"


def test_argon2_scenario_stays_in_its_population(fake):
    bench.run_wrk(fake, 2, 1, 1, "argon2", 0.0)
    nums = {int(b["username"][5:].split("@")[0]) for b in FakeToken.seen}
    assert nums and min(nums) >= 1 and max(nums) <= 100


def test_wrong_share_is_counted_as_expected_400s(fake):
    run = bench.run_wrk(fake, 1, 1, 1, "users", 0.25)
    ok, bad = run["status"].get("200", 0), run["status"].get("400", 0)
    assert ok + bad == run["requests"]
    # Deterministic: every fourth request is wrong (in flight at the end aside).
    assert abs(bad - run["requests"] / 4) <= 2
    assert run["errors"] == 0, "400s are expected when wrong passwords are sent on purpose"


def test_unexpected_status_is_an_error(fake):
    FakeToken.unavailable = True
    try:
        run = bench.run_wrk(fake, 1, 1, 1, "john", 0.0)
    finally:
        FakeToken.unavailable = False
    assert run["status"] == {"503": run["requests"]}
    assert run["unexpected_status"] == run["requests"] and run["errors"] >= run["requests"]


def test_wrong_passwords_only_is_not_an_error(fake):
    run = bench.run_wrk(fake, 1, 1, 1, "john", 1.0)
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
    t0 = bench.time.monotonic()  # before the timer starts: the first 200 cannot come sooner than 0.2 s after t0
    threading.Timer(0.2, lambda: setattr(FakeToken, "unavailable", False)).start()
    try:
        elapsed = bench.time_to_first_token(fake, _Running(), t0, timeout=10)
    finally:
        FakeToken.unavailable = False
    assert elapsed >= 0.2
    assert FakeToken.seen[-1] == {"username": "john@example.com", "password": "TopSecret0!"}
    assert len(FakeToken.seen) >= 2


def test_first_token_gives_up_on_a_dead_process_or_a_closed_port(fake):
    with pytest.raises(bench.ToolError, match="exited with 3"):
        bench.time_to_first_token(fake, _Exited(), bench.time.monotonic())
    closed = f"http://127.0.0.1:{bench.stackctl.free_port()}"
    with pytest.raises(bench.ToolError, match="no 200"):
        bench.time_to_first_token(closed, _Running(), bench.time.monotonic(), timeout=0.3)


def test_summary_medians_spread_and_crypto_share():
    def run(rps, cpu):
        return {"rps": rps, "errors": 0, "requests": 1000, "cpu_ms_per_request": cpu,
                "latency_ms": {"p50": 1, "p90": 2, "p99": 3, "p99_9": 4, "max": 5}}
    result = {"runs": {"16": [run(100, 2.0), run(300, 1.0), run(200, 1.5)], "64": [run(400, 1.0)]},
              "samples": [(0.0, 50 * 2**20, 0.1), (5.0, 80 * 2**20, 1.0), (9.0, 60 * 2**20, 2.0)],
              "phases": [(1.0, "warmup"), (4.0, "c=16#1")]}
    s = bench.summarize(result, {"sign_ms": 0.5})
    c16 = s["by_concurrency"]["16"]
    assert c16["rps"] == {"median": 200, "min": 100, "max": 300}
    assert c16["cpu_ms_per_request"] == 1.5
    assert c16["crypto_share"] == round(2 * 0.5 / 1.5, 3)
    assert s["knee"] == "64"
    assert s["rss_peak_mb"] == 80.0 and s["rss_steady_mb"] == 70.0


def test_startup_probe_times_a_start_and_stops_the_process(tmp_path):
    port = bench.stackctl.free_port()
    (tmp_path / "server.py").write_text(
        "import sys\nfrom http.server import BaseHTTPRequestHandler, HTTPServer\n"
        "class H(BaseHTTPRequestHandler):\n"
        "    def do_POST(self):\n"
        "        self.rfile.read(int(self.headers['Content-Length']))\n"
        "        self.send_response(200); self.send_header('Content-Length', '0'); self.end_headers()\n"
        "    def log_message(self, *a): pass\n"
        f"HTTPServer(('127.0.0.1', {port}), H).serve_forever()\n")
    t = bench.startup_probe([sys.executable, "server.py"], tmp_path, dict(bench.os.environ), f"http://127.0.0.1:{port}")
    assert t > 0
    with pytest.raises(OSError):  # stopped: nothing listens any more
        socket.create_connection(("127.0.0.1", port), timeout=1).close()


def test_own_share_uses_the_stacks_own_pair_cost():
    run = {"rps": 100, "errors": 0, "requests": 1000, "cpu_ms_per_request": 0.8,
           "latency_ms": {"p50": 1, "p90": 2, "p99": 3, "p99_9": 4, "max": 5}}
    s = bench.summarize({"runs": {"16": [run]}, "own_ceiling": {"pair_ms": 0.6}}, {"sign_ms": 0.25})
    assert s["by_concurrency"]["16"]["own_share"] == 0.75
    assert s["by_concurrency"]["16"]["crypto_share"] == 0.625
    assert "own_share" not in bench.summarize({"runs": {"16": [run]}}, None)["by_concurrency"]["16"]


def _fake_stack(tmp_path: Path, script: str) -> bench.Stack:
    (tmp_path / "signbench.py").write_text(script)
    return bench.Stack("fake", tmp_path, {"run": ["true"], "signbench": [sys.executable, "signbench.py"]})


def test_own_ceiling_reads_the_last_json_line_and_passes_the_seconds(tmp_path):
    stack = _fake_stack(tmp_path, "import json, os, sys\n"
                        "print('warming up', file=sys.stderr)\n"
                        "print(json.dumps({'token_pairs': int(float(sys.argv[1]) * 1000), 'seconds': 2.0,"
                        " 'thread_cpu_seconds': 1.6, 'provider': os.environ['PROVIDER']}))\n")
    own = bench.own_ceiling(stack, {**bench.os.environ, "PROVIDER": "ACCP 2.5"}, 2)
    assert own["provider"] == "ACCP 2.5" and own["token_pairs"] == 2000
    assert own["token_pairs_per_s_per_core"] == 1250 and own["pair_ms"] == 0.8


def test_own_ceiling_is_the_fastest_of_its_runs_and_keeps_them_all(tmp_path):
    # Each run reads and bumps a counter: the second of three is the fastest (1.0 CPU s for 2000 pairs).
    stack = _fake_stack(tmp_path, "import json, pathlib\n"
                        "f = pathlib.Path('n'); n = int(f.read_text()) if f.exists() else 0; f.write_text(str(n + 1))\n"
                        "cpu = [1.6, 1.0, 1.25][n]\n"
                        "print(json.dumps({'token_pairs': 2000, 'seconds': 2.0, 'thread_cpu_seconds': cpu,"
                        " 'provider': 'p'}))\n")
    own = bench.own_ceiling(stack, dict(bench.os.environ), 2, runs=3)
    assert own["token_pairs_per_s_per_core"] == 2000 and own["pair_ms"] == 0.5
    assert own["thread_cpu_seconds"] == 1.0
    assert own["runs_token_pairs_per_s_per_core"] == [1250, 2000, 1600]


def test_own_ceiling_fails_when_any_run_fails(tmp_path):
    stack = _fake_stack(tmp_path, "import json, pathlib, sys\n"
                        "f = pathlib.Path('n'); n = int(f.read_text()) if f.exists() else 0; f.write_text(str(n + 1))\n"
                        "sys.exit(3) if n == 1 else print(json.dumps({'token_pairs': 10, 'seconds': 1,"
                        " 'thread_cpu_seconds': 1, 'provider': 'p'}))\n")
    with pytest.raises(bench.ToolError, match="exit 3"):
        bench.own_ceiling(stack, dict(bench.os.environ), 1, runs=3)


def test_settings_run_signbench_three_times_except_in_the_smoke_run():
    assert bench.parse_args([]).signbench_runs == 3
    assert bench.parse_args(["--smoke"]).signbench_runs == 1


@pytest.mark.parametrize("script, message", [
    ("import sys; print('no key', file=sys.stderr); sys.exit(2)", "exit 2"),
    ("print('fast!')", "no valid result line"),
    ("print('{\"token_pairs\": 0, \"seconds\": 1, \"thread_cpu_seconds\": 1, \"provider\": \"x\"}')", "implausible"),
])
def test_own_ceiling_refuses_failures_and_nonsense(tmp_path, script, message):
    with pytest.raises(bench.ToolError, match=message):
        bench.own_ceiling(_fake_stack(tmp_path, script), dict(bench.os.environ), 1)


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
    text = bench.write_markdown(tmp_path / "r.md", env, ceiling, results)
    assert "| good | 4000 | ACCP | 1600 | 0.625 | 80% |" in text
    assert "| drifted | 3200 | ACCP | 1600 | 0.625 | 100% |" in text
    assert "| bad | 4000 | failed: signbench of bad failed (exit 2): no key |" in text
    assert "| plain | 4000 | no signbench |" in text


def test_crypto_share_uses_the_ceiling_measured_before_the_stack():
    run = {"rps": 100, "errors": 0, "requests": 1000, "cpu_ms_per_request": 1.0,
           "latency_ms": {"p50": 1, "p90": 2, "p99": 3, "p99_9": 4, "max": 5}}
    s = bench.summarize({"runs": {"16": [run]}, "openssl_ceiling": {"sign_ms": 0.3}}, {"sign_ms": 0.25})
    assert s["by_concurrency"]["16"]["crypto_share"] == 0.6


def test_failed_stack_has_no_numbers(tmp_path):
    env = {"date_utc": "2026-01-01T00:00:00+00:00", "cpu_model": "cpu", "cores": 2, "memory_gib": 24, "kernel": "6",
           "commit": "abc", "dirty": False,
           "settings": {"profile": "local", "scenario": "users", "key_bits": 2048, "concurrency": [16], "repeats": 1,
                        "duration_s": 1, "primer_s": 0, "warmup_s": 0, "wrk_threads": 1, "db_pool_size": 10,
                        "limits": {}, "wrong_share": 0.0}}
    results = [{"name": "broken", "failed": "verification: login answered 500", "summary": {}}]
    text = bench.write_markdown(tmp_path / "r.md", env, None, results)
    assert "**broken**: verification: login answered 500" in text
    assert "| broken |" not in text


def test_cgroup_wrap_joins_before_exec():
    cg = object.__new__(bench.Cgroup)
    cg.paths = {"cpu": Path("/sys/fs/cgroup/cpu/x"), "memory": Path("/sys/fs/cgroup/memory/x")}
    cmd = cg.wrap(["java", "-jar", "app.jar"])
    assert cmd[:2] == ["sh", "-c"] and cmd[-3:] == ["java", "-jar", "app.jar"]
    assert "echo $$ > '/sys/fs/cgroup/cpu/x/cgroup.procs'" in cmd[2] and 'exec "$@"' in cmd[2]


def test_bad_arguments_are_refused(capsys):
    for argv in (["--concurrency", "x"], ["--wrong-share", "2"], ["--url", "nourl"], ["--stacks", "cobol"]):
        with pytest.raises(SystemExit) as e:
            bench.parse_args(argv)
        assert e.value.code == 2
