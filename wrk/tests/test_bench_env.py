"""The benchmark measures each stack as it ships: it may move the two failure limits out of the way (one load
generator stands for many clients) and nothing else — no setting that sizes a stack's threads, pools or queues."""
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import stackctl  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def test_bench_sets_only_the_failure_limits():
    assert set(stackctl.BENCH_ENV) <= {"LOGIN_IP_MAX_FAILURES", "LOGIN_MAX_FAILURES"}


def test_no_sizing_setting_in_the_harness():
    # The contract's settings that size threads, pools or queues (spec/README.md §5) must not be set by the runner.
    sizing = ["MAX_PASSWORD_CHECKS", "DB_POOL_SIZE", "DB_ACQUIRE_TIMEOUT_MS"]
    for path in sorted((ROOT / "wrk" / "harness").glob("*.py")) + [ROOT / "wrk" / "bench.py"]:
        text = path.read_text()
        for name in sizing:
            assert not re.search(rf'["\']{name}["\']\s*[:\]]', text), f"{path.name} sets {name}"
