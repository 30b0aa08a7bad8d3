#!/usr/bin/env bash
# Refresh the screenshots the README and docs/ show (make screenshots): run the browser tests that take them
# (into test-artifacts/) and the Theorem 4 figure, then copy each into docs/screenshots/ under its published name.
# Look at every new picture before you commit it.
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
.venv/bin/python -m pytest -q \
  "tests/e2e/test_browser.py::test_lab_live_pause_reload" \
  "tests/e2e/test_browser.py::test_lecture_screen_fits_a_projector" \
  "tests/e2e/test_browser.py::test_theory_meets_the_measurement_in_the_lab" \
  "tests/e2e/test_browser.py::test_theory_page" \
  "tests/e2e/test_text_browser.py::test_real_text_page_at_projector_sizes" \
  "tests/e2e/test_text_browser.py::test_real_text_lecture_screen_fits_a_projector"
# test artifact -> the published copy
shots=(
  lab-paused.png:lab-paused.png
  lab-designer.png:lab-designer.png
  lecture-1280x720.png:lecture-1280x720.png
  lecture-1920x1080.png:lecture-1920x1080.png
  theory.png:theory.png
  lab-theorem4.png:lab-theorem4.png
  lab-lecture-preset.png:lab-lecture-preset.png
  text-1920x1080-charts.png:text-1920x1080.png
  text-1280x720-maps.png:text-1280x720.png
  text-1920x1080-fig7.png:text-fig7.png
  text-lecture-1280x720.png:text-lecture-1280x720.png
)
mkdir -p docs/screenshots
for pair in "${shots[@]}"; do
  cp "test-artifacts/${pair%%:*}" "docs/screenshots/${pair##*:}"
done
.venv/bin/python scripts/theorem4_figure.py --out docs/screenshots/theorem4-calibrated.png
echo "docs/screenshots/ refreshed: $(( ${#shots[@]} + 1 )) pictures (git diff --stat docs/screenshots/ shows which changed)"
