"""Finding 8 of the budgets issue: 205 one-step runs in 28 s pushed a victim's run off the Runs page and
Compare (they listed the newest 200 only), so no one could reach it there.  Now the Runs page finds a run by
name or id, filters by whose it is and pages through all of them, and Compare takes a linked or searched
run however old (AppTest)."""

from __future__ import annotations

import pytest

from scansnap.paper.presets import get_preset
from scansnap.service.jobs import get_manager
from scansnap.service.store import RunStore
from tests.apphelp import open_page, run_app

FLOOD = 205


@pytest.fixture(scope="module")
def flooded(data_dir):
    """A victim's run with data, then 205 newer one-step runs of a flooder."""
    store: RunStore = get_manager(data_dir).store
    config = get_preset("syn-small").config.to_json()

    def stored(name: str, owner: str) -> str:
        rid = store.create_run(name, config, "cpu", {}, status="finished", owner=owner)
        store.append_snapshot(rid, 1, {}, [(0, None, "entropy_distinct", 1.0)])
        return rid

    victim = stored("the victim's run", "victim")
    flood = [stored(f"flood {i}", "flooder") for i in range(FLOOD)]
    yield victim, flood
    for rid in [victim, *flood]:
        store.delete(rid)


def _table_ids(at) -> list[str]:
    return list(at.dataframe[0].value["id"])


def test_the_runs_page_pages_and_finds_every_run(flooded):
    victim, _ = flooded
    at = run_app().switch_page("app_pages/runs.py").run()
    assert not at.exception
    assert victim not in _table_ids(at) and len(_table_ids(at)) == 200
    assert any(f"Runs 1–200 of {FLOOD + 1:,}" in c.value for c in at.caption)
    at.number_input(key="runs.page").set_value(2).run()
    assert victim in _table_ids(at) and any(victim in o for o in at.selectbox(key="runs.pick").options)
    at.number_input(key="runs.page").set_value(1).run()
    at.text_input(key="runs.search").input("victim").run()
    assert _table_ids(at) == [victim] and at.selectbox(key="runs.pick").value == victim
    assert any(c.value == "1 run matching “victim”." for c in at.caption)  # what the filter found, in words
    at.text_input(key="runs.search").input(victim[:6]).run()  # by id
    assert victim in _table_ids(at)
    at.text_input(key="runs.search").input("no such run %_").run()
    assert not at.exception and any("No run matching" in i.value for i in at.info)


def test_the_runs_page_filters_by_whose_runs(flooded):
    at = run_app().switch_page("app_pages/runs.py").run()
    at.radio(key="runs.whose").set_value("mine").run()  # this AppTest browser owns none of them
    assert not at.exception and any("No run of yours" in i.value for i in at.info)
    at.radio(key="runs.whose").set_value("the command line's").run()
    assert any("No run from the command line" in i.value for i in at.info)


def test_compare_takes_an_old_run_by_link_and_by_search(flooded):
    victim, flood = flooded
    at = open_page("app_pages/compare.py", {"runs": f"{victim},{flood[-1]}"})
    assert not at.exception and not at.warning, [w.value for w in at.warning]
    assert at.multiselect(key="cmp.runs").value == [victim, flood[-1]]
    at = open_page("app_pages/compare.py", {})
    assert not any(victim in o for o in at.multiselect(key="cmp.runs").options)
    at.text_input(key="cmp.search").input("victim").run()
    assert any(victim in o for o in at.multiselect(key="cmp.runs").options)
