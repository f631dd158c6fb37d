"""Own cost and thread hand-offs per login (issue 39 item 1): the server's threads' scheduler switches read per
thread at both ends of a run (threads born in the run counted whole, threads gone by its end lost and counted as
such), per request in every closed-loop and open-loop run, their medians in the summary, and the per-login tables
of results.md, for every key type alike."""
from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from harness import probes, records, reports, summary  # noqa: E402


def _task(root: Path, pid: int, tid: int, vol: int, non: int) -> None:
    d = root / str(pid) / "task" / str(tid)
    d.mkdir(parents=True, exist_ok=True)
    (d / "status").write_text(f"Name:\tx\nPid:\t{tid}\nvoluntary_ctxt_switches:\t{vol}\n"
                              f"nonvoluntary_ctxt_switches:\t{non}\n")


def test_thread_switches_reads_every_task_of_a_fake_proc(tmp_path):
    _task(tmp_path, 10, 10, 5, 1)
    _task(tmp_path, 10, 11, 100, 7)
    (tmp_path / "10" / "task" / "12").mkdir()     # a thread that exited between the listing and its read
    assert probes.thread_switches(10, tmp_path) == {10: (5, 1), 11: (100, 7)}
    assert probes.thread_switches(99, tmp_path) is None


def test_thread_switches_sees_this_processs_threads_separately():
    stop = threading.Event()
    t = threading.Thread(target=lambda: [time.sleep(0.001) for _ in range(50)] and stop.wait(5))
    t.start()
    try:
        time.sleep(0.2)
        sw = probes.thread_switches(os.getpid())
        assert t.native_id in sw and os.getpid() in sw
        assert sw[t.native_id][0] >= 50   # its own sleeps, not the main thread's (what /proc/<pid>/status shows)
    finally:
        stop.set()
        t.join()


def test_switches_between_counts_born_threads_whole_and_gone_threads_as_lost():
    before = {1: (10, 1), 2: (50, 5), 3: (7, 0)}
    after = {1: (30, 2), 2: (50, 9), 4: (6, 1), 5: (2, 0)}   # 3 exited; 4 and 5 were born in the run
    assert probes.switches_between(before, after) == {
        "voluntary": 20 + 0 + 6 + 2, "nonvoluntary": 1 + 4 + 1 + 0, "threads_start": 3, "threads_end": 4,
        "threads_new": 2, "threads_gone": 1}
    # A tid reused by a new thread (its counters below the old one's) counts from the new thread's birth.
    assert probes.switches_between({1: (100, 10)}, {1: (3, 1)})["voluntary"] == 3


def test_account_gives_hand_offs_per_request():
    b = records.Snapshot(t=0.0, server=1.0, busy=1.0, idle=1.0, steal=0.0, switches={1: (10, 0), 2: (0, 0)})
    a = records.Snapshot(t=1.0, server=2.0, busy=2.0, idle=1.0, steal=0.0, switches={1: (410, 50), 2: (40, 0)})
    m = probes.account(b, a, 100, 0.1).to_json()
    assert m["switches_per_request"] == 4.9
    assert m["switches"]["voluntary"] == 440 and m["switches"]["threads_gone"] == 0
    # Not readable at one end (a --url target, or the server gone): no figure rather than a wrong one.
    assert "switches_per_request" not in probes.account(b, records.Snapshot(t=1.0, busy=2.0, idle=1.0, steal=0.0),
                                                        100, 0.1).to_json()


LAT = {"p50": 1, "p90": 2, "p99": 3, "p99_9": 4, "max": 5}


def _result(gone: int = 0) -> dict:
    def run(cpu, sw):
        return {"rps": 1000, "errors": 0, "requests": 10000, "cpu_ms_per_request": cpu, "latency_ms": LAT,
                "switches_per_request": sw, "switches": {"threads_gone": gone}}

    def olr(kind, f, rate, cpu, sw, rep=None):
        return {"kind": kind, "fraction": f, "target_rps": rate, "achieved_rps": rate, "errors": 0,
                "latency_ms": LAT, "cpu_ms_per_request": cpu, "switches_per_request": sw, "repeat": rep,
                "switches": {"threads_gone": 0}, "machine": {"busy_cores": 1.0}}
    return {"name": "akka", "own_ceiling": {"pair_ms": 0.2, "provider": "ACCP", "token_pairs_per_s_per_core": 5000.0},
            "runs": {"64": [run(0.5, 4.0), run(0.6, 5.0), run(0.7, 9.0)]},
            "warmups": [{"concurrency": 64, "seconds": 75.2, "stable": False}],
            "open_loop": [olr("shared", 0.5, 300.0, 0.9, 10.0), olr("shared", 0.5, 300.0, 1.1, 12.0),
                          olr("own", 0.5, 500.0, 0.8, 8.0, 1), olr("own", 0.5, 500.0, 1.0, 6.0, 2)]}


def test_summary_has_own_cost_and_hand_offs_at_saturation_and_at_every_open_loop_point():
    s = summary.summarize(_result(), None)
    c64 = s["by_concurrency"]["64"]
    assert c64["own_cost_ms_per_request"] == 0.4 and c64["switches_per_request"] == 5.0
    assert c64["switches_per_request_spread"] == {"median": 5.0, "min": 4.0, "max": 9.0}
    assert [o["own_cost_ms_per_request"] for o in s["open_loop"]] == [0.7, 0.9, 0.6, 0.8]
    own = s["open_loop_own"][0]
    assert own["fraction"] == 0.5 and own["own_cost_ms_per_request"] == 0.7 and own["switches_per_request"] == 7.0
    assert own["cpu_ms_per_request"] == 0.9 and own["threads_gone"] == 0 and own["own_cost_basis"] == "signbench"


def test_without_signbench_the_own_cost_subtracts_openssls_two_signatures():
    r = _result()
    del r["own_ceiling"]
    s = summary.summarize(r, {"sign_ms": 0.1})
    assert s["by_concurrency"]["64"]["own_cost_basis"] == "openssl"
    assert s["open_loop_own"][0]["own_cost_ms_per_request"] == 0.7 and s["open_loop_own"][0]["own_cost_basis"] == "openssl"


def _env(key_type: str) -> dict:
    return {"date_utc": "2026-01-01", "cpu_model": "cpu", "cores": 2, "memory_gib": 24, "kernel": "6",
            "commit": "abc", "dirty": False,
            "settings": {"profile": "local", "scenario": "users", "key_type": key_type, "concurrency": [64],
                         "repeats": 3, "duration_s": 30, "primer_s": 5, "warmup_cap_s": 120, "warmup_window_s": 10,
                         "wrk_threads": 2, "db_pool_size": 10, "wrong_share": 0.0, "limits": {}}}


def test_the_per_login_tables_carry_own_cost_and_hand_offs_for_every_key_type(tmp_path):
    for key_type in ("rsa-2048", "p-256", "ed25519"):
        r = _result(gone=2)
        r["summary"] = summary.summarize(r, None)
        text = reports.write_markdown(tmp_path / "r.md", _env(key_type), None, [r])
        assert "| stack | logins/s [range] | at c | warm-up s | CPU ms/login | own ms/login | hand-offs/login | " \
               "CPU ÷ floor | " \
               "own ms/login 50% | hand-offs/login 50% |" in text
        # saturation: CPU 0.6, own 0.4, 5.0 hand-offs, starred (threads exited: a lower bound); at 50 %: 0.7, 7.0
        assert "| akka | 1000 [1000–1000] | 64 | 75* | 0.600 | 0.400 | 5.0* | n/a | 0.700 | 7.0 |" in text
        assert "| akka | 0.400 · 5.0* | 0.800 · 11.0 | 0.700 · 7.0 |" in text


def test_a_refresh_set_names_its_requests_refreshes(tmp_path):
    r = _result()
    r["summary"] = summary.summarize(r, None)
    env = _env("rsa-2048")
    env["settings"]["scenario"] = "refresh"
    text = reports.write_markdown(tmp_path / "r.md", env, None, [r])
    assert "## Per refresh" in text and "## Per login" not in text
    assert "| stack | refreshes/s [range] | at c | warm-up s | CPU ms/refresh | own ms/refresh | hand-offs/refresh | " \
           "CPU ÷ floor | own ms/refresh 50% | hand-offs/refresh 50% |" in text
    assert "ms/login" not in text and "logins/s" not in text


def _cells(line: str) -> int:
    return len(line.strip().strip("|").split("|"))


def _table_shapes(text: str) -> list[tuple[str, list[int]]]:
    """Each Markdown table of a report: its header line and the cell count of every line (header, delimiter,
    rows); a renderer shows a table only when the header and the delimiter row have the same count."""
    tables, cur = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            cur.append(line)
        elif cur:
            tables.append((cur[0], [_cells(x) for x in cur]))
            cur = []
    return tables


def test_every_table_has_as_many_header_cells_as_delimiter_and_row_cells_with_and_without_open_loop(tmp_path):
    with_open = _result()
    without = _result()
    without["open_loop"] = []   # a refresh or argon2 set: closed loop only
    for r in (with_open, without):
        r["summary"] = summary.summarize(r, None)
        text = reports.write_markdown(tmp_path / "r.md", _env("p-256"), None, [r])
        shapes = _table_shapes(text)
        assert any(h.startswith("| stack | logins/s [range] |") for h, _ in shapes)
        for header, counts in shapes:
            assert len(set(counts)) == 1, (header, counts)


def test_every_committed_results_md_has_well_formed_tables():
    root = Path(__file__).resolve().parents[2]
    files = sorted((root / "results").glob("**/results.md"))
    assert files
    for f in files:
        for header, counts in _table_shapes(f.read_text()):
            assert counts[0] == counts[1], (str(f.relative_to(root)), header)


def _thread(root: Path, pid: int, tid: int, comm: str, utime: int, stime: int) -> None:
    d = root / str(pid) / "task" / str(tid)
    d.mkdir(parents=True, exist_ok=True)
    (d / "comm").write_text(comm + "\n")
    # /proc/<pid>/task/<tid>/stat: a name in parentheses (which may hold spaces and ')'), then fields 3.. of
    # proc(5); utime and stime are fields 14 and 15.
    rest = ["S"] + ["0"] * 10 + [str(utime), str(stime)] + ["0"] * 30
    (d / "stat").write_text(f"{tid} ({comm}) " + " ".join(rest) + "\n")


def test_jit_cpu_seconds_adds_up_the_compiler_threads_only(tmp_path):
    tick = os.sysconf("SC_CLK_TCK")
    _thread(tmp_path, 10, 10, "java", 5000, 100)
    _thread(tmp_path, 10, 11, "C2 CompilerThre", 3 * tick, tick)
    _thread(tmp_path, 10, 12, "C1 CompilerThre", tick, 0)
    _thread(tmp_path, 10, 13, "http-nio-1) x", 900, 9)   # a ')' in a name does not shift the fields
    (tmp_path / "10" / "task" / "14").mkdir()                # exited between the listing and its read
    assert probes.jit_cpu_seconds(10, tmp_path) == 5.0
    _thread(tmp_path, 20, 20, "actix-rt|system", 100, 1)     # not a JVM: no figure rather than 0
    assert probes.jit_cpu_seconds(20, tmp_path) is None
    assert probes.jit_cpu_seconds(99, tmp_path) is None


def test_account_gives_the_jit_share_of_the_server_cpu():
    b = records.Snapshot(t=0.0, server=10.0, busy=1.0, idle=1.0, steal=0.0, jit=2.0)
    a = records.Snapshot(t=1.0, server=14.0, busy=2.0, idle=1.0, steal=0.0, jit=3.0)
    m = probes.account(b, a, 100, 0.1).to_json()
    assert m["jit_cpu_s"] == 1.0 and m["jit_share"] == 0.25
    # A stack without compiler threads has no JIT figure at all.
    m = probes.account(records.Snapshot(t=0.0, server=1.0), records.Snapshot(t=1.0, server=2.0), 100, 0.1).to_json()
    assert "jit_share" not in m
