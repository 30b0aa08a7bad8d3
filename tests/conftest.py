"""Shared fixtures: a throw-away run store for the dashboard's AppTest tests."""

from __future__ import annotations

import os

import pytest

from engine.service.jobs import get_manager


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    """A fresh SCANSNAP_DATA_DIR per test module; every worker is stopped and joined afterwards
    (a torch thread alive at interpreter exit aborts the process)."""
    d = str(tmp_path_factory.mktemp("scansnap-data"))
    old = os.environ.get("SCANSNAP_DATA_DIR")
    os.environ["SCANSNAP_DATA_DIR"] = d
    yield d
    get_manager(d).shutdown()
    if old is None:
        os.environ.pop("SCANSNAP_DATA_DIR", None)
    else:
        os.environ["SCANSNAP_DATA_DIR"] = old
