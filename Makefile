# Everything runs in a local virtual environment that these targets create and fill from
# pyproject.toml: nothing is installed by hand.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: help demo show examples test lint snapshots bench fuzz dist docs clean

help:
	@echo "make demo       transform and train the MLP example; print its backpropagator, draw out/mlp.png"
	@echo "make show FILE=f.py [FUNC=name] [WRT=x,y] [ARGS=...]"
	@echo "                print the backpropagators of a file's functions (ARGS: cpsad show --help)"
	@echo "make examples   run every example in its quick mode (curves in out/)"
	@echo "make test       run the tests (finite differences, autograd, snapshots, CLI)"
	@echo "make lint       ruff and black --check"
	@echo "make snapshots  regenerate tests/snapshots from examples/ (then review the diff)"
	@echo "make bench      install the peers (torch, jax) and write docs/benchmarks.md (~12 min)"
	@echo "make fuzz       judge cpsad on random programs (N=20000 SEED=0 J=2; out/fuzz/report.txt)"
	@echo "make dist       build the sdist and the wheel into dist/ (.ci/wheel_check installs one)"
	@echo "make docs       build the documentation site into site/ (mkdocs, strict; installs mkdocs)"
	@echo "make clean      remove the virtual environment and caches"

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[test,lint,examples]'
	@touch $(STAMP)

demo: $(STAMP)
	$(PY) examples/mlp.py --demo

# `cpsad show` without activating the environment: make show FILE=examples/readme.py FUNC=loss WRT=w
# (FUNC: one name or several, 'f g'; ARGS: any other option of `cpsad show --help`, ARGS=--stages)
FILE ?=
FUNC ?=
WRT ?=
ARGS ?=

show: $(STAMP)
	@test -n "$(FILE)" || { echo "usage: make show FILE=path/to/file.py [FUNC=name ...] [WRT=x,y] [ARGS=...]" >&2; exit 2; }
	$(VENV)/bin/cpsad show $(FILE) $(FUNC) $(if $(WRT),--wrt $(WRT)) $(ARGS)

examples: $(STAMP)
	for e in mlp cnn resnet rnn lstm treelstm dask_glm; do $(PY) examples/$$e.py --quick || exit 1; done

# one process per core, at most 4 (each holds about 2 GB: Numba, Dask, the transformations)
test: $(STAMP)
	$(PY) -m pytest -n auto --maxprocesses 4

lint: $(STAMP)
	$(PY) -m ruff check cpsad transforms tests examples benchmarks
	$(PY) -m black --check --quiet cpsad transforms examples benchmarks

snapshots: $(STAMP)
	CPSAD_UPDATE_SNAPSHOTS=1 $(PY) -m pytest tests/test_snapshots.py -q
	$(PY) docs/build.py

BENCH_STAMP := $(VENV)/.installed-bench

$(BENCH_STAMP): pyproject.toml $(STAMP)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[test,lint,examples,bench]'
	@touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(PY) -m benchmarks.run --out docs/benchmarks.md

N ?= 20000
SEED ?= 0
J ?= 2
FUZZ_FLAGS ?= --features

fuzz: $(STAMP)
	$(PY) -m tests.fuzz --seed $(SEED) --n $(N) -j $(J) --out out/fuzz $(FUZZ_FLAGS)

DIST ?= dist

dist: $(STAMP)
	$(PY) -m build --outdir $(DIST) .

# the documentation site: mkdocs (material theme; the API pages from the docstrings by
# mkdocstrings), strict -- a broken link or a docstring that does not render fails -- into site/
DOCS_STAMP := $(VENV)/.installed-docs

$(DOCS_STAMP): pyproject.toml $(STAMP)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[test,lint,examples,docs]'
	@touch $(DOCS_STAMP)

# (NO_MKDOCS_2_WARNING: without the material theme's banner about its successor)
docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --quiet

clean:
	rm -rf $(VENV) build dist site *.egg-info .pytest_cache .ruff_cache
