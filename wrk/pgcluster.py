"""Throw-away PostgreSQL: a cluster in a temporary folder on a free loopback port, loaded with sql/schema.sql,
sql/seed.sql and sql/grants.sql (copied from a template made once per machine and content), TLS-only on request, and
`database()`, which the benchmark, `make run` and the suites use when no DATABASE_URL is given. Services started
against a throw-away cluster connect as the least-privilege role of sql/grants.sql, never as the cluster's owner."""
from __future__ import annotations

import contextlib
import hashlib
import os
import pwd
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from toolbox import ROOT, ToolError, free_port, log

SQL_FILES = [ROOT / "sql" / "schema.sql", ROOT / "sql" / "seed.sql"]
# The service's least-privilege role (issue 41): what every stack runs as in a throw-away cluster.
GRANTS_FILE = ROOT / "sql" / "grants.sql"
SERVICE_ROLE = "simple_auth"


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
