#!/usr/bin/env python3
"""CPU profiles of the stacks under the benchmark's load: where a request's time goes.

    python3 wrk/flamegraph.py                              # every stack, into results/<UTC time>-profile/
    python3 wrk/flamegraph.py --stacks akka,zio --seconds 30 --connections 64
    python3 wrk/flamegraph.py --stacks spring --key-type p-256 --rate 400 --event wall   # a fixed rate, wall clock

Per stack: build if needed, start it as the benchmark does (same environment,
throw-away PostgreSQL unless DATABASE_URL is set), a warm-up, then a profile
taken while wrk runs `users.lua` at one concurrency, or (--rate) while oha sends the same logins at a constant
arrival rate — where a stack's threads park and wake between requests, which a saturated closed loop hides. The
stack runs with the benchmark's environment (`stackctl.BENCH_ENV`) and the chosen dev key (--key-type; p-256 or
ed25519 keep the signature from covering the rest):

- JVM stacks: async-profiler (Maven Central `tools.profiler:async-profiler`,
  fetched with the local Maven client) as an agent, CPU samples of every
  thread, written as an HTML flame graph (`<stack>.html`) and collapsed stacks
  (`<stack>.collapsed`, gzipped to `.collapsed.gz` when over 1 MiB).

Raw outputs still over ~1 MB once compressed are not left under results/
(whose sets are committed): they go to `.cache/profiles/<run>/` (git-ignored)
and `summary.md` says where; `make profile` regenerates them.
- native stacks: `perf record -g` (Debian's linux-perf) on the process, written
  as collapsed stacks (`<stack>.collapsed`) and `perf report` text
  (`<stack>.perf.txt`).

`summary.md` lists, per stack, the share of samples in RSA signing, argon2id,
HMAC, JSON, the database driver, HTTP and the rest, from the collapsed stacks,
next to the throughput wrk saw while profiling (the profiler costs a little;
compare with the benchmark for the real figure).
"""
from __future__ import annotations

import argparse
import collections
import datetime as dt
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import stackctl  # noqa: E402
from stackctl import ROOT, Stack, ToolError, log  # noqa: E402

from harness.environment import cmd_out, cpu_model  # noqa: E402
from harness.loadgen import loadgen, open_loop_bodies, run_oha, run_wrk  # noqa: E402

ASYNC_PROFILER = "tools.profiler:async-profiler:4.6"

# What a frame belongs to. A sample goes to its leaf-most frame that matches one of these.
CATEGORIES = [
    ("RSA signing", re.compile(r"RSA_sign|rsa_|RsaSign|RSASSA|RSACore|EvpSignature|bn_|BN_|BigInteger\.(modPow|oddModPow|montgomery)|aws_lc_0_\w*_(RSA|bn|BN|extract_multiplier)|mont|sha256_block.*rsa", re.I)),
    ("argon2id", re.compile(r"argon2|Argon2|blake2|Blake2", re.I)),
    ("HMAC/SHA-256", re.compile(r"hmac|HMAC|Hmac|sha256|SHA256|Sha256|sha2::", re.I)),
    ("JSON", re.compile(r"json|Json|JSON|serde|jackson|spray", re.I)),
    ("database driver", re.compile(r"postgres|postgresql|pgjdbc|Hikari|tokio_postgres|deadpool|PgStatement|QueryExecutor", re.I)),
    ("GC", re.compile(r"GC|gc_|SerialHeap|DefNewGeneration|TenuredGeneration|G1|MarkSweep|GenCollect|Copy::")),
    ("JIT compiler", re.compile(r"C2Compiler|Compile::|CompileBroker|C1_|PhaseIdealLoop|PhaseChaitin")),
    ("HTTP / network", re.compile(r"http|Http|HTTP|netty|Netty|tomcat|Tomcat|coyote|actix|axum|tower|hyper|epoll|socket|Socket|tcp_|sock_|sendmsg|recvmsg|__send|__recv")),
]


def async_profiler_lib() -> Path:
    """libasyncProfiler.so from the Maven Central jar (cached under .cache/)."""
    group, artifact, version = ASYNC_PROFILER.split(":")
    jar = Path.home() / ".m2" / "repository" / Path(*group.split(".")) / artifact / version / f"{artifact}-{version}.jar"
    if not jar.exists():
        log(f"fetching {ASYNC_PROFILER} from Maven Central")
        subprocess.run(["mvn", "-q", "dependency:get", f"-Dartifact={ASYNC_PROFILER}", "-Dtransitive=false"], check=True)
    out = ROOT / ".cache" / f"async-profiler-{version}"
    lib = out / "linux-x64" / "libasyncProfiler.so"
    if not lib.exists():
        out.mkdir(parents=True, exist_ok=True)
        subprocess.run(["unzip", "-o", "-q", str(jar), "linux-x64/libasyncProfiler.so", "-d", str(out)], check=True)
    return lib


def _category(frames_leaf_first: list[str]) -> str:
    """The category of the leaf-most frame that has one (a frame matching several: the first listed)."""
    for frame in frames_leaf_first[:24]:
        for name, pattern in CATEGORIES:
            if pattern.search(frame):
                return name
    return "other"


GZIP_OVER_BYTES = 1 << 20


def compress_if_large(path: Path, limit: int = GZIP_OVER_BYTES) -> Path:
    """Collapsed stacks of a JVM run are 5-15 MB of text: kept under results/ as `<name>.gz` when over `limit`
    (`zcat` reads them, as do flame-graph tools). Returns the file that is kept."""
    if not path.exists() or path.stat().st_size <= limit:
        return path
    packed = path.with_name(path.name + ".gz")
    with path.open("rb") as src, gzip.open(packed, "wb", compresslevel=9) as dst:
        shutil.copyfileobj(src, dst)
    path.unlink()
    return packed


KEEP_IN_RESULTS_BYTES = 1_000_000


def keep_out_of_git(path: Path, limit: int = KEEP_IN_RESULTS_BYTES) -> Path:
    """A raw output over `limit` (after compression) is moved to .cache/profiles/<run folder>/, outside the
    committed result sets. Returns where the file is now."""
    if not path.exists() or path.stat().st_size <= limit:
        return path
    dest = ROOT / ".cache" / "profiles" / path.parent.name
    dest.mkdir(parents=True, exist_ok=True)
    moved = dest / path.name
    shutil.move(str(path), moved)
    return moved


def categorize(collapsed: Path) -> dict[str, float]:
    """Share of samples per category, from 'frame;frame;...;leaf count' lines."""
    totals: collections.Counter[str] = collections.Counter()
    all_samples = 0
    for line in collapsed.read_text(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        n = int(count)
        all_samples += n
        totals[_category(stack.split(";")[::-1])] += n  # leaf first
    if not all_samples:
        return {}
    return {k: round(100 * v / all_samples, 1) for k, v in totals.most_common()}


def collapse_perf(perf_data: Path, out: Path) -> None:
    """perf script output → collapsed stacks ('a;b;c count'), no external tools."""
    script = subprocess.run(["perf", "script", "-i", str(perf_data)], capture_output=True, text=True)
    counts: collections.Counter[str] = collections.Counter()
    frames: list[str] = []
    for line in script.stdout.splitlines() + [""]:
        if not line.strip():
            if frames:
                counts[";".join(reversed(frames))] += 1
                frames = []
            continue
        if line.startswith((" ", "\t")):
            parts = line.strip().split(None, 1)
            sym = parts[1] if len(parts) > 1 else parts[0]
            frames.append(re.sub(r"\+0x[0-9a-f]+|\s*\(.*\)$", "", sym).strip() or "[unknown]")
    out.write_text("".join(f"{k} {v}\n" for k, v in counts.most_common()))


def profile_stack(stack: Stack, db_url: str, args, out: Path) -> dict:
    stack.ensure_built()
    port = stackctl.free_port()
    env = stack.contract_env(db_url, port, args.key_type, **stackctl.BENCH_ENV)
    url = f"http://127.0.0.1:{port}"
    cmd = stack.command("run")
    collapsed = out / f"{stack.name}.collapsed"
    java = stack.uses_java
    if java:
        lib = async_profiler_lib()
        # Loaded through the JDK's attach mechanism once the warm-up is over (allowed without a warning).
        cmd.insert(1, "-XX:+EnableDynamicAgentLoading")
    log_path = out / f"{stack.name}.log"
    with open(log_path, "wb") as logf:
        proc = subprocess.Popen(cmd, cwd=stack.dir, env=env, stdout=logf, stderr=subprocess.STDOUT, start_new_session=True)
    result: dict = {"name": stack.name}
    try:
        stackctl.wait_http(url + "/health", proc, 120)
        log(f"{stack.name}: warm-up {args.warmup}s at c={args.connections}")
        run_wrk(url, args.connections, args.warmup, 2, "users", 0.0)
        if java:
            ctl = _asprof(lib, proc.pid)
            ctl(f"start,event={args.event},interval={args.interval_us}us")
        else:
            perf = subprocess.Popen(["perf", "record", "-F", str(args.frequency), "-g", "-p", str(proc.pid),
                                     "-o", str(out / f"{stack.name}.perf.data")],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        log(f"{stack.name}: profiling {args.seconds}s at "
            + (f"{args.rate:g} logins/s (oha, {args.connections} connections)" if args.rate else f"c={args.connections}"))
        if args.rate:
            w = run_oha(url, args.rate, args.seconds, args.connections, args.bodies, 0.0, args.oha)
        else:
            w = run_wrk(url, args.connections, args.seconds, 2, "users", 0.0)
        result["rps_while_profiling"] = round(w["achieved_rps" if args.rate else "rps"])
        result["errors"] = w["errors"]
        if java:
            ctl(f"stop,file={out / (stack.name + '.html')}")
            ctl(f"dump,collapsed,file={collapsed}")
        else:
            perf.send_signal(2)
            perf.wait(60)
            data = out / f"{stack.name}.perf.data"
            collapse_perf(data, collapsed)
            rep = subprocess.run(["perf", "report", "-i", str(data), "--stdio", "--no-children", "--percent-limit", "1"],
                                 capture_output=True, text=True)
            (out / f"{stack.name}.perf.txt").write_text(rep.stdout)
            data.unlink(missing_ok=True)
        result["categories"] = categorize(collapsed) if collapsed.exists() else {}
        kept = keep_out_of_git(compress_if_large(collapsed))
        result["collapsed"] = kept.name if kept.parent == out else str(kept.relative_to(ROOT))
        html = out / f"{stack.name}.html"
        if html.exists():
            kept_html = keep_out_of_git(html)
            if kept_html.parent != out:
                result["flame_graph"] = str(kept_html.relative_to(ROOT))
    except (ToolError, subprocess.SubprocessError, OSError) as e:
        result["failed"] = str(e)
    finally:
        stackctl.stop_process(proc)
    return result


def _asprof(lib: Path, pid: int):
    """Commands to a running async-profiler agent, through the JDK's attach mechanism (jcmd JVMTI.agent_load)."""
    jcmd = stackctl.find_java_home() / "bin" / "jcmd"

    def ctl(command: str) -> None:
        # Quoted: jcmd would otherwise read "file=..." in the agent's options as an option of its own.
        res = subprocess.run([str(jcmd), str(pid), "JVMTI.agent_load", str(lib), f'"{command}"'],
                             capture_output=True, text=True)
        if res.returncode != 0 or "error" in res.stdout.lower():
            raise ToolError(f"async-profiler '{command}': {res.stdout.strip() or res.stderr.strip()}")
    return ctl


def write_summary(out: Path, env: dict, results: list[dict]) -> str:
    cats = [c for c, _ in CATEGORIES] + ["other"]
    lines = [f"# CPU profiles — {env['timestamp']}", "",
             f"Machine: {env['cpu']}, {env['cores']} cores; commit {env['commit']}; key {env['key_type']}; "
             + (f"oha `users` logins at {env['rate']}/s" if env.get("rate") else "wrk `users` scenario")
             + f", c={env['connections']}, {env['seconds']} s after a {env['warmup']} s warm-up at c={env['connections']}; "
             f"async-profiler event {env['event']}.", "",
             "Share of CPU samples per category (%), by the leaf-most frame that has one:", "",
             "| stack | rps while profiling | " + " | ".join(cats) + " |",
             "| --- | ---: | " + " | ".join("---:" for _ in cats) + " |"]
    for r in results:
        if r.get("failed"):
            lines.append(f"| {r['name']} | failed: {r['failed'][:80]} |" + " |" * len(cats))
            continue
        c = r.get("categories", {})
        lines.append(f"| {r['name']} | {r.get('rps_while_profiling', 'n/a')} | " +
                     " | ".join(f"{c.get(k, 0):.1f}" for k in cats) + " |")
    lines += ["", "Flame graphs: `<stack>.html` (JVM, async-profiler); collapsed stacks `<stack>.collapsed` for every stack (`.collapsed.gz` when over 1 MiB); "
              "`perf report` text for native stacks."]
    moved = [(r["name"], r[k]) for r in results for k in ("collapsed", "flame_graph") if "/" in str(r.get(k, ""))]
    if moved:
        lines += ["", "Over ~1 MB even compressed, so kept out of the committed results (regenerate with `make profile`): "
                  + ", ".join(f"{n}: `{p}`" for n, p in moved) + "."]
    text = "\n".join(lines) + "\n"
    (out / "summary.md").write_text(text)
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stacks", help="comma-separated (default: every stack)")
    ap.add_argument("--connections", type=int, default=64)
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=40)
    ap.add_argument("--event", default="cpu", help="async-profiler event (cpu, itimer, wall)")
    ap.add_argument("--interval-us", type=int, default=1000, help="async-profiler sampling interval")
    ap.add_argument("--frequency", type=int, default=999, help="perf sampling frequency (Hz)")
    ap.add_argument("--key-type", choices=list(stackctl.KEYS), default=stackctl.DEFAULT_KEY_TYPE,
                    help="the dev key the stacks sign with (p-256, ed25519: cheap signatures)")
    ap.add_argument("--rate", type=float, default=0.0,
                    help="profile at this constant arrival rate (oha, logins/s) instead of wrk's closed loop")
    ap.add_argument("--label", default="", help="appended to the output folder's name, e.g. 'before'")
    ap.add_argument("--out", type=Path, default=ROOT / "results")
    args = ap.parse_args(argv)
    names = args.stacks.split(",") if args.stacks else stackctl.list_stacks()
    if shutil.which("wrk") is None:
        print("profile: wrk not found", file=sys.stderr)
        return 2
    if args.rate < 0:
        print("profile: --rate must be positive", file=sys.stderr)
        return 2
    args.oha = loadgen()
    if args.rate and args.oha is None:
        print("profile: --rate needs oha (wrk/install-loadgen.sh)", file=sys.stderr)
        return 2
    bodies_dir = Path(tempfile.mkdtemp(prefix="profile-bodies-"))
    args.bodies = bodies_dir / "bodies.txt"   # oha's request bodies (--rate): the users scenario's logins
    if args.rate:
        args.bodies.write_text("\n".join(open_loop_bodies("users", 0.0)) + "\n")
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    out = args.out / f"{stamp}-profile{('-' + args.label) if args.label else ''}"
    out.mkdir(parents=True)
    env = {"timestamp": stamp, "cpu": cpu_model(), "cores": os.cpu_count(),
           "commit": cmd_out(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"]),
           "connections": args.connections, "seconds": args.seconds, "warmup": args.warmup,
           "key_type": args.key_type, "rate": args.rate or None, "event": args.event}
    results = []
    try:
        with stackctl.database() as (db_url, _pg):
            for name in names:
                results.append(profile_stack(Stack.load(name), db_url, args, out))
    except ToolError as e:
        print(f"profile: {e}", file=sys.stderr)
        return 2
    finally:
        shutil.rmtree(bodies_dir, ignore_errors=True)
    (out / "profile.json").write_text(json.dumps({"environment": env, "results": results}, indent=2))
    print(write_summary(out, env, results))
    print(f"profiles: {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}")
    return 1 if any(r.get("failed") for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
