# The front door. `make demo` and `make test` set everything up themselves.
SHELL := /bin/bash
.DEFAULT_GOAL := build

BUILD      ?= build
FUZZ_BUILD ?= $(BUILD)/fuzz
JOBS       ?= $(shell nproc)
# Debian's python3-torch lives under /usr/bin/python3; the harness's CPU tests use it.
TEST_PYTHON ?= /usr/bin/python3
FUZZ_SECONDS ?= 20

# What the host and the harness need (the demo), and what only the tests add: clang for the fuzzer,
# Chromium and libkrb5 for the real VS Code (code-server) the extension's end-to-end test drives.
HOST_PACKAGES := g++ cmake ninja-build pkg-config \
  libboost-dev libcli11-dev nlohmann-json3-dev libcpp-httplib-dev libcurl4-openssl-dev \
  googletest libgtest-dev python3-torch python3-numpy
TEST_PACKAGES := clang libclang-rt-14-dev chromium libkrb5-dev slurm-wlm munge

.PHONY: setup setup-host configure build build-host build-fuzz demo test test-unit test-long test-fuzz test-node test-extension \
  bench clean

# Idempotent: installs only what is missing.
define apt_install
	@missing=$$(for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	$(if $(2),command -v npm >/dev/null || missing="$$missing nodejs npm";) \
	if [ -n "$$missing" ]; then \
	  echo "setup: installing $$missing"; \
	  SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi
endef

setup-host:
	$(call apt_install,$(HOST_PACKAGES))

# Re-runs `npm ci` only when the lockfile changed.
setup: setup-host
	$(call apt_install,$(TEST_PACKAGES),npm)
	@if [ ! -f node_modules/.lock-stamp ] || ! cmp -s package-lock.json node_modules/.lock-stamp; then \
	  npm ci --no-audit --no-fund --loglevel=error && cp package-lock.json node_modules/.lock-stamp; \
	fi
	@sh tests/extension/e2e/setup.sh

# -O1 with line tables: the host's own work is planning, not number crunching, and a build on two cores
# takes a third less time than at -O2 with full debug information; backtraces still name lines.
configure:
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
	  -DSTITCH_TEST_PYTHON=$(TEST_PYTHON) >/dev/null

# The host alone: what `make demo` needs (the tests' binaries come with `make build`).
build-host: configure
	@echo "== building the host (log: $(BUILD)/build-host.log)"
	@cmake --build $(BUILD) -j $(JOBS) --target stitchcuda >$(BUILD)/build-host.log 2>&1 || \
	  { tail -n 40 $(BUILD)/build-host.log; exit 1; }

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

build-fuzz:
	@cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" -DSTITCH_BUILD_TESTS=OFF -DSTITCH_BUILD_FUZZERS=ON >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_framing_dispatch

demo: setup-host build-host
	@echo "== stitchcuda optimize examples/elementwise_chain.py"
	@$(BUILD)/bin/stitchcuda optimize examples/elementwise_chain.py --python $(TEST_PYTHON) --out $(BUILD)/demo; \
	  status=$$?; [ $$status -eq 0 ] || [ $$status -eq 3 ] || [ $$status -eq 4 ] || exit $$status

test: setup build build-fuzz
	@$(MAKE) --no-print-directory test-fuzz test-node test-extension test-unit

# Every test but the long ones (label `long`: the CPU checks on every full-size fixture), which
# `make test-long` runs.
test-unit:
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -LE long

test-long: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS) -L long

# The fuzzer writes what it finds into a scratch folder, never into the committed seeds.
test-fuzz:
	@scratch=$$(mktemp -d); log=$$scratch/fuzz.log; \
	if $(FUZZ_BUILD)/bin/fuzz_framing_dispatch -max_total_time=$(FUZZ_SECONDS) -timeout=10 \
	    $$scratch tests/fuzz/corpus >$$log 2>&1; then \
	  echo "fuzz_framing_dispatch: $$(grep -o 'Done [0-9]* runs in [0-9]* second(s)' $$log), no crash"; status=0; \
	else tail -n 60 $$log; status=1; fi; \
	rm -rf $$scratch; exit $$status

test-node:
	@STITCHCUDA_BIN=$(abspath $(BUILD))/bin/stitchcuda node --test tests/node/

# Type-check, the extension's unit tests, then the .vsix in a real VS Code (code-server in headless
# Chromium) against the host just built; screenshots land in test-artifacts/extension-e2e/.
test-extension:
	@npm run --silent typecheck
	@npm run --silent test:extension 2>&1 | grep -E '^# (tests|pass|fail)' ; test $${PIPESTATUS[0]} -eq 0
	@npm run --silent package -- --host $(BUILD)/bin/stitchcuda >/dev/null
	@node tests/extension/e2e/run.mjs --python $(TEST_PYTHON)

bench: setup build
	@STITCHCUDA_BIN=$(abspath $(BUILD))/bin/stitchcuda node bench/host_latency.mjs --out bench/results

clean:
	rm -rf $(BUILD)
