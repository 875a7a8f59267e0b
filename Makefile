# The two set-up commands of the README. Both create .venv when it is missing
# and (re)install when pyproject.toml, setup.py or the C extension changed.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
EXTRAS := $(VENV)/.extras
export MODULAR_TELEMETRY_ENABLED ?= 0

.PHONY: demo test lint lit pytest pytest-eager bench docs clean

# (setup.py builds the C extensions pyflame_mlir/_native.c and dialects/_kernels.c:
# a change to either rebuilds)
$(STAMP): pyproject.toml setup.py pyflame_mlir/_native.c dialects/_kernels.c
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

# Optional extras CI can install here (a missing one only skips its tests).
$(EXTRAS): $(STAMP)
	$(PY) -m pip install -q -e '.[test,max]' || echo "note: the [max] extra did not install: MAX tests are skipped"
	$(PY) -m pip install -q -e '.[test,bench]' || echo "note: the [bench] extra did not install: the jax check of bench/train_step.py is skipped"
	$(PY) -m pip install -q -e '.[test,mlir]' || echo "note: the [mlir] extra did not install: the mlir backend tests are skipped"
	$(PY) -m pip install -q -e '.[test,progress]' || echo "note: the [progress] extra did not install: the tqdm progress-line test is skipped"
	touch $(EXTRAS)

# The demo installs the optional backends too (each one that fails to install is
# skipped with a note): examples/mlp.py runs the loss on every installed backend,
# so `python -m pyflame_mlir cache info` then lists their compiled entries.
demo: $(STAMP) $(EXTRAS)
	$(PY) examples/mlp.py
	$(PY) examples/train_mlp.py
	$(PY) examples/mlp_csl.py

test: $(STAMP) $(EXTRAS) lint lit pytest pytest-eager

# vulture: dead code, over the paths of [tool.vulture] in pyproject.toml (tests,
# examples and bench count as usage; vulture_whitelist.py lists framework-used names).
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/vulture

lit: $(STAMP)
	PATH=$(CURDIR)/$(VENV)/bin:$$PATH $(VENV)/bin/lit -q -v test

pytest: $(STAMP)
	$(PY) -m pytest -q -n 2 test/python

# The autodiff, in-place and training tests again in eager mode (issue 13: the
# same results as lazy mode), and some of modules, hooks, compile, save/load,
# graph files, jax semantics, optimizers and schedulers; fewer hypothesis
# examples keep it short. (Every other file passes in eager mode too; tests of
# lazy-only internals take the ``lazy`` fixture.)
pytest-eager: $(STAMP)
	PYFLAME_EAGER=1 PYFLAME_TEST_SCALE=0.25 $(PY) -m pytest -q -n 2 \
		test/python/test_autograd*.py test/python/test_grad_ops.py \
		test/python/test_provenance.py test/python/test_inplace*.py \
		test/python/test_views.py test/python/test_optim.py test/python/test_edge_values.py \
		test/python/nn/test_module.py test/python/nn/test_backward_hooks.py \
		test/python/test_compile.py test/python/test_serialization.py \
		test/python/test_graph_file.py test/python/test_jax_semantics.py \
		test/python/optim/test_lbfgs.py test/python/test_optim_variants.py \
		test/python/test_lr_schedulers_more.py test/python/test_lr_cyclic.py

bench: $(STAMP)
	$(PY) bench/overhead.py

# The user guide and the API reference (from the docstrings) into site/ (gitignored);
# not part of `make test` (test/python/test_docs.py runs the guide's code blocks there).
docs: $(STAMP)
	$(PY) -m pip install -q -e '.[test,docs]'
	$(VENV)/bin/mkdocs build --strict --site-dir site

clean:
	rm -rf $(VENV) build *.egg-info pyflame_mlir/_native.*.so
