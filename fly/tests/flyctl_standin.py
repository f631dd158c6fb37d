"""A stand-in for flyctl (`fly`) in tests, run by fly/tests/fakefly: put a `fly` link to that first on PATH.

It records every call (argv, working directory, what it read from stdin) as one JSON
line in $FAKEFLY_STATE/calls.jsonl, keeps the apps, Postgres clusters and secrets it
was told to create in $FAKEFLY_STATE/state.json, and FAILS like flyctl does on what
flyctl would refuse:

- an unknown command or flag, a missing flag value, too many or too few arguments
  (the flag sets and argument counts are flyctl's, from internal/command/*);
- `deploy [WORKING_DIRECTORY]`: flyctl changes into WORKING_DIRECTORY *before* it reads
  --config, so a relative --config resolves from there; the config's [build] dockerfile and
  ignorefile resolve from the config's folder (--dockerfile / --ignorefile from the working
  directory); the build context is the working directory. The build is checked twice, as
  each of flyctl's builders filters the context: BuildKit (Depot, a Docker daemon with
  BuildKit) with the Dockerfile's own <Dockerfile>.dockerignore, else the context's
  .dockerignore; the classic builder with `ignorefile`, else the context's .dockerignore
  (internal/build/imgsrc/archive.go: an ignore file that does not exist excludes fly.toml
  only). Every COPY source of the stages the default target needs must be in both
  contexts; what each context holds is recorded (files, top-level entries);
- `mpg attach` / `postgres attach` when the app already has the secret (flyctl refuses);
  `mpg attach` and `mpg connect` while the cluster is not "ready";
- an app, cluster or Postgres app that does not exist.

`ips list --json` answers fly-go's IPAddress objects (Go field names: ID, Address, Type = v6 | v4 |
shared_v4 | private_v6, ...); `ips allocate-v6` / `ips allocate-v4 [--shared]` add one; a first deploy of
an app with no address allocates a v6 and a shared v4, as flyctl's does. A deploy records the machines'
environment: the config's [env] with every --env NAME=VALUE merged in.

The platform part: `deploy` fails when DATABASE_URL or JWT_PRIVATE_KEY is not set
(every stack refuses to start without them, so its health checks would never pass), and
when a [[files]] entry is not what flyctl's appconfig.File and the Machines API accept:
guest_path required and absolute, one of local_path / secret_name / raw_value, a
secret_name that the app has, whose value is base64 (fly-go's File.SecretName: "the name
of the secret that contains the base64 encoded file contents"). A deploy records each
machine file's decoded content; `secrets set` without --stage on a deployed app restarts
the machines (flyctl's restart-only rolling deploy), which writes the files again. Both
wait for EVERY configured check of the machines, [[http_service.checks]], [[services.checks]]
and the top-level [checks] alike (flyctl's WaitForHealthchecksToPass counts
config.Checks and every service's checks): with $FAKEFLY_DATABASE_DOWN set, a check of any
path but /health/live fails (the service answers /health with 503), so the deploy fails
the way flyctl's times out.

What flyctl prints is printed: `mpg create`, `mpg status --json`, `postgres create` and
both attach commands show passwords and connection strings, as flyctl does.

Knobs, for the tests:
- $FAKEFLY_FAIL: comma-separated WHEN:MODE. WHEN is N (the Nth call recorded in this
  state folder, 1-based) or a command ("secrets list"); MODE is `fail` (a 502 on stderr,
  exit 1, nothing done), `after` (done, then the 502 and exit 1: the answer was lost) or
  `garbage` (done, exit 0, stdout an HTML error page instead of the answer).
- $FAKEFLY_MPG_PROVISIONING=N: a new cluster answers "provisioning" to its first N
  `mpg list` calls, then "ready" (or what $FAKEFLY_MPG_FINAL_STATUS says, e.g. "error").
- $FAKEFLY_MPG_NO_ATTACHMENT_RECORD: `mpg attach` sets the secret but its attachment record fails,
  which flyctl only warns about (exit 0): `mpg list` does not show the app as attached.
- $FAKEFLY_LEAK: every call also prints the newest cluster's password and connection string,
  on stderr, and on stdout unless the answer is --json (as a debug line or an error might).
- $FAKEFLY_PSQL_URL (a real PostgreSQL database): `mpg connect` runs the real psql
  against it with the SQL it is given on stdin, `postgres attach` hands out a URL with
  that database's user, password and name, and `proxy` forwards its local port to it.
"""
import base64
import json
import os
import re
import sys
from pathlib import Path

# The other modules (subprocess, socket, tomllib, ...) are imported where they are used, and this is a
# module (its bytecode cached) behind a three-line script: a call of the stand-in then costs little more
# than the interpreter's start, and the tests make hundreds.

STATE_DIR = Path(os.environ.get("FAKEFLY_STATE", ".fakefly"))
STATE = STATE_DIR / "state.json"
CALLS = STATE_DIR / "calls.jsonl"

# Flags: name -> (shorthand, takes a value). Global ones are accepted everywhere.
GLOBAL = {"access-token": ("t", True), "verbose": (None, False), "debug": (None, False)}
APP = {"app": ("a", True), "config": ("c", True)}
ORG = {"org": ("o", True)}
JSON = {"json": ("j", False)}
YES = {"yes": ("y", False), "auto-confirm": (None, False)}
VM = {"vm-size": (None, True), "vm-cpus": (None, True), "vm-cpu-kind": (None, True), "vm-memory": (None, True),
      "vm-max-memory": (None, True)}
SECRETS = {**APP, "detach": (None, False), "stage": (None, False), "dns-checks": (None, False)}
DEPLOY = {**APP, **YES, **VM, "image": ("i", True), "now": (None, False), "remote-only": (None, False),
          "local-only": (None, False), "push": (None, False), "detach": (None, False), "strategy": (None, True),
          "dockerfile": (None, True), "build-arg": (None, True), "build-secret": (None, True),
          "build-target": (None, True), "no-cache": (None, False), "env": ("e", True), "wait-timeout": (None, True),
          "ha": (None, False), "smoke-checks": (None, False), "dns-checks": (None, False),
          "max-unavailable": (None, True), "no-public-ips": (None, False), "flycast": (None, False),
          "primary-region": (None, True), "regions": (None, True), "label": (None, True),
          "update-only": (None, False), "skip-release-command": (None, False), "depot": (None, True),
          "ignorefile": (None, True)}

# command path -> (flags, min args, max args)
COMMANDS = {
    ("apps", "list"): ({**JSON, **ORG, "quiet": ("q", False)}, 0, 0),
    ("apps", "create"): ({**ORG, **JSON, **YES, "name": (None, True), "generate-name": (None, False),
                          "network": (None, True), "save": (None, False)}, 0, 1),
    ("mpg", "list"): ({**JSON, **ORG, "deleted": (None, False)}, 0, 0),
    ("mpg", "create"): ({**ORG, "region": ("r", True), "name": ("n", True), "v2": (None, False), "plan": (None, True),
                         "volume-size": (None, True), "enable-postgis-support": (None, False),
                         "pg-major-version": (None, True)}, 0, 0),
    ("mpg", "attach"): ({**APP, "variable-name": (None, True), "database": ("d", True), "username": ("u", True)}, 0, 1),
    ("mpg", "connect"): ({**ORG, "database": ("d", True), "username": ("u", True)}, 0, 1),
    ("mpg", "proxy"): ({**ORG, "bind-addr": ("b", True), "local-port": ("p", True)}, 0, 1),
    ("mpg", "status"): ({**JSON}, 0, 1),
    ("mpg", "detach"): ({**APP}, 0, 1),
    ("postgres", "create"): ({**ORG, **VM, "region": ("r", True), "detach": (None, False), "name": ("n", True),
                              "generate-name": (None, False), "password": ("p", True),
                              "initial-cluster-size": (None, True), "volume-size": (None, True),
                              "enable-backups": (None, False), "autostart": (None, False)}, 0, 0),
    ("postgres", "attach"): ({**APP, **YES, "database-name": (None, True), "database-user": (None, True),
                              "variable-name": (None, True), "superuser": (None, False)}, 1, 1),
    ("proxy",): ({**APP, **ORG, "select": ("s", False), "quiet": ("q", False), "bind-addr": ("b", True),
                  "watch-stdin": (None, False)}, 1, 2),
    ("secrets", "list"): ({**APP, **JSON}, 0, 0),
    ("secrets", "set"): (SECRETS, 1, None),
    ("secrets", "unset"): (SECRETS, 1, None),
    ("secrets", "import"): (SECRETS, 0, 0),
    ("deploy",): (DEPLOY, 0, 1),
    ("ips", "list"): ({**APP, **JSON}, 0, 0),
    ("ips", "allocate-v6"): ({**APP, "region": ("r", True), "private": (None, False), "network": (None, True),
                              "org": ("o", True)}, 0, 0),
    ("ips", "allocate-v4"): ({**APP, **YES, "region": ("r", True), "shared": (None, False)}, 0, 0),
    ("scale", "count"): ({**APP, **YES, **VM, "region": ("r", True), "process-group": (None, True),
                          "max-per-region": (None, True)}, 1, None),
}
ALIASES = {"apps": "apps", "app": "apps", "pg": "postgres", "postgres": "postgres", "mpg": "mpg",
           "secrets": "secrets", "secret": "secrets", "ls": "list", "ip": "ips"}


class Refused(Exception):
    pass


def load_state() -> dict:
    if STATE.exists():
        return json.loads(STATE.read_text())
    return {"apps": {}, "mpg": {}, "postgres": {}}


def save_state(state: dict) -> None:
    STATE.write_text(json.dumps(state, indent=1))


def parse(argv: list[str]):
    words = [ALIASES.get(a, a) for a in argv[:2]]
    for n in (2, 1):
        if tuple(words[:n]) in COMMANDS:
            path = tuple(words[:n])
            break
    else:
        raise Refused(f"unknown command {' '.join(argv[:2])!r} for \"fly\"")
    flags, lo, hi = COMMANDS[path]
    flags = {**GLOBAL, **flags}
    shorts = {s: name for name, (s, _) in flags.items() if s}
    opts: dict[str, list[str]] = {}
    args: list[str] = []
    rest = argv[len(path):]
    i = 0
    while i < len(rest):
        a = rest[i]
        if a == "--":
            args += rest[i + 1:]
            break
        if a.startswith("--"):
            name, eq, value = a[2:].partition("=")
        elif a.startswith("-") and len(a) > 1:
            if a[1] not in shorts:
                raise Refused(f"unknown shorthand flag: {a[1]!r} in {a}")
            name, value, eq = shorts[a[1]], a[2:].lstrip("="), "=" if len(a) > 2 else ""
        else:
            args.append(a)
            i += 1
            continue
        if name not in flags:
            raise Refused(f"unknown flag: --{name}")
        takes_value = flags[name][1]
        if takes_value and not eq:
            if i + 1 >= len(rest):
                raise Refused(f"flag needs an argument: --{name}")
            i += 1
            value = rest[i]
        elif not takes_value:
            value = value if eq else "true"
            if value not in ("true", "false"):
                raise Refused(f"invalid argument {value!r} for --{name}: boolean flag")
        opts.setdefault(name, []).append(value)
        i += 1
    if len(args) < lo or (hi is not None and len(args) > hi):
        raise Refused(f"accepts between {lo} and {hi if hi is not None else 'any'} arg(s), received {len(args)}")
    return path, opts, args


def one(opts: dict, name: str, default: str | None = None) -> str | None:
    return opts.get(name, [default])[-1]


def stdin_text() -> str | None:
    if sys.stdin is None or sys.stdin.isatty():
        return None
    return sys.stdin.read()


def need_app(state: dict, opts: dict) -> str:
    app = one(opts, "app") or os.environ.get("FLY_APP")
    if not app:
        raise Refused("the config for your app is missing an app name, add an app field to the fly.toml file or "
                      "specify with the -a flag")
    if app not in state["apps"]:
        raise Refused(f"failed retrieving app {app}: Could not find App \"{app}\"")
    return app


def real_db():
    import urllib.parse
    url = os.environ.get("FAKEFLY_PSQL_URL")
    return urllib.parse.urlsplit(url) if url else None


def leak_lines(state: dict) -> list[str]:
    """$FAKEFLY_LEAK: the newest cluster's password and connection string, as a debug line might show them."""
    if not os.environ.get("FAKEFLY_LEAK") or not state.get("mpg"):
        return []
    c = list(state["mpg"].values())[-1]
    return [f"DEBUG credentials user={c['user']} password={c['password']}", f"DEBUG dsn {mpg_url(c)}"]


# --------------------------------------------------------------------------- the commands


def apps_list(state, opts, args, out):
    if one(opts, "json") == "true":
        out.append(json.dumps([{"Name": a, "Organization": {"Slug": v["org"]}} for a, v in state["apps"].items()]))
    elif one(opts, "quiet") == "true":
        out += [f"{a}    " for a in state["apps"]]
    elif not state["apps"]:
        out.append("No apps found")
    else:
        out.append("NAME\tOWNER\tSTATUS")
        out += [f"{a}\t{v['org']}\tdeployed" for a, v in state["apps"].items()]


def apps_create(state, opts, args, out):
    name = (args[0] if args else None) or one(opts, "name")
    if not name:
        raise Refused("prompt: non-interactive: an app name is required")
    if name in state["apps"]:
        raise Refused("Validation failed: Name has already been taken")
    state["apps"][name] = {"org": one(opts, "org", "personal"), "secrets": {}, "deploys": 0}
    out.append(f"New app created: {name}")


def cluster_status(c: dict) -> str:
    return c["status"]


def mpg_list(state, opts, args, out):
    org = one(opts, "org", "personal")
    clusters = [c for c in state["mpg"].values() if c["org"] == org]
    for c in clusters:  # each answer is one more poll of a provisioning cluster
        if c.get("lists_until_ready", 0) > 0:
            c["lists_until_ready"] -= 1
        elif c["status"] == "provisioning":
            c["status"] = os.environ.get("FAKEFLY_MPG_FINAL_STATUS", "ready")
    if not clusters:
        # flyctl prints this sentence, not JSON, even with --json (internal/command/mpg/list.go)
        out.append(f"No managed postgres clusters found in organization {org}")
    elif one(opts, "json") == "true":
        # flyctl renders the API's ManagedCluster list (internal/uiex/mpg/v1/client.go): no credentials
        out.append(json.dumps([public_cluster(c) for c in clusters], indent=2))
    else:
        out += [f"{c['id']}\t{c['name']}\t{c['org']}\t{c['region']}\t{c['status']}\t{c['plan']}\t"
                f"{', '.join(c['attached_apps']) or '<no attached apps>'}" for c in clusters]


def public_cluster(c: dict) -> dict:
    return {"id": c["id"], "mpgd_cluster_id": c["id"], "version": 2, "name": c["name"], "region": c["region"],
            "status": c["status"], "plan": c["plan"], "disk": 10, "replicas": 0,
            "organization": {"slug": c["org"]}, "ip_assignments": {"direct": ""},
            "attached_apps": [{"name": a, "id": n + 1} for n, a in enumerate(c["attached_apps"])]}


def mpg_url(c: dict) -> str:
    return db_url(f"pgbouncer.{c['id']}.flympg.net", 5432, c["database"], c["user"], c["password"])


def mpg_create(state, opts, args, out):
    import secrets
    if not one(opts, "region"):
        raise Refused("prompt: non-interactive: select a region for your Managed Postgres cluster (--region)")
    if one(opts, "pg-major-version", "16") not in ("16", "17"):
        raise Refused("invalid Postgres major version. Supported versions are 16 and 17")
    name = one(opts, "name") or raise_(Refused("prompt: non-interactive: a database name is required (--name)"))
    cid = secrets.token_hex(7)
    wait = int(os.environ.get("FAKEFLY_MPG_PROVISIONING", "0"))
    c = {"id": cid, "name": name, "org": one(opts, "org", "personal"), "region": one(opts, "region"),
         "status": "provisioning" if wait else "ready", "lists_until_ready": wait,
         "plan": one(opts, "plan", "basic"), "database": "fly-db", "user": "fly-user",
         "password": "pw-" + secrets.token_hex(8), "attached_apps": []}
    state["mpg"][cid] = c
    # flyctl waits for "ready" itself and then prints the credentials (internal/command/mpg/v2/run_create.go)
    out.append(f"Selected Plan: {c['plan'].title()}\n\nWaiting for cluster {name} ({cid}) to be ready...")
    if wait:  # flyctl's wait loop broke off: the cluster exists and goes on provisioning
        save_state(state)
        raise Refused(f"failed checking cluster status: 502 Bad Gateway (cluster {cid} still provisioning)")
    out.append(f"\nManaged Postgres cluster created successfully!\n  ID: {cid}\n  Name: {name}\n"
               f"  Connection string: {mpg_url(c)}")


def raise_(e):
    raise e


def cluster(state, args, ready: bool = True) -> dict:
    if not args:
        raise Refused("prompt: non-interactive: select a Postgres cluster (pass its ID)")
    if args[0] not in state["mpg"]:
        raise Refused(f"managed postgres cluster {args[0]!r} not found")
    c = state["mpg"][args[0]]
    if ready and c["status"] != "ready":
        raise Refused(f"cluster {c['id']} is not ready (status {c['status']}): no credentials yet")
    return c


def db_url(host: str, port: int, database: str, user: str = "fly-user", password: str = "s3cret", query: str = "") -> str:
    db = real_db()
    if db:
        user, password, database = db.username, db.password, db.path.lstrip("/")
    return f"postgresql://{user}:{password}@{host}:{port}/{database}{query}"


def mpg_status(state, opts, args, out):
    c = cluster(state, args, ready=False)
    # flyctl renders GetClusterResponse, credentials included (internal/command/mpg/v2/run_status.go)
    out.append(json.dumps({"data": public_cluster(c), "credentials": {
        "status": c["status"], "user": c["user"], "password": c["password"], "dbname": c["database"],
        "pgbouncer_uri": mpg_url(c)}}, indent=2))


def mpg_attach(state, opts, args, out):
    c = cluster(state, args)
    app = need_app(state, opts)
    var = one(opts, "variable-name", "DATABASE_URL")
    if var in state["apps"][app]["secrets"]:
        raise Refused(f"app {app} already has {var} set. Use 'fly secrets unset {var}' to remove it first")
    url = db_url(f"pgbouncer.{c['id']}.flympg.net", 5432, one(opts, "database") or c["database"], c["user"],
                 c["password"])
    state["apps"][app]["secrets"][var] = url
    if os.environ.get("FAKEFLY_MPG_NO_ATTACHMENT_RECORD"):  # flyctl only warns (v2/run_attach.go)
        print("Warning: failed to create attachment record: 502 Bad Gateway", file=sys.stderr)
    elif app not in c["attached_apps"]:
        c["attached_apps"].append(app)
    out.append(f"\nPostgres cluster {c['id']} is being attached to {app}\n"
               f"The following secret was added to {app}:\n  {var}={url}")


def mpg_detach(state, opts, args, out):
    c = cluster(state, args, ready=False)
    app = need_app(state, opts)
    if app in c["attached_apps"]:
        c["attached_apps"].remove(app)
    out.append(f"\nPostgres cluster {c['id']} has been detached from {app}")


def mpg_connect(state, opts, args, out):
    import shutil
    import subprocess
    cluster(state, args)  # an unknown or unready cluster is refused, as flyctl does
    psql = shutil.which("psql")
    if not psql:
        raise Refused("Could not find psql in your $PATH")
    sql = stdin_text()
    record(stdin=sql)
    if real_db():
        res = subprocess.run([psql, os.environ["FAKEFLY_PSQL_URL"]], input=sql or "", text=True)
        if res.returncode:
            raise SystemExit(res.returncode)
    else:
        out.append("BEGIN\nCREATE TABLE\nCOMMIT")


def postgres_create(state, opts, args, out):
    import secrets
    name = one(opts, "name") or raise_(Refused("prompt: non-interactive: an app name is required (--name)"))
    if not one(opts, "region"):
        raise Refused("prompt: non-interactive: a region is required (--region)")
    if name in state["apps"]:
        raise Refused("Validation failed: Name has already been taken")
    password = "op-" + secrets.token_hex(8)
    state["apps"][name] = {"org": one(opts, "org", "personal"), "secrets": {}, "deploys": 0, "postgres": True,
                           "databases": [], "password": password}
    # flyctl prints the operator's credentials once (internal/command/postgres/create.go)
    out.append(f"Postgres cluster {name} created\n  Username:    postgres\n  Password:    {password}\n"
               f"  Hostname:    {name}.internal\n  Connection string: postgres://postgres:{password}@{name}.flycast:5432\n"
               "Save your credentials in a secure place -- you won't be able to see them again!")


def postgres_attach(state, opts, args, out):
    pg = args[0]
    if pg not in state["apps"] or not state["apps"][pg].get("postgres"):
        raise Refused(f"app {pg} is not a postgres app")
    app = need_app(state, opts)
    var = one(opts, "variable-name", "DATABASE_URL")
    if var in state["apps"][app]["secrets"]:
        raise Refused(f"consumer app {app!r} already contains a secret named {var}")
    dbname = (one(opts, "database-name") or app).replace("-", "_").lower()
    if dbname in state["apps"][pg]["databases"] and one(opts, "yes") != "true":
        raise Refused(f"prompt: non-interactive: Database {dbname!r} already exists. Continue? (--yes)")
    state["apps"][pg]["databases"].append(dbname)
    user = (one(opts, "database-user") or app).replace("-", "_").lower()
    url = db_url(f"{pg}.flycast", 5432, dbname, user=user, password=state["apps"][pg]["password"],
                 query="?sslmode=disable")
    state["apps"][app]["secrets"][var] = url
    out.append(f"Postgres cluster {pg} is now attached to {app}\n"
               f"The following secret was added to {app}:\n  {var}={url}")


def proxy(state, opts, args, out):
    import socket
    import threading
    app = one(opts, "app")
    if not app or app not in state["apps"]:
        raise Refused(f"Could not find App {app!r}")
    local, _, remote = args[0].partition(":")
    db = real_db()
    save_state(state)
    flush_record()  # runs until it is killed
    with socket.create_server((one(opts, "bind-addr", "127.0.0.1"), int(local))) as srv:
        print(f"Proxying local port {local} to remote [{app}.internal]:{remote or local}", flush=True)
        while True:
            conn, _ = srv.accept()
            if not db:
                conn.close()
                continue
            upstream = socket.create_connection((db.hostname, db.port or 5432))
            for a, b in ((conn, upstream), (upstream, conn)):
                threading.Thread(target=pump, args=(a, b), daemon=True).start()


def pump(src, dst) -> None:
    import socket
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def secrets_list(state, opts, args, out):
    import hashlib
    app = need_app(state, opts)
    rows = [{"name": k, "digest": hashlib.sha256(v.encode()).hexdigest()[:16], "status": "Deployed"}
            for k, v in state["apps"][app]["secrets"].items()]
    if one(opts, "json") == "true":
        out.append(json.dumps(rows, indent=2))
    else:
        out.append("NAME\tDIGEST\tSTATUS")
        out += [f"{r['name']}\t{r['digest']}\t{r['status']}" for r in rows]


def secrets_set(state, opts, args, out):
    app = need_app(state, opts)
    new = {}
    for a in args:
        name, eq, value = a.partition("=")
        if not eq or not name:
            raise Refused(f"could not parse secrets: {a!r} is not NAME=VALUE")
        if value == "-":
            text = stdin_text()
            if text is None:
                raise Refused(f"secret `{name}` expects standard input but none provided")
            record(stdin_bytes=len(text))
            value = text.strip()
        new[name] = value
    state["apps"][app]["secrets"].update(new)
    redeploy(state, app, opts, out)


def secrets_unset(state, opts, args, out):
    app = need_app(state, opts)
    for name in args:
        state["apps"][app]["secrets"].pop(name, None)
    redeploy(state, app, opts, out)


def redeploy(state: dict, app: str, opts: dict, out: list) -> None:
    """A secrets change: staged, or on a deployed app a restart-only rolling deploy of the deployed config."""
    import tomllib
    deployed = state["apps"][app].get("deployed")
    if one(opts, "stage") == "true" or not deployed:
        out.append("Secrets have been staged, but not set on VMs." if one(opts, "stage") == "true"
                   else "Secrets are staged for the first deployment")
        return
    cfg = tomllib.loads(Path(deployed["config"]).read_text())
    wait_for_checks(cfg)
    deployed["files"] = machine_files(cfg, Path(deployed["config"]).parent, state["apps"][app]["secrets"])
    state["apps"][app]["restarts"] = state["apps"][app].get("restarts", 0) + 1
    out.append(f"Updating existing machines in '{app}' with rolling strategy")


def configured_checks(cfg: dict) -> list[dict]:
    """What a machine's config carries (flyctl appconfig): the top-level [checks] and every service's checks."""
    checks = list((cfg.get("checks") or {}).values())
    checks += (cfg.get("http_service") or {}).get("checks", [])
    for svc in cfg.get("services", []):
        checks += svc.get("http_checks", []) + svc.get("tcp_checks", []) + svc.get("checks", [])
    return checks


def wait_for_checks(cfg: dict) -> None:
    """flyctl's WaitForHealthchecksToPass: every configured check must pass, else the deploy times out."""
    if not os.environ.get("FAKEFLY_DATABASE_DOWN"):
        return
    for check in configured_checks(cfg):
        if check.get("type", "http") == "http" and check.get("path") != "/health/live":
            raise Refused(f"timeout reached waiting for health checks to pass for machine 1781e7f: check "
                          f"{check.get('path')!r} answers 503 while the database is down")


def machine_files(cfg: dict, config_dir: Path, secrets: dict) -> dict:
    """[[files]] -> {guest_path: content}, refusing what flyctl or the Machines API refuse."""
    import binascii
    files = {}
    for f in cfg.get("files", []):
        guest = f.get("guest_path")
        if not guest:
            raise Refused("validating [[files]]: guest_path is required")
        if not guest.startswith("/"):
            raise Refused(f"[[files]] guest_path {guest!r} must be an absolute path")
        sources = [k for k in ("local_path", "secret_name", "raw_value") if f.get(k)]
        if len(sources) != 1:
            raise Refused(f"[[files]] {guest}: exactly one of local_path, secret_name, raw_value (got {sources or 'none'})")
        if "local_path" in sources:
            local = config_dir / f["local_path"]
            if not local.is_file():
                raise Refused(f"could not read file {f['local_path']}")
            files[guest] = local.read_text()
        elif "raw_value" in sources:
            files[guest] = f["raw_value"]
        else:
            name = f["secret_name"]
            if name not in secrets:
                raise Refused(f"machine never started: file {guest} names secret {name}, which the app does not have")
            try:
                files[guest] = base64.b64decode(secrets[name], validate=True).decode()
            except (binascii.Error, UnicodeDecodeError):
                raise Refused(f"machine never started: secret {name} (file {guest}) is not base64 encoded")
    return files


# --------------------------------------------------------------------------- the build context


def ignore_rules(path: Path | None, missing: list[str]) -> list[tuple[bool, re.Pattern, str]]:
    """A .dockerignore as (negated, regex, pattern) rules, Docker's syntax: `*` and `?` stay within one path
    element, `**` crosses them, a pattern also excludes everything under what it matches, the last match wins."""
    lines = path.read_text().splitlines() if path and path.is_file() else missing
    rules = []
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        neg = line.startswith("!")
        pattern = os.path.normpath(line.lstrip("!").strip().lstrip("/"))
        rx, i = "", 0
        while i < len(pattern):
            ch = pattern[i]
            if pattern.startswith("**/", i):
                rx, i = rx + "(?:.*/)?", i + 3
            elif pattern.startswith("**", i):
                rx, i = rx + ".*", i + 2
            elif ch == "*":
                rx, i = rx + "[^/]*", i + 1
            elif ch == "?":
                rx, i = rx + "[^/]", i + 1
            elif ch == "[":
                end = pattern.find("]", i)
                rx, i = rx + pattern[i:end + 1].replace("[!", "[^"), end + 1
            else:
                rx, i = rx + re.escape(ch), i + 1
        rules.append((neg, re.compile(rx), pattern))
    return rules


def is_excluded(rel: str, rules) -> bool:
    parts = rel.split("/")
    prefixes = ["/".join(parts[:n]) for n in range(1, len(parts) + 1)]
    result = False
    for neg, rx, _ in rules:
        if any(rx.fullmatch(p) for p in prefixes):
            result = not neg
    return result


def context_files(context: Path, rules) -> list[str]:
    """The files of the context that the rules keep; an excluded folder is entered only when a `!` rule
    could reach inside it (so .git/ or target/ under a deny-all rule cost nothing)."""
    negations = [re.split(r"[*?\[]", pattern, maxsplit=1)[0] for neg, _, pattern in rules if neg]
    found = []

    def reachable(rel_dir: str) -> bool:
        d = rel_dir + "/"
        return any(not pre or d.startswith(pre) or pre.startswith(d) or pre == rel_dir for pre in negations)

    def walk(folder: Path, rel: str) -> None:
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            return
        for e in entries:
            r = f"{rel}/{e.name}" if rel else e.name
            if e.is_dir(follow_symlinks=False):
                if not is_excluded(r, rules) or reachable(r):
                    walk(Path(e.path), r)
            elif not is_excluded(r, rules):
                found.append(r)

    walk(context, "")
    return found


def check_build(dockerfile: Path, context: Path, target: str | None, rules, builder: str, files: list[str]) -> None:
    text = re.sub(r"\\\n", " ", dockerfile.read_text())
    stages: list[dict] = []
    for line in text.splitlines():
        line = line.strip()
        if m := re.match(r"FROM\s+(\S+)(?:\s+AS\s+(\S+))?", line, re.I):
            stages.append({"base": m.group(1), "name": (m.group(2) or str(len(stages))).lower(), "copies": [],
                           "froms": []})
        elif stages and (m := re.match(r"(?:COPY|ADD)\s+(.*)", line, re.I)):
            words = m.group(1).split()
            flags = [w for w in words if w.startswith("--")]
            paths = [w for w in words if not w.startswith("--")]
            source_stage = next((f.split("=", 1)[1].lower() for f in flags if f.startswith("--from=")), None)
            if source_stage:
                stages[-1]["froms"].append(source_stage)
            else:
                stages[-1]["copies"] += paths[:-1]
    if not stages:
        raise Refused(f"{dockerfile}: no FROM")
    names = {s["name"]: s for s in stages}
    start = names.get(target.lower()) if target else stages[-1]
    if start is None:
        raise Refused(f"failed to solve: target stage {target!r} could not be found")
    needed, todo = [], [start]
    while todo:
        s = todo.pop()
        if s in needed:
            continue
        needed.append(s)
        todo += [names[n] for n in [s["base"].lower(), *s["froms"]] if n in names]
    for s in needed:
        for src in s["copies"]:
            src = os.path.normpath(src.lstrip("/"))
            rx = re.compile(ignore_rules(None, [src])[0][1].pattern)  # a COPY source may be a wildcard too
            if not any(f == src or f.startswith(src + "/") or rx.fullmatch(f) for f in files):
                where = "not found" if not any((context).glob(src)) else f"excluded by the {builder} build's ignore file"
                raise Refused(f"failed to solve ({builder} build): failed to compute cache key: \"/{src}\": {where} "
                              f"(build context {context})")


def deploy(state, opts, args, out):
    import tomllib
    wd = Path(os.getcwd())
    if args:
        wd = (wd / args[0]).resolve()
        if not wd.is_dir():
            raise Refused(f"failed changing working directory: chdir {args[0]}: no such file or directory")
        os.chdir(wd)
    config = one(opts, "config")
    candidates = [Path(config), Path(config) / "fly.toml"] if config else [wd / "fly.toml"]
    path = next((p for p in candidates if p.is_file()), None)
    if path is None:
        if config:
            raise Refused(f"config file not found at specified path: {config} (also tried: {Path(config) / 'fly.toml'})"
                          f" [working directory: {wd}]")
        raise Refused("the config for your app is missing an app name")
    path = path.resolve()
    cfg = tomllib.loads(path.read_text())
    app = one(opts, "app") or cfg.get("app")
    if not app or app not in state["apps"]:
        raise Refused(f"the app name {app} could not be found, did you create the app or misspell it in the fly.toml "
                      f"file or via -a?")
    build = cfg.get("build", {})
    # flyctl's resolveDockerfilePath / resolveIgnorefilePath: the config's, relative to the config's folder,
    # else the flag's, made absolute from the working directory.
    if "dockerfile" in build:
        dockerfile = (path.parent / build["dockerfile"]).resolve()
    elif one(opts, "dockerfile"):
        dockerfile = (wd / one(opts, "dockerfile")).resolve()
    else:
        dockerfile = wd / "Dockerfile"
    if not dockerfile.is_file():
        raise Refused(f"failed to fetch an image or build from source: dockerfile '{dockerfile}' not found")
    if "ignorefile" in build:
        classic = (path.parent / build["ignorefile"]).resolve()
    elif one(opts, "ignorefile"):
        classic = (wd / one(opts, "ignorefile")).resolve()
    else:
        classic = wd / ".dockerignore"
    own = dockerfile.parent / (dockerfile.name + ".dockerignore")
    buildkit = own if own.is_file() else wd / ".dockerignore"
    target = build.get("build-target") or build.get("build_target") or one(opts, "build-target")
    contexts = {}
    for builder, ignore, missing in (("BuildKit", buildkit, []), ("classic", classic, ["fly.toml"])):
        rules = ignore_rules(ignore, missing)
        files = context_files(wd, rules)
        check_build(dockerfile, wd, target, rules, builder, files)
        contexts[builder] = {"ignore": str(ignore) if ignore.is_file() else None, "files": len(files),
                             "top": sorted({f.split("/", 1)[0] for f in files}), "paths": files[:3000]}
    secrets = state["apps"][app]["secrets"]
    for var in ("DATABASE_URL", "JWT_PRIVATE_KEY"):
        if var not in secrets and var not in cfg.get("env", {}):
            raise Refused(f"machine never passed its health checks: {var} is not set (the service refuses to start)")
    env = dict(cfg.get("env", {}))
    for pair in opts.get("env", []):  # flyctl's --env NAME=VALUE: merged into the config's [env]
        name, eq, value = pair.partition("=")
        if not eq or not name:
            raise Refused(f"failed parsing environment variables: {pair!r} is not NAME=VALUE")
        env[name] = value
    files = machine_files(cfg, path.parent, secrets)
    wait_for_checks(cfg)
    # flyctl's first deploy of an app with public services and no address allocates a dedicated IPv6 and a
    # shared IPv4 (internal/command/deploy: the IPs step), unless --no-public-ips.
    if not state["apps"][app].get("ips") and one(opts, "no-public-ips") != "true":
        allocate(state, app, "v6")
        allocate(state, app, "shared_v4")
    state["apps"][app]["deploys"] += 1
    state["apps"][app]["deployed"] = {"context": str(wd), "config": str(path), "dockerfile": str(dockerfile),
                                      "contexts": contexts, "files": files, "env": env}
    out.append(f"Visit your newly deployed app at https://{app}.fly.dev/")


def allocate(state: dict, app: str, kind: str, region: str = "global") -> dict:
    """One address as fly-go's IPAddress (the JSON of `fly ips list --json`: its Go field names)."""
    ips = state["apps"][app].setdefault("ips", [])
    n = len(ips) + 1
    address = {"v6": f"2a09:8280:1::{n:x}:0", "shared_v4": f"66.241.124.{n}", "v4": f"137.66.{n}.1",
               "private_v6": f"fdaa:0:1::{n:x}"}[kind]
    ip = {"ID": f"ip_{n}", "Address": address, "Type": kind, "Region": region, "CreatedAt": "2026-01-01T00:00:00Z",
          "ServiceName": "", "Network": None}
    ips.append(ip)
    return ip


def ips_list(state, opts, args, out):
    app = need_app(state, opts)
    ips = state["apps"][app].get("ips", [])
    if one(opts, "json") == "true":
        out.append(json.dumps(ips, indent=2))
    else:
        out.append("VERSION\tIP\tTYPE\tREGION")
        out += [f"{'v4' if 'v4' in i['Type'] else 'v6'}\t{i['Address']}\t{i['Type']}\t{i['Region']}" for i in ips]


def ips_allocate_v6(state, opts, args, out):
    app = need_app(state, opts)
    ip = allocate(state, app, "private_v6" if one(opts, "private") == "true" else "v6", one(opts, "region", "global"))
    out.append(f"VERSION\tIP\n v6\t{ip['Address']}")


def ips_allocate_v4(state, opts, args, out):
    app = need_app(state, opts)
    kinds = {i["Type"] for i in state["apps"][app].get("ips", [])}
    shared = one(opts, "shared") == "true"
    if shared and "v4" in kinds:
        raise Refused("app already has a dedicated IPv4 address: a shared one cannot be allocated")
    ip = allocate(state, app, "shared_v4" if shared else "v4", one(opts, "region", "global"))
    out.append(f"VERSION\tIP\n v4\t{ip['Address']}")


def scale_count(state, opts, args, out):
    app = need_app(state, opts)
    state["apps"][app]["count"] = int(args[-1])
    out.append(f"App {app} scaled to {args[-1]}")


HANDLERS = {
    ("apps", "list"): apps_list, ("apps", "create"): apps_create, ("mpg", "list"): mpg_list,
    ("mpg", "create"): mpg_create, ("mpg", "attach"): mpg_attach, ("mpg", "connect"): mpg_connect,
    ("mpg", "status"): mpg_status, ("mpg", "detach"): mpg_detach,
    ("postgres", "create"): postgres_create, ("postgres", "attach"): postgres_attach, ("proxy",): proxy,
    ("secrets", "list"): secrets_list, ("secrets", "set"): secrets_set, ("secrets", "unset"): secrets_unset,
    ("deploy",): deploy, ("scale", "count"): scale_count, ("ips", "list"): ips_list,
    ("ips", "allocate-v6"): ips_allocate_v6, ("ips", "allocate-v4"): ips_allocate_v4,
}
READ_ONLY = {("apps", "list"), ("mpg", "list"), ("mpg", "status"), ("secrets", "list"), ("proxy",), ("ips", "list")}
_record: dict = {}


def record(**kw) -> None:
    _record.update(kw)


def flush_record() -> None:
    """Appends this call to calls.jsonl (once)."""
    if not _record.pop("_written", False):
        with CALLS.open("a") as f:
            f.write(json.dumps(_record) + "\n")
    _record["_written"] = True


def injected(path: tuple) -> str | None:
    """The mode $FAKEFLY_FAIL sets for this call (its number in calls.jsonl, or its command), if any."""
    spec = os.environ.get("FAKEFLY_FAIL", "")
    if not spec:
        return None
    number = (sum(1 for _ in CALLS.open()) if CALLS.exists() else 0) + 1
    for item in spec.split(","):
        when, _, mode = item.strip().rpartition(":")
        if mode not in ("fail", "after", "garbage"):
            raise SystemExit(f"fakefly: FAKEFLY_FAIL item {item!r}: WHEN:fail|after|garbage")
        if when == str(number) or when == " ".join(path):
            # a read that fails after it was done is a read that failed
            return "fail" if mode == "after" and path in READ_ONLY else mode
    return None


BAD_GATEWAY = "Error: server returned a 502 Bad Gateway: upstream connect error or disconnect/reset before headers"
GARBAGE = "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center></body></html>"


def main() -> int:
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    argv = sys.argv[1:]
    _record.update(argv=argv, cwd=os.getcwd())
    state = load_state()
    out: list[str] = []
    err: list[str] = []
    code = 0
    try:
        path, opts, args = parse(argv)
        _record["command"] = " ".join(path)
        if path not in HANDLERS:
            raise Refused(f"fakefly: {' '.join(path)} is valid for flyctl but not simulated here")
        mode = injected(path)
        if mode:
            _record["injected"] = mode
        if mode == "fail":
            raise Refused(BAD_GATEWAY[len("Error: "):])
        HANDLERS[path](state, opts, args, out)
        save_state(state)
        if mode == "after":
            raise Refused(BAD_GATEWAY[len("Error: "):])
        if mode == "garbage":
            out = [GARBAGE]
    except Refused as e:
        _record["error"] = str(e)
        err.append(f"Error: {e}")
        out = []
        code = 1
    except SystemExit as e:
        code = int(e.code or 0) if not isinstance(e.code, str) else 1
        if isinstance(e.code, str):
            err.append(e.code)
        _record["exit"] = code
    finally:
        flush_record()
    leak = leak_lines(load_state() if os.environ.get("FAKEFLY_LEAK") and STATE.exists() else state)
    json_answer = "--json" in argv or "-j" in argv
    if out or (leak and not json_answer):
        print("\n".join(out + ([] if json_answer else leak)))
    if err or leak:
        print("\n".join(leak + err), file=sys.stderr)
    return code


