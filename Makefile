# simple-auth: one token service, four stacks, one benchmark.
#   make test                  every stack's unit tests, the conformance suite and the fault suite, every stack
#   make test-faults           the fault suite with its long parts (latency under slow clients, soak)
#   make soak                  5-minute memory soak per stack
#   make bench                 the benchmark (throw-away PostgreSQL unless DATABASE_URL is set)
#   make docker-test           images, docker compose, conformance per container, a fly-sized check, a docker bench
#   make profile               CPU profiles (flame graphs) of every stack under load, into results/
#   make run STACK=actix       one stack in the foreground with the dev key
# A stack is any folder with a stack.json (see spec/README.md).

SHELL  := bash
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STACKS := $(patsubst %/stack.json,%,$(wildcard */stack.json))
STACK  ?=
ONLY   := $(or $(STACK),$(STACKS))

.PHONY: help test test-faults soak unit conformance tools-test run db build venv bench bench-smoke docker-test profile clean
.DEFAULT_GOAL := help

help:
	@sed -n 's/^#   //p' $(MAKEFILE_LIST)
	@echo "stacks: $(STACKS)"

$(VENV)/.installed: spec/requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check -r spec/requirements.txt
	touch $@

venv: $(VENV)/.installed

# Every stack is tested even if an earlier one fails; the target fails at the end if any did.
test: venv tools-test
	@failed=""; \
	for s in $(ONLY); do \
	  echo "=== $$s: unit tests"; \
	  $(PY) wrk/stackctl.py test $$s || failed="$$failed $$s(unit)"; \
	  echo "=== $$s: conformance"; \
	  $(PY) -m pytest spec/conformance --stack $$s || failed="$$failed $$s(conformance)"; \
	  echo "=== $$s: faults"; \
	  $(PY) -m pytest spec/faults --stack $$s || failed="$$failed $$s(faults)"; \
	done; \
	if [ -n "$$failed" ]; then echo "FAILED:$$failed"; exit 1; fi; \
	echo "all stacks passed: $(ONLY)"

unit: venv
	@for s in $(ONLY); do $(PY) wrk/stackctl.py test $$s || exit 1; done

conformance: venv
	@for s in $(ONLY); do $(PY) -m pytest spec/conformance --stack $$s || exit 1; done

test-faults: venv
	@failed=""; for s in $(ONLY); do $(PY) -m pytest spec/faults --long --stack $$s || failed="$$failed $$s"; done; \
	if [ -n "$$failed" ]; then echo "FAILED:$$failed"; exit 1; fi

soak: venv
	@for s in $(ONLY); do $(PY) -m pytest spec/faults --long --stack $$s -k soak || exit 1; done

# The project's own tooling: vectors up to date, runner and spec self-tests.
tools-test: venv
	$(PY) spec/gen_vectors.py --check
	$(PY) -m pytest -q wrk/tests spec/tests fly

build: venv
	@for s in $(ONLY); do $(PY) wrk/stackctl.py build $$s || exit 1; done

run: venv
	@test -n "$(STACK)" || { echo "usage: make run STACK=<$(STACKS)>"; exit 2; }
	$(PY) wrk/stackctl.py run $(STACK)

db: venv
	$(PY) wrk/stackctl.py db

# Extra runner flags: make bench BENCH_ARGS="--profile fly-shared-1x --stacks actix,spring"
BENCH_ARGS ?=
bench: venv
	$(PY) wrk/bench.py $(BENCH_ARGS)

# The whole pipeline with short phases: proves it on every change (CI).
bench-smoke: venv
	$(PY) wrk/bench.py --smoke $(BENCH_ARGS)

# Where the CPU goes: async-profiler (JVM) / perf (actix) under wrk. make profile PROFILE_ARGS="--stacks zio --label after"
PROFILE_ARGS ?=
profile: venv
	$(PY) wrk/profile.py $(PROFILE_ARGS)

# Docker end to end (installs docker.io and starts dockerd when needed; see wrk/docker-ci.sh).
docker-test: venv
	bash wrk/docker-ci.sh

clean:
	rm -rf $(VENV) */target */project/target
