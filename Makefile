# The two commands of the README: `make run` starts the dashboard, `make test` runs the whole suite.
# Each creates .venv and installs what it needs on a fresh machine.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PORT   ?= 8501

.PHONY: run team test test-fast bench load-test load-test-browser capacity chromium haproxy jemalloc clean corpus-demo \
	bench-corpus hooks screenshots

run: $(VENV)/.run-deps jemalloc hooks
	$(BIN)/python -m dashboard --server.port $(PORT)

# For a team: PROCESSES dashboard servers (default one per core) behind HAProxy on PORT, each analyst kept on one;
# SECRETS=FILE signs them in (README, "Serving it to your team"), ADDRESS=0.0.0.0 opens it to the network.
PROCESSES ?= $(shell nproc 2>/dev/null || echo 2)
ADDRESS ?= 127.0.0.1
team: $(VENV)/.run-deps haproxy jemalloc
	$(BIN)/python -m dashboard.team --processes $(PROCESSES) --port $(PORT) --address $(ADDRESS) \
		$(if $(SECRETS),--secrets $(SECRETS))

test: $(VENV)/.dev-deps chromium haproxy jemalloc hooks
	$(BIN)/python -m pytest

test-fast: $(VENV)/.dev-deps
	$(BIN)/python -m pytest -m "not browser and not load"

bench: $(VENV)/.dev-deps chromium
	$(BIN)/python -m ticketnet bench

# The README's pictures (docs/img/*.png), taken in Chromium from a real server of this checkout: refresh after a redesign.
screenshots: $(VENV)/.dev-deps chromium
	$(BIN)/python -m ticketnet.bench.screenshots

# On demand (about 2.5 min): 20 virtual analysts, each one Streamlit session on its own websocket (no browser), one
# action every 10 s each for 120 s against a real server; exits 1 on any error. The Corpus page needs a scan: made
# first (make corpus-demo) if there is none. Figures in docs/performance.md. The heavy fault tests (50 sessions at
# once, the runner end to end): pytest -m load tests/load.
load-test: $(VENV)/.dev-deps
	@test -f artifacts/scans/shipped/summary.json || $(MAKE) corpus-demo
	$(BIN)/python -m ticketnet.bench.load.run --sessions 20 --seconds 120

# The second, smaller check that pages really draw: 8 concurrent Chromium sessions for 60 s (about 2 min).
load-test-browser: $(VENV)/.dev-deps chromium
	$(BIN)/python -m tests.load.load_test --sessions 8 --seconds 60

# On a quiet machine only (about 10-15 min): step the analysts 10, 20, ... 80 until p95 > 1 s on a page; one server,
# or with SERVERS=N the deployment of `make team` (N servers behind HAProxy), with WORKERS=N interpretation workers.
SERVERS ?= 0
WORKERS ?= 0
capacity: $(VENV)/.dev-deps
	@test -f artifacts/scans/shipped/summary.json || $(MAKE) corpus-demo
	$(BIN)/python -m ticketnet.bench.load.run --capacity --start 10 --step 10 --max 80 --action-interval 10 --seconds 120 \
		--processes $(SERVERS) --workers $(WORKERS)

$(VENV)/.run-deps: requirements.txt constraints.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt -c constraints.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $@

$(VENV)/.dev-deps: $(VENV)/.run-deps requirements-dev.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt -c constraints.txt
	touch $@

# Commit subjects of 72 characters at most (.githooks/commit-msg), in a clone of the repository.
hooks:
	@git rev-parse --git-dir >/dev/null 2>&1 && git config core.hooksPath .githooks || true

# The end-to-end test drives Debian's Chromium (browser downloads are impossible here).
chromium:
	@if command -v chromium >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	else echo "note: chromium is not installed; the browser test will skip (install Debian's chromium to run it)"; fi

# `make team` and its test put the dashboard servers behind Debian's HAProxy.
haproxy:
	@if command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		(DEBIAN_FRONTEND=noninteractive apt-get install -y -qq haproxy >/dev/null 2>&1 || \
		 (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq haproxy >/dev/null)); \
	else echo "note: haproxy is not installed; make team and its test need it (Debian: apt-get install haproxy)"; fi

# The server's allocator (python -m dashboard preloads it where installed; without it the server runs on glibc's).
jemalloc:
	@if /sbin/ldconfig -p 2>/dev/null | grep -q 'libjemalloc\.so'; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		(DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libjemalloc2 >/dev/null 2>&1 || \
		 (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libjemalloc2 >/dev/null)) || \
		echo "note: libjemalloc2 could not be installed; the server runs on glibc's malloc"; \
	else echo "note: libjemalloc2 is not installed; the server runs on glibc's malloc (apt-get install libjemalloc2)"; fi

clean:
	rm -rf $(VENV) .pytest_cache artifacts

# The Corpus page's demo scan: the shipped valid and test splits (3,000 tickets, level full, a local Dask cluster)
# into artifacts/scans/shipped, which the page opens by default (about a minute on two cores).
corpus-demo: $(VENV)/.run-deps
	$(BIN)/python -m ticketnet scan data/valid.csv data/test.csv --out artifacts/scans/shipped --partition-size 5000

# On demand, the corpus figures of docs/corpus.md: throughput (20,000 tickets, 1 and 2 workers against in-process),
# worker memory at 20,000 and 100,000 tickets, and the Corpus page on the million-ticket route scan.
bench-corpus: $(VENV)/.dev-deps
	$(BIN)/python -m ticketnet synth --corpus 1000000 --out artifacts/corpus-1m
	$(BIN)/python -m ticketnet scan artifacts/corpus-1m --out artifacts/scans/corpus-1m-route --level route
	$(BIN)/python -m ticketnet bench --corpus --out bench-corpus.json --corpus-page artifacts/scans/corpus-1m-route
