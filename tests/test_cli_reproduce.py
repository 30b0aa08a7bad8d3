"""``reproduce`` on this machine: every item a task of the local worker pool (a process per core, one
torch thread each), handed to it longest first, the same verdicts and data (in the report's order) as the
items run one after the other in one process."""

from __future__ import annotations

from scansnap.cli import main
from scansnap.paper.items.costs import longest_first
from scansnap.paper.items.runner import run_item
from scansnap.paper.report import write_report
from scansnap.service import executors
from tests.reproduction_help import assert_same_reproduction

CHEAP = ["fig4", "fig9", "joma"]  # a few seconds in all


def test_each_item_is_a_task_of_the_local_pool_and_the_report_is_the_same(tmp_path, monkeypatch):
    mapped: list[str] = []
    pool_map = executors.LocalExecutor.map

    def spy(self, fn, items):
        items = list(items)
        mapped.extend(items)
        return pool_map(self, fn, items)

    monkeypatch.setattr(executors.LocalExecutor, "map", spy)
    assert main(["reproduce", "--quick", "--only", *CHEAP, "--out", str(tmp_path / "pool")]) == 0
    assert mapped == longest_first(CHEAP, True) != CHEAP  # fig4, joma, fig9: 1.5, 1.4, 0.3 s measured
    write_report([run_item(name, True) for name in CHEAP], tmp_path / "here", True, "cpu")
    assert_same_reproduction(tmp_path / "pool", tmp_path / "here")
