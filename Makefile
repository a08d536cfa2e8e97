# `make run` and `make test` install whatever is missing first (idempotent, fast when nothing is).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
LOCK   := requirements.lock
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml $(LOCK) | cksum | cut -d' ' -f1)
APT    := DEBIAN_FRONTEND=noninteractive apt-get

WEB       := lookout/web
WEB_STAMP := $(WEB)/node_modules/.installed-$(shell cat $(WEB)/package-lock.json | cksum | cut -d' ' -f1)

.PHONY: run test test-fast check runtime-check deps lock system-deps browser-deps web-deps ui-deps bench soak clean

# The package's bytecode is written once here: where PYTHONDONTWRITEBYTECODE is set (or the tree is read-only
# to the daemon), every start would otherwise compile its 170 modules again (0.3 s of each restart).
run: deps browser-deps ui-deps
	@$(PY) -m compileall -q lookout
	$(VENV)/bin/lookout serve

test: deps system-deps web-deps
	$(PY) -m pytest

# The unit tests alone (about a minute): every test not marked `slow`, which tests/conftest.py marks on all of
# tests/integration, tests/e2e and tests/security (`pytest -m slow` runs those).
test-fast: deps
	$(PY) -m pytest -m "not slow"

# Lint, types and formatting of the package (configured in pyproject.toml; `ruff format --diff` shows what
# the formatter would change), then the runtime check.
check: deps
	$(VENV)/bin/ruff check lookout deploy
	$(VENV)/bin/mypy
	$(VENV)/bin/ruff format --check --output-format concise lookout deploy
	@$(MAKE) --no-print-directory runtime-check

# lookout installed without its test extra, in a venv of its own (the development venv has every test tool and
# would hide a missing runtime dependency): every module imports, and the daemon started from there answers the
# MCP SDK's client at /mcp (tests/support/runtime_install.py). About a minute when the lock changed (a new venv),
# 15 s when an import changed, nothing when neither did: its outcome depends on nothing else.
RUNTIME_VENV  := .runtime-venv
RUNTIME_CHECK := $(RUNTIME_VENV)/.checked-$(shell { cat pyproject.toml $(LOCK) deploy/check_imports.py \
  tests/support/runtime_install.py; grep -rhE '^\s*(import|from) ' lookout --include='*.py' | sort -u; } \
  | cksum | cut -d' ' -f1)

runtime-check: $(RUNTIME_CHECK)

$(RUNTIME_CHECK): $(STAMP)
	$(PY) -m tests.support.runtime_install $(RUNTIME_VENV)
	@rm -f $(RUNTIME_VENV)/.checked-*
	@touch $@

# Each benchmark prints its figures, the last line as one JSON object; bench/report.py turns those lines into
# docs/benchmarks.md (never edited by hand); `make bench BENCHES="restart_load terminal_cost"` runs some again
# and keeps the other sections.
BENCHES   := terminal_ingest terminal_cost terminal_restart standby_recovery history_restart restart_load terminal_replay terminal_fanout terminal_tokens device_capture device_listing browser_snapshot boxless_reads browser_tasks timeline_render startup mcp_tools mcp_call_cost stream_flood
BENCH_OUT := .bench-results

bench: deps system-deps
	@missing=$$(for p in vim gcc git; do command -v $$p >/dev/null || echo $$p; done; \
	  test -f /usr/share/doc/git-doc/user-manual.html || echo git-doc); \
	if [ -n "$$missing" ]; then $(APT) update -qq && $(APT) install -y -qq $$missing; fi
	@rm -f $(BENCH_OUT).jsonl
	@for b in $(BENCHES); do \
	  echo "== bench/$$b.py" >&2; \
	  $(PY) bench/$$b.py > $(BENCH_OUT).log || { cat $(BENCH_OUT).log; exit 1; }; \
	  cat $(BENCH_OUT).log; tail -n 1 $(BENCH_OUT).log >> $(BENCH_OUT).jsonl; \
	done
	$(PY) bench/report.py --into docs/benchmarks.md $(BENCH_OUT).jsonl > $(BENCH_OUT).md
	@mv $(BENCH_OUT).md docs/benchmarks.md
	@rm -f $(BENCH_OUT).log
	@echo "wrote docs/benchmarks.md (the JSON lines are in $(BENCH_OUT).jsonl)"

deps: $(STAMP)

# Every package at the version pinned in requirements.lock (the Dockerfile installs from the same file).
$(STAMP): pyproject.toml $(LOCK)
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -c $(LOCK) -e '.[test]'
	@rm -f $(VENV)/.installed-*
	@touch $@

# Updates the pins on purpose: a fresh resolve of pyproject.toml (with the test extras) in a throwaway venv.
lock:
	rm -rf .lock-venv && $(PYTHON) -m venv .lock-venv
	.lock-venv/bin/pip install -q --disable-pip-version-check '.[test]'
	{ sed -n '1,2p' $(LOCK); .lock-venv/bin/pip freeze --exclude-editable --exclude lookout; } > $(LOCK).new
	mv $(LOCK).new $(LOCK) && rm -rf .lock-venv

# System parts the tests use: tmux (the oracle for screen tests and the benchmark's peer), vim, less, htop and
# git (recorded through a real PTY and replayed into tmux and the screen engines), zsh (shell integration is
# tested in real bash and zsh), curl and jq (lookout/clients/scripts are run against a live daemon), Chromium
# (browser pages; Playwright's own download does not work everywhere, Debian's package does), and
# python3.11-doc: real documentation pages for the browser tests and benchmark.
system-deps:
	@missing=$$(for p in tmux vim less htop git zsh curl jq chromium; do command -v $$p >/dev/null || echo $$p; done; \
	  test -f /usr/share/doc/python3.11/html/index.html || echo python3.11-doc); \
	if [ -n "$$missing" ]; then $(APT) update -qq && $(APT) install -y -qq $$missing; fi

# `make run` goes on without it (browser pages then answer 503 with how to install one).
browser-deps:
	@command -v chromium >/dev/null || command -v chromium-browser >/dev/null || \
	  { $(APT) update -qq && $(APT) install -y -qq chromium; } || \
	  echo "lookout: could not install chromium (browser pages will be unavailable)" >&2

# The long parts of the reliability suite (about 15 minutes): 1,000 sessions created and deleted, 100 MB of
# random bytes into each screen engine, and 10 minutes of load (bench/load.py).
soak: deps system-deps web-deps
	LOOKOUT_SOAK_SESSIONS=1000 LOOKOUT_SOAK_FUZZ_MB=100 $(PY) -m pytest tests/e2e/test_faults.py tests/integration/test_engine_fuzz.py
	$(PY) bench/load.py --minutes 10
	$(PY) bench/load.py --minutes 10 --floods-in tmux

# The web UI's xterm.js, from npm (lookout/web/package-lock.json); never committed.
web-deps: $(WEB_STAMP)

$(WEB_STAMP): $(WEB)/package.json $(WEB)/package-lock.json
	@command -v npm >/dev/null || { $(APT) update -qq && $(APT) install -y -qq nodejs npm; }
	cd $(WEB) && npm ci --no-audit --no-fund --loglevel=error
	@rm -f $(WEB)/node_modules/.installed-*
	@touch $@

# `make run` goes on without it (the UI then says how to install it; the API works).
ui-deps:
	@$(MAKE) --no-print-directory web-deps || echo "lookout: could not install the web UI's xterm.js (npm)" >&2

clean:
	rm -rf $(VENV) $(RUNTIME_VENV) *.egg-info .pytest_cache $(WEB)/node_modules
