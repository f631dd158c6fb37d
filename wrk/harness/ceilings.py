"""Ceilings: OpenSSL's signing speed for the key type in use (`openssl speed`) and each stack's own
(`signbench`), and the check that a JVM stack signs with the native provider."""
from __future__ import annotations

import contextlib
import json
import os
import re
import statistics
import subprocess
import sys

from stackctl import Stack, ToolError

from harness.keys import OPENSSL_SPEED, key_alg


def openssl_ceiling(key_type: str, seconds: int, runs: int = 1) -> dict:
    """OpenSSL's signing speed on one core for the key type in use (RSA-2048/4096: `openssl speed rsa2048`/`rsa4096`,
    P-256: `ecdsap256`, Ed25519: `ed25519`), the unavoidable cost of a request (two signatures). Like the stacks'
    own ceilings, the fastest of `runs` readings (noise only ever slows a reading down); every reading is kept."""
    if key_type not in OPENSSL_SPEED:
        raise ToolError(f"no openssl speed algorithm for key type {key_type!r}")
    readings = [_openssl_speed_once(key_type, seconds) for _ in range(max(1, runs))]
    signs = max(readings)
    algo, _, name = OPENSSL_SPEED[key_type]
    return {
        "tool": subprocess.run(["openssl", "version"], capture_output=True, text=True).stdout.strip(),
        "key_type": key_type,
        "alg": key_alg(key_type),
        "signature": name,
        "openssl_speed": algo,
        "signs_per_s_per_core": signs,
        "sign_ms": 1000 / signs,
        "token_pairs_per_s_per_core": signs / 2,
        "token_pairs_per_s_all_cores": signs / 2 * (os.cpu_count() or 1),
        "runs_signs_per_s_per_core": readings,
    }


def parse_openssl_speed(text: str, key_type: str) -> float | None:
    """The sign/s figure of `openssl speed`'s result line for the key type, or None. The column is found by its
    header (`sign verify sign/s verify/s` in OpenSSL 3.0/3.1; 3.2+ adds encrypt/decrypt columns for RSA), the
    figures being the line's last fields, after the label ("rsa 2048 bits", "256 bits ecdsa (nistp256)", ...)."""
    _, label, _ = OPENSSL_SPEED[key_type]
    header: list[str] | None = None
    for line in text.splitlines():
        fields = line.split()
        if "sign/s" in fields:
            header = fields
        elif header and re.match(rf"^\s*{label}\s", line) and len(fields) > len(header):
            with contextlib.suppress(ValueError):
                return float(fields[len(fields) - len(header) + header.index("sign/s")])
    return None


def _openssl_speed_once(key_type: str, seconds: int) -> float:
    algo = OPENSSL_SPEED[key_type][0]
    res = subprocess.run(["openssl", "speed", "-seconds", str(seconds), algo], capture_output=True, text=True)
    signs = parse_openssl_speed(res.stdout, key_type)
    if res.returncode != 0 or not signs:
        raise ToolError(f"openssl speed {algo} failed: {(res.stderr or res.stdout).strip()[-300:]}")
    return signs


NATIVE_JVM_PROVIDER = "AmazonCorrettoCryptoProvider"


def provider_problem(stack: Stack, own: dict | None, error: str | None) -> str | None:
    """A JVM stack must sign with the native provider (ACCP, AWS-LC) like the others, for every key type: with the
    JDK's own RSA, EC or EdDSA its numbers would measure a different signer. None when fine (non-JVM stacks are
    not checked)."""
    if not stack.uses_java:
        return None
    if own is None:
        return f"signing provider unknown (signbench: {error or 'no signbench entry in stack.json'}); " \
               f"a JVM stack gets a number only with {NATIVE_JVM_PROVIDER}"
    if NATIVE_JVM_PROVIDER not in own.get("provider", ""):
        return f"signs with {own.get('provider')!r}, not {NATIVE_JVM_PROVIDER} (the native provider every JVM " \
               "stack must use)"
    return None


def own_ceiling(stack: Stack, env: dict, seconds: float, runs: int = 1) -> dict:
    """The stack's own signing speed: its `signbench` entry point (stack.json) has the service's own signer
    (same settings, key and crypto provider) issue token pairs on one thread, and prints one JSON line.
    Per core = per CPU second of that thread. A ceiling is what the signer can do, and noise (a busy VM, a
    JIT still compiling after the 2 s warm-up) only ever slows a run down: with `runs` > 1 the fastest run is
    reported and every run's pairs per core are kept. Raises ToolError when a run fails or prints nonsense."""
    results = [_signbench_once(stack, env, seconds) for _ in range(max(1, runs))]
    best = max(results, key=lambda r: r["token_pairs_per_s_per_core"])
    best["runs_token_pairs_per_s_per_core"] = [round(r["token_pairs_per_s_per_core"], 1) for r in results]
    return best


def _signbench_once(stack: Stack, env: dict, seconds: float) -> dict:
    cmd = stack.command("signbench") + [f"{seconds:g}"]
    try:
        res = subprocess.run(cmd, cwd=stack.dir, env=env, capture_output=True, text=True, timeout=seconds + 120)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ToolError(f"signbench of {stack.name}: {e}") from e
    lines = [ln for ln in res.stdout.splitlines() if ln.strip()]
    if res.returncode != 0 or not lines:
        raise ToolError(f"signbench of {stack.name} failed (exit {res.returncode}): "
                        f"{(res.stderr or res.stdout).strip()[-300:]}")
    try:
        data = json.loads(lines[-1])
        pairs, cpu, wall = int(data["token_pairs"]), float(data["thread_cpu_seconds"]), float(data["seconds"])
        provider = str(data["provider"])
    except (ValueError, KeyError, TypeError) as e:
        raise ToolError(f"signbench of {stack.name} printed no valid result line: {lines[-1][:200]!r}") from e
    if pairs <= 0 or not cpu > 0 or not wall > 0:
        raise ToolError(f"signbench of {stack.name}: implausible result {lines[-1][:200]!r}")
    return {
        "tool": f"{stack.name} signbench",
        "provider": provider,
        "token_pairs": pairs,
        "seconds": round(wall, 3),
        "thread_cpu_seconds": round(cpu, 3),
        "token_pairs_per_s_per_core": pairs / cpu,
        "pair_ms": cpu * 1000 / pairs,
    }


class CeilingLog:
    """OpenSSL's ceiling sampled again and again through the run (at the start, before each stack, before each
    repeat of the sweep, before the open loop, at the end: each sample the best of `runs` readings), so that the
    run has one ceiling, the same for every stack: the median of its samples (run_ceiling), with their spread. A
    stack's numbers are no longer divided by the machine's speed of its own moment."""

    def __init__(self, key_type: str, seconds: int, runs: int):
        self.key_type, self.seconds, self.runs = key_type, seconds, runs
        self.first: dict | None = None
        self.samples: list[dict] = []

    def sample(self, at: str) -> dict | None:
        """One more sample (`at` says when); the reading, or None when openssl failed (said on stderr)."""
        try:
            c = openssl_ceiling(self.key_type, self.seconds, self.runs)
        except ToolError as e:
            print(f"bench: {e}", file=sys.stderr)
            return None
        self.first = self.first or c
        self.samples.append({"at": at, "signs_per_s_per_core": c["signs_per_s_per_core"],
                             "runs_signs_per_s_per_core": c["runs_signs_per_s_per_core"]})
        return c

    def ceiling(self) -> dict | None:
        return run_ceiling(self.first, self.samples) if self.first and self.samples else None


def run_ceiling(base: dict, samples: list[dict]) -> dict:
    """The run's one ceiling: the median of the samples' signatures/s per core, its spread (min–max) and every
    sample, with the keys a single reading has (sign_ms, token pairs) so that every reader of `ceiling` reads it."""
    vals = [s["signs_per_s_per_core"] for s in samples]
    med = statistics.median(vals)
    return {**{k: base[k] for k in ("tool", "key_type", "alg", "signature", "openssl_speed") if k in base},
            "signs_per_s_per_core": med, "sign_ms": 1000 / med, "token_pairs_per_s_per_core": med / 2,
            "token_pairs_per_s_all_cores": med / 2 * (os.cpu_count() or 1),
            "basis": f"median of {len(vals)} samples through the run, each the best of its readings",
            "spread": {"min": min(vals), "median": med, "max": max(vals)}, "samples": samples}


def own_ceiling_through_run(first: dict, at_first: str, later: list[tuple[str, dict]]) -> dict:
    """A stack's own ceiling measured more than once in the run (before its start, and at the end): its pair cost
    is the median of the samples' (`pair_ms`, `token_pairs_per_s_per_core` follow), with their spread and every
    sample. The provider is the first sample's (the same binary signs each time)."""
    samples = [{"at": at, "pair_ms": c["pair_ms"], "token_pairs_per_s_per_core": round(c["token_pairs_per_s_per_core"], 1),
                "runs_token_pairs_per_s_per_core": c.get("runs_token_pairs_per_s_per_core")}
               for at, c in [(at_first, first), *later]]
    ms = [s["pair_ms"] for s in samples]
    med = statistics.median(ms)
    return {**{k: v for k, v in first.items() if k not in ("samples", "pair_ms_spread")},
            "pair_ms": med, "token_pairs_per_s_per_core": 1000 / med,
            "basis": f"median of {len(ms)} samples through the run, each the fastest of its runs",
            "pair_ms_spread": {"min": min(ms), "median": med, "max": max(ms)}, "samples": samples}
