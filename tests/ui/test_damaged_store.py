"""A damaged run store (the budgets issue, finding 10): every page says the one message once, over what it
can still show, and none shows Streamlit's generic error or writes to the file (AppTest)."""

from __future__ import annotations

import hashlib

import pytest

from scansnap.service import health
from scansnap.service.store import RunStore
from tests.apphelp import run_app
from tests.service.test_bounded_outputs import damage_the_last_pages
from tests.service.test_health import damage_a_middle_page, store_with_runs


@pytest.fixture(scope="module")
def damaged(data_dir):
    """The server is up on a store of 30 runs when the file's pages are garbled."""
    from pathlib import Path

    path = store_with_runs(Path(data_dir))
    with RunStore(data_dir) as store:
        first = store.list_runs(1)[0]["id"]
    run_app()  # the service opens the store
    intact = path.read_bytes()
    damage_a_middle_page(path)
    damage_the_last_pages(path, pages=2)
    health._cache.clear()
    yield path, first
    path.write_bytes(intact)  # the server's shutdown stores what its runs are
    health._cache.clear()


def _errors(at) -> list[str]:
    return [e.value for e in at.error]


@pytest.mark.parametrize(
    "page, params",
    [
        ("app_pages/runs.py", {}),
        ("app_pages/compare.py", {}),
        ("kinds/synthetic/ui/page.py", {"run": "FIRST"}),
    ],
)
def test_every_page_says_the_one_message_once_and_writes_nothing(damaged, page, params):
    path, first = damaged
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    at = run_app().switch_page(page)
    for k, v in params.items():
        at.query_params[k] = first if v == "FIRST" else v
    at = at.run()
    assert not at.exception, at.exception
    errors = _errors(at)
    assert sum("read-only" in e for e in errors) == 1, errors
    assert any("is damaged" in e for e in errors), errors
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
