#!/usr/bin/env bash
# make test: every given stack's build, unit tests, conformance suite (plain, TLS-only database, the other key types'
# signing subset) and fault suite, and the tooling tests. Every stack is tested even if an earlier one fails; the
# run fails at the end, naming each stack and suite that failed.
#
# Usage: PY=.venv/bin/python MAKE=make bash wrk/test-all.sh STACK...
#
# The stacks built with cargo (the Rust stacks) compile for minutes with no clock to meet, while the other stacks'
# suites leave a core idle much of the time (waits on starting processes, sleeps, the database). So when both kinds
# are given, the others are built and tested first, and the cargo builds (the benchmark's floor too) and the
# compilation of their unit tests run beside them in the idle CPU and I/O classes: they get a core only when nothing
# else wants it, and the suites run a little slower than alone (shared caches), not stalled. Their unit tests, the
# tooling tests (which use the built floor) and their suites follow.
# The builds of the others, all in one stackctl call, share one sbt start for the Scala stacks; a failed build is
# reported by the suites, which build what is still missing.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
MAKE=${MAKE:-make}

failed=""
section() { echo "=== $(date +%T) $*"; }

cargo_stacks=() other_stacks=()
for s in "$@"; do
  if "$PY" -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["build"][0] != "cargo")' "$s/stack.json"; then
    cargo_stacks+=("$s")
  else
    other_stacks+=("$s")
  fi
done

unit_tests() {
  local out
  out=$(mktemp)
  section "unit tests: $*"
  "$PY" wrk/stackctl.py test --failed-to "$out" "$@" || true
  for s in $(cat "$out"); do failed="$failed $s(unit)"; done
  rm -f "$out"
}

# The TLS run uses verify-full, the strictest mode; the plain run already logs in through require, prefer and
# verify-full against a TLS-only cluster of its own (test_against_a_tls_only_database), and make conformance-tls runs
# the whole suite with both modes.
suites() {
  local s k
  for s in "$@"; do
    section "$s: conformance"
    "$PY" -m pytest spec/conformance --stack "$s" || failed="$failed $s(conformance)"
    section "$s: conformance against a TLS-only PostgreSQL, sslmode=verify-full (the tls_core subset)"
    "$PY" -m pytest spec/conformance --stack "$s" --db-tls verify-full -m tls_core || failed="$failed $s(conformance-tls)"
    for k in p-256 ed25519; do
      section "$s: conformance signing with the $k dev key (the signing subset)"
      "$PY" -m pytest spec/conformance --stack "$s" --key-type "$k" -m signing || failed="$failed $s(conformance-$k)"
    done
    section "$s: faults"
    "$PY" -m pytest spec/faults --stack "$s" || failed="$failed $s(faults)"
  done
}

# The cargo builds (the floor's too) and their unit tests' compilation. Failures are not counted here: the unit
# test run and the suites after it build again and report.
compile_cargo() {
  "$PY" wrk/stackctl.py build --floor "${cargo_stacks[@]}" || true
  "$PY" wrk/stackctl.py test --compile-only "${cargo_stacks[@]}" || true
}

# The job beside the suites runs in a process group of its own (setsid), so that an interrupted run stops it whole
# (bash leaves a non-interactive script's background jobs deaf to Ctrl-C).
beside=""
stop_beside() { [ -z "$beside" ] || kill -- -"$beside" 2>/dev/null || true; }
trap stop_beside EXIT
trap 'exit 130' INT TERM
if [ ${#other_stacks[@]} -gt 0 ]; then
  section "build: ${other_stacks[*]}"
  "$PY" wrk/stackctl.py build "${other_stacks[@]}" || true
  if [ ${#cargo_stacks[@]} -gt 0 ]; then
    section "beside the next steps, in the idle CPU and I/O classes: build ${cargo_stacks[*]} and the floor, compile their unit tests"
    beside_log=$(mktemp)
    idle=(nice -n 19)
    if command -v chrt >/dev/null && command -v ionice >/dev/null; then idle=(ionice -c 3 chrt --idle 0); fi
    setsid "${idle[@]}" bash -c "$(declare -f compile_cargo); $(declare -p PY cargo_stacks); compile_cargo" \
      >"$beside_log" 2>&1 &
    beside=$!
  fi
  unit_tests "${other_stacks[@]}"
  suites "${other_stacks[@]}"
fi

if [ ${#cargo_stacks[@]} -gt 0 ]; then
  if [ -n "$beside" ]; then
    section "the cargo builds beside the suites above: waiting for them to end; their output"
    wait "$beside"
    beside=""
    # Their section-like lines are shown indented, so that a reader (or CI's timeline) does not take them for ours.
    sed 's/^/    /' "$beside_log"
    rm -f "$beside_log"
  else
    section "build: ${cargo_stacks[*]} and the floor"
    compile_cargo
  fi
fi

section "tools-test"
"$MAKE" --no-print-directory tools-test || failed="$failed tools-test"

if [ ${#cargo_stacks[@]} -gt 0 ]; then
  unit_tests "${cargo_stacks[@]}"
  suites "${cargo_stacks[@]}"
fi

if [ -n "$failed" ]; then
  echo "FAILED:$failed"
  exit 1
fi
echo "all stacks passed: $*"
