#!/usr/bin/env python3
"""Throw-away PostgreSQL and stack lifecycle, shared by the conformance suite,
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
import hashlib
import http.client
import json
import os
import pwd
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SQL_FILES = [ROOT / "sql" / "schema.sql", ROOT / "sql" / "seed.sql"]
# The service's least-privilege role (issue 41): what every stack runs as in a throw-away cluster.
GRANTS_FILE = ROOT / "sql" / "grants.sql"
SERVICE_ROLE = "simple_auth"
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


class ToolError(RuntimeError):
    """A failure with a message meant for the person at the terminal."""


def log(msg: str) -> None:
    print(f"[stackctl] {msg}", file=sys.stderr, flush=True)


# Ports free_port has handed out in this process: services started together each get their own.
_HANDED_OUT: set[int] = set()
_PORT_LOCK = threading.Lock()
LOWEST_PORT = 10000


def ephemeral_ports(path: str = "/proc/sys/net/ipv4/ip_local_port_range") -> tuple[int, int]:
    """The kernel's range for the local ports of outgoing connections (and of a bind to port 0)."""
    try:
        lo, hi = (int(x) for x in Path(path).read_text().split())
        return lo, hi
    except (OSError, ValueError):
        return 32768, 60999  # Linux's default


def free_port(avoid: int | None = None) -> int:
    """A loopback port nothing listens on now, not handed out before by this process, and not `avoid` (a port
    already handed out for another purpose). Drawn below the kernel's ephemeral range where there is room: between
    this call and the service's bind, a port of that range can become the local end of any outgoing connection (the
    suites open thousands), and the service would not start ("Address already in use")."""
    lo = ephemeral_ports()[0]
    with _PORT_LOCK:
        if lo - LOWEST_PORT >= 1000:
            for _ in range(200):
                port = random.randrange(LOWEST_PORT, lo)
                if port == avoid or port in _HANDED_OUT:
                    continue
                with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                    try:
                        s.bind(("127.0.0.1", port))
                    except OSError:
                        continue
                _HANDED_OUT.add(port)
                return port
        while True:
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
            if port != avoid and port not in _HANDED_OUT:
                _HANDED_OUT.add(port)
                return port


def metrics_port(env: dict) -> int | None:
    """The METRICS_PORT a service started with `env` serves /metrics on (spec/README.md §3): the contract's default
    when unset or empty, None when it is not a port number (a start the service refuses)."""
    value = env.get("METRICS_PORT") or "9091"
    return int(value) if value.isdigit() else None


# --------------------------------------------------------------------------- PostgreSQL


def pg_bindir() -> Path:
    """The PostgreSQL server binaries: PG_BINDIR, else the newest Debian install, else PATH."""
    if os.environ.get("PG_BINDIR"):
        return Path(os.environ["PG_BINDIR"])
    candidates = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parent.parent.name))
    if candidates:
        return candidates[-1].parent
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    raise ToolError("PostgreSQL server binaries not found (apt-get install postgresql, or set PG_BINDIR)")


def psql_bin() -> str:
    found = shutil.which("psql") or str(pg_bindir() / "psql")
    if not Path(found).exists():
        raise ToolError("psql not found (apt-get install postgresql-client)")
    return found


def load_sql(database_url: str) -> None:
    """Loads schema and seed into the database; idempotent."""
    cmd = [psql_bin(), database_url, "-q", "-v", "ON_ERROR_STOP=1", "-X"]
    for f in SQL_FILES:
        cmd += ["-f", str(f)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise ToolError(f"loading {', '.join(f.name for f in SQL_FILES)} failed: {res.stderr.strip()}")


def load_grants(database_url: str, role: str = SERVICE_ROLE, password: str | None = None) -> None:
    """Creates (or resets to exactly its grants) the service's role of sql/grants.sql, as the tables' owner; with a
    password, sets it."""
    cmd = [psql_bin(), database_url, "-q", "-v", "ON_ERROR_STOP=1", "-X", "-v", f"role={role}", "-f", str(GRANTS_FILE)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode == 0 and password is not None:
        res = subprocess.run([psql_bin(), database_url, "-q", "-v", "ON_ERROR_STOP=1", "-X", "-v", f"role={role}",
                              "-v", f"password={password}"], input="ALTER ROLE :\"role\" PASSWORD :'password';\n",
                             capture_output=True, text=True)
    if res.returncode != 0:
        raise ToolError(f"loading {GRANTS_FILE.name} failed: {res.stderr.strip()}")


def openssl(*args: str, cwd: Path) -> None:
    res = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True)
    if res.returncode != 0:
        raise ToolError(f"openssl {args[0]} failed: {(res.stderr or res.stdout).strip()}")


def make_ca(folder: Path, name: str = "simple-auth throw-away CA") -> Path:
    """A self-signed CA (ca.pem, ca.key) in folder; returns the certificate's path."""
    folder.mkdir(parents=True, exist_ok=True)
    openssl("req", "-x509", "-new", "-newkey", "rsa:2048", "-nodes", "-sha256", "-days", "7",
            "-keyout", "ca.key", "-out", "ca.pem", "-subj", f"/CN={name}",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            cwd=folder)
    return folder / "ca.pem"


def make_server_cert(folder: Path) -> tuple[Path, Path]:
    """A server certificate for localhost and 127.0.0.1, signed by the CA in folder; returns (cert, key)."""
    (folder / "server.ext").write_text(
        "subjectAltName = DNS:localhost, IP:127.0.0.1\n"
        "basicConstraints = critical, CA:FALSE\n"
        "keyUsage = critical, digitalSignature, keyEncipherment\n"
        "extendedKeyUsage = serverAuth\n")
    openssl("req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr",
            "-subj", "/CN=localhost", cwd=folder)
    openssl("x509", "-req", "-sha256", "-days", "7", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-extfile", "server.ext", "-out", "server.crt", cwd=folder)
    return folder / "server.crt", folder / "server.key"


TLS_MODES = ("require", "verify-full")


@dataclass
class ThrowawayPostgres:
    """A PostgreSQL cluster in a temporary folder, on a free loopback port.

    initdb refuses to run as root, so as root the cluster belongs to the
    `postgres` system user (created by Debian's package) or, failing that, `nobody`.

    With tls=True the cluster accepts TLS only: its own CA (`ca_file`), a server
    certificate for localhost and 127.0.0.1, `ssl = on` and `hostssl` lines only
    in pg_hba.conf (plain TCP is refused; the Unix socket stays for set-up).
    `url` then carries `sslmode` (`tls_mode`, verify-full unless told otherwise);
    `url_for(mode)` gives the others.

    `url` is the owner's (a superuser: schema, seed, the tests' own queries);
    `service_url` (and `url_for(..., service=True)`) is the least-privilege role
    of sql/grants.sql, which the services started against the cluster use.
    """

    port: int = field(default_factory=free_port)
    user: str = "auth"
    password: str = "auth"
    database: str = "auth"
    max_connections: int = 200
    base: Path | None = None
    tls: bool = False
    tls_mode: str = "verify-full"
    service_user: str = SERVICE_ROLE
    service_password: str = "simple-auth"

    def _credentials(self, service: bool) -> str:
        return f"{self.service_user}:{self.service_password}" if service else f"{self.user}:{self.password}"

    @property
    def plain_url(self) -> str:
        return f"postgres://{self._credentials(False)}@127.0.0.1:{self.port}/{self.database}"

    @property
    def service_plain_url(self) -> str:
        return f"postgres://{self._credentials(True)}@127.0.0.1:{self.port}/{self.database}"

    def url_for(self, sslmode: str, host: str = "127.0.0.1", rootcert: Path | None = None,
                service: bool = False) -> str:
        """The URL with a libpq sslmode; verify-ca/verify-full name this cluster's CA unless told otherwise. With
        service=True, the service's least-privilege role logs in instead of the owner."""
        url = f"postgres://{self._credentials(service)}@{host}:{self.port}/{self.database}?sslmode={sslmode}"
        if sslmode in ("verify-ca", "verify-full") or rootcert is not None:
            url += f"&sslrootcert={rootcert or self.ca_file}"
        return url

    @property
    def url(self) -> str:
        return self.url_for(self.tls_mode) if self.tls else self.plain_url

    @property
    def service_url(self) -> str:
        """What a service started against this cluster connects with: the role of sql/grants.sql."""
        return self.url_for(self.tls_mode, service=True) if self.tls else self.service_plain_url

    @property
    def ca_file(self) -> Path:
        assert self.base is not None and self.tls
        return self.base / "tls" / "ca.pem"

    @property
    def datadir(self) -> Path:
        assert self.base is not None
        return self.base / "data"

    def _owner(self) -> str | None:
        if os.geteuid() != 0:
            return None
        for name in ("postgres", "nobody"):
            with contextlib.suppress(KeyError):
                pwd.getpwnam(name)
                return name
        raise ToolError("running as root but neither a 'postgres' nor a 'nobody' user exists for initdb")

    def _run(self, args: list[str], check: bool = True, **kw) -> subprocess.CompletedProcess:
        owner = self._owner()
        cmd = (["runuser", "-u", owner, "--"] + args) if owner else args
        res = subprocess.run(cmd, capture_output=True, text=True, **kw)
        if check and res.returncode != 0:
            raise ToolError(f"{Path(args[0]).name} failed: {(res.stderr or res.stdout).strip()}")
        return res

    def start(self) -> "ThrowawayPostgres":
        """A copy of the loaded template cluster (`_template`: initdb, database, schema, seed and grants, made once
        per machine and content), started on this cluster's port; with tls, made TLS-only first."""
        if self.tls and self.tls_mode not in TLS_MODES:
            raise ToolError(f"unknown TLS mode '{self.tls_mode}': one of {', '.join(TLS_MODES)}")
        template = self._template()
        self.base = self._new_base()
        self._run(["cp", "-a", "--sparse=always", str(template), str(self.datadir)])
        self._configure()
        if self.tls:
            self._enable_tls(self._owner())
        self.pg_start()
        return self

    def _new_base(self, parent: Path | None = None, prefix: str = "simple-auth-pg-") -> Path:
        base = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
        owner = self._owner()
        if owner:
            info = pwd.getpwnam(owner)
            os.chown(base, info.pw_uid, info.pw_gid)
        return base

    def _configure(self) -> None:
        """This cluster's lines at the end of postgresql.conf (the last setting of a name wins)."""
        with (self.datadir / "postgresql.conf").open("a") as f:
            f.write(
                "\n# simple-auth throw-away cluster\n"
                "listen_addresses = '127.0.0.1'\n"
                f"port = {self.port}\n"
                f"unix_socket_directories = '{self.base}'\n"
                f"max_connections = {self.max_connections}\n"
                # A throw-away cluster: durability buys nothing here.
                "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n"
            )

    def template_key(self) -> str:
        """What the template of this cluster is made of, hashed: the server binaries, the credentials, the owner and
        the contents of the SQL files."""
        bindir = pg_bindir()
        key = hashlib.sha256()
        for part in (str(bindir), (bindir / "postgres").stat().st_mtime_ns, self._owner(), self.user, self.password,
                     self.database, self.service_user, self.service_password):
            key.update(f"{part}\0".encode())
        for f in (*SQL_FILES, GRANTS_FILE):
            key.update(f.read_bytes() + b"\0")
        return key.hexdigest()[:16]

    def _template(self) -> Path:
        """The data directory every throw-away cluster of these credentials starts as a copy of: initdb, createdb,
        sql/schema.sql, sql/seed.sql and sql/grants.sql loaded, the server stopped cleanly. initdb and the loads are
        most of a cluster's start, and every cluster made them the same way; a copy starts with the same
        contents. Kept in the temporary folder under a name that hashes everything it is made of (the server
        binaries, the SQL files, the credentials, the owner), so a changed seed or another PostgreSQL makes a new
        one; made in a folder of its own and renamed into place, so concurrent runs never see half of one."""
        bindir = pg_bindir()
        owner = self._owner()
        parent = Path(tempfile.gettempdir())
        final = parent / f"simple-auth-pg-template-{self.template_key()}"
        if (final / "data" / "PG_VERSION").exists():
            return final / "data"
        building = ThrowawayPostgres(user=self.user, password=self.password, database=self.database,
                                     service_user=self.service_user, service_password=self.service_password)
        building.base = self._new_base(parent, prefix="simple-auth-pg-template-building-")
        try:
            pwfile = building.base / "pwfile"
            pwfile.write_text(self.password + "\n")
            if owner:
                info = pwd.getpwnam(owner)
                os.chown(pwfile, info.pw_uid, info.pw_gid)
            building._run([str(bindir / "initdb"), "-D", str(building.datadir), "-U", self.user, "--pwfile",
                           str(pwfile), "-E", "UTF8", "--locale=C", "--auth-host=scram-sha-256", "--auth-local=trust",
                           "-N"])
            pwfile.unlink()
            shutil.copy2(building.datadir / "postgresql.conf", building.base / "postgresql.conf.initdb")
            building._configure()
            building.pg_start()
            building._run([str(bindir / "createdb"), "-h", str(building.base), "-p", str(building.port),
                           "-U", self.user, self.database])
            load_sql(building.url)
            load_grants(building.url, self.service_user, self.service_password)
            building.pg_stop("fast")
            if building.is_running():
                raise ToolError("the template cluster did not stop")
            # Its own port and socket lines go: each copy appends its own.
            shutil.copy2(building.base / "postgresql.conf.initdb", building.datadir / "postgresql.conf")
            (building.base / "postgresql.conf.initdb").unlink()
            (building.base / "server.log").unlink(missing_ok=True)
            try:
                building.base.rename(final)
            except OSError:
                if not (final / "data" / "PG_VERSION").exists():  # another run's rename won; anything else is ours
                    raise
        finally:
            building.destroy()
        return final / "data"

    def _enable_tls(self, owner: str | None) -> None:
        folder = self.base / "tls"
        make_ca(folder)
        cert, key = make_server_cert(folder)
        key.chmod(0o600)  # PostgreSQL refuses a key others can read
        if owner:
            info = pwd.getpwnam(owner)
            for f in (folder, cert, key):
                os.chown(f, info.pw_uid, info.pw_gid)
        with (self.datadir / "postgresql.conf").open("a") as f:
            f.write(f"ssl = on\nssl_cert_file = '{cert}'\nssl_key_file = '{key}'\n")
        # TLS only: no `host` line, so a plain TCP connection finds no entry and is refused.
        (self.datadir / "pg_hba.conf").write_text(
            "# simple-auth throw-away cluster, TLS only\n"
            "local   all all                trust\n"
            "hostssl all all 127.0.0.1/32   scram-sha-256\n")

    def pg_start(self) -> None:
        self._run([str(pg_bindir() / "pg_ctl"), "-D", str(self.datadir), "-l", str(self.base / "server.log"),
                   "-w", "-t", "30", "start"])

    def pg_stop(self, mode: str = "fast") -> None:
        self._run([str(pg_bindir() / "pg_ctl"), "-D", str(self.datadir), "-m", mode, "-w", "-t", "30", "stop"], check=False)

    def is_running(self) -> bool:
        return self._run([str(pg_bindir() / "pg_ctl"), "-D", str(self.datadir), "status"], check=False).returncode == 0

    def psql(self, sql: str) -> str:
        res = subprocess.run([psql_bin(), self.url, "-X", "-A", "-t", "-c", sql], capture_output=True, text=True)
        if res.returncode != 0:
            raise ToolError(f"psql failed: {res.stderr.strip()}")
        return res.stdout.strip()

    def client_connections(self) -> int:
        """The service's connections to this cluster right now (client backends of its role)."""
        return len(self.service_backends())

    def service_backends(self) -> list[int]:
        """The pids of the service's backends right now: client backends of the service's role, which only the
        services started against this cluster log in as (the tests' own queries run as the owner)."""
        out = self.psql(f"SELECT pid FROM pg_stat_activity WHERE usename = '{self.service_user}' "
                        "AND backend_type = 'client backend' ORDER BY pid")
        return [int(line) for line in out.splitlines() if line.strip()]

    def destroy(self) -> None:
        if self.base is None:
            return
        self.pg_stop("immediate")
        shutil.rmtree(self.base, ignore_errors=True)
        self.base = None

    def __enter__(self) -> "ThrowawayPostgres":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.destroy()


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


@contextlib.contextmanager
def database(url: str | None = None, tls: bool = False, tls_mode: str = "verify-full"):
    """Yields (database_url, ThrowawayPostgres or None): DATABASE_URL as it is, else a throw-away cluster and the
    URL of its service role (sql/grants.sql; pg.url is the owner's). With tls, the throw-away cluster accepts TLS
    only and the URL carries sslmode=tls_mode (`require`, or `verify-full` with sslrootcert=<its CA>);
    pg.url_for(..., service=True) gives the other."""
    url = url or os.environ.get("DATABASE_URL")
    if url:
        yield url, None
        return
    log(f"no DATABASE_URL: starting a throw-away PostgreSQL{' (TLS only)' if tls else ''}")
    with ThrowawayPostgres(tls=tls, tls_mode=tls_mode) as pg:
        log(f"PostgreSQL ready at {pg.service_url} (the service's role; owner {pg.user})")
        yield pg.service_url, pg


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
