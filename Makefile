# The two front-door commands: `make run` (dashboard) and `make test` (everything CI checks).
PYTHON ?= python3
PORT ?= 8501

.PHONY: run test bench reproduce clean

run:
	@bash scripts/setup_venv.sh runtime
	.venv/bin/python -m streamlit run server.py --server.port $(PORT)

test:
	@bash scripts/setup_venv.sh dev
	@bash scripts/install_browser.sh
	@bash scripts/test.sh

bench:
	@bash scripts/setup_venv.sh runtime
	.venv/bin/python -m bench.run_all

clean:
	rm -rf .venv .pytest_cache .ruff_cache .mypy_cache test-artifacts
