#!/usr/bin/env bash
# Docker end to end, on a Debian machine without a container registry (CI):
#   bash wrk/docker-ci.sh
# 1. installs docker.io, docker-compose, debootstrap, wrk if missing; starts dockerd if not running;
# 2. stands in the public base images if absent (docker/standins/: debian:bookworm-slim from debootstrap,
#    eclipse-temurin:25-jre from this machine's Temurin 25, postgres:15-bookworm with Debian's PostgreSQL);
# 3. builds each stack on the host (wrk/stackctl.py build) and its image with `--target runtime-prebuilt`
#    (the same runtime stage as the full in-Docker build; BuildKit; the JVM images train their AOT cache in the
#    build), the repository root as the context (`-f <stack>/Dockerfile .`, each stack's Dockerfile.dockerignore
#    keeping it small), the pinned base images replaced by the stand-ins through --build-arg (wrk/containers.py build);
# 4. docker-compose up (PostgreSQL seeded from sql/, the stacks logging in as sql/grants.sql's role, on 8081-8085;
#    docker-compose.test.yml on top publishes each METRICS_PORT on 127.0.0.1:9181-9185), the conformance suite
#    against every container, its metrics port given (--metrics-url: no test skips for want of it, checked); the JVM containers sign with ACCP (no fallback warning in their logs); start-up of
#    each image with an AOT cache (host network, same database) within 50 % of the local jar, +20 % the target,
#    compose beside it (one start each, interleaved; medians of 3 for one over); a stack process SIGKILLed from the host
#    is restarted by the engine; then a fly-sized (1 CPU, fly/STACK.toml's memory) check, tear down;
# 5. a quick docker benchmark (wrk/bench.py --target docker --smoke), which tears down after itself.
# Exits non-zero if anything failed. Idempotent: stand-in images stay cached; containers, networks and
# volumes are removed; a dockerd this script started is stopped again (KEEP_DOCKERD=1 keeps it).
# `bash wrk/docker-ci.sh --prepare` does steps 1 and 2 only (tools, stand-in images) and stops the dockerd it started;
# CI runs it beside the tests, so that the downloads are done when the Docker run starts. The run itself splits in
# two: `--checks` is steps 1 to 4 without the start-up timing (nothing in it is timed, so CI runs it beside the
# benchmark's smoke run), and `--timed` steps 1 to 3, the start-up check (with compose up) and step 5, which want the
# machine to themselves.
# Knobs: STACKS="actix spring" (default: every folder with stack.json and Dockerfile),
#        SKIP_BUILD=1 (use existing host artifacts), SKIP_BENCH=1, SKIP_STARTUP=1,
#        SIMPLE_AUTH_STANDINS=0 (pull the pinned base images instead of standing them in).
set -uo pipefail
only=""   # prepare: steps 1-2; checks: 1-4 but the start-up check; timed: 1-3, start-up, 5
case "${1:-}" in
  --prepare) only=prepare ;;
  --checks) only=checks ;;
  --timed) only=timed ;;
  "") ;;
  *) echo "docker-ci: unknown option '$1' (--prepare, --checks, --timed)" >&2; exit 2 ;;
esac
checks=yes timed=yes
[ "$only" = checks ] && timed=""
[ "$only" = timed ] && checks=""
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
STATE=${SIMPLE_AUTH_DOCKER_STATE:-/var/tmp/simple-auth-docker}
export SIMPLE_AUTH_DOCKER_STATE=$STATE COMPOSE_PROJECT_NAME=simple-auth-ci SIMPLE_AUTH_STANDINS=${SIMPLE_AUTH_STANDINS:-1}
mkdir -p "$STATE"
PY=$ROOT/.venv/bin/python
failed=()
started_dockerd=""
t_start=$(date +%s)

say() { printf '\n=== [docker-ci %ss] %s\n' "$(( $(date +%s) - t_start ))" "$*"; }
die() { echo "docker-ci: $*" >&2; cleanup; exit 1; }

compose_env() {
  export DOCKER_TARGET=runtime-prebuilt JWT_KEY_PATH="$STATE/jwt-dev-rsa-2048.pem" BIND_ADDR=127.0.0.1
  [ -x "$PY" ] && eval "$("$PY" "$ROOT/wrk/containers.py" conformance-env)"   # JWT_ISSUER, JWT_AUDIENCE, TOKEN_TTL_SECONDS
  [ "$SIMPLE_AUTH_STANDINS" = 0 ] || export POSTGRES_IMAGE=postgres:15-bookworm   # the stand-in's tag, not the pin
}
# docker-compose.test.yml: each stack's METRICS_PORT published on loopback for the suite's metrics-port tests.
compose() { docker-compose -f "$ROOT/docker-compose.yml" -f "$ROOT/docker-compose.test.yml" "$@"; }

cleanup() {
  if command -v docker-compose >/dev/null && docker info >/dev/null 2>&1; then
    compose_env
    compose down -v --remove-orphans -t 15 >/dev/null 2>&1
    COMPOSE_PROJECT_NAME=simple-auth compose down -v --remove-orphans -t 15 >/dev/null 2>&1
  fi
  if [ -n "$started_dockerd" ] && [ -z "${KEEP_DOCKERD:-}" ]; then
    kill "$started_dockerd" 2>/dev/null
    for _ in $(seq 30); do kill -0 "$started_dockerd" 2>/dev/null || break; sleep 1; done
  fi
}
trap 'cleanup' EXIT
trap 'echo "docker-ci: interrupted" >&2; exit 130' INT TERM

# --------------------------------------------------------------------------- 1. tools, engine
say "tools"
need=()
command -v dockerd >/dev/null || need+=(docker.io)
command -v docker-compose >/dev/null || need+=(docker-compose)
command -v debootstrap >/dev/null || need+=(debootstrap)
command -v wrk >/dev/null || need+=(wrk)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" || die "apt-get install ${need[*]} failed"
fi
if [ ! -x "$PY" ]; then
  python3 -m venv .venv && .venv/bin/pip install -q --disable-pip-version-check -r spec/requirements.txt \
    && touch .venv/.installed || die "could not create .venv"
fi
if ! docker info >/dev/null 2>&1; then
  say "starting dockerd (log: $STATE/dockerd.log)"
  dockerd --storage-driver overlay2 >"$STATE/dockerd.log" 2>&1 &
  started_dockerd=$!
  for _ in $(seq 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
  docker info >/dev/null 2>&1 || die "dockerd did not start (see $STATE/dockerd.log)"
fi

# --------------------------------------------------------------------------- 2. base images
say "stand-in base images (cached after the first run)"
"$PY" wrk/containers.py standins || die "stand-in images failed"
if [ "$only" = prepare ]; then
  say "prepared: tools and stand-in images"
  exit 0
fi

# --------------------------------------------------------------------------- 3. artifacts and images
if [ -z "${STACKS:-}" ]; then
  STACKS=$(for f in */stack.json; do s=${f%/stack.json}; [ -f "$s/Dockerfile" ] && grep -q "^  $s:" docker-compose.yml && echo "$s"; done | xargs)
fi
[ -n "$STACKS" ] || die "no stacks with a Dockerfile"
install -m 0644 spec/keys/dev-rsa-2048.pem "$STATE/jwt-dev-rsa-2048.pem"   # containers run as uid 10001
compose_env
built=()
for s in $STACKS; do
  if [ -z "${SKIP_BUILD:-}" ]; then
    say "$s: host build (python3 wrk/stackctl.py build $s)"
    if ! python3 wrk/stackctl.py build "$s"; then failed+=("$s(build)"); continue; fi
  fi
  say "$s: image (--target runtime-prebuilt)"
  if "$PY" wrk/containers.py build "$s"; then built+=("$s"); else failed+=("$s(image)"); fi
done
[ ${#built[@]} -gt 0 ] || die "no image was built: ${failed[*]}"
docker images --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep -E '^simple-auth-' || true

# --------------------------------------------------------------------------- 4. compose up, conformance
url_of() { "$PY" wrk/containers.py ports | sed -n "s/^$1=//p"; }
metrics_url_of() { "$PY" wrk/containers.py metrics-ports | sed -n "s/^$1=//p"; }
# The suite's skip reason when it does not know a service's metrics port (spec/conformance/service.py).
NO_METRICS_SKIP="the metrics port of this service is not known"
say "compose up: postgres + ${built[*]}"
compose up -d --no-build postgres "${built[@]}" || die "compose up failed"
for s in "${built[@]}"; do
  url=$(url_of "$s")
  if ! "$PY" wrk/containers.py wait-up "$s"; then
    failed+=("$s(start)"); compose logs --no-color --tail 40 "$s"; continue
  fi
  [ -n "$checks" ] || continue
  murl=$(metrics_url_of "$s")
  [ -n "$murl" ] || { failed+=("$s(no metrics port in docker-compose.test.yml)"); continue; }
  say "$s: conformance suite against the container ($url, metrics $murl)"
  # -rs lists every skip with its reason: none may be the unknown metrics port.
  "$PY" -m pytest spec/conformance -q -rs -p no:cacheprovider --base-url "$url" --metrics-url "$murl" \
    2>&1 | tee "$STATE/conformance-$s.log"
  [ "${PIPESTATUS[0]}" = 0 ] || failed+=("$s(conformance)")
  if grep -q "$NO_METRICS_SKIP" "$STATE/conformance-$s.log"; then
    echo "docker-ci: $s: metrics-port tests skipped although --metrics-url was given"; failed+=("$s(metrics skipped)")
  fi
done
if [ -n "$checks" ]; then
  # Logs of the containers (start-up line, no errors) for the record.
  compose logs --no-color --tail 5 "${built[@]}" 2>/dev/null | grep -v '^Attaching' | head -40
  say "ACCP: the JVM containers sign with the native provider (no fallback warning in their logs)"
  "$PY" wrk/containers.py crypto "${built[@]}" || failed+=("crypto-fallback")
fi

if [ -n "$timed" ] && [ -z "${SKIP_STARTUP:-}" ]; then
  say "start-up of the images with an AOT cache: local, the image on the host network, compose (exec -> /health/live 200, -> first token), one start each, interleaved"
  # A failure: the image must start within 50 % of the local jar, which a lost AOT cache (about 2x) exceeds; the
  # +20 % target is printed, not failed (timings spread here). A stack over once is measured again (medians of 3)
  # and fails only when over both times (wrk/containers.py startup, startup_checked).
  "$PY" wrk/containers.py startup "${built[@]}" || failed+=("startup")
fi

if [ -n "$checks" ]; then
  say "restart: a stack process SIGKILLed from the host comes back (restart: unless-stopped)"
  "$PY" wrk/containers.py restart "${built[@]}" || failed+=("restart")
  for s in "${built[@]}"; do
    cid=$(compose ps -q "$s")
    health=$(docker inspect -f '{{.State.Health.Status}}' "$cid")
    for _ in $(seq 30); do [ "$health" = healthy ] && break; sleep 2; health=$(docker inspect -f '{{.State.Health.Status}}' "$cid"); done
    echo "$s: healthcheck (GET /health/live) $health"
    [ "$health" = healthy ] || failed+=("$s(healthcheck)")
  done

  say "fly-sized containers (1 CPU, each stack's fly memory: 256 or 512 MB): start, log in, not OOM-killed"
  compose -f "$ROOT/docker-compose.fly.yml" up -d --no-build "${built[@]}" || failed+=("fly-sized(up)")
  for s in "${built[@]}"; do
    url=$(url_of "$s")
    if "$PY" wrk/containers.py wait-up "$s" && curl -fsS -m 10 -o /dev/null -H 'Content-Type: application/json' \
         -d '{"username":"john@example.com","password":"TopSecret0!"}' "$url/token"; then
      cid=$(compose ps -q "$s")
      echo "$s: $(docker inspect -f 'mem limit {{.HostConfig.Memory}} B, cpus {{.HostConfig.NanoCpus}}e-9, OOMKilled={{.State.OOMKilled}}' "$cid")"
      [ "$(docker inspect -f '{{.State.OOMKilled}}' "$cid")" = false ] || failed+=("$s(fly-sized OOM)")
    else
      failed+=("$s(fly-sized)"); compose logs --no-color --tail 40 "$s"
    fi
  done
fi
compose down -v --remove-orphans -t 15

# --------------------------------------------------------------------------- 5. quick docker benchmark
if [ -n "$timed" ] && [ -z "${SKIP_BENCH:-}" ]; then
  say "quick docker benchmark: ${built[*]}"
  unset JWT_ISSUER JWT_AUDIENCE TOKEN_TTL_SECONDS
  COMPOSE_PROJECT_NAME=simple-auth "$PY" wrk/bench.py --target docker --smoke --no-build \
    --stacks "$(IFS=,; echo "${built[*]}")" || failed+=("bench")
fi

say "done in $(( $(date +%s) - t_start )) s"
if [ ${#failed[@]} -gt 0 ]; then
  echo "docker-ci: FAILED: ${failed[*]}"
  exit 1
fi
echo "docker-ci: all passed: ${built[*]}"
