#!/usr/bin/env bash
# Deploys one stack to fly.io, end to end (fly/README.md):
#
#   fly/deploy.sh STACK [options]          STACK: actix | axum | akka | spring | zio (any folder with fly/STACK.toml)
#
#   --org ORG          fly.io organization (default: $FLY_ORG, else "personal")
#   --region REGION    region of a new database (default: the config's primary_region)
#   --db NAME          database: Managed Postgres cluster name, or Postgres app name with --unmanaged
#                      (default: simple-auth-db; all the stacks share it, so users exist once). Refused when
#                      the app already has a DATABASE_URL from another one (the message says how to switch)
#   --plan PLAN        Managed Postgres plan of a new cluster: basic (default), starter, launch, scale
#   --unmanaged        use an unmanaged fly Postgres app (fly postgres create/attach) instead of Managed Postgres
#   --key FILE         sign with this PKCS#8 key instead of a fresh one: RSA >= 2048 bits (RS256), EC P-256 (ES256)
#                      or Ed25519 (EdDSA); never a key of spec/keys/ (refused by its public key)
#   --key-type TYPE    the fresh key's type: rsa-2048 (default, the benchmark's), rsa-4096, p-256, ed25519
#   DEPLOY_MPG_WAIT_SECONDS (default 1200), DEPLOY_POLL_SECONDS (default 10): how long, and how often, to ask
#                      `fly mpg list` whether the cluster is ready before attaching it
#
# Steps, each skipped when already done (so a re-run only deploys again):
#   1. the app (fly apps create), then the app's secrets, read once (fly secrets list): every later decision
#      is taken from that one reading;
#   2. PostgreSQL: the cluster (fly mpg create), waiting until `fly mpg list` says it is ready, DATABASE_URL
#      (fly mpg attach), then sql/schema.sql (fly mpg connect, one transaction; idempotent). Never
#      sql/seed.sql: its users have public passwords. Add real users with `make user` (sql/users.py);
#   3. JWT_PRIVATE_KEY: a fresh PKCS#8 key from openssl (--key-type, RSA-2048 by default), piped into
#      `fly secrets set` (never on disk, never in argv), unless the app has one; and JWT_PUBLIC_KEYS_BASE64,
#      unless the app has one: the published-keys bundle the config mounts as JWT_PUBLIC_KEYS_FILE
#      ([[files]], base64 as fly's secret files want it), first a one-line comment, i.e. no key
#      (docs/key-rotation.md puts the next and the previous keys in it). Neither is ever replaced;
#   4. the app's public addresses (fly ips list; a dedicated IPv6 and a shared IPv4 allocated when it has
#      none), which fly's proxy writes as the last X-Forwarded-For entry: TRUSTED_PROXIES is the config's
#      proxy range plus those (fly/README.md, "Client addresses");
#   5. fly deploy REPO --config REPO/fly/STACK.toml --env TRUSTED_PROXIES=...: the repository root is the
#      build context, the config's [build] names STACK/Dockerfile and STACK/Dockerfile.dockerignore
#      (fly/README.md, "Build context");
#   6. prints the URL, the first token request and the benchmark command.
# Any flyctl call that fails, or answers what this script cannot parse, stops it at once: one line on stderr,
# exit 1, nothing generated, staged or replaced after it. Run it again when flyctl works: it carries on.
# flyctl's own output is captured, never shown (it prints passwords and connection strings), except
# `fly deploy`'s, which is shown with anything that looks like a credential masked.
# Needs flyctl (fly), openssl, psql (fly mpg connect runs the local psql) and python3.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SCHEMA="$ROOT/sql/schema.sql"

die() { echo "deploy: $*" >&2; exit 2; }
say() { echo "deploy: $*" >&2; }

usage() { sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }

stacks() { (cd "$ROOT/fly" && ls -1 ./*.toml 2>/dev/null | sed 's|^\./||; s|\.toml$||' | tr '\n' ' '); }

[[ $# -ge 1 ]] || usage
case "$1" in -h|--help) usage ;; esac
STACK="$1"; shift
ORG="${FLY_ORG:-personal}"; REGION=""; DB="simple-auth-db"; DB_GIVEN=0; PLAN="basic"; UNMANAGED=0; KEY_FILE=""
KEY_TYPE=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --org) ORG="${2:?--org needs a value}"; shift 2 ;;
    --region) REGION="${2:?--region needs a value}"; shift 2 ;;
    --db) DB="${2:?--db needs a value}"; DB_GIVEN=1; shift 2 ;;
    --plan) PLAN="${2:?--plan needs a value}"; shift 2 ;;
    --unmanaged) UNMANAGED=1; shift ;;
    --key) KEY_FILE="${2:?--key needs a file}"; shift 2 ;;
    --key-type) KEY_TYPE="${2:?--key-type needs a value}"; shift 2 ;;
    -h|--help) usage ;;
    *) die "unknown option '$1' (see fly/deploy.sh --help)" ;;
  esac
done

CONFIG="$ROOT/fly/$STACK.toml"
[[ "$STACK" =~ ^[a-z0-9_-]+$ && -f "$CONFIG" ]] || die "unknown stack '$STACK' (stacks with a fly config: $(stacks))"
# The build context is the repository root; without the Dockerfile's own ignore file it would be all of it.
[[ -f "$ROOT/$STACK/Dockerfile" ]] || die "$STACK/Dockerfile not found"
[[ -f "$ROOT/$STACK/Dockerfile.dockerignore" ]] \
  || die "$STACK/Dockerfile.dockerignore not found: without it the build context would be the whole repository"
# flyctl (and fly's Managed Postgres) know these plans; anything else is silently Basic (flyctl's create.go).
case "$PLAN" in basic|starter|launch|scale) ;; *) die "--plan $PLAN: one of basic, starter, launch, scale" ;; esac
for var in DEPLOY_MPG_WAIT_SECONDS DEPLOY_POLL_SECONDS; do
  [[ "${!var:-0}" =~ ^[0-9]+$ ]] || die "$var=${!var}: a whole number of seconds"
done
MPG_WAIT="${DEPLOY_MPG_WAIT_SECONDS:-1200}"
POLL="${DEPLOY_POLL_SECONDS:-10}"

FLY="$(command -v fly || command -v flyctl || true)"
[[ -n "$FLY" ]] || die "flyctl not found: install it (curl -L https://fly.io/install.sh | sh) and run 'fly auth login'"
command -v openssl >/dev/null || die "openssl not found (apt-get install openssl)"
command -v psql >/dev/null || die "psql not found (apt-get install postgresql-client): fly mpg connect runs it"
command -v python3 >/dev/null || die "python3 not found (reads flyctl's JSON output)"

# The config is the one source of the app name and region.
APP="$(sed -n 's/^app *= *"\([^"]*\)".*/\1/p' "$CONFIG" | head -1)"
[[ -n "$APP" ]] || die "no app = \"...\" in fly/$STACK.toml"
[[ -n "$REGION" ]] || REGION="$(sed -n 's/^primary_region *= *"\([^"]*\)".*/\1/p' "$CONFIG" | head -1)"
[[ -n "$REGION" ]] || die "no --region and no primary_region in fly/$STACK.toml"

# ---------------------------------------------------------------------------------------------- the key
# The contract's signing keys (spec/README.md §2): PKCS#8, and the key's type decides the algorithm.
# The published keys' bundle: a secret holding the base64 of a PEM bundle, mounted by the config's [[files]]
# at JWT_PUBLIC_KEYS_FILE (fly.io writes a secret file from the base64 of its value).
BUNDLE_SECRET="JWT_PUBLIC_KEYS_BASE64"
EMPTY_BUNDLE="# simple-auth: no further public keys published (docs/key-rotation.md)"

# sha256 of the DER public key of every PEM block (private or public) in the files given.
pubkey_digests() {
  local f line block=""
  for f in "$@"; do
    while IFS= read -r line || [[ -n "$line" ]]; do
      if [[ "$line" == -----BEGIN* ]]; then block="$line"$'\n'
      elif [[ -n "$block" ]]; then
        block+="$line"$'\n'
        if [[ "$line" == -----END* ]]; then
          # printf is a builtin: the block goes through a pipe, never a temporary file or an argv.
          if [[ "$block" == "-----BEGIN PUBLIC KEY-----"* ]]; then
            printf '%s' "$block" | { openssl pkey -pubin -pubout -outform DER 2>/dev/null || true; } | openssl dgst -sha256 -r | cut -d' ' -f1
          else
            printf '%s' "$block" | { openssl pkey -passin pass: -pubout -outform DER 2>/dev/null || true; } | openssl dgst -sha256 -r | cut -d' ' -f1
          fi
          block=""
        fi
      fi
    done <"$f"
  done
}

# The contract's name for a PKCS#8 key (rsa-<bits> | p-256 | ed25519), or the reason it is refused.
key_type() {
  local algs bits
  algs="$(openssl pkey -passin pass: -in "$1" -pubout 2>/dev/null | openssl asn1parse 2>/dev/null | sed -n 's/.*OBJECT *://p' | tr '\n' ' ' || true)"
  algs="${algs% }"
  case "$algs" in
    rsaEncryption)
      bits="$(openssl pkey -in "$1" -noout -text 2>/dev/null | sed -n 's/.*Private-Key: (\([0-9]*\) bit.*/\1/p')"
      bits="${bits%%$'\n'*}"
      if [[ -n "$bits" && "$bits" -ge 2048 ]]; then echo "rsa-$bits"; else echo "refused: an RSA key of ${bits:-unknown} bits (the contract needs 2048 or more)"; fi ;;
    "id-ecPublicKey prime256v1") echo "p-256" ;;
    "id-ecPublicKey "*) echo "refused: an EC key on ${algs#id-ecPublicKey } (the contract accepts P-256 only)" ;;
    ED25519) echo "ed25519" ;;
    *) echo "refused: key type ${algs:-unknown} (the contract accepts PKCS#8 RSA >= 2048 bits, EC P-256 and Ed25519)" ;;
  esac
}

alg_of() { case "$1" in rsa-*) echo RS256 ;; p-256) echo ES256 ;; ed25519) echo EdDSA ;; esac; }

case "$KEY_TYPE" in
  "") ;;
  rsa-2048|rsa-4096|p-256|ed25519)
    [[ -z "$KEY_FILE" ]] || die "--key-type chooses the type of a fresh key; --key $KEY_FILE brings its own (its type decides the algorithm): give one of the two" ;;
  *) die "--key-type $KEY_TYPE: one of rsa-2048, rsa-4096, p-256, ed25519" ;;
esac
KEY_TYPE="${KEY_TYPE:-rsa-2048}"

if [[ -n "$KEY_FILE" ]]; then
  [[ -r "$KEY_FILE" && -f "$KEY_FILE" ]] || die "--key $KEY_FILE: not a readable file"
  ! grep -q -- '^-----BEGIN PUBLIC KEY-----' "$KEY_FILE" \
    || die "--key $KEY_FILE holds a public key: --key takes the private signing key (public keys go in the bundle, docs/key-rotation.md)"
  ! grep -q -- '^-----BEGIN ENCRYPTED PRIVATE KEY-----' "$KEY_FILE" \
    || die "--key $KEY_FILE is encrypted: the service reads an unencrypted PKCS#8 key (openssl pkey -in KEY -out PLAIN)"
  given="$(pubkey_digests "$KEY_FILE")"
  given="${given%%$'\n'*}"
  empty_digest="$(printf '' | openssl dgst -sha256 -r | cut -d' ' -f1)"   # what a block openssl cannot read yields
  [[ -n "$given" && "$given" != "$empty_digest" ]] || die "--key $KEY_FILE: no private key openssl can read"
  shopt -s nullglob
  for dev in "$ROOT"/spec/keys/*.pem "$ROOT"/spec/keys/*/*.pem; do
    dev_digests="$(pubkey_digests "$dev")"
    if grep -qx -- "$given" <<<"$dev_digests"; then
      die "--key $KEY_FILE is the public development key of spec/keys/${dev#"$ROOT"/spec/keys/}: refused, never deploy it"
    fi
  done
  shopt -u nullglob
  blocks="$(grep -c -- '^-----BEGIN ' "$KEY_FILE" || true)"
  first="$(grep -m1 -- '^-----BEGIN ' "$KEY_FILE" || true)"
  [[ "$first" == "-----BEGIN PRIVATE KEY-----" ]] \
    || die "--key $KEY_FILE: not PKCS#8 ('${first:-no PEM block}'; openssl pkcs8 -topk8 -nocrypt converts a PKCS#1 or SEC 1 key)"
  [[ "$blocks" -eq 1 ]] || die "--key $KEY_FILE: $blocks PEM blocks; the signing key is one PKCS#8 block"
  KEY_TYPE="$(key_type "$KEY_FILE")"
  [[ "$KEY_TYPE" != refused:* ]] || die "--key $KEY_FILE: ${KEY_TYPE#refused: }"
fi

# ---------------------------------------------------------------------------------------------- flyctl
# Every flyctl call goes through fly_call: its stdout lands in $OUT (never on the terminal: `fly mpg create`,
# `fly postgres create` and the attach commands print passwords and connection strings), its stderr in a file
# of a private folder removed at exit. A non-zero exit ends the script with one masked line.
WORK="$(umask 077 && mktemp -d "${TMPDIR:-/tmp}/simple-auth-deploy.XXXXXX")"
PROXY_PID=""
cleanup() {
  if [[ -n "$PROXY_PID" ]]; then kill "$PROXY_PID" 2>/dev/null || true; wait "$PROXY_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
ERR="$WORK/stderr"
OUT=""

# Masks what may be a credential: a URL with a user (and password), any postgres URL, and the value after
# a password / secret / token / credential word.
redact() {
  sed -E \
    -e 's#[A-Za-z][A-Za-z0-9+.-]*://[^[:space:]/@]*@[^[:space:]"'"'"']*#<connection string hidden>#g' \
    -e 's#postgres(ql)?://[^[:space:]"'"'"']*#<connection string hidden>#Ig' \
    -e 's#(pass(word|wd)?|pwd|secret|token|credential)s?(["'"'"']?[[:space:]]*[:=][[:space:]]*["'"'"']?)[^[:space:]"'"'"',}]+#\1\3****#Ig'
}

AGAIN="stopped here, nothing after it was done (run fly/deploy.sh again once flyctl works)"
# What an unmanaged run that stops after the attach leaves: a secret that cannot be read back.
UNLOADED="DATABASE_URL is set and sql/schema.sql not loaded, which a re-run cannot do (fly/README.md, Unmanaged Postgres)"

# fail WHAT [AFTERWARDS]: one line, with the first line of flyctl's stderr masked.
fail() {
  local why
  why="$( { grep -m1 -v '^[[:space:]]*$' "$ERR" 2>/dev/null || true; } | redact | cut -c1-240)"
  echo "deploy: $1${why:+: $why}; ${2:-$AGAIN}" >&2
  exit 1
}

# fly_call STEP ARGS...: runs `fly ARGS...` (stdin as given), its stdout into $OUT. AFTER_FAILURE, when set,
# replaces the usual end of the failure line.
AFTER_FAILURE=""
fly_call() {
  local step="$1" rc=0
  shift
  OUT="$("$FLY" "$@" 2>"$ERR")" || rc=$?
  [[ $rc -eq 0 ]] || fail "$step failed (exit $rc)" "$AFTER_FAILURE"
}

# JSON from flyctl, checked and flattened by python3 (standard library). An answer that is not what
# flyctl prints ends the script: an empty or garbled answer must never read as "nothing there".
unparseable() { echo "deploy: $1: flyctl answered something that is not its JSON; $AGAIN" >&2; exit 1; }

# `fly apps list --json` (member "Name") or `fly secrets list --json` (member "name") -> one name a line:
# json_names MEMBER. Anything but a list of objects each with a non-empty string there is unparseable.
json_names() {
  python3 -S -c 'import json, sys
key = sys.argv[1]
try: data = json.loads(sys.stdin.read())
except ValueError: sys.exit(3)
if data is None: data = []
if not isinstance(data, list): sys.exit(3)
for item in data:
    if not isinstance(item, dict) or not isinstance(item.get(key), str) or not item[key]: sys.exit(3)
    print(item[key])' "$1" < <(printf '%s' "$OUT") 2>/dev/null || return 3
}

# `fly mpg list --json` -> "id<TAB>name<TAB>status<TAB>attached app,attached app" a cluster. With no
# cluster flyctl prints a sentence instead of JSON (internal/command/mpg/list.go): that one, and only
# that one, reads as none.
clusters() {
  python3 -S -c 'import json, sys
text = sys.stdin.read()
if text.strip().startswith("No managed postgres clusters found in organization"): sys.exit(0)
try: data = json.loads(text)
except ValueError: sys.exit(3)
if not isinstance(data, list): sys.exit(3)
for c in data:
    if not isinstance(c, dict): sys.exit(3)
    fields = [c.get("id"), c.get("name"), c.get("status")]
    if not all(isinstance(f, str) and f and not any(ch in f for ch in "\t\n,") for f in fields): sys.exit(3)
    apps = c.get("attached_apps") or []
    if not isinstance(apps, list) or not all(isinstance(a, dict) and isinstance(a.get("name"), str) for a in apps):
        sys.exit(3)
    print("\t".join(fields + [",".join(a["name"] for a in apps)]))' < <(printf '%s' "$OUT") 2>/dev/null || return 3
}

# `fly ips list --json` (fly-go's IPAddress objects) -> "type<TAB>address" an address. Anything but a list of
# objects each with a string Type and an IP address literal as Address is unparseable.
app_ips() {
  python3 -S -c 'import ipaddress, json, sys
try: data = json.loads(sys.stdin.read())
except ValueError: sys.exit(3)
if data is None: data = []
if not isinstance(data, list): sys.exit(3)
for ip in data:
    if not isinstance(ip, dict) or not isinstance(ip.get("Type"), str) or not isinstance(ip.get("Address"), str): sys.exit(3)
    try: address = ipaddress.ip_address(ip["Address"])
    except ValueError: sys.exit(3)
    if not ip["Type"] or any(ch in ip["Type"] for ch in "\t\n"): sys.exit(3)
    print(ip["Type"] + "\t" + str(address))' < <(printf '%s' "$OUT") 2>/dev/null || return 3
}

list_clusters() {
  fly_call "fly mpg list" mpg list --org "$ORG" --json
  CLUSTERS="$(clusters)" || unparseable "fly mpg list"
}

# Field N (1 id, 2 name, 3 status) of the clusters whose column COL equals VALUE, one a line.
cluster_field() { awk -F'\t' -v col="$1" -v value="$2" -v n="$3" '$col == value { print $n }' <<<"$CLUSTERS"; }
attached_to() { awk -F'\t' -v app="$1" '{ n = split($4, a, ","); for (i = 1; i <= n; i++) if (a[i] == app) print $1 "\t" $2 }' <<<"$CLUSTERS"; }
count() { [[ -z "$1" ]] && echo 0 || wc -l <<<"$1" | tr -d ' '; }

# Waits, bounded, until `fly mpg list` reports the cluster "ready" (the status flyctl's own create waits
# for; "error" is its failure: internal/command/mpg/v2/run_create.go). Attach and connect need it ready.
# The list, not `fly mpg status --json`: that one prints the cluster's credentials with its status.
wait_ready() {
  local id="$1" status deadline=$((SECONDS + MPG_WAIT))
  status="$(cluster_field 1 "$id" 3)"
  while [[ "$status" != "ready" ]]; do
    [[ -n "$status" ]] || { echo "deploy: Managed Postgres cluster $id is no longer listed by fly mpg list; stopped" >&2; exit 1; }
    [[ "$status" != "error" ]] \
      || { echo "deploy: Managed Postgres cluster $DB ($id) reports status 'error' (fly mpg status $id); nothing attached" >&2; exit 1; }
    if (( SECONDS >= deadline )); then
      echo "deploy: Managed Postgres cluster $DB ($id) is still '$status' after ${MPG_WAIT}s; nothing attached (run fly/deploy.sh again once fly mpg list shows it ready)" >&2
      exit 1
    fi
    say "cluster $id is '$status'; waiting until it is ready (up to ${MPG_WAIT}s)"
    sleep "$POLL"
    list_clusters
    status="$(cluster_field 1 "$id" 3)"
  done
}

# The schema, never the seed, in one transaction that stops at the first error.
schema_script() { printf '\\set ON_ERROR_STOP on\nBEGIN;\n'; cat "$SCHEMA"; printf '\nCOMMIT;\n'; }

# ---------------------------------------------------------------------------------------------- 1. the app
fly_call "fly apps list" apps list --org "$ORG" --json
APPS="$(json_names Name)" || unparseable "fly apps list"
if grep -qxF -- "$APP" <<<"$APPS"; then
  say "app $APP exists"
else
  say "creating app $APP in organization $ORG"
  fly_call "fly apps create $APP" apps create "$APP" --org "$ORG" </dev/null
fi

# The app's secrets, read once: every decision below comes from this one answer (a failed or garbled
# read stops the script above, so a missing name here really is missing).
fly_call "fly secrets list" secrets list --app "$APP" --json
SECRETS="$(json_names name)" || unparseable "fly secrets list"
has_secret() { grep -qxF -- "$1" <<<"$SECRETS"; }
HAS_DATABASE_URL=0; has_secret DATABASE_URL && HAS_DATABASE_URL=1

# The commands that move the app to another database on purpose (refusal messages below).
switch_hint() {  # switch_hint WHERE-THE-USERS-STAY [CLUSTER-ID]
  local unmanaged=""
  [[ $UNMANAGED -eq 0 ]] || unmanaged=" --unmanaged"
  echo "to switch on purpose (the users stay in $1): ${2:+fly mpg detach $2 --app $APP, then }fly secrets unset DATABASE_URL --app $APP --stage, then fly/deploy.sh $STACK$unmanaged --db $DB"
}

# ---------------------------------------------------------------------------------------------- 2. PostgreSQL
if [[ $UNMANAGED -eq 0 ]]; then
  list_clusters
  CLUSTER=""
  if [[ $HAS_DATABASE_URL -eq 1 ]]; then
    attached="$(attached_to "$APP")"
    case "$(count "$attached")" in
      1)
        CLUSTER="${attached%%$'\t'*}"; name="${attached#*$'\t'}"
        [[ $DB_GIVEN -eq 0 || "$DB" == "$name" ]] \
          || die "$APP already has DATABASE_URL from the Managed Postgres cluster $name ($CLUSTER); --db $DB would add a second database: refused; $(switch_hint "$name" "$CLUSTER")"
        DB="$name"
        say "$APP already has DATABASE_URL, from Managed Postgres cluster $DB ($CLUSTER): kept" ;;
      0)
        # No cluster lists the app. flyctl's attach sets the secret first and records the attachment after,
        # and only warns when the record fails: a cluster named --db (simple-auth-db by default) is then the
        # one, and the idempotent schema goes there. With none of that name, the URL is a database of the
        # user's own (and --db would create a second one).
        named="$(cluster_field 2 "$DB" 1)"
        if [[ "$(count "$named")" -eq 1 ]]; then
          CLUSTER="$named"
          say "$APP already has DATABASE_URL and no cluster lists it as attached; kept, and the schema goes to the cluster named $DB"
        else
          [[ $DB_GIVEN -eq 0 ]] \
            || die "$APP already has DATABASE_URL, from no Managed Postgres cluster named $DB; --db $DB would add a second database: refused; $(switch_hint "that database")"
          say "$APP already has DATABASE_URL, from no Managed Postgres cluster of $ORG (a database of your own): kept; load sql/schema.sql into it yourself (fly/README.md)"
        fi ;;
      *)
        die "$APP is attached to $(count "$attached") Managed Postgres clusters ($(cut -f2 <<<"$attached" | tr '\n' ' ')); detach all but the one DATABASE_URL names (fly mpg detach <id> --app $APP)" ;;
    esac
  else
    named="$(cluster_field 2 "$DB" 1)"
    [[ "$(count "$named")" -le 1 ]] || die "$(count "$named") Managed Postgres clusters are named $DB; pass another --db"
    if [[ -z "$named" ]]; then
      say "creating Managed Postgres cluster $DB ($PLAN, $REGION); this takes a few minutes"
      fly_call "fly mpg create" mpg create --name "$DB" --org "$ORG" --region "$REGION" --plan "$PLAN" </dev/null
      OUT=""   # it printed the cluster's password and connection string
      list_clusters
      named="$(cluster_field 2 "$DB" 1)"
      [[ "$(count "$named")" -eq 1 ]] || { echo "deploy: fly mpg create finished but fly mpg list shows no cluster named $DB; stopped" >&2; exit 1; }
    fi
    CLUSTER="$named"
  fi
  if [[ -n "$CLUSTER" ]]; then
    say "Managed Postgres cluster $DB is $CLUSTER"
    wait_ready "$CLUSTER"
    if [[ $HAS_DATABASE_URL -eq 0 ]]; then
      # stdin from /dev/null and stdout captured: non-interactive, so flyctl takes the cluster's default user
      # and database instead of prompting (the ones fly mpg connect uses below). It prints the URL: not shown.
      fly_call "fly mpg attach" mpg attach "$CLUSTER" --app "$APP" </dev/null
      OUT=""
      HAS_DATABASE_URL=1
      say "DATABASE_URL set on $APP (fly mpg attach; the URL is not shown)"
    fi
    say "loading sql/schema.sql (idempotent; never the seed)"
    fly_call "fly mpg connect (sql/schema.sql)" mpg connect "$CLUSTER" < <(schema_script)
  fi
else
  if [[ $HAS_DATABASE_URL -eq 1 ]]; then
    grep -qxF -- "$DB" <<<"$APPS" || [[ $DB_GIVEN -eq 0 ]] \
      || die "$APP already has DATABASE_URL and there is no Postgres app $DB; --db $DB would create a second database: refused; $(switch_hint "the current one")"
    # The app's URL cannot be read back (fly secrets are write-only): the schema is loaded only by the run
    # that attaches. A run that stopped between the two said so; fly/README.md has the way by hand.
    say "$APP already has DATABASE_URL: kept (the schema is loaded by the run that attaches it; if that run"
    say "  stopped before loading it: fly postgres connect --app $DB --database simple_auth, then sql/schema.sql)"
  else
    if grep -qxF -- "$DB" <<<"$APPS"; then
      say "Postgres app $DB exists"
    else
      say "creating Postgres app $DB ($REGION, one shared-cpu-1x machine, 1 GB volume; its password is not shown)"
      fly_call "fly postgres create" postgres create --name "$DB" --org "$ORG" --region "$REGION" \
        --initial-cluster-size 1 --vm-size shared-cpu-1x --volume-size 1 </dev/null
    fi
    # One database for all the stacks (simple_auth); attach creates this app's own user in it and prints
    # the URL with its password: kept in memory, never shown.
    AFTER_FAILURE="if fly secrets list --app $APP now shows DATABASE_URL, the attach was done: $UNLOADED"
    fly_call "fly postgres attach" postgres attach "$DB" --app "$APP" --database-name simple_auth --yes </dev/null
    AFTER_FAILURE=""
    HAS_DATABASE_URL=1
    # libpq's variables from the URL, to reach it on localhost through fly proxy: no URL or password in any
    # argv, file or output.
    pg_fields="$(python3 -S -c 'import re, sys, urllib.parse as u
m = re.search(r"postgres(?:ql)?://[^\s\"'"'"']+", sys.stdin.read())
if not m: sys.exit(3)
p = u.urlsplit(m.group(0))
print(u.unquote(p.username or "")); print(u.unquote(p.password or "")); print(p.path.lstrip("/"))' < <(printf '%s' "$OUT") 2>/dev/null)" \
      || { echo "deploy: fly postgres attach printed no connection string; $UNLOADED" >&2; exit 1; }
    OUT=""
    { IFS= read -r PG_USER; IFS= read -r PG_PASSWORD; IFS= read -r PG_DATABASE; } < <(printf '%s\n' "$pg_fields")
    unset pg_fields
    port="$(python3 -S -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    "$FLY" proxy "$port:5432" --app "$DB" --quiet >/dev/null 2>"$WORK/proxy.err" </dev/null &
    PROXY_PID=$!
    for _ in $(seq 1 60); do
      (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
      kill -0 "$PROXY_PID" 2>/dev/null \
        || { ERR="$WORK/proxy.err"; fail "fly proxy to $DB exited" "$UNLOADED"; }
      sleep 0.5
    done
    say "loading sql/schema.sql through fly proxy (one transaction; never the seed)"
    ( export PGHOST=127.0.0.1 PGPORT="$port" PGUSER="$PG_USER" PGPASSWORD="$PG_PASSWORD" PGDATABASE="$PG_DATABASE"
      psql -X -q -v ON_ERROR_STOP=1 -1 -f "$SCHEMA" >/dev/null 2>"$ERR" ) \
      || fail "psql -f sql/schema.sql through fly proxy failed" "$UNLOADED"
    kill "$PROXY_PID" 2>/dev/null || true
    wait "$PROXY_PID" 2>/dev/null || true
    PROXY_PID=""
  fi
fi

# ---------------------------------------------------------------------------------------------- 3. the keys
# Both from the one reading above: an existing key or bundle is never replaced (a re-run must not undo a
# rotation, and a key staged by a run that stopped later is the one the first deploy will use).
if has_secret JWT_PRIVATE_KEY; then
  say "$APP already has JWT_PRIVATE_KEY: kept${KEY_FILE:+ (--key ignored; rotate it with docs/key-rotation.md)}"
else
  if [[ -n "$KEY_FILE" ]]; then
    say "setting JWT_PRIVATE_KEY from $KEY_FILE ($KEY_TYPE: $(alg_of "$KEY_TYPE"))"
    key="$(cat "$KEY_FILE")"
  else
    say "setting JWT_PRIVATE_KEY: a fresh $KEY_TYPE PKCS#8 key, $(alg_of "$KEY_TYPE") (piped, never written to disk)"
    case "$KEY_TYPE" in
      rsa-*) genpkey=(-algorithm RSA -pkeyopt "rsa_keygen_bits:${KEY_TYPE#rsa-}") ;;
      p-256) genpkey=(-algorithm EC -pkeyopt ec_paramgen_curve:P-256 -pkeyopt ec_param_enc:named_curve) ;;
      ed25519) genpkey=(-algorithm ED25519) ;;
    esac
    key="$(openssl genpkey "${genpkey[@]}" 2>/dev/null)" || die "openssl genpkey failed; nothing was set"
  fi
  [[ "$key" == "-----BEGIN PRIVATE KEY-----"*"-----END PRIVATE KEY-----" ]] || die "no PKCS#8 key to set; nothing was set"
  # printf is a builtin: the key goes through a pipe, never an argv or a file.
  fly_call "fly secrets set JWT_PRIVATE_KEY" secrets set JWT_PRIVATE_KEY=- --app "$APP" --stage < <(printf '%s\n' "$key")
  unset key
fi

# The bundle's secret must exist before the first deploy: the config's [[files]] names it, and a machine
# whose file secret is missing does not start. Never replaced here: it may hold a rotation's keys.
if has_secret "$BUNDLE_SECRET"; then
  say "$APP already has $BUNDLE_SECRET (the published keys' bundle): kept"
else
  say "setting $BUNDLE_SECRET: an empty bundle, one comment line (JWT_PUBLIC_KEYS_FILE publishes no further key)"
  bundle="$(printf '%s\n' "$EMPTY_BUNDLE" | openssl base64 -A)" || die "openssl base64 failed; the bundle was not set"
  fly_call "fly secrets set $BUNDLE_SECRET" secrets set "$BUNDLE_SECRET=-" --app "$APP" --stage < <(printf '%s' "$bundle")
fi

# ---------------------------------------------------------------------------------------------- 4. the proxy's hops
# TRUSTED_PROXIES (spec/README.md §8): fly's proxy connects to the machine from the private IPv4 range the
# config names, and appends to X-Forwarded-For the address the client connected to, which is one of the app's
# own public addresses (fly/README.md, "Client addresses"). Both must be trusted, or every client would be that
# address and share one failure count. So the app gets its public addresses before its first deploy (a
# dedicated IPv6 and a shared IPv4, what flyctl's first deploy would allocate), and every deploy passes the
# config's range plus every address `fly ips list` shows.
BASE_PROXIES="$(sed -n 's/^ *TRUSTED_PROXIES *= *"\([^"]*\)".*/\1/p' "$CONFIG" | head -1)"
[[ -n "$BASE_PROXIES" ]] || die "no TRUSTED_PROXIES = \"...\" in fly/$STACK.toml's [env] (fly's proxy range)"
fly_call "fly ips list" ips list --app "$APP" --json
IPS="$(app_ips)" || unparseable "fly ips list"
if ! awk -F'\t' '$1 == "v6" { found = 1 } END { exit !found }' <<<"$IPS"; then
  say "allocating $APP's public IPv6 address (fly ips allocate-v6)"
  fly_call "fly ips allocate-v6" ips allocate-v6 --app "$APP"
  ALLOCATED=1
fi
if ! awk -F'\t' '$1 == "v4" || $1 == "shared_v4" { found = 1 } END { exit !found }' <<<"$IPS"; then
  say "allocating $APP a shared public IPv4 address (fly ips allocate-v4 --shared)"
  fly_call "fly ips allocate-v4 --shared" ips allocate-v4 --shared --app "$APP"
  ALLOCATED=1
fi
if [[ -n "${ALLOCATED:-}" ]]; then
  fly_call "fly ips list" ips list --app "$APP" --json
  IPS="$(app_ips)" || unparseable "fly ips list"
fi
ADDRESSES="$(cut -f2 <<<"$IPS" | paste -sd, -)"
TRUSTED="$BASE_PROXIES${ADDRESSES:+,$ADDRESSES}"
say "TRUSTED_PROXIES=$TRUSTED (the config's range and $APP's own addresses)"

# ---------------------------------------------------------------------------------------------- 5. deploy
# The repository root is the build context; fly/STACK.toml's [build] names STACK/Dockerfile and its ignore
# file (relative to the config). Absolute paths: flyctl changes into the context before it reads --config.
say "fly deploy $ROOT --config fly/$STACK.toml (build context: the repository, filtered by $STACK/Dockerfile.dockerignore)"
rc=0
"$FLY" deploy "$ROOT" --config "$CONFIG" --env "TRUSTED_PROXIES=$TRUSTED" </dev/null 2>&1 | redact >&2 || rc=$?
[[ $rc -eq 0 ]] || { echo "deploy: fly deploy failed (exit $rc; its output is above); the secrets are staged: run fly/deploy.sh again" >&2; exit 1; }

# ---------------------------------------------------------------------------------------------- 6. where
URL="https://$APP.fly.dev"
cat <<EOF2

$STACK is at $URL
  curl $URL/health
  make user ARGS="add you@example.org 'Your Name'"      # with DATABASE_URL reaching the database (fly/README.md)
  read -rs PW; curl -s $URL/token -d grant_type=password -d username=you@example.org --data-urlencode "password=\$PW"
  make bench BENCH_ARGS="--url $STACK=$URL"             # benchmark it (fly/README.md, "Benchmark")
EOF2
