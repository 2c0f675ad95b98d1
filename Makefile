# The two commands: `make run` and `make test`. Both bootstrap themselves.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
export PYTHONPATH := $(CURDIR)

PROTOS := $(shell find protos -name '*.proto' 2>/dev/null)
GEN    := services/gen

.PHONY: run test test-slow lint fmt bench golden proto clean bootstrap

run: bootstrap
	$(PY) -m services.cli.main demo

test: bootstrap
	$(PY) -m pytest

test-slow: bootstrap
	$(PY) -m pytest -m slow

lint: bootstrap
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

fmt: bootstrap
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

bench: bootstrap
	$(PY) -m bench.engine

golden: bootstrap
	$(PY) -m tests.golden.regenerate

bootstrap: $(VENV)/.installed

# Re-installs only when pyproject.toml changes.
$(VENV)/.installed: pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	@touch $@

clean:
	rm -rf $(VENV) $(GEN) .pytest_cache .ruff_cache .hypothesis build *.egg-info
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
