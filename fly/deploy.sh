#!/usr/bin/env bash
# Deploys one stack to fly.io, end to end (fly/README.md):
#
#   fly/deploy.sh STACK [options]          STACK: actix | akka | axum | spring | zio (any folder with fly/STACK.toml)
#
#   --org ORG          fly.io organization (default: $FLY_ORG, else "personal")
#   --region REGION    region of a new database (default: the config's primary_region)
#   --db NAME          database: Managed Postgres cluster name, or Postgres app name with --unmanaged
#                      (default: simple-auth-db; all the stacks share it, so users exist once)
#   --plan PLAN        Managed Postgres plan of a new cluster (default: basic)
#   --unmanaged        use an unmanaged fly Postgres app (fly postgres create/attach) instead of Managed Postgres
#   --key FILE         sign with this PKCS#8 key instead of a fresh one: RSA >= 2048 bits (RS256), EC P-256 (ES256)
#                      or Ed25519 (EdDSA); never a key of spec/keys/ (refused by its public key)
#   --key-type TYPE    the fresh key's type: rsa-2048 (default, the benchmark's), rsa-4096, p-256, ed25519
#
# Steps, each skipped when already done (so a re-run only deploys again):
#   1. the app (fly apps create);
#   2. PostgreSQL: the cluster (fly mpg create), DATABASE_URL (fly mpg attach), then sql/schema.sql
#      (fly mpg connect, one transaction; idempotent). Never sql/seed.sql: its users have public
#      passwords. Add real users with `make user` (sql/users.py);
#   3. JWT_PRIVATE_KEY: a fresh PKCS#8 key from openssl (--key-type, RSA-2048 by default), piped into
#      `fly secrets set` (never on disk, never in argv), unless the app has one; and JWT_PUBLIC_KEYS_BASE64,
#      unless the app has one: the published-keys bundle the config mounts as JWT_PUBLIC_KEYS_FILE
#      ([[files]], base64 as fly's secret files want it), first a one-line comment, i.e. no key
#      (docs/key-rotation.md puts the next and the previous keys in it);
#   4. fly deploy STACK_DIR --config fly/STACK.toml (absolute paths: deploy changes into STACK_DIR,
#      the build context, before it reads --config);
#   5. prints the URL and the benchmark command.
# Needs flyctl (fly), openssl and psql (fly mpg connect runs the local psql).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SCHEMA="$ROOT/sql/schema.sql"

die() { echo "deploy: $*" >&2; exit 2; }
say() { echo "deploy: $*" >&2; }

usage() { sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }

stacks() { (cd "$ROOT/fly" && ls -1 ./*.toml 2>/dev/null | sed 's|^\./||; s|\.toml$||' | tr '\n' ' '); }

[[ $# -ge 1 ]] || usage
case "$1" in -h|--help) usage ;; esac
STACK="$1"; shift
ORG="${FLY_ORG:-personal}"; REGION=""; DB="simple-auth-db"; PLAN="basic"; UNMANAGED=0; KEY_FILE=""; KEY_TYPE=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --org) ORG="${2:?--org needs a value}"; shift 2 ;;
    --region) REGION="${2:?--region needs a value}"; shift 2 ;;
    --db) DB="${2:?--db needs a value}"; shift 2 ;;
    --plan) PLAN="${2:?--plan needs a value}"; shift 2 ;;
    --unmanaged) UNMANAGED=1; shift ;;
    --key) KEY_FILE="${2:?--key needs a file}"; shift 2 ;;
    --key-type) KEY_TYPE="${2:?--key-type needs a value}"; shift 2 ;;
    -h|--help) usage ;;
    *) die "unknown option '$1' (see fly/deploy.sh --help)" ;;
  esac
done

CONFIG="$ROOT/fly/$STACK.toml"
STACK_DIR="$ROOT/$STACK"
[[ "$STACK" =~ ^[a-z0-9_-]+$ && -f "$CONFIG" ]] || die "unknown stack '$STACK' (stacks with a fly config: $(stacks))"
[[ -f "$STACK_DIR/Dockerfile" ]] || die "$STACK/Dockerfile not found: the config builds it with $STACK/ as the context"

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
EMPTY_DIGEST="$(printf '' | openssl dgst -sha256 -r | cut -d' ' -f1)"   # what a block openssl cannot read yields

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
  [[ -n "$given" && "$given" != "$EMPTY_DIGEST" ]] || die "--key $KEY_FILE: no private key openssl can read"
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

# ---------------------------------------------------------------------------------------------- helpers
# JSON from flyctl -> one value per line (python3: no jq needed).
json_names() { python3 -c 'import json,sys
try: data = json.load(sys.stdin)
except ValueError: data = []   # flyctl prints a sentence instead of [] when there is nothing
for row in data or []: print(row.get(sys.argv[1], ""))' "$1"; }

# Whole outputs are read before matching: `grep -q` closing a pipe early would fail it under pipefail.
app_exists() {
  local names
  names="$("$FLY" apps list --quiet --org "$ORG")"
  awk '{print $1}' <<<"$names" | grep -qx -- "$1"
}

has_secret() {
  local names
  names="$("$FLY" secrets list --app "$APP" --json | json_names name)"
  grep -qx -- "$1" <<<"$names"
}

mpg_cluster_id() {
  "$FLY" mpg list --org "$ORG" --json | python3 -c 'import json,sys
try: data = json.load(sys.stdin)
except ValueError: data = []
ids = [c["id"] for c in data or [] if c.get("name") == sys.argv[1]]
if len(ids) > 1: sys.exit(f"deploy: {len(ids)} Managed Postgres clusters are named {sys.argv[1]}; pass another --db")
print(ids[0] if ids else "")' "$1"
}

# The schema, never the seed, in one transaction that stops at the first error.
schema_script() { printf '\\set ON_ERROR_STOP on\nBEGIN;\n'; cat "$SCHEMA"; printf '\nCOMMIT;\n'; }

# ---------------------------------------------------------------------------------------------- 1. the app
if app_exists "$APP"; then
  say "app $APP exists"
else
  say "creating app $APP in organization $ORG"
  "$FLY" apps create "$APP" --org "$ORG"
fi

# ---------------------------------------------------------------------------------------------- 2. PostgreSQL
if [[ $UNMANAGED -eq 0 ]]; then
  CLUSTER="$(mpg_cluster_id "$DB")"
  if [[ -z "$CLUSTER" ]]; then
    say "creating Managed Postgres cluster $DB ($PLAN, $REGION); this takes a few minutes"
    "$FLY" mpg create --name "$DB" --org "$ORG" --region "$REGION" --plan "$PLAN"
    CLUSTER="$(mpg_cluster_id "$DB")"
    [[ -n "$CLUSTER" ]] || die "fly mpg create finished but no cluster named $DB is listed"
  fi
  say "Managed Postgres cluster $DB is $CLUSTER"
  if has_secret DATABASE_URL; then
    say "$APP already has DATABASE_URL: kept"
  else
    # stdin from /dev/null: non-interactive, so flyctl takes the cluster's default user and database
    # instead of prompting (the same ones fly mpg connect uses below).
    "$FLY" mpg attach "$CLUSTER" --app "$APP" </dev/null | sed -E 's#(://[^:/@]+:)[^@]+@#\1****@#'
  fi
  say "loading sql/schema.sql (idempotent; never the seed)"
  schema_script | "$FLY" mpg connect "$CLUSTER"
else
  if app_exists "$DB"; then
    say "Postgres app $DB exists"
  else
    say "creating Postgres app $DB ($REGION, one shared-cpu-1x machine, 1 GB volume)"
    "$FLY" postgres create --name "$DB" --org "$ORG" --region "$REGION" \
      --initial-cluster-size 1 --vm-size shared-cpu-1x --volume-size 1
  fi
  if has_secret DATABASE_URL; then
    say "$APP already has DATABASE_URL: kept (the schema was loaded when it was attached;"
    say "  to load it again: fly proxy 15432:5432 --app $DB, then psql <the URL on localhost:15432> -1 -f sql/schema.sql)"
  else
    # One database for all the stacks (simple_auth); attach creates this app's own user in it.
    attached="$("$FLY" postgres attach "$DB" --app "$APP" --database-name simple_auth --yes </dev/null)"
    sed -E 's#(://[^:/@]+:)[^@]+@#\1****@#' <<<"$attached"
    url="$(grep -Eo 'postgres(ql)?://[^[:space:]]+' <<<"$attached" | head -1 || true)"
    [[ -n "$url" ]] || die "fly postgres attach printed no connection string; load sql/schema.sql by hand (fly/README.md)"
    port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    local_url="$(python3 - "$url" "$port" <<'EOF'
import sys, urllib.parse as u
p = u.urlsplit(sys.argv[1])
auth = p.netloc.rsplit("@", 1)[0]
print(u.urlunsplit((p.scheme, f"{auth}@127.0.0.1:{sys.argv[2]}", p.path, p.query, "")))
EOF
)"
    "$FLY" proxy "$port:5432" --app "$DB" --quiet >/dev/null &
    proxy_pid=$!
    trap 'kill "$proxy_pid" 2>/dev/null || true' EXIT
    for _ in $(seq 1 60); do
      (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
      kill -0 "$proxy_pid" 2>/dev/null || die "fly proxy to $DB exited"
      sleep 0.5
    done
    say "loading sql/schema.sql through fly proxy (one transaction; never the seed)"
    psql "$local_url" -X -q -v ON_ERROR_STOP=1 -1 -f "$SCHEMA"
    kill "$proxy_pid" 2>/dev/null || true
    wait "$proxy_pid" 2>/dev/null || true
    trap - EXIT
  fi
fi

# ---------------------------------------------------------------------------------------------- 3. the keys
if has_secret JWT_PRIVATE_KEY; then
  say "$APP already has JWT_PRIVATE_KEY: kept${KEY_FILE:+ (--key ignored; rotate it with docs/key-rotation.md)}"
elif [[ -n "$KEY_FILE" ]]; then
  say "setting JWT_PRIVATE_KEY from $KEY_FILE ($KEY_TYPE: $(alg_of "$KEY_TYPE"))"
  "$FLY" secrets set JWT_PRIVATE_KEY=- --app "$APP" --stage <"$KEY_FILE"
else
  say "setting JWT_PRIVATE_KEY: a fresh $KEY_TYPE PKCS#8 key, $(alg_of "$KEY_TYPE") (piped, never written to disk)"
  case "$KEY_TYPE" in
    rsa-*) genpkey=(-algorithm RSA -pkeyopt "rsa_keygen_bits:${KEY_TYPE#rsa-}") ;;
    p-256) genpkey=(-algorithm EC -pkeyopt ec_paramgen_curve:P-256 -pkeyopt ec_param_enc:named_curve) ;;
    ed25519) genpkey=(-algorithm ED25519) ;;
  esac
  openssl genpkey "${genpkey[@]}" 2>/dev/null | "$FLY" secrets set JWT_PRIVATE_KEY=- --app "$APP" --stage
fi

# The bundle's secret must exist before the first deploy: the config's [[files]] names it, and a machine
# whose file secret is missing does not start. Never replaced here: it may hold a rotation's keys.
if has_secret "$BUNDLE_SECRET"; then
  say "$APP already has $BUNDLE_SECRET (the published keys' bundle): kept"
else
  say "setting $BUNDLE_SECRET: an empty bundle, one comment line (JWT_PUBLIC_KEYS_FILE publishes no further key)"
  printf '%s\n' "$EMPTY_BUNDLE" | openssl base64 -A | "$FLY" secrets set "$BUNDLE_SECRET=-" --app "$APP" --stage
fi

# ---------------------------------------------------------------------------------------------- 4. deploy
say "fly deploy $STACK --config fly/$STACK.toml (build context: $STACK/)"
"$FLY" deploy "$STACK_DIR" --config "$CONFIG"

# ---------------------------------------------------------------------------------------------- 5. where
URL="https://$APP.fly.dev"
cat <<EOF

$STACK is at $URL
  curl $URL/health
  make user ARGS="add you@example.org 'Your Name'"      # with DATABASE_URL reaching the database (fly/README.md)
  make bench BENCH_ARGS="--url $STACK=$URL"             # benchmark it (fly/README.md, "Benchmark")
EOF
