"""Property-based: parsing arbitrary JSON, URL-style key=value overrides and table uploads gives
a valid config or a clear ConfigError — never another exception, a hang or a blow-up."""

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scansnap.core.config import ConfigError
from scansnap.kinds.synthetic.science.config import RunConfig
from scansnap.kinds.synthetic.service.budget import check_budget

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
)
json_values = st.recursive(
    json_scalars, lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=8), c, max_size=4), max_leaves=20
)
keys = st.sampled_from(
    [
        "data.num_last",
        "data.T",
        "data.table",
        "data.psi",
        "optim.eta_y",
        "optim.batch",
        "model.kind",
        "replicas.seeds",
        "replicas.lr_pairs",
        "snapshots.max_count",
        "data.layout",
        "nope",
        "data.nope",
        "optim",
        "data.distinct_weights",
    ]
)
FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def parse_or_clear_error(fn):
    try:
        cfg = fn()
    except ConfigError as e:
        assert str(e) and "Traceback" not in str(e)
        return None
    assert isinstance(cfg, RunConfig)
    assert RunConfig.from_json(cfg.to_json()) == cfg  # whatever parses round-trips
    return cfg


@FAST
@given(
    st.dictionaries(
        st.sampled_from(["data", "model", "optim", "replicas", "snapshots", "name", "x"]), json_values, max_size=4
    )
)
def test_arbitrary_json_objects(d):
    parse_or_clear_error(lambda: RunConfig.from_json(json.dumps(d)))


@FAST
@given(st.text(max_size=200))
def test_arbitrary_text(text):
    parse_or_clear_error(lambda: RunConfig.from_json(text))


@FAST
@given(st.dictionaries(keys, st.one_of(st.text(max_size=30), st.integers(), st.floats()), max_size=5))
def test_url_style_overrides(over):
    cfg = parse_or_clear_error(lambda: RunConfig().with_overrides({k: str(v) for k, v in over.items()}))
    if cfg is not None:
        try:
            check_budget(cfg)  # a parsed config is either within budget or refused with a message
        except ConfigError as e:
            assert "limit" in str(e)


@FAST
@given(
    st.lists(
        st.lists(
            st.one_of(st.floats(min_value=-1, max_value=1e6), st.sampled_from([math.nan, math.inf])),
            min_size=1,
            max_size=6,
        ),
        min_size=1,
        max_size=5,
    ),
    st.lists(st.integers(-1, 4), min_size=0, max_size=6),
)
def test_table_uploads(table, psi):
    parse_or_clear_error(lambda: RunConfig.from_dict({"data": {"source": "table", "table": table, "psi": psi}}))


def test_deeply_nested_json_is_a_clear_error():
    text = "[" * 100_000 + "]" * 100_000
    with pytest.raises(ConfigError, match="JSON"):
        RunConfig.from_json(text)


def test_an_integer_of_5000_digits_is_a_clear_error():
    with pytest.raises(ConfigError, match="too long"):
        RunConfig.from_json('{"optim": {"steps": ' + "9" * 5000 + "}}")


# ------------------------------------------------------------------------------ uploads (scansnap.service.uploads)
@FAST
@given(
    st.dictionaries(
        st.sampled_from(["data", "model", "optim", "replicas", "snapshots", "name", "x"]), json_values, max_size=4
    )
)
def test_uploaded_config_files(data_dir, d):
    from scansnap.service.facade import get_service

    service = get_service(data_dir)
    cfg = parse_or_clear_error(lambda: service.config_from_upload(json.dumps(d).encode(), "synthetic"))
    if cfg is not None:
        check_budget(cfg)  # an accepted upload is always within budget


@FAST
@given(
    st.lists(
        st.lists(
            st.one_of(st.floats(min_value=-1, max_value=1e6), st.sampled_from([math.nan, math.inf])),
            min_size=1,
            max_size=6,
        ),
        min_size=1,
        max_size=5,
    ),
    st.lists(st.integers(-1, 4), min_size=0, max_size=6),
    st.booleans(),
)
def test_table_csv_uploads(table, psi, header):
    from scansnap.kinds.synthetic.service.table_upload import table_from_csv

    lines = [["psi", *(f"l{j}" for j in range(len(table[0])))]] if header else []
    lines += [[str(q), *(repr(x) for x in row)] for q, row in zip(psi, table, strict=False)]
    text = "\n".join(",".join(r) for r in lines)
    try:
        got, got_psi = table_from_csv(text.encode())
    except ConfigError as e:
        assert str(e) and "Traceback" not in str(e)
        return
    cfg = RunConfig.from_dict({"data": {"source": "table", "table": got, "psi": got_psi}})
    assert [list(r) for r in cfg.data.table] == got
