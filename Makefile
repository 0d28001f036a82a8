# accelplane — developer entry points. Every target creates/updates .venv itself.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip --disable-pip-version-check -q
# Real Apache Flink used by the end-to-end tests. It pins dill/protobuf versions that conflict
# with pulumi, so its files (bin/, lib/, plugins/) are installed beside the venv, never imported.
FLINK_VERSION ?= 1.20.5
FLINK_DIR     := $(VENV)/flink
STACKS  := $(filter-out stacks/Pulumi.%,$(wildcard stacks/*.yaml))
PYTEST_ARGS ?=
# pytest-xdist workers: one per core by default (`make test TEST_WORKERS=0` runs serially); each
# test module stays on one worker (--dist loadscope), so module-scoped fixtures (a Flink cluster, a
# compiled probe) are built once.
TEST_WORKERS ?= auto
# The edit-test loop: no Java (real Flink daemons/classes, Hadoop's), nothing marked slow.
QUICK_MARKERS := not flink and not hadoop and not slow

.PHONY: demo test test-quick test-pulumi-oldest lint typecheck flink pyflink hadoop checkov fuzz bench clean help readme schema-fast bench-quick findings gpu-facts gpu-check

help:
	@echo "make demo      - set up .venv and render every example stack into build/<stack>/"
	@echo "make test      - set up .venv with test extras and run the whole suite, in parallel (CI)"
	@echo "make test-pulumi-oldest - tests/pulumi on the oldest pulumi/pulumi-kubernetes pyproject allows"
	@echo "make test-quick - the suite without Java and slow tests (a few minutes; the edit-test loop)"
	@echo "make lint      - ruff + mypy"
	@echo "make checkov   - checkov in its own venv (.venv-checkov) for the least-privilege test"
	@echo "make fuzz      - long hypothesis run (>= 10,000 specs); YuniKorn queue trees for the oracle"
	@echo "make bench     - benchmarks (results: docs/benchmarks.md); make bench-quick: the regression check"
	@echo "make readme    - regenerate the spec reference (docs/spec-reference.md) from the schema"
	@echo "make findings  - regenerate the table of finding codes in docs/findings.md"
	@echo "make gpu-check - on a host with NVIDIA GPUs: check the rendered stacks against the real driver (build/gpu-check/)"

$(PY):
	$(PYTHON) -m venv $(VENV)

$(VENV)/.stamp-base: pyproject.toml | $(PY)
	$(PIP) install -e .
	touch $@

$(VENV)/.stamp-test: pyproject.toml | $(PY)
	$(PIP) install -e '.[test]'
	touch $@ $(VENV)/.stamp-base

$(FLINK_DIR)/.stamp-$(FLINK_VERSION): | $(PY)
	rm -rf $(FLINK_DIR)
	$(PIP) install --no-deps --target $(FLINK_DIR) apache-flink==$(FLINK_VERSION) apache-flink-libraries==$(FLINK_VERSION)
	touch $@

flink: $(FLINK_DIR)/.stamp-$(FLINK_VERSION)

# PyFlink client for the PyFlink job-helper test: its own venv (apache-flink's pins conflict with
# pulumi), holding only what a PyFlink job without Python UDFs imports; pyflink itself is the
# distribution above (PYTHONPATH=.venv/flink). Found by tests/gpu_slots as .venv/pyflink/bin/python.
PYFLINK_VENV := $(VENV)/pyflink
$(PYFLINK_VENV)/.stamp: | $(FLINK_DIR)/.stamp-$(FLINK_VERSION)
	$(PYTHON) -m venv $(PYFLINK_VENV)
	$(PYFLINK_VENV)/bin/python -m pip --disable-pip-version-check -q install 'py4j==0.10.9.7' 'python-dateutil>=2.8.0,<3' 'pytz>=2018.3' 'cloudpickle>=2.2.0' 'ruamel.yaml>=0.18.4'
	touch $@

pyflink: $(PYFLINK_VENV)/.stamp

# Hadoop 3.5 jars (pyspark) for the real ResourceUtils checks; its own pip step.
$(VENV)/.stamp-hadoop: pyproject.toml | $(PY)
	$(PIP) install -e '.[hadoop]'
	touch $@

hadoop: $(VENV)/.stamp-hadoop

# checkov (least-privilege scan of rendered trees in tests/foundation/test_least_privilege.py) pins
# an older `packaging` than the project's venv has, so it gets a venv of its own.
CHECKOV_VENV := .venv-checkov
CHECKOV_VERSION ?= 3.3.30
$(CHECKOV_VENV)/.stamp-$(CHECKOV_VERSION):
	$(PYTHON) -m venv $(CHECKOV_VENV)
	$(CHECKOV_VENV)/bin/python -m pip --disable-pip-version-check -q install checkov==$(CHECKOV_VERSION)
	touch $@

checkov: $(CHECKOV_VENV)/.stamp-$(CHECKOV_VERSION)

demo: $(VENV)/.stamp-base
	@set -e; for spec in $(STACKS); do \
	  stack=$$(basename $$spec .yaml); \
	  $(VENV)/bin/accelplane render $$spec --out build/$$stack; \
	done

test: $(VENV)/.stamp-test flink pyflink hadoop checkov
	ACCELPLANE_FLINK_HOME=$(CURDIR)/$(FLINK_DIR)/pyflink ACCELPLANE_CHECKOV=$(CURDIR)/$(CHECKOV_VENV)/bin/checkov \
	  $(PY) -m pytest -n $(TEST_WORKERS) --dist loadscope $(PYTEST_ARGS)

# The oldest pulumi / pulumi-kubernetes pyproject allows (its lower bounds), in a venv of their own,
# running only tests/pulumi; `make test` covers the newest (what pip resolves in .venv).
OLDEST_VENV := .venv-pulumi-oldest
PULUMI_OLDEST := pulumi==3.165.0 pulumi-kubernetes==4.26.0
$(OLDEST_VENV)/.stamp: pyproject.toml
	$(PYTHON) -m venv $(OLDEST_VENV)
	$(OLDEST_VENV)/bin/python -m pip --disable-pip-version-check -q install -e '.[test]' $(PULUMI_OLDEST)
	touch $@

test-pulumi-oldest: $(OLDEST_VENV)/.stamp
	$(OLDEST_VENV)/bin/python -m pytest -n $(TEST_WORKERS) --dist loadscope tests/pulumi $(PYTEST_ARGS)

# No Java, no Hadoop jars, nothing slow: what `make test` adds is marked flink/hadoop/slow (pyproject).
test-quick: $(VENV)/.stamp-test
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadscope -m "$(QUICK_MARKERS)" $(PYTEST_ARGS)

# Long fuzzing run (>= 10,000 generated specs per property); `make test` runs the fast profile.
# It also writes random YuniKorn queue trees with their rendered queues.yaml for the next run of
# YuniKorn's own validator (docs/yunikorn.md, "Re-running the oracle"; FUZZ_SEED picks the trees).
FUZZ_SEED ?= $(shell date +%s)
fuzz: $(VENV)/.stamp-test
	ACCELPLANE_FUZZ_PROFILE=long $(PY) -m pytest tests/fuzz -q
	$(PY) -m tests.support.yunikorn_trees generate --count 2000 --seed $(FUZZ_SEED) --out build/yunikorn-oracle/trees.jsonl

# Benchmarks (not tests): prints a Markdown table; results are described in docs/benchmarks.md.
bench: $(VENV)/.stamp-test flink
	ACCELPLANE_FLINK_HOME=$(CURDIR)/$(FLINK_DIR)/pyflink $(PY) -m bench.run $(BENCH_ARGS)

# The same ratios on smaller sizes with fewer samples: a regression check (`make bench BENCH_ARGS=--quick`).
bench-quick: BENCH_ARGS := --quick
bench-quick: bench

# The ahead-of-time schema validator (components/accelplane/_generated/schema_fast.py); rerun after a schema change.
schema-fast: $(VENV)/.stamp-test
	$(PY) -m accelplane.schema_codegen

lint: $(VENV)/.stamp-test
	$(VENV)/bin/ruff check components tests bench tools
	$(VENV)/bin/mypy

readme: $(VENV)/.stamp-base
	$(PY) -c "from accelplane.schema_docs import update_readme; update_readme('docs/spec-reference.md')"

clean:
	rm -rf build dist .pytest_cache .mypy_cache .ruff_cache

# The table of finding codes in docs/findings.md, generated from accelplane.findings.REGISTRY.
findings: $(VENV)/.stamp-base
	$(PY) -m accelplane.findings_docs

# The real-GPU host check (docs/discovery.md, "Checking on a real GPU"); never part of `make test`.
# gpu-facts: what accelplane's tables say about every NVIDIA GPU (needs the venv), beside the render;
# gpu-check: the check itself, standard library only (copy the repository with build/ to a GPU host
# and run the same python3 command there if this machine has no GPU).
GPU_CHECK_OUT ?= build/gpu-check
gpu-facts: demo
	$(PY) tools/gpu_host_check.py --write-facts build/gpu-facts.json

gpu-check: gpu-facts
	$(PYTHON) tools/gpu_host_check.py --out $(GPU_CHECK_OUT)
