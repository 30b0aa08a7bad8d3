#!/usr/bin/env bash
# The two test tiers (docs/develop.md "Tests"):
#   scripts/test.sh check   (make check) lint, types, import contracts, and every test that needs no browser,
#                           no server process and no cluster and is not a whole workflow end to end (e2e)
#   scripts/test.sh         (make test, .ci/run) the same checks, and every test
# Arguments after the tier go to pytest (e.g. `scripts/test.sh check tests/core -k calibration`).
# pytest runs in TEST_WORKERS processes (default 2, this machine's cores), a test file per process at a time
# (xdist's loadfile: a module's server, browser or cluster starts once), one torch thread each: the tests'
# tensors are tiny.  Every test's time goes to
# test-artifacts/pytest.xml (JUnit XML).
set -euo pipefail
cd "$(dirname "$0")/.."
tier=test
if [ "${1:-}" = check ] || [ "${1:-}" = test ]; then tier=$1; shift; fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
echo "== ruff"  # one command per line: under set -e a failure inside an && list would not stop the script
.venv/bin/ruff check .
.venv/bin/ruff format --check .
echo "== hadolint Dockerfile"; .venv/bin/hadolint Dockerfile
mkdir -p test-artifacts
# the import contracts (~10 s) and mypy (~30 s of one core) beside the tests; their verdicts are printed, and
# count, after them
.venv/bin/lint-imports --no-cache >test-artifacts/lint-imports.txt 2>&1 &
imports_pid=$!
.venv/bin/mypy -p scansnap.core -p scansnap.paper -p scansnap.service -p scansnap.kinds.text.science -p scansnap.kinds.text.paper -p scansnap.kinds.text.service -p scansnap.kinds.synthetic.science -p scansnap.kinds.synthetic.paper -p scansnap.kinds.synthetic.service -m scansnap.cli -m scansnap.cli_sweep -m scansnap.api -m scansnap.registry >test-artifacts/mypy.txt 2>&1 &
mypy_pid=$!
select=()
[ "$tier" = check ] && select=(-m "not browser and not server and not cluster and not e2e")
echo "== pytest ($tier tier, ${TEST_WORKERS:-2} processes)"
rc=0
OMP_NUM_THREADS=1 .venv/bin/python -m pytest -n "${TEST_WORKERS:-2}" --dist loadfile --durations=25 \
  --junitxml=test-artifacts/pytest.xml ${select[@]+"${select[@]}"} "$@" || rc=$?
mypy_rc=0; wait "$mypy_pid" || mypy_rc=$?
imports_rc=0; wait "$imports_pid" || imports_rc=$?
echo "== lint-imports (exit $imports_rc)"; tail -n 15 test-artifacts/lint-imports.txt
echo "== mypy scansnap/ (exit $mypy_rc)"; cat test-artifacts/mypy.txt
echo "== pytest exit $rc, lint-imports exit $imports_rc, mypy exit $mypy_rc"
[ "$rc" -eq 0 ] && [ "$imports_rc" -eq 0 ] && [ "$mypy_rc" -eq 0 ]
