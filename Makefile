# The two front-door commands: `make run` (dashboard) and `make test` (everything CI checks);
# `make check` is the inner loop (docs/develop.md "Tests").
PYTHON ?= python3
PORT ?= 8501
# Python writes the bytecode of what it imports, once (into .venv and __pycache__/): a shell that sets
# PYTHONDONTWRITEBYTECODE would make every process compile torch anew (~5 s each)
unexport PYTHONDONTWRITEBYTECODE

.PHONY: run check test bench screenshots clean

run:
	@bash scripts/setup_venv.sh runtime
	.venv/bin/python -m scansnap lab --server.port $(PORT)

check:
	@bash scripts/setup_venv.sh dev
	@bash scripts/test.sh check

test:
	@bash scripts/setup_venv.sh dev
	@bash scripts/install_browser.sh
	@bash scripts/test.sh

screenshots:
	@bash scripts/setup_venv.sh dev
	@bash scripts/install_browser.sh
	@bash scripts/screenshots.sh

bench:
	@bash scripts/setup_venv.sh runtime
	.venv/bin/python -m bench.run_all

clean:
	rm -rf .venv .pytest_cache .ruff_cache .mypy_cache test-artifacts
