#!/usr/bin/env python3
"""The benchmark runner behind `make bench`: the entry point over the modules of wrk/harness/ (one per job; the
list is in harness/__init__.py, the options in `python3 wrk/bench.py --help`, the method in docs/benchmark.md).

    python3 wrk/bench.py                                # every stack, profile local, scenario users
    python3 wrk/bench.py --stacks actix,spring --profile fly-shared-cpu-1x
    python3 wrk/bench.py --smoke                        # short phases, one concurrency (CI)

The names other tools import from here (spec/faults/test_soak.py, wrk/tests/test_containers.py, the scripts in
wrk/experiments/) stay importable from here.
"""
from __future__ import annotations

import sys
from pathlib import Path

from harness.cli import parse_args
from harness.environment import cmd_out, cpu_model
from harness.loadgen import loadgen, open_loop_bodies, run_oha, run_wrk
from harness.probes import Sampler
from harness.runner import main

__all__ = ["Path", "Sampler", "cmd_out", "cpu_model", "loadgen", "main", "open_loop_bodies", "parse_args", "run_oha",
           "run_wrk"]

if __name__ == "__main__":
    sys.exit(main())
