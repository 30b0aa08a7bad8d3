# The two front-door commands: `make run` (dashboard) and `make test` (everything CI checks).
PYTHON ?= python3
PORT ?= 8501
# Python writes the bytecode of what it imports, once (into .venv and __pycache__/): the install compiles only
# what the lab imports (scripts/warm_bytecode.py), and a shell that sets PYTHONDONTWRITEBYTECODE would make
# every process compile the rest anew
unexport PYTHONDONTWRITEBYTECODE

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
