"""The toy kind's one registry line: its package, added to the kinds the registry lists."""

import pytest

from scansnap.registry import KINDS_ENV


@pytest.fixture(autouse=True)
def _toy_kind_listed(monkeypatch):
    monkeypatch.setenv(KINDS_ENV, "tests.kinds.toy")
