# Two entry points: `make run` (the Slack bot) and `make test` (the whole suite).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

.PHONY: install sandbox-packages postgres-packages run test bench
install: $(VENV)/.installed

# The sandbox every bot run works in needs bubblewrap and socat: installed here when missing and
# this user may (root, or passwordless sudo); otherwise stop with the one command to run.
sandbox-packages:
	@command -v bwrap >/dev/null && command -v socat >/dev/null && exit 0; \
	if [ "$$(id -u)" = 0 ]; then sudo=""; elif sudo -n true 2>/dev/null; then sudo="sudo -n"; else \
	  echo "flower: the sandbox needs bubblewrap and socat. Run: sudo apt-get install bubblewrap socat" \
	       "(or start the bot with FLOWER_SANDBOX=off)"; exit 1; fi; \
	if command -v apt-get >/dev/null; then \
	  $$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq bubblewrap socat; \
	elif command -v dnf >/dev/null; then $$sudo dnf install -y -q bubblewrap socat; \
	else echo "flower: install bubblewrap and socat with this system's package manager"; exit 1; fi

# The tests start throwaway PostgreSQL clusters (engine/testing/postgres.py) from its server
# programs: installed here the same way when initdb is neither on PATH nor in Debian's folder.
postgres-packages:
	@command -v initdb >/dev/null && exit 0; ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && exit 0; \
	if [ "$$(id -u)" = 0 ]; then sudo=""; elif sudo -n true 2>/dev/null; then sudo="sudo -n"; else \
	  echo "flower: the tests need PostgreSQL's server programs. Run: sudo apt-get install postgresql"; exit 1; fi; \
	if command -v apt-get >/dev/null; then \
	  $$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq postgresql; \
	elif command -v dnf >/dev/null; then $$sudo dnf install -y -q postgresql-server; \
	else echo "flower: install PostgreSQL's server programs with this system's package manager"; exit 1; fi

run: install $(if $(filter off,$(FLOWER_SANDBOX)),,sandbox-packages)
	$(VENV)/bin/flower-bot

test: install sandbox-packages postgres-packages
	$(PY) -m pytest -n 2 -q

$(VENV)/.bench-installed: $(VENV)/.installed
	$(PY) -m pip install --quiet -e '.[bench]'
	touch $@

bench: $(VENV)/.bench-installed
	$(PY) -m bench
