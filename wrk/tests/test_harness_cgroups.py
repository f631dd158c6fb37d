"""The server's cgroup against fake hierarchies laid out like /sys/fs/cgroup: cgroup v1 (one directory per
controller) and cgroup v2 (one unified tree, controllers delegated through cgroup.subtree_control). Each test
checks the files the harness writes (quota, period, cpus, memory limit, procs, delegation) and the values it
reads back. The kernel fills a new cgroup's directory with its interface files; the fakes lay those out before
the harness creates the directory (it uses mkdir(exist_ok=True))."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import stackctl  # noqa: E402
from harness import cgroups, cli, governor, reports  # noqa: E402
from harness.records import FlyShared, Limits, StackResult  # noqa: E402

MiB = 2**20
FLY_SHARED = Limits(memory_mb=256, cpuset="last", shared=FlyShared())


def _write(path: Path, files: dict[str, str]) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (path / name).write_text(text)
    return path


def fake_v1(tmp: Path, name: str) -> Path:
    """A v1 layout: cpu, cpuacct, cpuset and memory mounted side by side; this process in a memory cgroup of its
    own (as on this machine), at the top of the others. The server's directories come with the kernel's files."""
    root = tmp / "cgroup"
    for ctrl in ("cpu", "cpuacct", "cpuset", "memory", "unified"):
        (root / ctrl).mkdir(parents=True)
    (root / "cpuset" / "cpuset.mems").write_text("0\n")
    (root / "cpuset" / "cpuset.cpus").write_text("0-1\n")
    _write(root / "cpu" / name, {"cpu.cfs_period_us": "100000\n", "cpu.cfs_quota_us": "-1\n",
                                 "cpu.stat": "nr_periods 40\nnr_throttled 7\nthrottled_time 3500000\n"})
    _write(root / "cpuacct" / name, {"cpuacct.usage": "2500000000\n"})
    _write(root / "cpuset" / name, {"cpuset.cpus": "", "cpuset.mems": "", "cpuset.effective_cpus": "1\n"})
    _write(root / "memory" / "runner" / name, {"memory.limit_in_bytes": "9223372036854771712\n",
                                               "memory.max_usage_in_bytes": str(150 * MiB),
                                               "memory.oom_control": "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n"})
    (tmp / "self").write_text("9:name=systemd:/\n4:memory:/runner\n3:cpuset:/\n2:cpuacct:/\n1:cpu:/\n0::/\n")
    return root


def fake_v2(tmp: Path, name: str) -> Path:
    """A v2 layout: this process in /bench.slice/runner.scope, no controller delegated yet below the root; the
    server's cgroup goes beside the runner's, in /bench.slice."""
    root = tmp / "cgroup"
    _write(root, {"cgroup.controllers": "cpuset cpu io memory hugetlb pids rdma misc\n",
                  "cgroup.subtree_control": "\n"})
    _write(root / "bench.slice", {"cgroup.controllers": "", "cgroup.subtree_control": ""})
    _write(root / "bench.slice" / "runner.scope", {"cgroup.controllers": "", "cgroup.subtree_control": ""})
    _write(root / "bench.slice" / name, {
        "cpu.max": "max 100000\n", "cpuset.cpus": "\n", "cpuset.cpus.effective": "1\n", "memory.max": "max\n",
        "cpu.stat": "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\nnr_periods 40\nnr_throttled 7\n"
                    "throttled_usec 3500\n",
        "memory.peak": str(150 * MiB), "memory.events": "low 0\nhigh 0\nmax 4\noom 1\noom_kill 1\n"})
    (tmp / "self").write_text("0::/bench.slice/runner.scope\n")
    return root


def _procs(path: Path) -> list[str]:
    return (path / "cgroup.procs").read_text().split()


def test_the_version_is_read_from_the_mounted_hierarchy(tmp_path):
    assert cgroups.cgroup_version(fake_v1(tmp_path / "a", "s")) == 1, "a hybrid layout's `unified` has no controllers"
    assert cgroups.cgroup_version(fake_v2(tmp_path / "b", "s")) == 2
    expected = 2 if Path("/sys/fs/cgroup/cgroup.controllers").exists() else 1
    assert cgroups.cgroup_version() == expected


def test_v1_writes_the_cpuset_memory_limit_and_quota_per_controller(tmp_path):
    root = fake_v1(tmp_path, "srv")
    cg = cgroups.Cgroup("srv", FLY_SHARED, root=root, self_cgroup=tmp_path / "self", cpus=2)
    assert cg.version == 1 and not cg.v2
    assert cg.paths == {"cpu": root / "cpu" / "srv", "cpuacct": root / "cpuacct" / "srv",
                        "memory": root / "memory" / "runner" / "srv", "cpuset": root / "cpuset" / "srv"}
    assert (root / "cpuset" / "srv" / "cpuset.cpus").read_text() == "1", "the last of two CPUs"
    assert (root / "cpuset" / "srv" / "cpuset.mems").read_text() == "0", "v1 wants mems before a task joins"
    mem = root / "memory" / "runner" / "srv"
    assert (mem / "memory.limit_in_bytes").read_text() == str(256 * MiB)
    assert (mem / "memory.memsw.limit_in_bytes").read_text() == str(256 * MiB)
    assert (mem / "memory.swappiness").read_text() == "0"
    assert (root / "cpu" / "srv" / "cpu.cfs_quota_us").read_text() == "-1\n", "no quota without --cpus or a governor"
    cg.set_cfs(5000, 80000)
    assert (root / "cpu" / "srv" / "cpu.cfs_period_us").read_text() == "80000"
    assert (root / "cpu" / "srv" / "cpu.cfs_quota_us").read_text() == "5000"
    assert cg.cfs() == (5000, 80000)
    # Read back: CPU time in ns (cpuacct.usage), throttled time in ns (cpu.stat), peak, OOM kills, the cpuset.
    assert cg.cpu_usage_s() == pytest.approx(2.5)
    assert cg.cpu_stat() == {"nr_periods": 40, "nr_throttled": 7, "throttled_us": 3500}
    assert cg.memory_peak_bytes() == 150 * MiB and cg.oom_kills() == 2
    assert cg.describe() == {"version": 1, "cpuset": "1", "cpu_quota_us": 5000, "cpu_period_us": 80000,
                             "memory_limit_bytes": 256 * MiB}


def test_v1_without_limits_has_no_cpuset_and_no_limit(tmp_path):
    root = fake_v1(tmp_path, "srv")
    cg = cgroups.Cgroup("srv", Limits(), root=root, self_cgroup=tmp_path / "self", cpus=2)
    assert set(cg.paths) == {"cpu", "cpuacct", "memory"}
    (root / "memory" / "runner" / "srv" / "memory.limit_in_bytes").write_text("9223372036854771712\n")
    assert cg.describe() == {"version": 1, "cpuset": None, "cpu_quota_us": None, "cpu_period_us": 100000,
                             "memory_limit_bytes": None}


def test_v1_refuses_a_missing_controller(tmp_path):
    root = fake_v1(tmp_path, "srv")
    (root / "cpuset").rename(root / "elsewhere")
    with pytest.raises(stackctl.ToolError, match="'cpuset' is not mounted"):
        cgroups.Cgroup("srv", FLY_SHARED, root=root, self_cgroup=tmp_path / "self", cpus=2)


def test_v1_a_process_joins_every_controllers_cgroup_before_it_execs(tmp_path):
    root = fake_v1(tmp_path, "srv")
    cg = cgroups.Cgroup("srv", FLY_SHARED, root=root, self_cgroup=tmp_path / "self", cpus=2)
    res = subprocess.run(cg.wrap(["sh", "-c", "echo $$"]), capture_output=True, text=True, check=True)
    pid = res.stdout.strip()
    for path in cg.paths.values():
        assert _procs(path) == [pid], f"{path}: the exec'd process is the one that joined"


def test_v2_delegates_the_controllers_from_the_root_down_and_writes_one_directory(tmp_path):
    root = fake_v2(tmp_path, "srv")
    cg = cgroups.Cgroup("srv", FLY_SHARED, root=root, self_cgroup=tmp_path / "self", cpus=2)
    assert cg.version == 2 and cg.v2
    for d in (root, root / "bench.slice"):
        assert (d / "cgroup.subtree_control").read_text() == "+cpu +cpuset +memory", d
    assert (root / "bench.slice" / "runner.scope" / "cgroup.subtree_control").read_text() == "", \
        "the runner's own cgroup holds processes: the server's goes beside it"
    srv = root / "bench.slice" / "srv"
    assert set(cg.paths.values()) == {srv}
    assert (srv / "cpuset.cpus").read_text() == "1"
    assert (srv / "memory.max").read_text() == str(256 * MiB)
    assert (srv / "memory.swap.max").read_text() == "0"
    assert (srv / "cpu.max").read_text() == "max 100000\n", "no quota without --cpus or a governor"
    cg.set_cfs(5000, 80000)
    assert (srv / "cpu.max").read_text() == "5000 80000"
    # Read back: usage_usec, throttled_usec (µs), memory.peak, memory.events' oom_kill, the effective cpuset.
    assert cg.cpu_usage_s() == pytest.approx(2.5)
    assert cg.cpu_stat() == {"nr_periods": 40, "nr_throttled": 7, "throttled_us": 3500}
    assert cg.memory_peak_bytes() == 150 * MiB and cg.oom_kills() == 1
    assert cg.describe() == {"version": 2, "cpuset": "1", "cpu_quota_us": 5000, "cpu_period_us": 80000,
                             "memory_limit_bytes": 256 * MiB}
    res = subprocess.run(cg.wrap(["sh", "-c", "echo $$"]), capture_output=True, text=True, check=True)
    assert _procs(srv) == [res.stdout.strip()], "one unified directory: one join"


def test_v2_a_whole_cpu_quota_and_no_cpuset(tmp_path):
    root = fake_v2(tmp_path, "srv")
    cg = cgroups.Cgroup("srv", Limits(cpus=1.0, memory_mb=256), root=root, self_cgroup=tmp_path / "self", cpus=2)
    srv = root / "bench.slice" / "srv"
    assert (srv / "cpu.max").read_text() == "100000 100000"
    assert (srv / "cpuset.cpus").read_text() == "\n", "no cpuset written"
    assert cg.describe()["cpuset"] is None and cg.cfs() == (100000, 100000)


def test_v2_leaves_controllers_already_delegated_alone(tmp_path):
    root = fake_v2(tmp_path, "srv")
    for d in (root, root / "bench.slice"):
        (d / "cgroup.subtree_control").write_text("cpuset cpu memory pids\n")   # how the kernel lists them
    cgroups.Cgroup("srv", FLY_SHARED, root=root, self_cgroup=tmp_path / "self", cpus=2)
    assert (root / "cgroup.subtree_control").read_text() == "cpuset cpu memory pids\n"
    assert (root / "bench.slice" / "cgroup.subtree_control").read_text() == "cpuset cpu memory pids\n"
    (root / "bench.slice" / "cgroup.subtree_control").write_text("memory\n")
    cgroups.Cgroup("srv", FLY_SHARED, root=root, self_cgroup=tmp_path / "self", cpus=2)
    assert (root / "bench.slice" / "cgroup.subtree_control").read_text() == "+cpu +cpuset"


def test_v2_refuses_missing_controllers_and_a_delegation_the_kernel_refuses(tmp_path):
    root = fake_v2(tmp_path / "a", "srv")
    (root / "cgroup.controllers").write_text("cpu io memory pids\n")
    with pytest.raises(stackctl.ToolError, match="controller.s. cpuset not available"):
        cgroups.Cgroup("srv", FLY_SHARED, root=root, self_cgroup=tmp_path / "a" / "self", cpus=2)
    root = fake_v2(tmp_path / "b", "srv")
    control = root / "bench.slice" / "cgroup.subtree_control"
    control.unlink()
    control.mkdir()  # any write fails, as the kernel's EBUSY does for a cgroup that holds processes itself
    with pytest.raises(stackctl.ToolError, match="cannot delegate \\+cpu \\+cpuset \\+memory .*as root"):
        cgroups.Cgroup("srv", FLY_SHARED, root=root, self_cgroup=tmp_path / "b" / "self", cpus=2)


@pytest.mark.parametrize("layout", [fake_v1, fake_v2])
def test_the_shared_cpu_governor_sets_its_quota_on_the_one_cpu(tmp_path, layout):
    root = layout(tmp_path, "srv")
    cg = cgroups.Cgroup("srv", FLY_SHARED, root=root, self_cgroup=tmp_path / "self", cpus=4)
    gt = governor.GovernorThread(cg, governor.ShareGovernor(FlyShared()))   # not started: its first quota only
    assert cg.describe()["cpu_quota_us"] == 5000 and cg.describe()["cpu_period_us"] == 80000
    assert (cg.paths["cpuset"] / "cpuset.cpus").read_text() == "3", "the last of four CPUs"
    gt.set_balance(500.0)
    assert cg.cfs() == (80000, 80000), "a full balance: the whole period of that one CPU"


@pytest.mark.skipif(len(__import__("os").sched_getaffinity(0)) < 2, reason="the fly profiles need two CPUs")
def test_both_fly_profiles_pin_the_server_to_one_cpu():
    for profile in ("fly-shared-cpu-1x", "fly-performance-1x"):
        limits = cli.parse_args(["--profile", profile]).limits
        assert limits.cpuset == "last" and len(cgroups.resolve_cpuset(limits.cpuset).split(",")) == 1
    shared = cli.parse_args(["--profile", "fly-shared-cpu-1x"]).limits.shared
    assert (shared.period_us, shared.baseline_us) == (80000, 5000)
    assert cli.parse_args(["--profile", "fly-performance-1x"]).limits.shared is None


def test_the_report_names_the_cpus_each_server_ran_on(tmp_path):
    env = {"date_utc": "x", "cpu_model": "cpu", "cores": 2, "memory_gib": 1, "kernel": "k", "commit": "c",
           "dirty": False, "settings": {"profile": "fly-shared-cpu-1x", "scenario": "users", "key_type": "rsa-2048",
                                        "alg": "RS256", "concurrency": [4], "repeats": 1, "duration_s": 1,
                                        "primer_s": 1, "wrk_threads": 1, "db_pool_size": 10, "wrong_share": 0.0,
                                        "limits": {"cpuset": "1", "memory_mb": 256}}}
    results = [{"name": "a", "failed": "x", "cgroup": {"version": 2, "cpuset": "1"}, "cpus_allowed": "1"},
               {"name": "b", "failed": "y", "cpus_allowed": "0-1"}]
    text = reports.write_markdown(tmp_path / "r.md", env, None, results)
    assert "CPUs each server ran on (its cgroup's cpuset, else the CPUs its process was allowed): a 1 (cgroup v2); " \
           "b 0-1." in text


@pytest.mark.parametrize("own", ["/", "/runner.scope"])
def test_v2_a_runner_at_the_top_puts_the_server_under_the_root(tmp_path, own):
    root = fake_v2(tmp_path, "srv")
    (tmp_path / "self").write_text(f"0::{own}\n")
    cg = cgroups.Cgroup("srv", FLY_SHARED, root=root, self_cgroup=tmp_path / "self", cpus=2)
    assert set(cg.paths.values()) == {root / "srv"}
    assert (root / "cgroup.subtree_control").read_text() == "+cpu +cpuset +memory"
    assert (root / "bench.slice" / "cgroup.subtree_control").read_text() == "", "nothing else touched"
    assert (root / "srv" / "cpuset.cpus").read_text() == "1"


def test_a_stacks_result_keeps_the_cgroup_as_set_up_beside_what_the_end_reads(tmp_path):
    from harness import runner, schedule
    root = fake_v2(tmp_path, "srv")
    cg = cgroups.Cgroup("srv", FLY_SHARED, root=root, self_cgroup=tmp_path / "self", cpus=2)
    cg.destroy = lambda: None   # the fake's directories hold regular files: the kernel's rmdir would not mind
    live = schedule.Live("srv", "http://127.0.0.1:1", StackResult("srv", cgroup=cg.describe()), cgroup=cg)
    runner.stop_live(live, cli.parse_args(["--url", "x=http://127.0.0.1:1"]))
    got = live.result.to_json()["cgroup"]
    assert (got["version"], got["cpuset"], got["memory_limit_bytes"]) == (2, "1", 256 * MiB)
    assert got["memory_peak_bytes"] == 150 * MiB and got["cpu_stat"]["nr_throttled"] == 7
    assert got["paths"]["cpuset"] == str(root / "bench.slice" / "srv")
