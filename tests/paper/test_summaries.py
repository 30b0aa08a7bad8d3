"""Every place that summarises verdicts counts pass, n/a and fail apart (issue 50: the Reproduce page said
"39/39 verdicts pass" of 32 passes and 7 n/a): the CLI's last line, the HTML report's headline,
verdicts.json, the Reproduce page's verdict line and its list of stored reproductions, a run's report and
``python -m scansnap run``'s verdict lines."""

from __future__ import annotations

import json

import plotly.graph_objects as go
import pytest

from scansnap import cli
from scansnap.cli import EXIT_VERDICT_FAILED, main
from scansnap.kinds.synthetic.service.commands import verdict_lines
from scansnap.paper.items.result import ItemResult
from scansnap.paper.report import write_report
from scansnap.paper.verdicts import Tally, judge, not_applicable, tally
from tests.apphelp import run_app
from tests.stored_repro import store_reproduction

MIXED = [
    judge("fig9", "spread across eta_Z", "spread", 0.01, "<", 0.05),  # pass
    judge("fig9", "slope in the scan", "slope", 0.5, ">", 0.4),  # pass
    judge("fig9", "slope in the snap", "slope", 0.1, ">", 0.4),  # fail
    *(not_applicable("fig9", f"claim {k}", "s", "> 0", "finite T", ("T = inf",)) for k in range(3)),
]
SAID = "2 pass · 3 n/a · 1 fail"


def _results() -> list[ItemResult]:
    fig = go.Figure(go.Scatter(x=[0, 1], y=[0, 1]))
    return [ItemResult("fig9", "Fig. 9", MIXED, {}, [("the curve", fig)], {}, wall_s=0.5)]


def test_the_tally_counts_each_status_apart():
    assert tally(MIXED) == Tally(passed=2, failed=1, na=3) and tally(MIXED).total == 6
    assert tally(MIXED).sentence == SAID
    assert Tally.of([]).sentence == "0 pass · 0 n/a · 0 fail"


def test_the_html_report_and_verdicts_json_give_the_three_counts(tmp_path):
    doc = write_report(_results(), tmp_path, quick=True, device="cpu")
    assert (doc["n_passed"], doc["n_na"], doc["n_failed"], doc["n_verdicts"]) == (2, 3, 1, 6)
    assert json.loads((tmp_path / "verdicts.json").read_text())["n_na"] == 3
    assert SAID in (tmp_path / "report.html").read_text(encoding="utf-8")


def test_the_command_line_gives_the_three_counts(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(cli, "reproduce_here", lambda names, quick, seeds: _results())
    assert main(["reproduce", "--quick", "--only", "fig9", "--out", str(tmp_path)]) == EXIT_VERDICT_FAILED
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith(SAID) and "n/a: not judged" in last


def test_a_runs_verdict_lines_end_with_the_three_counts():
    lines = verdict_lines([{**v.to_dict(), "replica": 0} for v in MIXED]).splitlines()
    assert lines[-1].strip() == SAID


@pytest.fixture
def stored(data_dir):
    store_reproduction(data_dir, "20261202-090000-abc123", verdicts=MIXED)
    yield "20261202-090000-abc123"


def test_the_reproduce_page_gives_the_three_counts(stored):
    at = run_app()
    at.query_params["report"] = stored
    at = at.switch_page("app_pages/reproduce.py").run()
    assert not at.exception
    line = " ".join(e.value for e in (*at.error, *at.info, *at.success))
    assert SAID in line and "/6 verdicts pass" not in line
    picker = at.selectbox(key="rp.pick")
    assert SAID in picker.format_func(picker.value)
