"""The hand-over from part 1 of scripts/test.sh to part 2 (tests/conftest.py): part 1 writes the tests
marked alone that it left out, part 2 collects their files and stops when what it selected differs."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tests import conftest


def _item(nodeid: str, alone: bool) -> SimpleNamespace:
    return SimpleNamespace(
        nodeid=nodeid, get_closest_marker=lambda name: object() if alone and name == "alone" else None
    )


def test_part_one_writes_the_alone_tests_it_left_out_across_calls(tmp_path, monkeypatch):
    out = tmp_path / "alone-tests.txt"
    monkeypatch.setenv(conftest.ALONE_LIST_ENV, str(out))
    monkeypatch.setattr(conftest, "_ALONE_TESTS", set())
    conftest.pytest_deselected([_item("tests/e2e/test_b.py::test_x[1280 x 720]", True), _item("tests/t.py::k", False)])
    conftest.pytest_deselected([_item("tests/a/test_a.py::test_y", True)])  # a second deselection adds to the first
    assert out.read_text().splitlines() == ["tests/a/test_a.py::test_y", "tests/e2e/test_b.py::test_x[1280 x 720]"]
    assert [p.name for p in tmp_path.iterdir()] == ["alone-tests.txt"]  # no temporary file left


def test_without_the_variable_nothing_is_written(tmp_path, monkeypatch):
    monkeypatch.delenv(conftest.ALONE_LIST_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    conftest.pytest_deselected([_item("tests/test_a.py::test_y", True)])
    assert list(tmp_path.iterdir()) == []


def test_part_two_stops_unless_it_selected_exactly_the_list(tmp_path, monkeypatch):
    listed = tmp_path / "alone-tests.txt"
    listed.write_text("tests/test_a.py::test_y\ntests/test_a.py::test_z[a b]\n")
    monkeypatch.setenv(conftest.ALONE_EXPECT_ENV, str(listed))
    same = SimpleNamespace(items=[_item("tests/test_a.py::test_z[a b]", True), _item("tests/test_a.py::test_y", True)])
    conftest.pytest_collection_finish(same)
    with pytest.raises(pytest.UsageError, match=r"would not run \['tests/test_a.py::test_y'\] or would run \[\]"):
        conftest.pytest_collection_finish(SimpleNamespace(items=same.items[:1]))
    with pytest.raises(pytest.UsageError, match=r"would run \['tests/test_b.py::test_w'\]"):
        conftest.pytest_collection_finish(SimpleNamespace(items=[*same.items, _item("tests/test_b.py::test_w", True)]))
    monkeypatch.setenv(conftest.ALONE_EXPECT_ENV, "")  # part 1 left no list: part 2 ran the whole suite, unchecked
    conftest.pytest_collection_finish(SimpleNamespace(items=[]))
