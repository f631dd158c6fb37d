#!/usr/bin/env bash
# Installs the open-loop load generator of the benchmark (wrk/bench.py's open-loop phase):
# oha from crates.io, pinned, as .cache/oha/bin/oha in the work tree (nothing system-wide).
#
#   bash wrk/install-loadgen.sh          # no-op when the pinned version is already there
#   bash wrk/install-loadgen.sh --check  # exit 0 when it is there (in the work tree or this machine's copy), 1 if not
#
# Why oha (docs/benchmark.md, "Open-loop latency: why oha"): with -q and --latency-correction
# its latency is taken from each request's intended start (the rate ticker's
# stamp), so requests that queue behind a stalled server count as slow, not
# omitted; its percentiles come from every recorded latency, sorted (exact).
#
# Building oha takes minutes (it bundles SQLite and jemalloc), so the binary is
# also kept per machine in ${SIMPLE_AUTH_TOOLS:-~/.cache/simple-auth}/oha-<version>
# and copied from there into a fresh clone (CI clones afresh every run).
# Needs cargo (rustup's ~/.cargo/bin is looked at too), a C compiler, pkg-config and OpenSSL's headers (libssl-dev).
set -euo pipefail

OHA_VERSION="${OHA_VERSION:-1.15.0}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="$ROOT/.cache/oha/bin/oha"
MACHINE="${SIMPLE_AUTH_TOOLS:-$HOME/.cache/simple-auth}/oha-$OHA_VERSION"

is_pinned() { [[ -x "$1" ]] && "$1" --version 2>/dev/null | grep -qw "$OHA_VERSION"; }

case "${1:-}" in
  --check)
    if is_pinned "$BIN" || is_pinned "$MACHINE/bin/oha"; then exit 0; fi
    echo "install-loadgen: oha $OHA_VERSION missing (bash wrk/install-loadgen.sh builds it)" >&2
    exit 1 ;;
  "") ;;
  *) echo "install-loadgen: unknown option '$1' (--check)" >&2; exit 2 ;;
esac

if is_pinned "$BIN"; then
  if ! is_pinned "$MACHINE/bin/oha"; then  # keep it for the next fresh clone on this machine
    mkdir -p "$MACHINE/bin" && cp "$BIN" "$MACHINE/bin/oha"
  fi
  echo "install-loadgen: oha $OHA_VERSION already in ${BIN#"$ROOT"/}"
  exit 0
fi
mkdir -p "$(dirname "$BIN")"
if ! is_pinned "$MACHINE/bin/oha"; then
  CARGO="$(command -v cargo || true)"
  if [[ -z "$CARGO" && -x "$HOME/.cargo/bin/cargo" ]]; then
    CARGO="$HOME/.cargo/bin/cargo"
  fi
  if [[ -z "$CARGO" ]]; then
    echo "install-loadgen: cargo not found (install Rust with rustup, or apt-get install cargo)" >&2
    exit 2
  fi
  echo "install-loadgen: cargo install oha $OHA_VERSION into $MACHINE (several minutes, once per machine)"
  mkdir -p "$MACHINE"
  # TLS through the system's OpenSSL (native-tls, Debian's libssl-dev) instead of the default rustls on aws-lc-rs,
  # whose C build is a fifth of oha's: the benchmark speaks plain HTTP, and oha builds with no TLS at all only
  # with one of the two.
  "$CARGO" install oha --locked --version "$OHA_VERSION" --no-default-features --features native-tls \
    --root "$MACHINE" --quiet
fi
cp "$MACHINE/bin/oha" "$BIN"
"$BIN" --version
