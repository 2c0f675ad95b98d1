# The two commands: `make run` and `make test`. Both bootstrap themselves.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python

# The install stamp is named after pyproject.toml's content: a change re-installs.
STAMP  := $(VENV)/.installed-$(shell cksum < pyproject.toml | cut -d' ' -f1)
# protos/google/ is vendored for other languages' clients; Python has it from
# googleapis-common-protos (generating it here would shadow that package).
PROTOS := $(shell find protos -name '*.proto' -not -path 'protos/google/*' 2>/dev/null)
# Generated code lands in the package `tabletop/` at the top (not tracked).
GEN    := tabletop
# The editable install maps only the packages that exist when it runs, and
# `tabletop/` is generated later (by the installed grpcio-tools): this path
# entry puts the checkout itself on the virtualenv's path, so the generated
# package imports from the installed `tabletop` command and `$(PY)` in any
# directory, with no PYTHONPATH, however often it is regenerated.
PTH    := $(VENV)/.root-path-$(shell printf '%s' '$(CURDIR)' | cksum | cut -d' ' -f1)

.PHONY: browser screenshots run test test-slow lint fmt bench golden proto gen clean bootstrap k8s

run: bootstrap proto
	$(PY) -m services.cli.main up

test: bootstrap proto browser
	$(VENV)/bin/ruff check .
	$(PY) -m pytest -n auto

test-slow: bootstrap proto
	$(PY) -m pytest -m slow

lint: bootstrap
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

fmt: bootstrap
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

bench: bootstrap proto
	$(PY) -m bench

golden: bootstrap
	$(PY) -m tests.golden.regenerate

# Render the Kubernetes overlays into k8s/rendered/ (checked in; a test diffs them).
k8s: bootstrap
	@mkdir -p k8s/rendered
	for o in dev prod; do $(VENV)/bin/kubectl kustomize k8s/overlays/$$o > k8s/rendered/$$o.yaml; done

bootstrap: $(STAMP) $(PTH)

# The browser tests drive Debian's Chromium (Playwright's wheel brings none).
# Installed when missing and this machine can (root with apt); otherwise the
# browser tests skip, or fail under CI=true.
browser:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	{ if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing Debian's chromium for the browser tests"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "no chromium and no way to install it: browser tests will skip (fail under CI=true)"; fi; }

# docs/screenshots/<game>.png: each game's page, from a stack on free ports.
screenshots: bootstrap proto browser
	$(PY) -m tests.web.screenshots docs/screenshots

proto: bootstrap gen

# `gen` alone regenerates without touching the virtualenv.
gen: $(GEN)/.generated

# One proto source; code (with type stubs) made by the pinned grpcio-tools.
$(GEN)/.generated: $(PROTOS)
	rm -rf $(GEN)
	$(PY) -m grpc_tools.protoc -I protos --python_out=. --grpc_python_out=. \
		--plugin=protoc-gen-mypy=$(VENV)/bin/protoc-gen-mypy \
		--plugin=protoc-gen-mypy_grpc=$(VENV)/bin/protoc-gen-mypy_grpc \
		--mypy_out=. --mypy_grpc_out=. $(PROTOS)
	@touch $@

$(STAMP):
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -e '.[dev]'
	@rm -f $(VENV)/.installed-*
	@touch $@

$(PTH): $(STAMP)
	$(PY) -c "import pathlib, sys, sysconfig; pathlib.Path(sysconfig.get_path('purelib'), 'tabletop-checkout.pth').write_text(sys.argv[1] + '\\n')" '$(CURDIR)'
	@rm -f $(VENV)/.root-path-*
	@touch $@

clean:
	rm -rf $(VENV) $(GEN) .pytest_cache .ruff_cache .hypothesis build *.egg-info
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
