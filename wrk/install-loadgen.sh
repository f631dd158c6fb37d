#!/usr/bin/env bash
# Installs the open-loop load generator of the benchmark (wrk/bench.py's open-loop phase):
# oha from crates.io, pinned, into the project-local .cache/oha/bin (nothing system-wide).
#
#   bash wrk/install-loadgen.sh          # no-op when the pinned version is already there
#
# Why oha (README.md, "Open-loop latency"): with -q and --latency-correction its
# latency is taken from each request's intended start (the rate ticker's time),
# so requests that queue behind a stalled server are counted as slow, not
# omitted; percentiles come from every recorded latency, sorted (exact).
# Needs cargo (rustup's ~/.cargo/bin is looked at too) and a C compiler
# (oha bundles SQLite and jemalloc).
set -euo pipefail

OHA_VERSION="${OHA_VERSION:-1.15.0}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEST="$ROOT/.cache/oha"
BIN="$DEST/bin/oha"

if [[ -x "$BIN" ]] && "$BIN" --version 2>/dev/null | grep -qw "$OHA_VERSION"; then
  echo "install-loadgen: oha $OHA_VERSION already in ${BIN#"$ROOT"/}"
  exit 0
fi

CARGO="$(command -v cargo || true)"
if [[ -z "$CARGO" && -x "$HOME/.cargo/bin/cargo" ]]; then
  CARGO="$HOME/.cargo/bin/cargo"
fi
if [[ -z "$CARGO" ]]; then
  echo "install-loadgen: cargo not found (install Rust with rustup, or apt-get install cargo)" >&2
  exit 2
fi

echo "install-loadgen: cargo install oha $OHA_VERSION into ${DEST#"$ROOT"/} (a few minutes)"
mkdir -p "$DEST"
"$CARGO" install oha --locked --version "$OHA_VERSION" --root "$DEST" --quiet
"$BIN" --version
