# simple-auth: one token service, five stacks, one benchmark.
#   make test                  every stack's unit tests, the conformance suite and the fault suite, every stack
#   make conformance-tls       the whole conformance suite against TLS-only PostgreSQL (require, verify-full)
#   make conformance-keys      the whole conformance suite once per key type (RS256 2048/4096, ES256, EdDSA)
#   make test-faults           the fault suite with its long parts (latency under slow clients, soak)
#   make soak                  5-minute memory soak per stack
#   make bench                 the benchmark (throw-away PostgreSQL unless DATABASE_URL is set)
#   make bench BENCH_ARGS="--key-type ed25519"       the benchmark signing with another dev key (rsa-2048, rsa-4096, p-256, ed25519)
#   make docker-test           images, docker compose, conformance per container, a fly-sized check, a docker bench
#   make profile               CPU profiles (flame graphs) of every stack under load, into results/
#   make run STACK=actix       one stack in the foreground with the dev key (KEY_TYPE=p-256 or ed25519: another)
#   make user ARGS="add alice@example.org 'Alice'"   add / reset / disable a real user (DATABASE_URL; sql/users.py)
#   make compare A=results/X B=results/Y             two benchmark result sets side by side (wrk/compare.py)
#   make deps                  check what the project needs on this machine (.ci/install); installs it as root
# A stack is any folder with a stack.json (see spec/README.md).

SHELL  := bash
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STACKS := $(patsubst %/stack.json,%,$(wildcard */stack.json))
STACK  ?=
ONLY   := $(or $(STACK),$(STACKS))
# rustup's cargo, when it is not on PATH yet (a fresh login shell has it; make's may not).
export PATH := $(if $(wildcard $(HOME)/.cargo/bin/cargo),$(HOME)/.cargo/bin:)$(PATH)

.PHONY: help deps test test-faults soak unit conformance conformance-tls conformance-keys tools-test run db build venv bench bench-smoke docker-test profile user compare clean
.DEFAULT_GOAL := help

help:
	@sed -n 's/^#   //p' $(MAKEFILE_LIST)
	@echo "stacks: $(STACKS)"

$(VENV)/.installed: spec/requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check -r spec/requirements.txt
	touch $@

venv: $(VENV)/.installed

# What the project needs on this machine, one list (.ci/install): checked first; as root (CI, the project's
# machines) what is missing is installed, otherwise make stops with the one command that installs it.
deps:
	@bash .ci/install --check 2>/dev/null || { [ "$$(id -u)" -eq 0 ] && bash .ci/install; } || { bash .ci/install --check; exit 1; }

# Every stack's build, unit tests, conformance and fault suites, and the tooling tests; every stack is tested even if
# an earlier one fails (the order, and what runs beside what: wrk/test-all.sh).
test: deps venv
	@PY=$(PY) MAKE="$(MAKE)" bash wrk/test-all.sh $(ONLY)

unit: venv
	$(PY) wrk/stackctl.py test $(ONLY)

conformance: venv
	@for s in $(ONLY); do $(PY) -m pytest spec/conformance --stack $$s || exit 1; done

# The whole conformance suite against TLS-only PostgreSQL (make test runs its tls_core subset).
conformance-tls: venv
	@for s in $(ONLY); do for m in require verify-full; do $(PY) -m pytest spec/conformance --stack $$s --db-tls $$m || exit 1; done; done

# The whole conformance suite once per dev key type (make test runs RSA-2048 whole and the signing subset of the others).
conformance-keys: venv
	@for s in $(ONLY); do for k in rsa-2048 rsa-4096 p-256 ed25519; do $(PY) -m pytest spec/conformance --stack $$s --key-type $$k || exit 1; done; done

test-faults: venv
	@failed=""; for s in $(ONLY); do $(PY) -m pytest spec/faults --long --stack $$s || failed="$$failed $$s"; done; \
	if [ -n "$$failed" ]; then echo "FAILED:$$failed"; exit 1; fi

soak: venv
	@for s in $(ONLY); do $(PY) -m pytest spec/faults --long --stack $$s -k soak || exit 1; done

# The project's own tooling: vectors up to date, runner and spec self-tests.
tools-test: venv
	$(PY) spec/gen_vectors.py --check
	$(PY) -m pytest -q -n auto wrk/tests spec/tests fly sql/tests .ci

build: venv
	$(PY) wrk/stackctl.py build $(ONLY)

run: venv
	@test -n "$(STACK)" || { echo "usage: make run STACK=<$(STACKS)>"; exit 2; }
	$(PY) wrk/stackctl.py run $(STACK) $(if $(KEY_TYPE),--key-type $(KEY_TYPE))

db: venv
	$(PY) wrk/stackctl.py db

# Extra runner flags: make bench BENCH_ARGS="--profile fly-shared-cpu-1x --stacks actix,spring"; --key-type p-256 etc.
# signs with another dev key (one results set per key type, side by side: wrk/compare.py --own-cost; docs/benchmark.md).
BENCH_ARGS ?=
bench: deps venv
	bash .ci/install --loadgen
	$(PY) wrk/bench.py $(BENCH_ARGS)

# The whole pipeline with short phases, the floor (wrk/floor/) included: proves it on every change (CI).
bench-smoke: deps venv
	bash .ci/install --loadgen
	$(PY) wrk/bench.py --smoke $(BENCH_ARGS)

# Where the CPU goes: async-profiler (JVM) / perf (actix) under wrk, or oha at a fixed rate:
# make profile PROFILE_ARGS="--stacks zio --key-type p-256 --rate 400 --label after"
PROFILE_ARGS ?=
profile: venv
	$(PY) wrk/flamegraph.py $(PROFILE_ARGS)

# Real users against DATABASE_URL: make user ARGS="add EMAIL 'NAME' [--username U]" | "reset EMAIL" | "disable EMAIL"
# (the password is asked twice, or read from stdin with --password-stdin; see sql/users.py --help).
ARGS ?=
user: venv
	@test -n "$(ARGS)" || { $(PY) sql/users.py --help; exit 2; }
	@$(PY) sql/users.py $(ARGS)

# Two benchmark result sets, stack by stack: make compare A=results/<run> B=results/<run>
compare: venv
	@test -n "$(A)" -a -n "$(B)" || { echo "usage: make compare A=results/<run> B=results/<run>"; exit 2; }
	$(PY) wrk/compare.py $(A) $(B)

# Docker end to end (installs docker.io and starts dockerd when needed; see wrk/docker-ci.sh).
docker-test: venv
	bash wrk/docker-ci.sh

clean:
	rm -rf $(VENV) */target */project/target
