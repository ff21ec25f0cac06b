# promptdeck developer tasks.  `make test` on a fresh clone installs everything and runs everything.

VENV       := .venv
PEERS      := tests/peers
VENV_STAMP := $(VENV)/.installed
NODE_STAMP := $(PEERS)/node_modules/.installed
LINT_PATHS := $(wildcard src tests benchmarks)

# Run a command, then print how long it took; keeps the command's exit status.
TIMED = @sh -c 'echo "+ $$*"; s=$$(date +%s%N); "$$@"; rc=$$?; ms=$$(( ($$(date +%s%N) - s) / 1000000 )); \
	echo "== $$1: $$((ms / 1000)).$$((ms % 1000 / 100))s, exit $$rc"; exit $$rc' timed

.PHONY: node fast-agent serve test lint typecheck pytest bench clean-node

# pytest spreads the suite over worker processes (pytest-xdist). Most of a test's time is spent waiting on the
# real peers it starts (servers, PostgreSQL, Chromium, Node), so more workers than the two cores still shorten
# the run. Whole test files go to one worker (--dist loadfile): a module's servers and clusters start once.
# `make test PYTEST_WORKERS=0` runs everything in one process.
PYTEST_WORKERS ?= 4
PYTEST_XDIST   := -n $(PYTEST_WORKERS) --dist loadfile

# The Python virtualenv, rebuilt whenever pyproject.toml changes.
$(VENV): $(VENV_STAMP)

# Everything it prints goes to stderr: `make serve` is launched by MCP clients, whose stdout is the protocol.
$(VENV_STAMP): pyproject.toml
	@echo "make: installing promptdeck into $(VENV) (first run only)" >&2
	@python3 -m venv $(VENV) >&2
	@$(VENV)/bin/pip install -q --upgrade pip >&2
	@$(VENV)/bin/pip install -q -e '.[dev]' >&2
	@touch $@

# Node peers (MCP Inspector, conformance suite, reference server, Node 22), pinned by package-lock.json.
node: $(NODE_STAMP)

$(NODE_STAMP): $(PEERS)/package-lock.json $(PEERS)/package.json
	npm ci --prefix $(PEERS) --no-audit --no-fund
	touch $@

# fast-agent, a skills-aware MCP client (tests/interop/test_fast_agent.py), in a venv of its own: it needs Python
# 3.13. Without one (or without the package index) nothing is installed and its tests skip; not part of `make test`.
FAST_AGENT         := .venv-fast-agent
FAST_AGENT_VERSION := 0.10.48

fast-agent: $(FAST_AGENT)/.installed

$(FAST_AGENT)/.installed:
	@for py in python3.13 $(wildcard $(HOME)/.pyenv/versions/3.13*/bin/python) /usr/local/bin/python3.13; do \
		if $$py -c 'import sys; sys.exit(sys.version_info[:2] != (3, 13))' 2>/dev/null; then \
			echo "make fast-agent: fast-agent-mcp $(FAST_AGENT_VERSION) into $(FAST_AGENT) with $$py"; \
			$$py -m venv $(FAST_AGENT) && \
			$(FAST_AGENT)/bin/pip install -q --disable-pip-version-check fast-agent-mcp==$(FAST_AGENT_VERSION) && \
			touch $@; exit $$?; \
		fi; \
	done; echo "make fast-agent: no Python 3.13 here; tests/interop/test_fast_agent.py will skip"

serve: $(VENV)
	@$(VENV)/bin/promptdeck serve examples/prompts

# mypy runs beside pytest rather than before it: its ~25 s of one core would otherwise add to the suite's time,
# while the suite, which mostly waits on its peers, leaves a core to spare. Its report follows pytest's, and
# either failing fails the target.
test: $(VENV) node
	$(TIMED) $(VENV)/bin/ruff check $(LINT_PATHS)
	@echo "+ $(VENV)/bin/mypy, beside pytest (its report follows pytest's)"; \
	$(VENV)/bin/mypy > $(VENV)/mypy-report.txt 2>&1 & typed=$$!; \
	sh -c 'echo "+ $$*"; s=$$(date +%s%N); "$$@"; rc=$$?; ms=$$(( ($$(date +%s%N) - s) / 1000000 )); \
	       echo "== $$1: $$((ms / 1000)).$$((ms % 1000 / 100))s, exit $$rc"; exit $$rc' timed \
	    $(VENV)/bin/pytest $(PYTEST_XDIST) --durations=25; tested=$$?; \
	wait $$typed; checked=$$?; cat $(VENV)/mypy-report.txt; echo "== $(VENV)/bin/mypy: exit $$checked"; \
	[ $$tested -eq 0 ] && [ $$checked -eq 0 ]

# The same steps one at a time.
lint: $(VENV)
	$(VENV)/bin/ruff check $(LINT_PATHS)

typecheck: $(VENV)
	$(VENV)/bin/mypy

pytest: $(VENV) node
	$(VENV)/bin/pytest $(PYTEST_XDIST)

bench: $(VENV)
	$(VENV)/bin/python benchmarks/bench_stdio.py

clean-node:
	rm -rf $(PEERS)/node_modules
