"""The run-kind registry (scansnap/service/run_kinds.py): each kind registered once, found by its config's
class or the store's ``kind`` column; a package listed in SCANSNAP_KINDS that is none is refused."""

from __future__ import annotations

import json
import re

import pytest

from scansnap.core.config import ConfigError
from scansnap.kinds.synthetic.science.config import RunConfig
from scansnap.kinds.text.science.config import TextRunConfig
from scansnap.paper.presets import get_preset
from scansnap.registry import KINDS_ENV
from scansnap.service.kinds import RunKind
from scansnap.service.run_kinds import (
    KINDS,
    config_from_json,
    kind_named,
    kind_of,
    kind_of_json,
    register,
    register_packages,
)


def test_the_built_in_kinds_are_registered_once_each():
    assert {"synthetic", "text"} <= set(KINDS)
    assert kind_of(get_preset("syn-small").config).name == "synthetic"
    assert kind_named("text").config is TextRunConfig and kind_named("synthetic").config is RunConfig
    with pytest.raises(ValueError, match="registered already"):
        register(RunKind("synthetic2", RunConfig, KINDS["synthetic"].seconds, "x:y", "x:z"))
    with pytest.raises(ValueError, match="no run kind takes a dict"):
        kind_of({"optim": {}})


def test_a_listed_package_that_is_no_kind_is_refused_with_what_is_allowed(monkeypatch):
    monkeypatch.setenv(KINDS_ENV, "scansnap.no_such_kind")
    with pytest.raises(ValueError, match=re.escape("names 'scansnap.no_such_kind', which is no importable package")):
        register_packages()
    monkeypatch.setenv(KINDS_ENV, "scansnap.core")  # a package without a service.KIND
    with pytest.raises(ValueError, match=re.escape("has no service.KIND")):
        register_packages()


@pytest.mark.parametrize(
    ("sections", "kind"),
    [
        ({"probe": {}, "optim": {"nope": 1}}, "text"),  # a text config with a wrong key is still the text kind's
        ({"replicas": {}, "optim": {}}, "synthetic"),
        ({"optim": {}}, "synthetic"),  # both kinds read an optim section: the first listed takes it
        ({"nope": {}}, "synthetic"),  # no kind's: the first kind's reader says what is wrong
    ],
)
def test_a_config_files_kind_is_the_one_naming_most_of_its_sections(sections, kind):
    assert kind_of_json(json.dumps(sections)).name == kind


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", "3", '[{"a": 1}]', "[" * 100_000])
def test_text_that_is_no_json_object_goes_to_the_first_kind_whose_reader_says_so(text):
    assert kind_of_json(text).name == "synthetic"
    with pytest.raises(ConfigError, match="config"):
        config_from_json(text)
