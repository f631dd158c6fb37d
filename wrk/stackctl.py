#!/usr/bin/env python3
"""Stack lifecycle and the throw-away PostgreSQL (wrk/pgcluster.py), shared by the conformance suite,
`make run` and the benchmark.

    python3 wrk/stackctl.py list                 # stacks (folders with a stack.json)
    python3 wrk/stackctl.py db [--tls]           # throw-away PostgreSQL until Ctrl-C (--tls: TLS-only, own CA)
    python3 wrk/stackctl.py build STACK...       # release build of what is not up to date (--force: all)
    python3 wrk/stackctl.py test STACK...        # the stacks' own unit tests (one sbt start for the Scala ones)
    python3 wrk/stackctl.py run STACK [--key-type p-256]   # build if needed, run in the foreground

With DATABASE_URL set, that database is used as it is (it must already hold
sql/schema.sql and sql/seed.sql); without it, a PostgreSQL cluster is created
in a temporary folder on a free loopback port, loaded, and removed at exit.
A throw-away cluster's services connect as the least-privilege role of
sql/grants.sql (`simple_auth`), never as the cluster's owner.
"""
from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

# The throw-away PostgreSQL, the error type, the log line and the ports live in modules of their own; their names are
# this module's too, as the suites, the harness and the experiments have always used them.
from pgcluster import (SERVICE_ROLE, TLS_MODES, ThrowawayPostgres, database, load_sql, make_ca,  # noqa: F401
                       pg_bindir, psql_bin)
from toolbox import LOWEST_PORT, ROOT, ToolError, ephemeral_ports, free_port, log  # noqa: F401

# What the conformance suite runs every stack with (spec/conformance/service.py, wrk/containers.py,
# wrk/docker-ci.sh): values other than the contract's defaults, so a stack that ignores its environment is caught.
CONFORMANCE_ENV = {"JWT_ISSUER": "https://issuer.conformance.test", "JWT_AUDIENCE": "conformance-api",
                   "TOKEN_TTL_SECONDS": "900", "REFRESH_TTL_SECONDS": "86400",
                   "REFRESH_MAX_LIFETIME_SECONDS": "2592000",
                   # The suites send thousands of wrong passwords and floods of argon2id checks from one address on
                   # purpose; the limits of spec/README.md §8 are tested by processes of their own
                   # (test_sessions.py), so the shared service runs with them out of the way.
                   "LOGIN_MAX_FAILURES": "1000000", "LOGIN_IP_MAX_FAILURES": "1000000", "MAX_PASSWORD_CHECKS": "1000"}
# What the benchmark sets beside the contract's defaults (each stack as it ships): only the two
# failure limits of spec/README.md §8 are out of the way, because wrk is one client address standing for many clients
# and the load scripts log the same users in again and again. Nothing that sizes a stack's threads, pools or queues
# (MAX_PASSWORD_CHECKS, DB_POOL_SIZE, ...) is set: the fault suite's test_flood.py measures the overload bound.
BENCH_ENV = {"LOGIN_IP_MAX_FAILURES": "1000000", "LOGIN_MAX_FAILURES": "1000000"}
# The dev signing keys by type (spec/keys/README.md); the key's type decides the tokens' algorithm.
KEYS = {k["type"]: ROOT / "spec" / k["file"] for k in json.loads((ROOT / "spec" / "vectors.json").read_text())["keys"]}
DEFAULT_KEY_TYPE = "rsa-2048"


def pass_default_signals() -> None:
    """Lets the services this process starts have SIGHUP and SIGINT at their defaults, as a service manager starts
    them, even when this process has them ignored: started by nohup (SIGHUP) or as a non-interactive shell's
    background job (SIGINT). An ignored signal stays ignored across exec, and a JVM keeps it so: its handler is never
    installed, and a SIGHUP then reloads no key (`make bench` under nohup failed every JVM stack's rotation test,
    while actix and axum install theirs regardless). A handler that does nothing keeps this process ignoring the
    signal, and exec resets a handled signal to its default. Called at import, so every entry point that starts a
    service (stackctl, bench, the suites' conftest) has it; only the main thread can set a handler."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGHUP, signal.SIGINT):
        if signal.getsignal(sig) == signal.SIG_IGN:
            signal.signal(sig, lambda *_: None)


pass_default_signals()


def metrics_port(env: dict) -> int | None:
    """The METRICS_PORT a service started with `env` serves /metrics on (spec/README.md §3): the contract's default
    when unset or empty, None when it is not a port number (a start the service refuses)."""
    value = env.get("METRICS_PORT") or "9091"
    return int(value) if value.isdigit() else None


# --------------------------------------------------------------------------- Java


def java_version(java_home: Path) -> int:
    release = java_home / "release"
    if release.exists():
        m = re.search(r'JAVA_VERSION="(\d+)', release.read_text())
        if m:
            return int(m.group(1))
    return 0


def find_java_home() -> Path:
    """JAVA_HOME if it is 21+, else Temurin 25, else the newest 21+ under /usr/lib/jvm."""
    env = os.environ.get("JAVA_HOME")
    if env and java_version(Path(env)) >= 21:
        return Path(env)
    preferred = Path("/usr/lib/jvm/temurin-25-jdk-amd64")
    if java_version(preferred) >= 21:
        return preferred
    homes = [p for p in Path("/usr/lib/jvm").glob("*") if p.is_dir() and not p.is_symlink() and java_version(p) >= 21]
    if homes:
        return max(homes, key=java_version)
    raise ToolError("no JDK 21+ found: set JAVA_HOME to one (Temurin 25 is the reference)")


# --------------------------------------------------------------------------- AOT cache

AOT_MIN_JDK = 25          # -XX:AOTCacheOutput (one-step training) is JDK 25's (JEP 514)
AOT_TRAINING_ROUNDS = 60  # ~600 requests: enough for the start-up path and first profiles, a few seconds


def training_requests(i: int) -> list[tuple[str, str, str | None, bytes | None]]:
    """Round i of the training workload: logins of both schemes and encodings, every error path, the GETs."""
    n = i % 10000 + 1
    login = json.dumps({"username": f"legacy{n}@example.com", "password": f"legacy-pass-{n}"}).encode()
    form = f"grant_type=password&username=legacy{n}%40example.com&password=legacy-pass-{n}".encode()
    reqs = [
        ("POST", "/token", "application/json", login),
        ("POST", "/token", "application/json", login),
        ("POST", "/token", "application/json", login),
        ("POST", "/token", "application/x-www-form-urlencoded", form),
        ("POST", "/token", "application/json", json.dumps({"username": f"legacy{n}@example.com", "password": "wrong"}).encode()),
        ("POST", "/token", "application/json", b'{"username": '),
        ("POST", "/token", "text/plain", b"x"),
        ("GET", "/token", None, None),
        ("GET", "/health", None, None),
        ("GET", "/.well-known/jwks.json", None, None),
        ("GET", "/nope", None, None),
    ]
    if i % 20 == 0:  # argon2id, both a user's hash and the unknown-user decoy (tens of ms each)
        reqs.append(("POST", "/token", "application/json", json.dumps({"username": "jane@example.com", "password": "CorrectHorse9!"}).encode()))
        reqs.append(("POST", "/token", "application/json", json.dumps({"username": f"nobody{i}@example.com", "password": "x"}).encode()))
    return reqs


def training_call(base: str, method: str, path: str, ctype: str | None, body: bytes | None) -> bytes:
    """One request of the training workload; an error status is an answer like any other."""
    req = urllib.request.Request(base + path, data=body, method=method, headers={"Content-Type": ctype} if ctype else {})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.read()
    except urllib.error.HTTPError as e:
        return e.read()


def training_session(base: str, i: int) -> None:
    """A session along its paths (spec/README.md §7): log in, refresh (JSON), refresh the used token again (form:
    reuse, the family revoked), revoke a new session's token, a malformed token."""
    n = i % 10000 + 1
    form = "application/x-www-form-urlencoded"

    def refresh_token(answer: bytes) -> str:
        with contextlib.suppress(ValueError, KeyError, TypeError):
            return json.loads(answer)["refresh_token"]
        return "none"
    login = json.dumps({"username": f"legacy{n}@example.com", "password": f"legacy-pass-{n}"}).encode()
    first = refresh_token(training_call(base, "POST", "/token", "application/json", login))
    training_call(base, "POST", "/token", "application/json",
                  json.dumps({"grant_type": "refresh_token", "refresh_token": first}).encode())
    training_call(base, "POST", "/token", form, f"grant_type=refresh_token&refresh_token={first}".encode())
    other = refresh_token(training_call(base, "POST", "/token", "application/json", login))
    training_call(base, "POST", "/revoke", form, f"token={other}".encode())
    training_call(base, "POST", "/token", form, b"grant_type=refresh_token&refresh_token=not-a-token")


# --------------------------------------------------------------------------- stacks


def list_stacks() -> list[str]:
    return sorted(p.parent.name for p in ROOT.glob("*/stack.json"))


@dataclass
class Stack:
    name: str
    dir: Path
    manifest: dict

    @classmethod
    def load(cls, name: str) -> "Stack":
        path = ROOT / name / "stack.json"
        if not path.exists():
            raise ToolError(f"unknown stack '{name}': known are {', '.join(list_stacks()) or 'none'}")
        manifest = json.loads(path.read_text())
        for key in ("build", "test", "run", "artifact"):
            if key not in manifest:
                raise ToolError(f"{path}: missing '{key}'")
        return cls(name, path.parent, manifest)

    @property
    def uses_java(self) -> bool:
        return any("{java}" in part for part in self.manifest["run"])

    def env(self) -> dict:
        env = dict(os.environ)
        if self.uses_java or (self.dir / "pom.xml").exists() or (self.dir / "build.sbt").exists():
            java_home = find_java_home()
            env["JAVA_HOME"] = str(java_home)
            env["PATH"] = f"{java_home / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        return env

    def command(self, key: str, aot_output: Path | None = None) -> list[str]:
        parts = self.manifest[key]
        java = str(find_java_home() / "bin" / "java") if self.uses_java else "java"
        cmd = [p.replace("{java}", java) for p in parts]
        if key == "run" and cmd and cmd[0] == java:
            if aot_output is not None:
                cmd.insert(1, f"-XX:AOTCacheOutput={aot_output}")
            elif self.aot_cache_is_current():
                cmd.insert(1, f"-XX:AOTCache={self.aot_cache}")
        return cmd

    @property
    def aot_cache(self) -> Path | None:
        """The JDK's AOT cache (JEP 483/514) for this stack, if its manifest names one and the JDK is 25+."""
        rel = self.manifest.get("aot_cache")
        if not rel or not self.uses_java or java_version(find_java_home()) < AOT_MIN_JDK:
            return None
        return self.dir / rel

    def aot_cache_is_current(self) -> bool:
        """A cache is used only if it was trained after the artifact was built (a stale one is ignored)."""
        cache = self.aot_cache
        return bool(cache and cache.exists() and self.artifact.exists()
                    and cache.stat().st_mtime >= self.artifact.stat().st_mtime)

    def train_aot_cache(self) -> None:
        """A training run for the JVM's AOT cache: the run command (same flags, which the cache must match)
        against a database, a few hundred requests along every path the service has, then SIGTERM; the JVM
        writes the cache as it exits. Classes come loaded and linked, and hot methods profiled, at the next
        start. Every JVM stack that names an `aot_cache` is trained by this same routine."""
        cache = self.aot_cache
        if cache is None:
            return
        cache.unlink(missing_ok=True)
        log(f"training {self.name}'s AOT cache: start, {AOT_TRAINING_ROUNDS} rounds of requests, SIGTERM")
        with database() as (url, _pg), tempfile.NamedTemporaryFile(prefix=f"aot-{self.name}-", suffix=".log") as out:
            port = free_port()
            base = f"http://127.0.0.1:{port}"
            env = self.contract_env(url, port)
            metrics_base = f"http://127.0.0.1:{env['METRICS_PORT']}"
            proc = subprocess.Popen(self.command("run", aot_output=cache), cwd=self.dir,
                                    env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
            try:
                wait_http(base + "/health", proc, 120)
                for i in range(AOT_TRAINING_ROUNDS):
                    for method, path, ctype, body in training_requests(i):
                        training_call(base, method, path, ctype, body)
                    training_session(base, i)
                    if i % 10 == 0:  # the metrics port (spec/README.md §3): its one path and its 404
                        training_call(metrics_base, "GET", "/metrics", None, None)
                        training_call(metrics_base, "GET", "/nope", None, None)
            except (ToolError, OSError) as e:
                stop_process(proc)
                raise ToolError(f"AOT training of {self.name} failed: {e}; output:\n"
                                + Path(out.name).read_text(errors="replace")[-2000:]) from e
            code = stop_process(proc, timeout=120)
            if code != 0 or not cache.exists():
                raise ToolError(f"AOT training of {self.name}: exit {code}, no cache written; output:\n"
                                + Path(out.name).read_text(errors="replace")[-2000:])
        log(f"{self.name}: AOT cache {cache.relative_to(ROOT)} ({cache.stat().st_size / 2**20:.0f} MiB)")

    @property
    def artifact(self) -> Path:
        return self.dir / self.manifest["artifact"]

    def needs_build(self) -> bool:
        if not self.artifact.exists():
            return True
        built = self.artifact.stat().st_mtime
        for src in self.manifest.get("sources", []):
            p = self.dir / src
            files = [p] if p.is_file() else (f for f in p.rglob("*") if f.is_file())
            if any(f.stat().st_mtime > built for f in files):
                return True
        return False

    def build(self) -> float:
        """Runs the release build; returns its wall time in seconds."""
        log(f"building {self.name}: {' '.join(self.manifest['build'])}")
        t0 = time.monotonic()
        res = subprocess.run(self.command("build"), cwd=self.dir, env=self.env())
        if res.returncode != 0:
            raise ToolError(f"build of {self.name} failed (exit {res.returncode})")
        if not self.artifact.exists():
            raise ToolError(f"build of {self.name} did not produce {self.artifact}")
        self.train_aot_cache()
        return time.monotonic() - t0

    def ensure_built(self) -> None:
        if self.needs_build():
            self.build()
        elif self.aot_cache is not None and not self.aot_cache_is_current():
            self.train_aot_cache()

    def unit_test(self, cmd: list[str] | None = None, note: str = "") -> int:
        """Runs the stack's unit tests: its manifest's command, or `cmd` (that command narrowed)."""
        cmd = cmd or self.command("test")
        log(f"unit tests of {self.name}: {' '.join(cmd)}{note}")
        return subprocess.run(cmd, cwd=self.dir, env=self.env()).returncode

    def contract_env(self, database_url: str, port: int, key_type: str = DEFAULT_KEY_TYPE, **overrides: str) -> dict:
        """The contract's environment (§5), the same for every stack. METRICS_PORT is a free port of its own (not
        the contract's 9091), so that several instances on one machine do not collide; `metrics_port(env)` reads
        it back."""
        env = self.env()
        for var in ("JWT_PRIVATE_KEY", "JWT_PRIVATE_KEY_FILE"):
            env.pop(var, None)
        env.update({
            "PORT": str(port),
            "METRICS_PORT": str(free_port(avoid=port)),
            "HOST": "127.0.0.1",
            "DATABASE_URL": database_url,
            "DB_POOL_SIZE": "10",
            "DB_ACQUIRE_TIMEOUT_MS": "1000",
            "JWT_PRIVATE_KEY_FILE": str(KEYS[key_type]),
            "JWT_ISSUER": f"http://localhost:{port}",
            "JWT_AUDIENCE": "channel-api",
            "TOKEN_TTL_SECONDS": "600",
            "LOG_LEVEL": "info",
        })
        for k, v in overrides.items():
            if v is None:
                env.pop(k, None)
            else:
                env[k] = v
        return env

    def spawn(self, env: dict, log_path: Path | None = None, **kw) -> subprocess.Popen:
        out = open(log_path, "wb") if log_path else subprocess.DEVNULL
        return subprocess.Popen(self.command("run"), cwd=self.dir, env=env, stdout=out,
                                stderr=subprocess.STDOUT if log_path else None, start_new_session=True, **kw)


def sbt_launcher(stack: Stack, key: str) -> Path | None:
    """The sbt launcher a stack's `key` command (build, test) runs, resolved, or None when it runs something else."""
    cmd = stack.manifest[key]
    if not cmd or Path(cmd[0]).name != "sbt":
        return None
    return (stack.dir / cmd[0]).resolve() if "/" in cmd[0] else Path(cmd[0])


def merged_commands(stacks: list[Stack], key: str) -> list[tuple[list[Stack], list[str]]]:
    """The stacks' `key` commands, those that start the same sbt launcher with the same options made one: its tasks
    in order, each once (the Scala stacks' unit tests both name core/test). One sbt start loads the whole root build,
    which every start did again; each project's tests run forked (build.sbt), so they are the same runs as alone.
    Returns (stacks, command) in the stacks' order, each stack in exactly one."""
    groups: dict[tuple, tuple[list[Stack], list[str]]] = {}
    out: list[tuple[list[Stack], list[str]]] = []
    for st in stacks:
        cmd = st.command(key)
        launcher = sbt_launcher(st, key)
        if launcher is None:
            out.append(([st], cmd))
            continue
        options = [a for a in cmd[1:] if a.startswith("-")]
        tasks = [a for a in cmd[1:] if not a.startswith("-")]
        group_key = (str(launcher), tuple(options))
        if group_key not in groups:
            groups[group_key] = ([], cmd[:1] + options)
            out.append(groups[group_key])
        members, merged = groups[group_key]
        members.append(st)
        merged.extend(t for t in tasks if t not in merged)
    return out


def cargo_packages(cmd: list[str]) -> list[str]:
    """The packages a `cargo test` command names (`-p NAME`), or [] for any other command."""
    if len(cmd) < 2 or Path(cmd[0]).name != "cargo" or cmd[1] != "test":
        return []
    return [cmd[i + 1] for i, a in enumerate(cmd[:-1]) if a in ("-p", "--package")]


def without_packages(cmd: list[str], done: set[str]) -> list[str]:
    """A `cargo test` command without the `-p NAME` of packages in `done`."""
    out, skip = [], False
    for i, a in enumerate(cmd):
        if skip:
            skip = False
        elif a in ("-p", "--package") and i + 1 < len(cmd) and cmd[i + 1] in done:
            skip = True
        else:
            out.append(a)
    return out


def unit_test_all(stacks: list[Stack], compile_only: bool = False) -> list[str]:
    """Every stack's unit tests, one sbt start for all the Scala stacks (merged_commands); when a merged run fails,
    each of its stacks runs alone, so that the failure is told to its stack and the others are still tested. A cargo
    package that a stack's `cargo test` names (the Rust stacks' shared simple-auth-core) runs once, with the first
    stack that names it: its test binary is the longest compile of each run, and another stack's run would build and
    run the same tests again under that stack's features. Returns the names of the stacks whose tests failed.
    compile_only: only the `cargo test` commands, with --no-run (the same commands, so that the run after it compiles
    nothing); a stack whose tests build and run in one command is left to its run."""
    failed = []
    cargo_tested: set[str] = set()
    for members, cmd in merged_commands(stacks, "test"):
        if len(members) == 1:
            st = members[0]
            packages = cargo_packages(cmd)
            above = [p for p in packages if p in cargo_tested]
            cargo_tested.update(packages)
            note = f" ({', '.join(above)} tested above)" if above else ""
            if compile_only and not packages:
                log(f"unit tests of {st.name}: compiled by their run")
            elif st.unit_test(without_packages(cmd, set(above)) + (["--no-run"] if compile_only else []), note) != 0:
                failed.append(st.name)
            continue
        if compile_only:
            log(f"unit tests of {', '.join(st.name for st in members)}: compiled by their run")
            continue
        names = ", ".join(st.name for st in members)
        log(f"unit tests of {names} in one start: {' '.join(cmd)}")
        if subprocess.run(cmd, cwd=members[0].dir, env=members[0].env()).returncode == 0:
            continue
        log(f"the unit tests of {names} failed together: each alone, to tell which")
        failed += [st.name for st in members if st.unit_test() != 0]
    return failed


def build_all(stacks: list[Stack], force: bool = False) -> list[str]:
    """Builds the stacks that are not up to date (all of them with force), one sbt start for the Scala stacks, and
    trains their AOT caches (Stack.ensure_built does what is left); returns the names of those that failed."""
    todo = [st for st in stacks if force or st.needs_build()]
    failed = []
    for members, cmd in merged_commands(todo, "build"):
        if len(members) > 1:
            log(f"building {', '.join(st.name for st in members)} in one start: {' '.join(cmd)}")
            subprocess.run(cmd, cwd=members[0].dir, env=members[0].env())
        for st in members:
            try:
                if len(members) == 1 or st.needs_build():
                    st.build()
                elif st.aot_cache is not None:
                    st.train_aot_cache()
            except ToolError as e:
                log(str(e))
                failed.append(st.name)
    for st in stacks:
        if st not in todo:
            try:
                st.ensure_built()  # up to date; an AOT cache older than its artifact is trained again
            except ToolError as e:
                log(str(e))
                failed.append(st.name)
    return failed


def build_floor(force: bool = False) -> list[str]:
    """Builds the benchmark's floor (wrk/harness/floor.py) unless it is up to date; returns ["floor"] if it failed."""
    from harness.floor import floor_stack  # the floor's module imports this one
    return build_all([floor_stack()], force)


# --------------------------------------------------------------------------- the one HTTP poller
# Plain http.client, a new connection per attempt: nothing is imported or set up inside a timed window (importing
# `requests` there once cost ~0.1 s, charged to whichever stack was measured first).

JOHN_LOGIN = json.dumps({"username": "john@example.com", "password": "TopSecret0!"}).encode()


def wrk_command(url: str, connections: int, seconds: int, threads: int = 2, scenario: str = "users",
                wrong: float = 0.0, timeout_s: int = 10) -> list[str]:
    """wrk against url/token with wrk/users.lua (the scenario's users, `wrong` of them with a wrong password); it
    prints one `WRK_JSON {...}` line (read_wrk_json)."""
    return ["wrk", "-t", str(max(1, min(threads, connections))), "-c", str(connections), "-d", f"{seconds}s",
            "--latency", "--timeout", f"{timeout_s}s", "-s", str(ROOT / "wrk" / "users.lua"), url + "/token", "--",
            scenario, str(wrong)]


def read_wrk_json(stdout: str) -> dict | None:
    """The `WRK_JSON` line users.lua prints at the end of a wrk run, or None when wrk printed none."""
    line = next((ln for ln in stdout.splitlines() if ln.startswith("WRK_JSON ")), None)
    return None if line is None else json.loads(line[len("WRK_JSON "):])


def http_status(base_url: str, method: str, path: str, body: bytes | None = None, timeout: float = 2) -> int | None:
    """The status of one request on a new connection (JSON body when given), or None when nothing answered."""
    parts = urllib.parse.urlsplit(base_url)
    conn_cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    conn = conn_cls(parts.hostname, parts.port, timeout=timeout)
    try:
        headers = {"Content-Type": "application/json", "Content-Length": str(len(body))} if body else {}
        conn.request(method, (parts.path.rstrip("/") or "") + path, body=body, headers=headers)
        resp = conn.getresponse()
        resp.read()
        return resp.status
    except (OSError, http.client.HTTPException):
        return None
    finally:
        conn.close()


def _alive(alive) -> "callable":
    """A started process (Popen), a callable saying whether the server still runs, or None (not ours to watch)."""
    if alive is None:
        return lambda: True
    if hasattr(alive, "poll"):
        return lambda: alive.poll() is None
    return alive


def poll(check, t0: float, alive, timeout: float, what: str, interval: float) -> float:
    """Seconds from t0 until check() is true, every `interval`; ToolError when the process exits first or when
    `timeout` passes."""
    running = _alive(alive)
    while time.monotonic() - t0 < timeout:
        if not running():
            code = f" with {alive.returncode}" if hasattr(alive, "poll") else ""
            raise ToolError(f"the process exited{code} before {what}")
        if check():
            return time.monotonic() - t0
        time.sleep(interval)
    raise ToolError(f"no {what} within {timeout:.0f} s")


def wait_http(url: str, alive=None, timeout: float = 60, expect: int = 200, interval: float = 0.05) -> float:
    """Polls GET url until it answers `expect`; returns seconds waited. Fails early if the process exits."""
    parts = urllib.parse.urlsplit(url)
    base = f"{parts.scheme}://{parts.netloc}"
    return poll(lambda: http_status(base, "GET", parts.path or "/") == expect, time.monotonic(), alive, timeout,
                f"{expect} from {url}", interval)


def first_token(base_url: str, t0: float, alive, timeout: float = 120) -> float:
    """Seconds from t0 (just before exec) to the first 200 on /token for John, 5 ms polls."""
    return poll(lambda: http_status(base_url, "POST", "/token", JOHN_LOGIN) == 200, t0, alive, timeout,
                "200 on /token", 0.005)


def first_live_and_token(base_url: str, t0: float, alive, timeout: float = 120) -> tuple[float, float]:
    """Seconds from t0 to the first 200 on /health/live, then to the first token for John (5 ms polls)."""
    live = poll(lambda: http_status(base_url, "GET", "/health/live") == 200, t0, alive, timeout,
                "200 on /health/live", 0.005)
    return live, first_token(base_url, t0, alive, timeout)


def stop_process(proc: subprocess.Popen, timeout: float = 15) -> int:
    """SIGTERM, then SIGKILL after `timeout`; returns the exit code."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc.returncode


# --------------------------------------------------------------------------- CLI


def cmd_run(args) -> int:
    stack = Stack.load(args.stack)
    stack.ensure_built()
    with database() as (url, _pg):
        # One service in the foreground: the contract's METRICS_PORT (9091), where a reader of the README looks.
        env = stack.contract_env(url, args.port, args.key_type, METRICS_PORT=os.environ.get("METRICS_PORT") or "9091")
        log(f"{stack.name} on port {args.port}, /metrics on port {env['METRICS_PORT']}")
        # In the foreground the issuer is what a client on this machine calls.
        proc = subprocess.Popen(stack.command("run"), cwd=stack.dir, env=env)
        # A SIGTERM to this process (kill, a supervisor) stops the service the same way, and then the throw-away
        # database, instead of leaving both running with nobody to stop them.
        previous = signal.signal(signal.SIGTERM, lambda *_: proc.send_signal(signal.SIGTERM))
        try:
            return proc.wait()
        except KeyboardInterrupt:
            proc.send_signal(signal.SIGINT)
            return proc.wait()
        finally:
            signal.signal(signal.SIGTERM, previous)


def cmd_db(args) -> int:
    with ThrowawayPostgres(tls=args.tls) as pg:
        print(f"DATABASE_URL={pg.service_url}", flush=True)
        if args.tls:
            print(f"# TLS only, CA {pg.ca_file}; without verification: "
                  f"DATABASE_URL={pg.url_for('require', service=True)}", flush=True)
        print(f"# the service's role (sql/grants.sql); the owner (schema, sql/users.py): {pg.url}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
            while True:
                time.sleep(3600)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list")
    p = sub.add_parser("db")
    p.add_argument("--tls", action="store_true", help="TLS only: own CA, server certificate, hostssl lines only")
    for name in ("build", "test"):
        p = sub.add_parser(name)
        p.add_argument("stacks", nargs="+", metavar="stack")
        p.add_argument("--failed-to", type=Path, help="write the names of the stacks that failed to this file")
    sub.choices["build"].add_argument("--force", action="store_true", help="build even a stack that is up to date")
    sub.choices["build"].add_argument("--floor", action="store_true",
                                      help="also build the benchmark's floor (wrk/floor/) after the stacks")
    sub.choices["test"].add_argument("--compile-only", action="store_true",
                                     help="only compile the tests that compile apart from their run (cargo test "
                                          "--no-run), so that a run after it starts at once")
    p = sub.add_parser("run")
    p.add_argument("stack")
    p.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8080")))
    p.add_argument("--key-type", choices=list(KEYS), default=DEFAULT_KEY_TYPE, help="the dev key to sign with")
    args = ap.parse_args(argv)
    try:
        if args.cmd == "list":
            print("\n".join(list_stacks()))
            return 0
        if args.cmd == "db":
            return cmd_db(args)
        if args.cmd in ("build", "test"):
            stacks = [Stack.load(name) for name in args.stacks]
            if args.cmd == "build":
                failed = build_all(stacks, args.force)
                if args.floor:
                    failed += build_floor(args.force)
            else:
                failed = unit_test_all(stacks, args.compile_only)
            if args.failed_to:
                args.failed_to.write_text("".join(f"{name}\n" for name in failed))
            if failed:
                print(f"stackctl: {args.cmd} failed: {' '.join(failed)}", file=sys.stderr)
            return 1 if failed else 0
        return cmd_run(args)
    except ToolError as e:
        print(f"stackctl: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
