# One runner for everything. `make serve` and `make test` set up a fresh machine on their own:
# they create .venv, install the pinned Python dependencies, build the Rust extension (release)
# and then run.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
VENV_STAMP := $(VENV)/.deps-stamp
NODE_STAMP := tests/node/node_modules/.stamp
NODE_CLIENT := clients/node
NODE_CLIENT_STAMP := $(NODE_CLIENT)/node_modules/.stamp
export PYO3_PYTHON := $(abspath $(PY))
GO ?= $(or $(shell command -v go 2>/dev/null),/usr/local/go/bin/go)
GOFMT = $(shell $(GO) env GOROOT)/bin/gofmt

.PHONY: help setup build claude-code-plugin codex-plugin gemini-cli-extension build-bench-lru serve test test-rust test-python test-postgres postgres-server ripgrep test-bench test-go test-node test-packaging lint fmt bench soak eval eval-model protos check-protos unasync parity parity-corpus parity-table policy-table clean

help:
	@echo "make help                 this list (every target; make lint checks that it is)"
	@echo "make setup                create .venv with the pinned Python dependencies"
	@echo "make build                build the Rust core (release) into .venv, incrementally"
	@echo "make serve                build everything and start the daemon on its default socket"
	@echo "make test                 build everything and run every test (cargo, pytest, clients)"
	@echo "make test-rust            the cargo tests (the core, the Rust client)"
	@echo "make test-python          pytest on every core (PYTEST_WORKERS=0: serial), without the PostgreSQL cases"
	@echo "make test-postgres        the PostgreSQL store's and the fleet's tests (pytest -m postgresql)"
	@echo "make test-go              the Go client: go vet, its tests, the conformance scenarios"
	@echo "make test-node            the Node client: tsc, its tests, the conformance scenarios"
	@echo "make test-packaging       each client installed as its README says, every README snippet run"
	@echo "make test-bench           the benchmarks' LruCache (bench/lru_py): stubtest and its tests"
	@echo "make build-bench-lru      build the benchmarks' LruCache into .venv (not in make build)"
	@echo "make lint                 rustfmt, clippy, rustdoc links, ruff, mypy --strict, stubtest, proto, client and policy-table drift"
	@echo "make fmt                  rustfmt, ruff format and ruff --fix, in place"
	@echo "make bench                run the benchmarks and rewrite docs/benchmarks.md"
	@echo "make eval                 restoration policies on ../shared/transcripts; rewrites docs/eval.md,"
	@echo "                          checks the committed ranking model against a retrain"
	@echo "make eval-model           retrain the learned ranking's model (restore/ranking_model.json)"
	@echo "make soak                 8 agents, daemon killed -9 mid-run; rewrites docs/reliability.md"
	@echo "make soak STORE=postgresql  the same on a throwaway PostgreSQL cluster (docs/fleet.md)"
	@echo "make soak HOSTILE=0       without the hostile run (issues 11 and 37's inputs) and its imports"
	@echo "make parity               the real Claude Code offline, beside the daemon (docs/parity.md)"
	@echo "make parity-corpus        replay every shared Claude Code transcript (docs/parity.md)"
	@echo "make parity-table         rewrite docs/parity.md's tables from the shared transcripts"
	@echo "make protos               regenerate the committed gRPC code and the core's field numbers"
	@echo "make check-protos         fail when regenerating the gRPC code changes what is committed"
	@echo "make policy-table         rewrite the policy fields' docs from the policy table (restore/policy.py)"
	@echo "make unasync              regenerate the sync Python client from the asyncio one"
	@echo "make claude-code-plugin   build the Claude Code plugin's hook (clients/claude-code)"
	@echo "make codex-plugin         the same plugin, for Codex CLI (clients/codex/README.md)"
	@echo "make gemini-cli-extension  build the Gemini CLI extension's hook (clients/gemini-cli)"
	@echo "make ripgrep              install ripgrep when missing (Debian's package; tests/opencode)"
	@echo "make postgres-server      install PostgreSQL's server when missing (Debian's; no cluster)"
	@echo "make clean                remove .venv, target/, the node_modules and the Node client's dist"

$(VENV_STAMP): requirements/dev.txt pyproject.toml clients/python/pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements/dev.txt
	$(PY) -m pip install -q -e clients/python
	touch $@

$(NODE_STAMP): tests/node/package.json tests/node/package-lock.json
	cd tests/node && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# --ignore-scripts: the package's `prepare` (the build, for an install from a checkout) is not
# run here; test-node and lint build or check it themselves, and `make protos` must be able to
# install the generator while the committed types do not compile against a changed proto.
$(NODE_CLIENT_STAMP): $(NODE_CLIENT)/package.json $(NODE_CLIENT)/package-lock.json
	cd $(NODE_CLIENT) && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	touch $@

setup: $(VENV_STAMP)

# Incremental: cargo rebuilds only what changed, maturin reinstalls the module in .venv.
build: $(VENV_STAMP)
	VIRTUAL_ENV=$(abspath $(VENV)) $(VENV)/bin/maturin develop --release --quiet

# The benchmarks' Python LruCache (bench/lru_py: a crate of its own over the core's LRU, which
# only B1 and its tests use), installed into .venv as `postcompact_bench_lru`. `make bench` and
# `make test-bench` build it; `make build` and `make test` never do.
build-bench-lru: $(VENV_STAMP)
	VIRTUAL_ENV=$(abspath $(VENV)) $(VENV)/bin/maturin develop --release --quiet \
	  -m bench/lru_py/Cargo.toml

serve: build
	$(VENV)/bin/postcompact serve

test: build $(NODE_STAMP) test-rust test-python test-postgres test-go test-node test-packaging

test-rust:
	cargo test --workspace --quiet

# pytest on PYTEST_WORKERS processes (pytest-xdist; `auto`: one per core, 0: serial), each test
# module a unit run whole on one of them, the real harnesses' tests one unit together (they share
# .cache/ and the plugins' build outputs): tests/conftest.py's scheduler.
PYTEST_WORKERS ?= auto
test-python: build $(NODE_STAMP) ripgrep
	$(PY) -m pytest -n $(PYTEST_WORKERS)

# ripgrep (Debian's package), installed when missing: OpenCode's skill tool lists a skill's files
# with it (OpenCode downloads it when online), and tests/opencode loads a skill.
ripgrep:
	@command -v rg >/dev/null || { apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -q ripgrep; }

# PostgreSQL's server binaries (Debian's package), installed when missing. The install makes no
# cluster of its own (createcluster.conf): the tests and the soak start throwaway ones.
postgres-server:
	@if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then \
	  mkdir -p /etc/postgresql-common && \
	  { test -e /etc/postgresql-common/createcluster.conf || \
	    echo 'create_main_cluster = false' > /etc/postgresql-common/createcluster.conf; } && \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
	    -o Dpkg::Options::=--force-confold postgresql; \
	fi

# The tests marked postgresql: both stores' persistence, failed-write and kill -9 tests on
# PostgreSQL, and the fleet's (tests/daemon/persist/test_fleet.py: two daemons in mount
# namespaces, so as root), against a cluster the tests start as an unprivileged user
# (tests/pg_cluster.py). A cluster that cannot start fails them, never skips them. In parallel as
# test-python is: each worker starts a cluster of its own (the session's fixture, in its own /tmp
# directory, on a Unix socket only). With them, B9's seed and start-up on PostgreSQL at a tiny N
# (tests/bench/test_b9_startup.py).
test-postgres: build postgres-server
	$(PY) -m pytest -n $(PYTEST_WORKERS) -m postgresql tests/daemon tests/bench/test_b9_startup.py

# The benchmarks' LruCache: stubtest of its stub (bench/lru_py/python/postcompact_bench_lru), then
# its tests (bench/lru_py/tests: its Python surface, fuzz, and lru-cache parity). `make bench`
# runs them before it measures; the LRU itself is tested by `make test` (cargo and tests/core).
test-bench: build-bench-lru $(NODE_STAMP)
	$(PY) -m mypy.stubtest postcompact_bench_lru
	$(PY) -m pytest bench/lru_py/tests

# Every transcript of the shared corpus replayed and checked against what Claude Code recorded
# (make test replays a few; .ci/run runs this). POSTCOMPACT_TRANSCRIPTS names another folder.
parity-corpus: build
	POSTCOMPACT_CORPUS=all $(PY) -m pytest -q tests/daemon/transcript/test_transcripts.py

# The real Claude Code (pinned, installed into .cache/ from the npm registry), run offline against
# a scripted model server, beside the daemon: docs/parity.md §4.
parity: build
	$(PY) -m tests.parity

# Rewrite docs/parity.md's tables from the shared transcripts.
parity-table: build
	$(PY) scripts/parity_table.py

# The Claude Code plugin (clients/claude-code/plugins/postcompact): its hook command, compiled from
# the Go client's cmd/postcompact-hook into the plugin's bin/ (gitignored), and beside it
# `postcompact`, a script that runs this checkout's daemon (.venv/bin/postcompact, built by `make
# build` when missing), which the hook starts when none runs. A script, not a link: `claude plugin
# install` copies the plugin's files and leaves links out.
CC_PLUGIN_BIN := clients/claude-code/plugins/postcompact/bin
claude-code-plugin: $(if $(wildcard $(VENV)/bin/postcompact),,build)
	mkdir -p $(CC_PLUGIN_BIN)
	cd clients/go && $(GO) build -trimpath -o $(abspath $(CC_PLUGIN_BIN))/postcompact-hook ./cmd/postcompact-hook
	printf '#!/bin/sh\nexec "%s" "$$@"\n' "$(abspath $(VENV))/bin/postcompact" > $(CC_PLUGIN_BIN)/postcompact
	chmod +x $(CC_PLUGIN_BIN)/postcompact

# Codex CLI installs the same plugin folder (its .codex-plugin/plugin.json names hooks/codex.json).
codex-plugin: claude-code-plugin

# The Gemini CLI extension (clients/gemini-cli): the same hook command and `postcompact` script
# as the Claude Code plugin's, in the extension's bin/ (gitignored).
GEMINI_EXT_BIN := clients/gemini-cli/bin
gemini-cli-extension: $(if $(wildcard $(VENV)/bin/postcompact),,build)
	mkdir -p $(GEMINI_EXT_BIN)
	cd clients/go && $(GO) build -trimpath -o $(abspath $(GEMINI_EXT_BIN))/postcompact-hook ./cmd/postcompact-hook
	printf '#!/bin/sh\nexec "%s" "$$@"\n' "$(abspath $(VENV))/bin/postcompact" > $(GEMINI_EXT_BIN)/postcompact
	chmod +x $(GEMINI_EXT_BIN)/postcompact

# The Go client: unit tests, then every tests/conformance scenario against a daemon it starts
# (-count=1: go's test cache cannot see the daemon's own code change).
test-go: build
	cd clients/go && $(GO) vet ./... && $(GO) test -count=1 ./...

# The Node client: tsc, unit tests, then every tests/conformance scenario against a daemon it starts.
test-node: build $(NODE_CLIENT_STAMP)
	cd $(NODE_CLIENT) && npm run --silent build && npm test

# Each client installed the way its README's Install section says, from an export of the working
# tree with nothing built, into a fresh project, and every python, ts, go, rust and sh block of
# every README run against a live daemon, unless marked `synopsis` (tests/packaging; work files
# in target/packaging/, kept so that a second run is incremental). The package registries for
# the clients' dependencies (pip, npm, Go modules, crates), their caches when warm.
test-packaging: build
	GO=$(GO) $(PY) -m tests.packaging

lint: build check-protos $(NODE_CLIENT_STAMP)
	cargo fmt --all --check
	cargo clippy --workspace --all-targets --quiet -- -D warnings
	cargo clippy -p postcompact-core --features python --all-targets --quiet -- -D warnings
	RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --quiet
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(PY) -m mypy.stubtest --allowlist scripts/stubtest-allowlist.txt postcompact._core
	$(PY) scripts/unasync.py --check
	$(PY) scripts/check_citations.py
	$(PY) scripts/check_layers.py
	$(PY) scripts/policy_table.py --check
	$(PY) scripts/check_make_help.py
	@test -z "$$($(GOFMT) -l clients/go)" || ($(GOFMT) -l clients/go; echo "gofmt: run 'gofmt -w clients/go'" >&2; exit 1)
	cd clients/go && $(GO) vet ./...
	cd $(NODE_CLIENT) && npm run --silent lint

fmt: $(VENV_STAMP)
	cargo fmt --all
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

# B1 measures the benchmarks' LruCache (test-bench builds and tests it first); every other
# benchmark runs the daemon as `make serve` does. B7's PostgreSQL steps and B9 (start-up with
# stored sessions) run against a throwaway PostgreSQL cluster (bench/_pg.py), hence the server;
# BENCH_STARTUP_MILLION=1 adds B9's 1,000,000 sessions (~12 GiB and over an hour today).
bench: build test-bench postgres-server $(NODE_STAMP)
	$(PY) -m pip install -q -r requirements/bench.txt
	$(PY) -m bench

# Restoration quality on real Claude Code transcripts (docs/eval.md): every policy and every
# configuration of the rule families measured, the selection procedure cross-validated (leave one
# repository out), the tables and the plot rewritten. EVAL_TRANSCRIPTS: files or directories of
# .jsonl (checked before anything is built).
EVAL_TRANSCRIPTS ?= ../shared/transcripts
EVAL_MISSING = $(if $(strip $(EVAL_TRANSCRIPTS)),$(foreach p,$(EVAL_TRANSCRIPTS),$(if $(wildcard $(p)),,$(p))),none)
eval: $(if $(strip $(EVAL_MISSING)),eval-no-transcripts,build)
	$(PY) -m postcompact eval $(EVAL_TRANSCRIPTS) --markdown docs/eval.md \
	  --plot docs/eval-recall-tokens.png --check-model

# The learned ranking's model (restore/ranking_model.json), retrained on the transcripts by the
# same run as `make eval`, which then checks that the committed one equals it.
eval-model: $(if $(strip $(EVAL_MISSING)),eval-no-transcripts,build)
	$(PY) -m postcompact eval $(EVAL_TRANSCRIPTS) --quiet \
	  --write-model daemon/postcompact/restore/ranking_model.json > /dev/null

eval-no-transcripts:
	@echo "make eval: no transcripts at '$(EVAL_TRANSCRIPTS)' (not found: $(EVAL_MISSING)); pass EVAL_TRANSCRIPTS=... (Claude Code .jsonl files or directories of them)" >&2
	@exit 2

# The soak run (docs/reliability.md), not part of `make test`: SOAK_SECONDS (default 120),
# SOAK_KILLS (5), SOAK_PYTHON_AGENTS / SOAK_GO_AGENTS (4 + 4). STORE=postgresql: the state in a
# throwaway PostgreSQL cluster (docs/fleet.md). HOSTILE=1 (the default): the hostile run first,
# the inputs of issues 11 and 37 at full size (the transcript imports among them), and imports
# beside the kills; HOSTILE=0 skips both.
STORE ?= sqlite
HOSTILE ?= 1
soak: build $(if $(filter postgresql,$(STORE)),postgres-server)
	$(PY) -m pip install -q -r requirements/bench.txt
	GO=$(GO) SOAK_STORE=$(STORE) SOAK_HOSTILE=$(HOSTILE) $(PY) -m bench.soak

protos: $(VENV_STAMP) $(NODE_CLIENT_STAMP)
	$(PY) scripts/gen_protos.py

# CI: regenerating must not change the committed code (the core's field numbers included).
check-protos: protos
	@git diff --exit-code --stat -- daemon/postcompact/v1 clients rust_core/src/pbwire/fields.rs || \
	  (echo "generated code is stale: run 'make protos' and commit the result" >&2; exit 1)

# docs/profiles.md's "Policy fields" and config.py's [policy] example, from the policy table
# (restore/policy.py); `make lint` checks them.
policy-table: $(VENV_STAMP)
	$(PY) scripts/policy_table.py

# The sync Python client (_client.py) is generated from the asyncio one (_aio.py).
unasync: $(VENV_STAMP)
	$(PY) scripts/unasync.py

clean:
	rm -rf $(VENV) target tests/node/node_modules $(NODE_CLIENT)/node_modules $(NODE_CLIENT)/dist
